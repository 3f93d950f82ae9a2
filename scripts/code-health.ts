// npm run code-health: the figures issue 22 asked to drive to zero, counted the same way every time
// (the closing notes quote them): imports against the layer rules, `any` in service code, untyped
// test requests, and reads of the wall clock outside the clock.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../platform/config.js';

function files(dir: string): string[] {
  const full = path.join(projectRoot, dir);
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

const figures = {
  'cross-layer-imports': { total: cruise.summary.violations.length, where: {} },
  'any-in-service-code': count(service, /\bas any\b|:\s*any\b|<any>|\bany\[\]|,\s*any>/g),
  'raw-test-calls': count(tests, /\.raw\(/g),
  // Requests built at run time from the spec (sweeps over every operation): typed only by the spec.
  'untyped-test-calls': count(tests, /\.untyped\(/g),
  'wall-clock-reads-outside-clock': count(service, /new Date\(\)|Date\.now\(\)/g, (f) => path.basename(f) === 'clock.ts'),
};
for (const [name, { total, where }] of Object.entries(figures)) {
  console.log(`figure ${name} ${total}`);
  if (process.argv.includes('--verbose')) for (const [file, n] of Object.entries(where)) console.log(`  ${file} ${n}`);
}
