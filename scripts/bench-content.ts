// Content reads against their ceiling (not a test): GET /api/core/support-contact/ through the
// whole service - routing, validation, the handler, the kept answer (services/content-cache.ts)
// and its ETag - against a bare node:http server sending the same JSON, both pinned to core 0,
// the load generator (autocannon) on core 1. The service runs on a real PostgreSQL (an embedded
// one in a temporary folder, or BENCH_DATABASE_URL), migrated, with the support contacts stored;
// a kept answer reads none of it, which the run checks (PostgreSQL round trips per request).
// Rounds interleave the two, the order alternating, so machine noise hits both alike; the median
// of each is reported, and the ratio as `figure content-read/raw`.
//
//   npx tsx scripts/bench-content.ts        BENCH_SECONDS (5), BENCH_ROUNDS (3)
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { DEMO_SUPPORT_CONTACT } from '../db/seed/content.js';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { openBenchDatabase } from './lib/bench-database.js';
import { startBenchService } from './lib/bench-service.js';

const PATH = '/api/core/support-contact/';
const HEADERS = { 'accept-language': 'ru' };
const RAW_FLAG = '--serve-raw';
type Variant = 'service' | 'raw';

/** The demo's support contacts (db/seed/content.ts): the one row the operation reads. */
async function prepare(url: string): Promise<void> {
  const handle = connect(url, { max: 2 });
  try {
    await migrateToLatest(handle.db);
    await handle.db.insertInto('support_contacts').values(DEMO_SUPPORT_CONTACT).execute();
  } finally {
    await handle.close();
  }
}

/** The ceiling: node:http answering every request with `body` (JSON), pinned to core 0 like the service. */
async function startRaw(body: string): Promise<{ port: number; proc: ChildProcess }> {
  const proc = spawn('taskset', ['-c', '0', process.execPath, '--import', 'tsx', import.meta.filename, RAW_FLAG], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_RAW_BODY: body },
  });
  const port = await new Promise<number>((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += String(d);
      if (buf.includes('\n')) resolve(Number(buf.trim()));
    });
    proc.on('exit', (code) => reject(new Error(`raw server exited with ${code}`)));
  });
  return { port, proc };
}

function serveRaw(): void {
  const payload = process.env.BENCH_RAW_BODY!;
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end(payload);
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
}

async function load(port: number, seconds: number): Promise<number> {
  const url = `http://127.0.0.1:${port}${PATH}`;
  await autocannon({ url, headers: HEADERS, connections: 32, duration: 1 }); // warm-up (JIT, keep-alive)
  const result = await autocannon({ url, headers: HEADERS, connections: 32, pipelining: 1, duration: seconds });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${port}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.average;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchContentRead(): Promise<{ ratio: number }> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  // The load generator runs on the other core.
  spawn('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' }).on('error', () => {});
  const database = await openBenchDatabase('grocery_bench_content');
  let raw: { port: number; proc: ChildProcess } | null = null;
  const service = await prepare(database.url).then(() => startBenchService(database.url));
  try {
    const first = await fetch(`http://127.0.0.1:${service.port}${PATH}`, { headers: HEADERS });
    if (first.status !== 200) throw new Error(`${PATH} answered ${first.status}`);
    raw = await startRaw(await first.text());
    const rps: Record<Variant, number[]> = { service: [], raw: [] };
    for (let r = 1; r <= rounds; r++) {
      const order: Variant[] = r % 2 ? ['service', 'raw'] : ['raw', 'service'];
      for (const v of order) {
        const value = await load(v === 'service' ? service.port : raw.port, seconds);
        rps[v].push(value);
        console.log(`round ${r} ${v.padEnd(7)} ${Math.round(value)} req/s`);
      }
    }
    const trips = (await service.roundTrips())[`GET ${PATH}`];
    const ratio = median(rps.service) / median(rps.raw);
    console.log(`support contact (service) ${Math.round(median(rps.service))} req/s`);
    console.log(`raw node:http             ${Math.round(median(rps.raw))} req/s`);
    console.log(
      `PostgreSQL round trips per request ${(trips?.perRequest ?? 0).toFixed(4)} (${trips?.queries ?? 0} in ${trips?.requests ?? 0})`,
    );
    console.log(`figure content-read/raw ${ratio.toFixed(3)}`);
    return { ratio };
  } finally {
    raw?.proc.kill('SIGKILL');
    await service.stop();
    await database.close();
  }
}

if (process.argv.includes(RAW_FLAG)) serveRaw();
else if (path.resolve(process.argv[1] ?? '') === import.meta.filename) {
  await benchContentRead();
  process.exit(0); // autocannon's and pg's handles would keep the process alive
}
