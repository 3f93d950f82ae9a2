// npm run code-health: figures of the code's shape, counted the same way every time: imports against
// the layer rules, `any` in service code, untyped test requests, reads of the wall clock outside
// the clock, who imports handlers, who writes outbox events, comments citing what a reader of the
// repository cannot open, the largest handler file, and double casts.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../platform/config.js';

function files(dir: string): string[] {
  const full = path.join(projectRoot, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full).flatMap((name) => {
    const rel = path.join(dir, name);
    if (statSync(path.join(projectRoot, rel)).isDirectory())
      return rel.startsWith(path.join('test', 'consumers', 'clients')) ? [] : files(rel);
    return rel.endsWith('.ts') ? [rel] : [];
  });
}

function count(
  paths: string[],
  pattern: RegExp,
  except: (file: string) => boolean = () => false,
): { total: number; where: Record<string, number> } {
  const where: Record<string, number> = {};
  let total = 0;
  for (const file of paths) {
    if (except(file)) continue;
    // Code only: a comment may say "any" in prose.
    const code = readFileSync(path.join(projectRoot, file), 'utf8')
      .split('\n')
      .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
      .map((line) => line.replace(/\s\/\/ .*$/, ''))
      .join('\n');
    const n = [...code.matchAll(pattern)].length;
    if (n) {
      where[file] = n;
      total += n;
    }
  }
  return { total, where };
}

const service = ['domain', 'db', 'platform', 'services', 'handlers', 'server'].flatMap(files);
const tests = files('test');

const cruise = JSON.parse(
  execFileSync(
    path.join(projectRoot, 'node_modules', '.bin', 'depcruise'),
    [
      'domain',
      'db',
      'generated',
      'handlers',
      'server',
      'scripts',
      'index.ts',
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'json',
    ],
    {
      cwd: projectRoot,
      encoding: 'utf8',
      maxBuffer: 64 << 20,
    },
  ),
) as { summary: { violations: unknown[] } };

/** Comment text only: whole-line comments and trailing `// ...`. */
function commentsOf(file: string): string {
  return readFileSync(path.join(projectRoot, file), 'utf8')
    .split('\n')
    .map((line) => (/^\s*(\/\/|\*|\/\*)/.test(line) ? line : (/\s\/\/ (.*)$/.exec(line)?.[1] ?? '')))
    .join('\n');
}

function countIn(paths: string[], pattern: RegExp, textOf: (file: string) => string): { total: number; where: Record<string, number> } {
  const where: Record<string, number> = {};
  let total = 0;
  for (const file of paths) {
    const n = [...textOf(file).matchAll(pattern)].length;
    if (n) {
      where[file] = n;
      total += n;
    }
  }
  return { total, where };
}

const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
const filesWith = (paths: string[], pattern: RegExp) => {
  const where = Object.fromEntries(paths.filter((f) => pattern.test(read(f))).map((f) => [f, 1]));
  return { total: Object.keys(where).length, where };
};
const scripts = files('scripts');
const handlerFiles = service.filter((f) => f.startsWith(`handlers${path.sep}`));
const largestHandler = handlerFiles.map((f) => ({ f, lines: read(f).split('\n').length - 1 })).sort((a, b) => b.lines - a.lines)[0];
// The one place allowed a double cast: the adapter over openapi-backend's untyped router internals.
const ADAPTER = path.join('server', 'router.ts');

const figures = {
  'cross-layer-imports': { total: cruise.summary.violations.length, where: {} },
  'any-in-service-code': count(service, /\bas any\b|:\s*any\b|<any>|\bany\[\]|,\s*any>/g),
  'raw-test-calls': count(tests, /\.raw\(/g),
  // Requests built at run time from the spec (sweeps over every operation): typed only by the spec.
  'untyped-test-calls': count(tests, /\.untyped\(/g),
  'wall-clock-reads-outside-clock': count(service, /new Date\(\)|Date\.now\(\)/g, (f) => path.basename(f) === 'clock.ts'),
  // The composition root (server/runtime.ts) wires the handler map; nothing else may need it.
  'files-outside-handlers-importing-handlers': filesWith(
    [...service, ...scripts].filter((f) => !f.startsWith(`handlers${path.sep}`)),
    /from '(\.\.\/)+handlers\//,
  ),
  // Migrations are history: the triggers they created are replaced by later ones, never edited.
  'outbox-writers': filesWith(
    service.filter((f) => !f.startsWith(path.join('db', 'migrations'))),
    /INSERT INTO outbox_events|insertInto\('outbox_events'\)/,
  ),
  'comments-citing-issues-or-outside-documents': countIn(
    [...service, ...scripts, 'index.ts'],
    /\bissues? #?\d+|\(#\d+\)|DESIGN\.md|\.\.\/shared\//gi,
    commentsOf,
  ),
  'largest-handler-file-lines': {
    total: largestHandler?.lines ?? 0,
    where: largestHandler ? { [largestHandler.f]: largestHandler.lines } : {},
  },
  'double-casts-outside-the-adapter': count(
    [...service, ...scripts],
    /as unknown as/g,
    (f) => f === ADAPTER || f === path.join('scripts', 'code-health.ts'),
  ),
};
for (const [name, { total, where }] of Object.entries(figures)) {
  console.log(`figure ${name} ${total}`);
  if (process.argv.includes('--verbose')) for (const [file, n] of Object.entries(where)) console.log(`  ${file} ${n}`);
}
