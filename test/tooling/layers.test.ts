// The layer rules of .dependency-cruiser.cjs (npm run lint:layers, in CI) hold for the tree, and
// each of them does catch the import it forbids: a small tree with one offence per rule is
// cruised with the same configuration, so a rule weakened by mistake fails here.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../platform/config.js';

const depcruise = path.join(projectRoot, 'node_modules', '.bin', 'depcruise');
/** The layers, lowest first, as npm run lint:layers cruises them. */
const LAYERS = ['domain', 'db', 'generated', 'platform', 'services', 'handlers', 'server'];

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
  'db/queries.ts': "import { s } from '../server/s.js';\nimport { c } from '../platform/config.js';\nexport const q = [s, c];\n",
  'generated/ops.ts': "import { r } from '../domain/rules.js';\nexport const op = r;\n",
  'platform/config.ts': "import { u } from '../services/use-case.js';\nexport const c = u;\n",
  'services/use-case.ts':
    "import { h } from '../handlers/h.js';\nimport { t } from '../server/handler-types.js';\nimport express from 'express';\nexport const u = [h, t, express];\n",
  'handlers/h.ts': "import { s } from '../server/s.js';\nimport { t } from '../server/handler-types.js';\nexport const h = [s, t];\n",
  'handlers/index.ts': "import { h } from './h.js';\nexport const handlers = h;\n",
  'server/handler-types.ts': "import { s } from './s.js';\nexport const t = s;\n",
  'server/s.ts': "import { h } from '../handlers/h.js';\nexport const s = h;\n",
  'server/jobs/job.ts': "import { handlers } from '../../handlers/index.js';\nexport const j = handlers;\n",
  'server/runtime.ts': "import { handlers } from '../handlers/index.js';\nexport const run = handlers;\n",
};

/** A package in the fixture's node_modules, for the rules about packages to find. */
function fakePackage(dir: string, name: string): void {
  mkdirSync(path.join(dir, 'node_modules', name), { recursive: true });
  writeFileSync(path.join(dir, 'node_modules', name, 'package.json'), JSON.stringify({ name, version: '0.0.0', main: 'index.js' }));
  writeFileSync(path.join(dir, 'node_modules', name, 'index.js'), 'exports.default = 1;\n');
}

describe('layer rules', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'layers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('hold for the service', () => {
    expect(cruise(projectRoot, [...LAYERS, 'scripts', 'index.ts']).summary.violations).toEqual([]);
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
    fakePackage(dir, 'kysely');
    fakePackage(dir, 'express');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'fixture', dependencies: { kysely: '0.0.0', express: '0.0.0' } }));

    const found = cruise(dir, LAYERS).summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'domain-is-pure: domain/rules.ts -> db/queries.ts',
        'domain-is-pure: domain/rules.ts -> handlers/h.ts',
        'domain-has-no-packages: domain/rules.ts -> node_modules/kysely/index.js',
        'domain-uses-only-types-of-generated: domain/rules.ts -> generated/ops.ts',
        'db-below-everything-but-domain: db/queries.ts -> server/s.ts',
        'db-below-everything-but-domain: db/queries.ts -> platform/config.ts',
        'generated-imports-nothing-hand-written: generated/ops.ts -> domain/rules.ts',
        'platform-below-use-cases: platform/config.ts -> services/use-case.ts',
        'use-cases-know-no-transport: services/use-case.ts -> handlers/h.ts',
        'use-cases-know-no-transport: services/use-case.ts -> server/handler-types.ts',
        'use-cases-use-no-http-packages: services/use-case.ts -> node_modules/express/index.js',
        'handlers-use-only-the-http-seam-of-server: handlers/h.ts -> server/s.ts',
        'only-the-composition-root-imports-handlers: server/jobs/job.ts -> handlers/index.ts',
        'only-the-composition-root-imports-handlers: server/s.ts -> handlers/h.ts',
        'server-http-below-handlers: server/handler-types.ts -> server/s.ts',
      ]),
    );
    expect(found.some((f) => f.startsWith('no-circular: '))).toBe(true);
    // What the rules allow: the composition root wiring the handlers, a handler using the HTTP seam.
    expect(
      found.filter(
        (f) =>
          !f.startsWith('no-circular: ') && (f.includes('server/runtime.ts ->') || f.includes('handlers/h.ts -> server/handler-types.ts')),
      ),
    ).toEqual([]);
  });
});
