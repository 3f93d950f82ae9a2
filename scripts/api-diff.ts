// npm run api-diff: what changed in the TEST and PROD contracts (generated/openapi.*.json) since
// a base commit (default: the previous commit, HEAD~1), as CI prints it. A breaking change to PROD
// fails the run unless a commit message since the base says it is intended with the marker below.
// Breaking changes to TEST are printed but do not fail: TEST-only operations are QA tooling and
// variants under trial, and TEST's shared operations are the PROD ones (a test proves it).
//
//   npm run api-diff                          HEAD~1 -> working tree
//   npm run api-diff -- --base origin/main    another base
//   npm run api-diff -- --head HEAD           compare two commits instead of the working tree
//   API_DIFF_ALLOW_BREAKING=true              accept breaking PROD changes (a local check only)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { OpenApiDocument } from '../server/contract.js';
import { BREAKING_MARKER, commitMessagesSay, compareSpecs, formatChanges } from './lib/api-diff.js';

function option(name: string, fallback: string | null): string | null {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
}

/** The repository to read (default: this project; the tests point it at a scratch repository). */
const root = path.resolve(option('repo', path.resolve(import.meta.dirname, '..'))!);

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 }).toString();
  } catch {
    return null;
  }
}

function main(): number {
  const base = option('base', 'HEAD~1')!;
  const head = option('head', null);
  if (git(['rev-parse', '--verify', '--quiet', `${base}^{commit}`]) === null) {
    console.log(`api-diff: no commit ${base} to compare with (first commit or shallow clone); nothing to check.`);
    return 0;
  }
  const headLabel = head ?? 'working tree';
  let prodBreaking = 0;
  for (const env of ['test', 'prod'] as const) {
    const file = `generated/openapi.${env}.json`;
    const beforeText = git(['show', `${base}:${file}`]);
    const afterText = head ? git(['show', `${head}:${file}`]) : readFileSync(path.join(root, file), 'utf8');
    if (beforeText === null) {
      console.log(`${env.toUpperCase()} contract: ${file} does not exist at ${base}; everything in it is new.`);
      continue;
    }
    if (afterText === null) throw new Error(`${file} does not exist at ${head}`);
    const changes = compareSpecs(JSON.parse(beforeText) as OpenApiDocument, JSON.parse(afterText) as OpenApiDocument);
    console.log(formatChanges(`${env.toUpperCase()} contract (${base} -> ${headLabel})`, changes));
    if (env === 'prod') prodBreaking = changes.filter((c) => c.severity === 'breaking').length;
  }
  if (prodBreaking === 0) return 0;
  // The messages of the commits being checked: base..head (the working tree is judged by HEAD's).
  const messages = git(['log', '--format=%B', `${base}..${head ?? 'HEAD'}`]) ?? '';
  if (commitMessagesSay(messages) || process.env.API_DIFF_ALLOW_BREAKING === 'true') {
    console.log(`\n${prodBreaking} breaking change(s) to PROD, declared intended (${BREAKING_MARKER} in a commit message).`);
    return 0;
  }
  console.error(
    `\n${prodBreaking} breaking change(s) to the PROD contract. Released apps are built against it: make the change ` +
      `compatible, or say it is intended with ${BREAKING_MARKER} in the commit message.`,
  );
  return 1;
}

process.exitCode = main();
