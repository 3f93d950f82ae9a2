// npm run bench: router benchmark (not a test). One run measures, with the server process pinned
// to one core and the load generator on the other:
//   full - a trivial operation (GET /api/logistics/map/config) in the full TEST spec
//   one  - the same operation in a one-operation spec (the baseline for routing cost)
//   raw  - the same JSON from a bare node:http server (the ceiling)
// and prints req/s of each, the ratios, and the init time of the full spec. Rounds interleave
// the variants so machine noise hits all of them alike; the median of the rounds is reported.
// Then, each on its own database: scripts/bench-content.ts a kept content read against raw
// node:http (BENCH_CONTENT=0 skips), scripts/bench-orders.ts order creation (and its floor;
// BENCH_ORDERS=0 skips), scripts/bench-sockets.ts the tracking sockets (BENCH_SOCKETS=0 skips),
// scripts/bench-picking.ts the picking scenario (and the item command's floor; BENCH_PICKING=0
// skips), and scripts/bench-pg-versions.ts order creation and item commands on PostgreSQL 17 and
// 18 in interleaved rounds (BENCH_PG_VERSIONS=0 skips). Every figure is printed as a
// `figure <name> <value>` line.
import { createInstanceCaches } from '../services/caches.js';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { connect } from '../db/connection.js';
import { createApp } from '../server/app.js';
import { TokenService } from '../platform/tokens.js';
import { loadConfig } from '../platform/config.js';
import { loadSpec } from '../server/contract.js';
import { createLogger } from '../platform/logger.js';
import { createProviders } from '../platform/providers/index.js';
import { systemClock } from '../platform/clock.js';
import { noTelemetry } from '../platform/telemetry.js';
import { benchContentRead } from './bench-content.js';
import { benchOrderCreation } from './bench-orders.js';
import { benchPgVersions } from './bench-pg-versions.js';
import { benchPicking } from './bench-picking.js';
import { runSocketBench } from './bench-sockets.js';

type Variant = 'full' | 'one' | 'raw';
const PATH = '/api/logistics/map/config';
const BODY = {
  enabled: true,
  map_public_token: null,
  style_uri: null,
  search_min_length: 2,
  search_max_results: 7,
  search_debounce_ms: 400,
};

async function serve(variant: Variant): Promise<void> {
  let server: http.Server;
  const timings: Record<string, number> = {};
  if (variant === 'raw') {
    const payload = JSON.stringify(BODY);
    server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(payload);
    });
  } else {
    const config = loadConfig({
      ...process.env,
      APP_ENV: 'TEST',
      LOG_LEVEL: 'silent',
      VALIDATE_RESPONSES: 'false',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-00',
    });
    const full = loadSpec('TEST');
    const document = variant === 'full' ? full : { ...full, paths: { [PATH]: full.paths[PATH]! } };
    // The trivial operation touches no database; the pool is created but never connects.
    const handle = connect('postgres://bench@127.0.0.1:1/bench', { max: 1 });
    const base = { config, db: handle.db, readDb: handle.db, pool: handle.pool, log: createLogger('silent'), clock: systemClock };
    const deps = {
      ...base,
      tokens: new TokenService(config.jwt),
      ...createProviders(base),
      telemetry: noTelemetry,
      caches: createInstanceCaches(0),
    };
    const t0 = performance.now();
    const app = await createApp({ deps, document, handlers: { getMapConfig: () => ({ status: 200, body: BODY }) } });
    timings.init_ms = performance.now() - t0;
    const t1 = performance.now();
    await app.warmValidators();
    timings.warm_validators_ms = performance.now() - t1;
    server = http.createServer(app.listener);
  }
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(JSON.stringify({ port: (server.address() as AddressInfo).port, ...timings }) + '\n');
  });
}

async function measure(variant: Variant, seconds: number): Promise<{ rps: number; init_ms?: number; warm_validators_ms?: number }> {
  const child = spawn('taskset', ['-c', '0', process.execPath, '--import', 'tsx', import.meta.filename, '--serve', variant], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const info = await new Promise<{ port: number; init_ms?: number; warm_validators_ms?: number }>((resolve, reject) => {
      let buf = '';
      child.stdout.on('data', (d) => {
        buf += d;
        const nl = buf.indexOf('\n');
        if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)) as { port: number; init_ms?: number; warm_validators_ms?: number });
      });
      child.on('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)));
    });
    const url = `http://127.0.0.1:${info.port}${PATH}`;
    await autocannon({ url, connections: 32, duration: 1 }); // warm-up (JIT, keep-alive)
    const result = await autocannon({ url, connections: 32, pipelining: 1, duration: seconds });
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${variant}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return { rps: result.requests.average, init_ms: info.init_ms, warm_validators_ms: info.warm_validators_ms };
  } finally {
    child.kill('SIGKILL');
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const serveAt = process.argv.indexOf('--serve');
  if (serveAt >= 0) {
    await serve(process.argv[serveAt + 1] as Variant);
    return;
  }
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  console.log(`Node ${process.version}`);
  // The load generator runs on the other core.
  try {
    spawn('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* single-core machine: share the core */
  }
  // BENCH_ROUTER=0 skips the router rounds (to measure or profile one scenario alone).
  if (process.env.BENCH_ROUTER !== '0') {
    const rps: Record<Variant, number[]> = { full: [], one: [], raw: [] };
    const init: number[] = [];
    const warm: number[] = [];
    for (let r = 1; r <= rounds; r++) {
      for (const v of ['one', 'full', 'raw'] as Variant[]) {
        const m = await measure(v, seconds);
        rps[v].push(m.rps);
        if (v === 'full') {
          init.push(m.init_ms!);
          warm.push(m.warm_validators_ms!);
        }
        console.log(`round ${r} ${v.padEnd(4)} ${Math.round(m.rps)} req/s`);
      }
    }
    const full = median(rps.full);
    const one = median(rps.one);
    const raw = median(rps.raw);
    console.log('');
    console.log(`full spec (${Object.keys(loadSpec('TEST').paths).length} paths) ${Math.round(full!)} req/s`);
    console.log(`one-operation spec        ${Math.round(one!)} req/s`);
    console.log(`raw node:http             ${Math.round(raw!)} req/s`);
    console.log(`full / one   ${(full! / one!).toFixed(3)}  (target >= 0.90)`);
    console.log(`full / raw   ${(full! / raw!).toFixed(3)}  (target >= 0.30, stretch 0.45)`);
    console.log(`figure trivial/raw ${(full! / raw!).toFixed(3)}`);
    console.log(
      `init of the full spec: median ${median(init)!.toFixed(0)} ms (target < 1500); all validators compiled in ${median(warm)!.toFixed(0)} ms more`,
    );
  }
  // Each write path prints its ratio to its floor (scripts/lib/write-path-floor.ts: the same checks
  // and writes on bare node:http + pg), measured in the same run on the same database.
  if (process.env.BENCH_CONTENT !== '0') await benchContentRead();
  if (process.env.BENCH_ORDERS !== '0') await benchOrderCreation();
  await runSocketBench();
  if (process.env.BENCH_PICKING !== '0') await benchPicking();
  if (process.env.BENCH_PG_VERSIONS !== '0') await benchPgVersions();
}

await main();
