// npm run bench:catalog [-- --products N] (also run by npm run bench): catalog scenarios against
// the real service and a real PostgreSQL (not a test).
//
// Two databases are prepared, each the demo data plus a catalog file written by the catalog
// generator (db/catalog-import/generate.ts) and loaded by `npm run catalog:import` in a child
// process, then published by `npm run catalog:publish`: the small one with 50,000 products, the
// large one with N (--products, else BENCH_LARGE_PRODUCTS, else 250,000: the target is
// 1,000,000, which the import and the publication do not yet reach in reasonable time and memory,
// see the README, and `npm run bench` has to finish). The large import's
// rate and the importer's peak resident memory are reported. On each database the service runs
// in a child process pinned to core 0 (the load generator is on core 1; PostgreSQL is not
// pinned) and autocannon measures, in interleaved rounds, on the small catalog:
//   trivial      GET /api/logistics/map/config (no database; the reference of the run)
//   listing      GET /api/catalog/products/?category_id=<leaf category> (page 1 of 20)
//   detail       GET /api/catalog/products/{id} over 50 products
//   bootstrap304 GET /api/catalog/bootstrap/{version} with the current If-None-Match
//   search       GET /api/catalog/products/?search=... over typed, misspelt and Latin queries
//                and one- and two-letter prefixes
// Throughput is reported as a ratio to `trivial` of the same round (targets: listing and detail
// 0.50, bootstrap304 0.80, search 0.35). The service keeps listing pages and product cards for a
// few seconds (CATALOG_PRODUCTS_CACHE_SECONDS, services/products-cache.ts), so listing,
// detail and search in the default configuration are answered from kept ones; each round also
// measures them on a second service that keeps nothing (every answer read from PostgreSQL) and
// reports that apart.
// Then the p95 latency of listing, detail and search, one request at a time from one client, is
// compared between the two catalog sizes on services that keep nothing (a kept page would hide
// the catalog's size), in interleaved rounds (targets: p95 < 50 ms, large / small <= 1.5).
//
// Figures (`figure <name> <value>`): search-, listing- and detail-p95-ms-<size>, the same
// -p95-<size>/50k ratios, catalog-import-rows-per-second and catalog-import-peak-rss-mb (of the
// large import; `catalog-import-products` says its size). <size> names the large catalog honestly:
// 1m for 1,000,000, 100k for 100,000, 250k, 1.5m and so on.
//
// BENCH_DATABASE_URL: a PostgreSQL server to create the two databases on (default: an embedded
// one in a temporary folder). BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_LARGE_PRODUCTS (250000).
import { spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import { connect } from '../db/connection.js';
import { startEmbeddedPostgres } from '../db/embedded.js';
import { migrateToLatest } from '../db/migrate.js';
import { generateCatalogText } from '../db/catalog-import/generate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { DEMO_STORES } from '../db/seed/stores.js';
import { startBenchService } from './lib/bench-service.js';

type Scenario = 'trivial' | 'listing' | 'detail' | 'bootstrap304' | 'search';
const SCENARIOS: Scenario[] = ['trivial', 'listing', 'detail', 'bootstrap304', 'search'];
const TARGETS: Partial<Record<Scenario, number>> = { listing: 0.5, detail: 0.5, bootstrap304: 0.8, search: 0.35 };
/** Measured again on a service that keeps no listing page or product card. */
const UNCACHED: Scenario[] = ['listing', 'detail', 'search'];
const KEEP_NOTHING = { CATALOG_PRODUCTS_CACHE_SECONDS: '0' };
const SEARCHES = [
  'молоко',
  'малоко',
  'moloko',
  'хлеб ржаной',
  'сыр гауда',
  'kefir',
  'йогрут',
  'яблоки',
  'coffee',
  'шампиньоны',
  'м',
  'мо',
  'k',
  'ch',
];
const SMALL_PRODUCTS = 50_000;
const STORE = DEMO_STORES[0]!.id;

interface Fixture {
  leafCategory: string;
  productIds: string[];
  version: string;
  etag: string;
}

interface ImportRun {
  ms: number;
  rows_per_second: number;
  peak_rss_mb: number;
  products: number;
}

/** Runs an npm script of this checkout in a child process against `url`; its standard output. */
function runScript(script: string, args: string[], url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('node', ['--import', 'tsx', script, ...args], {
      env: { ...process.env, DATABASE_URL: url, DATABASE_DIRECT_URL: url, LOG_LEVEL: 'silent', APP_ENV: 'TEST' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited with ${code}`))));
  });
}

/** The demo data plus a generated catalog of `products`, imported and published as an operator would. */
async function prepare(url: string, products: number, dir: string): Promise<ImportRun> {
  const handle = connect(url, { max: 2 });
  try {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
  } finally {
    await handle.close();
  }
  const file = path.join(dir, `catalog-${products}.json`);
  let started = performance.now();
  await pipeline(Readable.from(generateCatalogText({ products })), createWriteStream(file));
  console.log(`  generated ${products} products in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const out = await runScript('scripts/catalog-import.ts', [file, '--progress', '--json'], url);
  rmSync(file, { force: true });
  const run = JSON.parse(out.trim().split('\n').at(-1)!) as ImportRun;
  console.log(`  imported in ${(run.ms / 1000).toFixed(1)} s: ${run.rows_per_second} rows/s, peak RSS ${run.peak_rss_mb} MB`);
  started = performance.now();
  await runScript('scripts/catalog-publish.ts', [], url);
  console.log(`  published in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  // Fresh tables: statistics and the visibility map, as a database in service would have them.
  const after = connect(url, { max: 1 });
  try {
    await sql`VACUUM ANALYZE`.execute(after.db);
  } finally {
    await after.close();
  }
  return run;
}

/** How a figure names a catalog size: 1m, 100k, 50k, 1.5m. */
const sizeName = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}m` : n >= 1000 ? `${n / 1000}k` : String(n));

async function fixtureOf(url: string): Promise<Fixture> {
  const handle = connect(url, { max: 1 });
  try {
    const leaf = await sql<{ id: string }>`SELECT id FROM categories WHERE code = 'milk'`.execute(handle.db);
    const products = await sql<{
      id: string;
    }>`SELECT product_id AS id FROM inventories WHERE store_id = ${STORE} AND is_default ORDER BY product_id LIMIT 50`.execute(handle.db);
    const snapshot = await sql<{ version_id: string; etag: string }>`
      SELECT s.version_id, s.etag FROM catalog_snapshots s JOIN catalog_versions v ON v.id = s.version_id
      WHERE v.replaced_at IS NULL AND s.store_id = ${STORE} AND s.language = 'ru'`.execute(handle.db);
    return {
      leafCategory: leaf.rows[0]!.id,
      productIds: products.rows.map((r) => r.id),
      version: snapshot.rows[0]!.version_id,
      etag: snapshot.rows[0]!.etag,
    };
  } finally {
    await handle.close();
  }
}

function requestsOf(scenario: Scenario, f: Fixture): { path: string; headers?: Record<string, string> }[] {
  switch (scenario) {
    case 'trivial':
      return [{ path: '/api/logistics/map/config' }];
    case 'listing':
      return [{ path: `/api/catalog/products/?category_id=${f.leafCategory}&page_size=20` }];
    case 'detail':
      return f.productIds.map((id) => ({ path: `/api/catalog/products/${id}` }));
    case 'bootstrap304':
      return [{ path: `/api/catalog/bootstrap/${f.version}`, headers: { 'if-none-match': f.etag } }];
    case 'search':
      return SEARCHES.map((q) => ({ path: `/api/catalog/products/?search=${encodeURIComponent(q)}&page_size=20` }));
  }
}

async function load(port: number, scenario: Scenario, f: Fixture, seconds: number, connections: number) {
  const variants = requestsOf(scenario, f);
  let next = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    headers: { 'x-store-id': STORE, 'accept-language': 'ru' },
    requests: [
      {
        setupRequest: (req) => {
          const v = variants[next++ % variants.length];
          return { ...req, path: v!.path, headers: { ...req.headers, ...v!.headers } };
        },
      },
    ],
  });
  const expected = scenario === 'bootstrap304' ? '3xx' : '2xx';
  const good = expected === '3xx' ? result['3xx'] : result['2xx'];
  if (result.errors > 0 || good !== result.requests.total) {
    throw new Error(`${scenario}: ${result.errors} errors, ${result.requests.total - good} answers other than ${expected}`);
  }
  return { rps: result.requests.average };
}

/**
 * Latencies of one client sending the scenario's requests one after another for `seconds`,
 * timed here with performance.now(). (autocannon keeps whole milliseconds, so a 0.3 ms answer
 * would count as 0: useless for comparing sub-millisecond answers.)
 */
async function sequentialLatenciesMs(port: number, scenario: Scenario, f: Fixture, seconds: number): Promise<number[]> {
  const variants = requestsOf(scenario, f);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (v: { path: string; headers?: Record<string, string> }) =>
    new Promise<number>((resolve, reject) => {
      const started = performance.now();
      http
        .get(
          { host: '127.0.0.1', port, path: v.path, agent, headers: { 'x-store-id': STORE, 'accept-language': 'ru', ...v.headers } },
          (res) => {
            res.resume();
            res.once('end', () =>
              res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${scenario}: status ${res.statusCode}`)),
            );
          },
        )
        .once('error', reject);
    });
  const times: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  try {
    for (let n = 0; performance.now() < deadline; n++) times.push(await get(variants[n % variants.length]!));
  } finally {
    agent.destroy();
  }
  return times;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;

async function withServer<T>(url: string, env: Record<string, string>, run: (port: number) => Promise<T>): Promise<T> {
  const service = await startBenchService(url, env);
  try {
    return await run(service.port);
  } finally {
    await service.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const productsArg = process.argv.indexOf('--products');
  const largeProducts = Number(productsArg >= 0 ? process.argv[productsArg + 1] : (process.env.BENCH_LARGE_PRODUCTS ?? 250_000));
  if (!Number.isInteger(largeProducts) || largeProducts < 1) throw new Error('--products must be a positive integer');
  const large = sizeName(largeProducts);
  const smallSize = sizeName(SMALL_PRODUCTS);
  try {
    spawn('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* single core: share it */
  }
  let adminUrl = process.env.BENCH_DATABASE_URL;
  let dir: string | null = null;
  let cluster: Awaited<ReturnType<typeof startEmbeddedPostgres>> | null = null;
  if (!adminUrl) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'grocery-bench-pg-'));
    // mkdtemp makes the folder private; the unprivileged user PostgreSQL runs as must enter it.
    chmodSync(dir, 0o755);
    // Throwaway (durability off), and sized for a catalog of a million products, as a server
    // holding one would be: the default 128 MB of shared buffers and 1 GB between checkpoints
    // hold a tenth of its indexes and checkpoint every few seconds while it loads.
    cluster = await startEmbeddedPostgres(
      path.join(dir, 'data'),
      () => {},
      ['shared_buffers=1GB', 'max_wal_size=8GB', 'checkpoint_timeout=30min', 'maintenance_work_mem=512MB'],
      { durable: false },
    );
    adminUrl = cluster.adminUrl;
  }
  const names = { small: `bench_catalog_small_${process.pid}`, large: `bench_catalog_large_${process.pid}` };
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  const urlOf = (db: string) => Object.assign(new URL(adminUrl), { pathname: `/${db}` }).toString();
  const fileDir = mkdtempSync(path.join(os.tmpdir(), 'grocery-bench-catalog-'));
  let largeImport: ImportRun | null = null;
  try {
    for (const [size, db] of Object.entries(names)) {
      await admin.query(`CREATE DATABASE ${db}`);
      console.log(`preparing the ${size} catalog`);
      const run = await prepare(urlOf(db), size === 'large' ? largeProducts : SMALL_PRODUCTS, fileDir);
      if (size === 'large') largeImport = run;
    }

    // Throughput on the demo catalog, as ratios to the trivial operation of the same round.
    const small = await fixtureOf(urlOf(names.small));
    const ratios: Record<Scenario, number[]> = { trivial: [], listing: [], detail: [], bootstrap304: [], search: [] };
    const rps: Record<Scenario, number[]> = { trivial: [], listing: [], detail: [], bootstrap304: [], search: [] };
    const uncachedRatios: Record<Scenario, number[]> = { trivial: [], listing: [], detail: [], bootstrap304: [], search: [] };
    const uncachedRps: Record<Scenario, number[]> = { trivial: [], listing: [], detail: [], bootstrap304: [], search: [] };
    // Both services run side by side; only the one under load works.
    await withServer(urlOf(names.small), KEEP_NOTHING, (uncachedPort) =>
      withServer(urlOf(names.small), {}, async (port) => {
        for (const s of SCENARIOS) await load(port, s, small, 1, 16); // warm-up: JIT, pools, caches
        for (const s of UNCACHED) await load(uncachedPort, s, small, 1, 16);
        for (let r = 1; r <= rounds; r++) {
          const round: Partial<Record<Scenario, number>> = {};
          const uncached: Partial<Record<Scenario, number>> = {};
          for (const s of SCENARIOS) round[s] = (await load(port, s, small, seconds, 32)).rps;
          for (const s of UNCACHED) uncached[s] = (await load(uncachedPort, s, small, seconds, 32)).rps;
          for (const s of SCENARIOS) {
            rps[s].push(round[s]!);
            ratios[s].push(round[s]! / round.trivial!);
          }
          for (const s of UNCACHED) {
            uncachedRps[s].push(uncached[s]!);
            uncachedRatios[s].push(uncached[s]! / round.trivial!);
          }
          console.log(
            `round ${r}: ${SCENARIOS.map((s) => `${s} ${Math.round(round[s]!)}`).join(', ')}; keeping nothing: ${UNCACHED.map((s) => `${s} ${Math.round(uncached[s]!)}`).join(', ')} req/s`,
          );
        }
      }),
    );

    // Latency of one client at a time, small catalog against the large one: both services up,
    // their rounds interleaved, so machine noise hits both sizes alike. The p95 is taken over
    // every request of every round.
    type Timed = 'listing' | 'search' | 'detail';
    const TIMED: Timed[] = ['listing', 'search', 'detail'];
    const latency: Record<'small' | 'large', Record<Timed, number[]>> = {
      small: { listing: [], search: [], detail: [] },
      large: { listing: [], search: [], detail: [] },
    };
    const fixtures = { small, large: await fixtureOf(urlOf(names.large)) };
    await withServer(urlOf(names.small), KEEP_NOTHING, (smallPort) =>
      withServer(urlOf(names.large), KEEP_NOTHING, async (largePort) => {
        const ports = { small: smallPort, large: largePort };
        for (const size of ['small', 'large'] as const) {
          for (const s of TIMED) await sequentialLatenciesMs(ports[size], s, fixtures[size], 1);
        }
        for (let r = 0; r < rounds; r++) {
          for (const size of ['small', 'large'] as const) {
            for (const s of TIMED) latency[size][s].push(...(await sequentialLatenciesMs(ports[size], s, fixtures[size], seconds)));
          }
        }
      }),
    );

    console.log('');
    console.log(
      `catalog throughput (${SMALL_PRODUCTS} products, median of ${rounds} rounds, ratio to the trivial operation of the same round):`,
    );
    for (const s of SCENARIOS) {
      const target = TARGETS[s];
      console.log(
        `  ${s.padEnd(13)} ${String(Math.round(median(rps[s])!)).padStart(6)} req/s   ratio ${median(ratios[s])!.toFixed(2)}${target ? `   (target >= ${target.toFixed(2)})` : ''}`,
      );
    }
    console.log('the same on a service that keeps no listing page or product card (every answer read from PostgreSQL):');
    for (const s of UNCACHED) {
      console.log(
        `  ${s.padEnd(13)} ${String(Math.round(median(uncachedRps[s])!)).padStart(6)} req/s   ratio ${median(uncachedRatios[s])!.toFixed(2)}`,
      );
    }
    console.log(
      `single-client p95 latency, keeping nothing, ${largeProducts} products against ${SMALL_PRODUCTS} (targets < 50 ms, ratio <= 1.50):`,
    );
    for (const s of TIMED) {
      const a = percentile(latency.small[s], 95);
      const b = percentile(latency.large[s], 95);
      console.log(
        `  ${s.padEnd(13)} ${a.toFixed(2)} ms -> ${b.toFixed(2)} ms   ratio ${(b / a).toFixed(2)}   (${latency.large[s].length} requests; median ${percentile(latency.small[s], 50).toFixed(2)} -> ${percentile(latency.large[s], 50).toFixed(2)} ms)`,
      );
    }
    for (const s of TIMED) console.log(`figure ${s}-p95-ms-${large} ${percentile(latency.large[s], 95).toFixed(2)}`);
    for (const s of TIMED) console.log(`figure ${s}-p95-ms-${smallSize} ${percentile(latency.small[s], 95).toFixed(2)}`);
    for (const s of TIMED)
      console.log(
        `figure ${s}-p95-${large}/${smallSize} ${(percentile(latency.large[s], 95) / percentile(latency.small[s], 95)).toFixed(2)}`,
      );
    console.log(`figure catalog-import-products ${largeProducts}`);
    console.log(`figure catalog-import-rows-per-second ${largeImport!.rows_per_second}`);
    console.log(`figure catalog-import-peak-rss-mb ${largeImport!.peak_rss_mb}`);
    console.log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  } finally {
    for (const db of Object.values(names)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
    await cluster?.stop();
    rmSync(fileDir, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
