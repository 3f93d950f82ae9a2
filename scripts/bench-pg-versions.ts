// PostgreSQL 17 against 18, the embedded default (not a test; `npx tsx scripts/bench-pg-versions.ts`,
// or benchPgVersions() from scripts/bench.ts). Two embedded clusters, one of each version, made
// and started the same way (db/embedded.ts: same initdb options, same settings, durability off as
// every benchmark), each with a migrated and seeded database and a service on it (pinned to core
// 0, scripts/lib/bench-service.ts). Then rounds alternating the versions (17,18 then 18,17, ...),
// so that a drift of a busy machine hits both alike, each measuring on one version:
//   orders  - POST /api/orders/ from 32 clients (scripts/bench-orders.ts, benchOrders);
//   picking - item commands from 32 pickers on their own sessions (scripts/bench-picking.ts).
// Prints each round, the medians, and 18's throughput over 17's (ratios of the medians).
// BENCH_SECONDS (5) per measurement, BENCH_ROUNDS (4) rounds.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { connect, type DatabaseHandle } from '../db/connection.js';
import { ensureDatabase } from '../db/database.js';
import { startEmbeddedPostgres, type PostgresMajor } from '../db/embedded.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { benchOrders } from './bench-orders.js';
import { itemCommandLoad, post, prepareLanes, type Lane } from './bench-picking.js';
import { startBenchService, type BenchService } from './lib/bench-service.js';

const MAJORS: PostgresMajor[] = [17, 18];
const CLIENTS = 32;

interface Side {
  major: PostgresMajor;
  version: string;
  handle: DatabaseHandle;
  service: BenchService;
  lanes: Lane[];
  orders: number[];
  commands: number[];
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * A cluster of `major` with the benchmark's database, its service, and 32 started picking
 * sessions. What it starts goes on `cleanups` as it starts, for the caller to undo (last first).
 */
async function prepare(major: PostgresMajor, cleanups: (() => Promise<void>)[]): Promise<Side> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `grocery-bench-pg${major}-`));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755); // the unprivileged PostgreSQL user must enter it
  const cluster = await startEmbeddedPostgres(path.join(dir, 'data'), () => {}, [], { durable: false, major });
  cleanups.push(() => cluster.stop());
  const url = cluster.urlFor('grocery_bench_versions');
  await ensureDatabase(cluster.adminUrl, 'grocery_bench_versions');
  const handle = connect(url, { max: 4 });
  cleanups.push(() => handle.close());
  const { db } = handle;
  const version = (await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(db)).rows[0]!.v;
  await migrateToLatest(db);
  await seedDemoData(db, new Date());
  const lanes = await prepareLanes(db);
  // The lanes' sessions must stay open through every round, minutes apart: the idle-session sweep
  // is not what is measured, and must not close one meanwhile.
  const service = await startBenchService(url, { PICKING_SESSION_IDLE_MINUTES: '0' });
  cleanups.push(() => service.stop());
  const base = `http://127.0.0.1:${service.port}`;
  const starts = await Promise.all(lanes.map((lane) => post(base, lane, `/api/picker/orders/${lane.orderId}/start`)));
  starts.forEach((s, i) => {
    if (s.status !== 200) throw new Error(`PostgreSQL ${major}: start answered ${s.status}: ${JSON.stringify(s.body)}`);
    lanes[i]!.items = s.body!.items!.map((it) => ({ id: it.item_id, ordered: Number(it.ordered_quantity) }));
  });
  return { major, version, handle, service, lanes, orders: [], commands: [] };
}

export async function benchPgVersions(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const sides: Side[] = [];
    for (const major of MAJORS) sides.push(await prepare(major, cleanups));
    const of = (major: PostgresMajor) => sides.find((s) => s.major === major)!;
    console.log('');
    console.log(`PostgreSQL versions: ${sides.map((s) => s.version).join(' and ')}; ${rounds} rounds of ${seconds} s per measurement`);
    // Warm-up, not counted: the services' first requests and the servers' caches.
    for (const side of sides) {
      await benchOrders(side.service, side.handle.db, 2, CLIENTS, false);
      await itemCommandLoad(side.service, side.lanes, 2);
    }
    for (let round = 1; round <= rounds; round++) {
      for (const major of round % 2 ? MAJORS : [...MAJORS].reverse()) {
        const side = of(major);
        const orders = await benchOrders(side.service, side.handle.db, seconds, CLIENTS, false);
        const commands = await itemCommandLoad(side.service, side.lanes, seconds);
        side.orders.push(orders.orders);
        side.commands.push(commands.perSecond);
        console.log(
          `round ${round}, PostgreSQL ${major}: order creation ${Math.round(orders.orders)} orders/s (p99 ${orders.p99} ms), item commands ${Math.round(commands.perSecond)} commands/s (p99 ${commands.p99} ms)`,
        );
      }
    }
    const [pg17, pg18] = [of(17), of(18)];
    const line = (what: string, unit: string, a: number[], b: number[]) =>
      `${what} (medians of ${rounds}): PostgreSQL 17 ${Math.round(median(a))} ${unit}/s, 18 ${Math.round(median(b))} ${unit}/s`;
    console.log(line(`order creation, ${CLIENTS} clients`, 'orders', pg17.orders, pg18.orders));
    console.log(line(`item commands, ${CLIENTS} pickers`, 'commands', pg17.commands, pg18.commands));
    console.log(`figure order-creation-pg18/pg17 ${(median(pg18.orders) / median(pg17.orders)).toFixed(3)}`);
    console.log(`figure picker-command-pg18/pg17 ${(median(pg18.commands) / median(pg17.commands)).toFixed(3)}`);
  } finally {
    for (const undo of cleanups.reverse()) await undo().catch((err: unknown) => console.error(`cleaning up: ${(err as Error).message}`));
  }
}

if (process.argv[1] && import.meta.filename === path.resolve(process.argv[1])) {
  console.log(`node ${process.version}`);
  await benchPgVersions();
  process.exit(0);
}
