// The layer rules of .dependency-cruiser.cjs (npm run lint:layers, in CI) hold for the tree, and
// each of them does catch the import it forbids: a small tree with one offence per rule is
// cruised with the same configuration, so a rule weakened by mistake fails here.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../server/config.js';

const depcruise = path.join(projectRoot, 'node_modules', '.bin', 'depcruise');

interface CruiseResult {
  summary: { violations: { rule: { name: string }; from: string; to: string }[] };
}

function cruise(cwd: string, targets: string[]): CruiseResult {
  const out = execFileSync(depcruise, [...targets, '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return JSON.parse(out) as CruiseResult;
}

const offences: Record<string, string> = {
  'domain/rules.ts':
    "import { q } from '../db/queries.js';\nimport { h } from '../handlers/h.js';\nimport { Kysely } from 'kysely';\nimport { op } from '../generated/ops.js';\nexport const r = [q, h, Kysely, op];\n",
  'db/queries.ts': "import { s } from '../server/s.js';\nexport const q = s;\n",
  'generated/ops.ts': "import { r } from '../domain/rules.js';\nexport const op = r;\n",
  'handlers/h.ts': "import { s } from '../server/s.js';\nexport const h = s;\n",
  'server/s.ts': "import { h } from '../handlers/h.js';\nexport const s = h;\n",
};

describe('layer rules', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hold for the service', () => {
    expect(cruise(projectRoot, ['domain', 'db', 'generated', 'handlers', 'server', 'scripts', 'index.ts']).summary.violations).toEqual([]);
  });

  it('each catch the import they forbid', () => {
    for (const [file, text] of Object.entries(offences)) {
      mkdirSync(path.join(dir, path.dirname(file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
    copyFileSync(path.join(projectRoot, '.dependency-cruiser.cjs'), path.join(dir, '.dependency-cruiser.cjs'));
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowImportingTsExtensions: true, noEmit: true },
      }),
    );
    // A package for the "no packages in domain" rule to find.
    mkdirSync(path.join(dir, 'node_modules', 'kysely'), { recursive: true });
    writeFileSync(
      path.join(dir, 'node_modules', 'kysely', 'package.json'),
      JSON.stringify({ name: 'kysely', version: '0.0.0', main: 'index.js' }),
    );
    writeFileSync(path.join(dir, 'node_modules', 'kysely', 'index.js'), 'exports.Kysely = 1;\n');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fixture', dependencies: { kysely: '0.0.0' } }));

    const found = cruise(dir, ['domain', 'db', 'generated', 'handlers', 'server']).summary.violations.map(
      (v) => `${v.rule.name}: ${v.from} -> ${v.to}`,
    );
    expect(found).toEqual(
      expect.arrayContaining([
        'domain-is-pure: domain/rules.ts -> db/queries.ts',
        'domain-is-pure: domain/rules.ts -> handlers/h.ts',
        'domain-has-no-packages: domain/rules.ts -> node_modules/kysely/index.js',
        'domain-uses-only-types-of-generated: domain/rules.ts -> generated/ops.ts',
        'db-below-handlers-and-server: db/queries.ts -> server/s.ts',
        'generated-imports-nothing-hand-written: generated/ops.ts -> domain/rules.ts',
      ]),
    );
    expect(found.some((f) => f.startsWith('no-circular: '))).toBe(true);
  });
});
