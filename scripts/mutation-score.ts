// npm run test:mutation: Stryker (stryker.config.mjs) mutates the rules in domain/{picking,orders,
// money,codes,loyalty} and runs the fast tests (test/unit/, no database) against each mutant; this
// script then reads the JSON report and prints, per mutated file, the share of mutants the tests
// detect, the mutants they miss (what a test is still missing), and `figure mutation-score-domain`.
// Exits non-zero when any file or the whole is below 90%, so it can gate. Not part of `npm test`
// (a full run takes minutes).
//
//   npm run test:mutation                                      the whole run
//   npm run test:mutation -- --mutate domain/picking/items.ts  one file (arguments go to Stryker)
//   npm run test:mutation -- --report-only                     re-read the last report
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** jsonReporter.fileName in stryker.config.mjs. */
const reportFile = path.join(root, '.tmp', 'mutation', 'report.json');
const threshold = 90;

type MutantStatus = 'Killed' | 'Timeout' | 'Survived' | 'NoCoverage' | 'CompileError' | 'RuntimeError' | 'Ignored' | 'Pending';

interface Mutant {
  mutatorName: string;
  replacement?: string;
  status: MutantStatus;
  location: { start: { line: number; column: number } };
}

interface Report {
  files: Record<string, { mutants: Mutant[] }>;
}

interface FileScore {
  file: string;
  detected: number;
  valid: number;
  missed: Mutant[];
}

/** Detected = killed or timed out; valid = detected, survived or not covered (errors and ignored ones do not count). */
function scoreFile(file: string, mutants: Mutant[]): FileScore {
  const detected = mutants.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
  const missed = mutants.filter((m) => m.status === 'Survived' || m.status === 'NoCoverage');
  return { file, detected, valid: detected + missed.length, missed };
}

/** Percent with one decimal; 100 when there is nothing to detect. */
function percent(detected: number, valid: number): number {
  return valid === 0 ? 100 : Math.round((detected / valid) * 1000) / 10;
}

function runStryker(args: string[]): void {
  rmSync(reportFile, { force: true });
  const bin = path.join(root, 'node_modules', '.bin');
  // The stryker bin starts with `#!/usr/bin/env node`: the project's node (node_modules/.bin/node)
  // comes first on PATH, as under npm run.
  const result = spawnSync(path.join(bin, 'stryker'), ['run', ...args], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    console.error(`stryker exited with ${result.status ?? result.signal}`);
    process.exit(result.status ?? 1);
  }
}

function oneLine(text: string | undefined): string {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 97)}...` : flat;
}

function main(): void {
  const args = process.argv.slice(2);
  const reportOnly = args.includes('--report-only');
  if (!reportOnly) runStryker(args);
  if (!existsSync(reportFile)) {
    console.error(`no mutation report at ${path.relative(root, reportFile)}`);
    process.exit(1);
  }
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
  const scores = Object.entries(report.files)
    .map(([file, { mutants }]) => scoreFile(file, mutants))
    .sort((a, b) => a.file.localeCompare(b.file));

  const missedLines = scores.flatMap(({ file, missed }) =>
    missed.map(
      (m) =>
        `${m.status === 'NoCoverage' ? 'not covered' : 'survived'} ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName} ${oneLine(m.replacement)}`,
    ),
  );
  if (missedLines.length) console.log(`\nmutants no test detects (${missedLines.length}):\n${missedLines.join('\n')}\n`);

  const below: string[] = [];
  for (const { file, detected, valid } of scores) {
    const pct = percent(detected, valid);
    if (pct < threshold) below.push(file);
    console.log(`mutation-score ${file} ${pct.toFixed(1)} (${detected}/${valid})`);
  }
  const detected = scores.reduce((n, s) => n + s.detected, 0);
  const valid = scores.reduce((n, s) => n + s.valid, 0);
  const overall = percent(detected, valid);
  console.log(`figure mutation-score-domain ${overall.toFixed(1)}`);

  if (below.length || overall < threshold) {
    console.error(
      `mutation score below ${threshold}%: ${[...below, ...(overall < threshold ? [`overall ${overall.toFixed(1)}`] : [])].join(', ')}`,
    );
    process.exit(1);
  }
}

main();
