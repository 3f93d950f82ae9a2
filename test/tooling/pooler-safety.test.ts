// What runs on pooled connections holds no session state, so DATABASE_URL may point at a
// transaction-mode pooler (PgBouncer, Supavisor): there each transaction may land on another server
// connection, and state left on one (a session advisory lock, a SET, a temp table, a LISTEN, a
// PREPARE) would leak to another client or vanish. LISTEN lives on the direct connection of the
// outbox feed only (DATABASE_DIRECT_URL); time limits are startup options of each connection.
// npm run test:topology runs the write paths through PgBouncer in transaction mode.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../platform/config.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) return name === 'migrations' ? [] : sources(file);
    return file.endsWith('.ts') ? [file] : [];
  });
}

const files = ['domain', 'db', 'platform', 'services', 'handlers', 'server'].flatMap((d) => sources(path.join(projectRoot, d)));

const SESSION_STATE: [string, RegExp][] = [
  ['a session-level advisory lock (use pg_advisory_xact_lock)', /pg_(try_)?advisory_lock(_shared)?\s*\(/i],
  ['a session SET (use SET LOCAL, or a startup option)', /[`'";]\s*SET\s+(SESSION\s+)?(?!LOCAL\b)[a-z_.]+\s*(=|TO\b)/i],
  // A temporary table dropped at its transaction's commit lives and dies on the one server
  // connection the transaction holds, even behind a pooler: only one that outlives it is state.
  ['a temporary table outliving its transaction', /CREATE\s+(GLOBAL\s+|LOCAL\s+)?TEMP(ORARY)?\s+TABLE(?![^`]*ON\s+COMMIT\s+DROP)/i],
  ['a PREPARE statement', /[`'";]\s*PREPARE\s+\w+/i],
];

describe('pooled connections', () => {
  it('carry no session state', () => {
    const found: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const [what, pattern] of SESSION_STATE) if (pattern.test(text)) found.push(`${path.relative(projectRoot, file)}: ${what}`);
    }
    expect(found).toEqual([]);
  });

  it('LISTEN only on the outbox feed, which connects directly', () => {
    const listening = files.filter((file) => /['"`]LISTEN\s+\w/.test(readFileSync(file, 'utf8'))).map((f) => path.relative(projectRoot, f));
    expect(listening).toEqual([path.join('server', 'realtime', 'outbox-feed.ts')]);
    expect(readFileSync(path.join(projectRoot, 'server', 'runtime.ts'), 'utf8')).toMatch(/startOutboxFeed\(deps, database\.directUrl\)/);
  });
});
