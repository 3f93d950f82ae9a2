// npm run bench:compare -- <commit>: the write paths of an earlier commit and of this checkout,
// side by side in one run (not a test). The commit is checked out in a temporary worktree with its
// own `npm ci`; then, round after round, each side's own `scripts/bench.ts` runs its order-creation
// and picking scenarios (router rounds, the NOTIFY comparison and most sockets left out), the order
// of the two sides alternating so that the machine's drift hits both alike. Prints the median of
// each figure per side and new/old, and `figure` lines. BENCH_COMPARE_ROUNDS (3) and
// BENCH_SECONDS (5) set the length; BENCH_BASELINE_DIR uses an existing checkout instead.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../platform/config.js';

/** The figures read off each side's output (older benches print some only as text). */
const FIGURES: { name: string; pattern: RegExp }[] = [
  { name: 'orders-per-second', pattern: /order creation, 32 clients\s+(\d+) orders\/s/ },
  { name: 'order-creation-round-trips', pattern: /figure order-creation-round-trips ([\d.]+)/ },
  { name: 'picker-commands-per-second', pattern: /item commands, 32 pickers\s+(\d+) commands\/s/ },
  { name: 'picker-command-p99-ms', pattern: /item commands, 32 pickers\s+\d+ commands\/s \(p50 \d+ ms, p99 (\d+) ms/ },
  { name: 'picker-command-round-trips', pattern: /figure picker-command-round-trips ([\d.]+)/ },
  { name: 'picker-command-answer-bytes', pattern: /figure picker-command-answer-bytes (\d+)/ },
];

function runBench(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['tsx', 'scripts/bench.ts'], {
      cwd: dir,
      env: {
        ...process.env,
        BENCH_ROUTER: '0',
        BENCH_NOTIFY: '0',
        BENCH_FLOORS: '0',
        // Older benches run the sockets whatever is asked: a few, briefly.
        BENCH_SOCKETS: '100',
        BENCH_EVENTS_PER_SECOND: '100',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`bench in ${dir} exited with ${code}:\n${out}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const commit = process.argv[2];
  let baseline = process.env.BENCH_BASELINE_DIR;
  let made: string | null = null;
  if (!baseline) {
    if (!commit) throw new Error('usage: npm run bench:compare -- <commit> (or BENCH_BASELINE_DIR=<checkout>)');
    made = mkdtempSync(path.join(os.tmpdir(), 'grocery-baseline-'));
    baseline = path.join(made, 'checkout');
    execFileSync('git', ['worktree', 'add', '--detach', baseline, commit], { cwd: projectRoot, stdio: 'inherit' });
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: baseline, stdio: 'inherit' });
  }
  if (!existsSync(path.join(baseline, 'scripts/bench.ts'))) throw new Error(`${baseline} has no scripts/bench.ts`);
  const sides = { old: baseline, new: projectRoot };
  const values: Record<'old' | 'new', Record<string, number[]>> = { old: {}, new: {} };
  const rounds = Number(process.env.BENCH_COMPARE_ROUNDS ?? 3);
  try {
    for (let round = 1; round <= rounds; round++) {
      const order: ('old' | 'new')[] = round % 2 ? ['old', 'new'] : ['new', 'old'];
      for (const side of order) {
        const out = await runBench(sides[side]);
        const got: string[] = [];
        for (const f of FIGURES) {
          const m = f.pattern.exec(out);
          if (!m) continue;
          (values[side][f.name] ??= []).push(Number(m[1]));
          got.push(`${f.name} ${m[1]}`);
        }
        console.log(`round ${round} ${side}: ${got.join(', ')}`);
      }
    }
  } finally {
    if (made) {
      execFileSync('git', ['worktree', 'remove', '--force', baseline], { cwd: projectRoot, stdio: 'inherit' });
      rmSync(made, { recursive: true, force: true });
    }
  }
  console.log('');
  console.log(`${'figure'.padEnd(32)} ${'old'.padStart(8)} ${'new'.padStart(8)}  new/old   (medians of ${rounds} rounds)`);
  for (const f of FIGURES) {
    const o = values.old[f.name];
    const n = values.new[f.name];
    const mo = o ? median(o)! : null;
    const mn = n ? median(n)! : null;
    const ratio = mo && mn ? (mn / mo).toFixed(2) : '-';
    console.log(`${f.name.padEnd(32)} ${String(mo ?? '-').padStart(8)} ${String(mn ?? '-').padStart(8)}  ${ratio}`);
    if (mo && mn) console.log(`figure ${f.name}-new/old ${ratio}`);
  }
}

await main();
