// npm run bench:batch: batch picking on the demo store's shelf layout, on a real PostgreSQL
// (BENCH_DATABASE_URL, or an embedded one in a temporary folder), with the demo data. Not a test.
//
//   walk     - BENCH_BATCH_ROUNDS (50) rounds of 3 orders of realistic baskets (10-40 lines drawn
//              from the store's stocked products, a fixed seed so that runs compare), each round's
//              3 orders taken as one batch through the API (POST /api/picker/batches). The merged
//              walk is the batch's pick list (GET .../pick-list); each order walked alone is its own
//              session's items (GET /api/picker/orders/{order_id}/session, in walking order). Both
//              are measured with the service's own yardstick, routePositionsPassed
//              (domain/picking/batching.ts): the shelf positions passed along the store's route
//              (storeRoute). Prints the sum over the rounds of the batch's positions divided by the
//              sum of the orders' own (figure batch-walk/separate-walks; target <= 0.60), and the
//              distinct stops likewise as context.
//   commands - 32 pickers (BENCH_BATCH_PICKERS), each with its own batch of 3 orders of 40 piece
//              lines, every tote bound. Each step of a picker is what the handheld does at a shelf:
//              GET /api/picker/batches/{batch_id}/next, the pick command of one line of the stop
//              (POST .../items/{item_id}/piece-quantity with the ordered count) and the placement
//              of that item into its tote (POST .../items/{item_id}/tote), each with a new
//              Idempotency-Key, asking for gzip as the apps do. Steps per second over BENCH_SECONDS
//              (after a second of warm-up), against a floor doing the same database work on bare
//              node:http + pg (below), measured in the same run on the same batches: floor, then
//              BENCH_ROUNDS (3) times service and floor, each alone on core 0; each service run is
//              divided by the mean of the floor runs either side of it, and the median of those is
//              figure batch-command/floor (target >= 0.60). Where the cost goes is
//              printed beside it: PostgreSQL round trips per request of each route
//              (scripts/lib/round-trips.ts), each route's mean latency under load and with one
//              picker alone, and with BENCH_PG_STATEMENTS=1 the statements PostgreSQL ran per step
//              and those that cost it most during the last service run.
//
// The floor follows scripts/lib/write-path-floor.ts: the same checks and writes as the service by
// construction - the service's own query functions and rules (findBatchOfPicker, batchWalkItems
// and walkStops for the next stop; readItemCommand, the item state machine and writeItemCommand
// for the pick; withIdempotency around lockOrderOfPicker, lockCommandSession, loadItems,
// findOpenToteByLabel, toteFit, placeItemInTote, commitSessionChange and totesOfSessions for the
// placement), the auth session check, through the same pool - without Express, openapi-backend's
// routing and validation, the handler layer and the presenters (its answers are the rows read).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { insertConfirmedOrder } from '../db/seed/picking.js';
import { DEMO_CUSTOMER } from '../db/seed/accounts.js';
import { DEMO_STORES } from '../db/seed/stores.js';
import { isSessionActive } from '../db/queries/auth.js';
import {
  batchWalkItems,
  findBatchOfPicker,
  findOpenToteByLabel,
  placeItemInTote,
  storeRoute,
  totesOfSessions,
  type WalkItemRow,
} from '../db/queries/picking/batches.js';
import { changedItemColumns, readItemCommand, writeItemCommand } from '../db/queries/picking/commands.js';
import { itemFacts, loadItems, type ItemRow } from '../db/queries/picking/items.js';
import { lockCommandSession, lockOrderOfPicker } from '../db/queries/picking/sessions.js';
import { parseDecimal } from '../domain/money/decimal.js';
import { compareSequence, holdsGoods, routePositionsPassed, toteFit, walkStops, type WalkLine } from '../domain/picking/batching.js';
import { applyItemCommand, isResolved, UNIT } from '../domain/picking/items.js';
import type { components } from '../generated/api.test.js';
import { systemClock } from '../platform/clock.js';
import { loadConfig } from '../platform/config.js';
import { TokenService } from '../platform/tokens.js';
import { fingerprintOf, IDEMPOTENCY_TTL_SECONDS, withIdempotency } from '../services/idempotency.js';
import { customerView, itemChange } from '../services/picking/item-command.js';
import { commitSessionChange } from '../services/picking/runner.js';
import { chargedPrice } from '../services/presenters/picking.js';
import { serializeBody, serializedFormOf } from '../services/stored-body.js';
import { insertBenchPicker } from './lib/bench-accounts.js';
import { openBenchDatabase, topStatements } from './lib/bench-database.js';
import { BENCH_JWT_SECRET, startBenchService, type BenchService } from './lib/bench-service.js';
import { askRoundTrips, countRoundTrips, type RoundTrips } from './lib/round-trips.js';

type Schemas = components['schemas'];
type Db = ReturnType<typeof connect>['db'];

const STORE = DEMO_STORES[0]!;
/** The baskets' seed: every run draws the same orders. */
const SEED = 20_261_202;
const ORDERS_PER_BATCH = 3;
const WARMUP_MS = 1000;
/** One picker alone, after each run under load (for at most this long, this many steps): the latency of each route without queueing. */
const ALONE_MS = 1500;
const ALONE_STEPS = 12;
const FLOOR_FLAG = '--batch-floor';

// ---------------------------------------------------------------------------------------------
// Data

/** mulberry32: the baskets must not depend on Math.random. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
}
type Rng = ReturnType<typeof prng>;

interface Stocked {
  inventoryId: string;
  weightBased: boolean;
  located: boolean;
}

/** The store's products on sale and in stock (their default unit), in a fixed order. */
async function stockedProducts(db: Db): Promise<Stocked[]> {
  const rows = await db
    .selectFrom('inventories as i')
    .innerJoin('products as p', 'p.id', 'i.product_id')
    .select(['i.id', 'p.weight_based', 'i.location_sequence'])
    .where('i.store_id', '=', STORE.id)
    .where('i.is_default', '=', true)
    .where('i.in_stock', '=', true)
    .orderBy('p.code')
    .execute();
  return rows.map((r) => ({ inventoryId: r.id, weightBased: r.weight_based, located: r.location_sequence !== null }));
}

/** `count` distinct products of `from`, each in a quantity a customer would order. */
function basket(rng: Rng, from: readonly Stocked[], count: number): { inventoryId: string; quantity: string }[] {
  const picked = new Set<number>();
  while (picked.size < Math.min(count, from.length)) picked.add(rng.int(0, from.length - 1));
  return [...picked].map((i) => {
    const p = from[i]!;
    // Pieces 1-3; weight goods 0.3-1.5 kg.
    return { inventoryId: p.inventoryId, quantity: p.weightBased ? (rng.int(6, 30) * 0.05).toFixed(3) : String(rng.int(1, 3)) };
  });
}

async function insertOrder(db: Db, lines: { inventoryId: string; quantity: string }[]): Promise<string> {
  const order = await db
    .transaction()
    .execute((trx) =>
      insertConfirmedOrder(trx, { customerId: DEMO_CUSTOMER.id, storeId: STORE.id, type: 'delivery', express: true, lines }, new Date()),
    );
  return order.orderId;
}

interface Picker {
  id: number;
  auth: string;
}

// ---------------------------------------------------------------------------------------------
// HTTP

interface Answer<T> {
  status: number;
  body: T;
  ms: number;
}

/** One request on a keep-alive agent, the answer inflated when gzipped and parsed. */
function call<T>(
  agent: http.Agent,
  port: number,
  method: 'GET' | 'POST',
  path: string,
  auth: string,
  body?: object,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const t0 = performance.now();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          authorization: auth,
          'accept-encoding': 'gzip',
          ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}),
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const raw = Buffer.concat(chunks);
            const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
            let parsed: unknown = text;
            if (text && String(res.headers['content-type']).includes('json')) parsed = JSON.parse(text);
            resolve({ status: res.statusCode ?? 0, body: parsed as T, ms: performance.now() - t0 });
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function expectOk<T>(what: string, a: Answer<T>): T {
  if (a.status !== 200) throw new Error(`${what} answered ${a.status}: ${JSON.stringify(a.body).slice(0, 500)}`);
  return a.body;
}

/** Runs `work` over `items`, at most `limit` at once. */
async function inParallel<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i]!, i);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// The walk

type SessionItem = Schemas['PickingSessionSchema']['items'][number];

/** An order walked alone: its session's items, one stop per product and place (walkStops of a batch of one). */
const ownStops = (orderId: string, items: readonly SessionItem[]) =>
  walkStops<WalkLine>(
    items.map((it, position) => ({
      itemId: it.item_id,
      orderId,
      productId: it.product_id,
      sequence: it.location?.sequence ?? null,
      position,
    })),
    () => 0,
  );

interface WalkResult {
  rounds: number;
  route: number;
  lines: number;
  unlocatedLines: number;
  /** Shelf positions passed, stops, and distinct shelf positions stopped at (several products may stand at one). */
  merged: { positions: number; stops: number; places: number };
  separate: { positions: number; stops: number; places: number };
  /** Rounds whose pick list is not the walk of the orders' sessions merged (walkStops), or not in route order. */
  anomalies: string[];
}

async function benchWalk(db: Db, base: { port: number; agent: http.Agent }, pickers: Picker[], batches: string[][]): Promise<WalkResult> {
  const route = await storeRoute(db, STORE.id);
  const result: WalkResult = {
    rounds: batches.length,
    route: route.length,
    lines: 0,
    unlocatedLines: 0,
    merged: { positions: 0, stops: 0, places: 0 },
    separate: { positions: 0, stops: 0, places: 0 },
    anomalies: [],
  };
  for (const [round, orderIds] of batches.entries()) {
    const picker = pickers[round]!;
    const get = <T>(path: string) => call<T>(base.agent, base.port, 'GET', path, picker.auth);
    const batch = expectOk(
      'take batch',
      await call<Schemas['PickingBatchSchema']>(base.agent, base.port, 'POST', '/api/picker/batches', picker.auth, { order_ids: orderIds }),
    );
    const list = expectOk('pick list', await get<Schemas['PickingBatchPickListSchema']>(`/api/picker/batches/${batch.batch_id}/pick-list`));
    const merged = list.stops.map((s) => s.location.sequence);
    result.merged.positions += routePositionsPassed(route, merged);
    result.merged.stops += list.stops.length;
    result.merged.places += new Set(merged).size;
    // Lines of one place in the order of their sessions (the service's tie-break).
    const all: WalkLine[] = [];
    for (const o of batch.orders) {
      const session = expectOk('session', await get<Schemas['PickingSessionSchema']>(`/api/picker/orders/${o.order_id}/session`));
      const own = ownStops(o.order_id, session.items);
      result.separate.positions += routePositionsPassed(
        route,
        own.map((s) => s.sequence),
      );
      result.separate.stops += own.length;
      result.separate.places += new Set(own.map((s) => s.sequence)).size;
      result.lines += session.items.length;
      result.unlocatedLines += session.items.filter((i) => (i.location?.sequence ?? null) === null).length;
      const seqs = session.items.map((i) => i.location?.sequence ?? null);
      if (seqs.some((s, i) => i > 0 && compareSequence(seqs[i - 1]!, s) > 0)) {
        result.anomalies.push(`round ${round}: the session of order ${o.order_number} is not in route order`);
      }
      session.items.forEach((it, position) =>
        all.push({
          itemId: it.item_id,
          orderId: String(o.session_id),
          productId: it.product_id,
          sequence: it.location?.sequence ?? null,
          position,
        }),
      );
    }
    const expected = walkStops(all, Number).map((s) => s.sequence);
    if (expected.length !== merged.length || expected.some((s, i) => s !== merged[i])) {
      result.anomalies.push(
        `round ${round}: the pick list has ${merged.length} stops, the sessions' items merged by walkStops ${expected.length}`,
      );
    }
    if (merged.some((s, i) => i > 0 && compareSequence(merged[i - 1]!, s) > 0)) {
      result.anomalies.push(`round ${round}: the pick list is not in route order`);
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Batch commands under load

interface Lane {
  picker: Picker;
  batchId: number;
  /** Items this picker picked and placed (a stop's line is taken once). */
  done: Set<number>;
  steps: number;
  /** Its walk ended: later runs leave it out. */
  finished: boolean;
}

/** A stop line as the service answers it, or as the floor does (the rows read). */
interface AnyStopLine {
  order_id: string;
  item_id?: number;
  itemId?: number;
  ordered_quantity: string;
  tote_label?: string | null;
  own_tote_label?: string | null;
}
interface AnyNextStop {
  stop: { lines: AnyStopLine[] } | null;
}

type Route = 'next' | 'pick' | 'tote';
const ROUTES: Route[] = ['next', 'pick', 'tote'];
const ROUTE_KEYS: Record<Route, string> = {
  next: 'GET /api/picker/batches/{id}/next',
  pick: 'POST /api/picker/orders/{id}/items/{id}/piece-quantity',
  tote: 'POST /api/picker/orders/{id}/items/{id}/tote',
};

interface Target {
  port: number;
  roundTrips(): Promise<RoundTrips>;
}

interface LoadResult {
  stepsPerSecond: number;
  windowSeconds: number;
  /** Whether a picker's walk ended before the time was up (the window then ends there). */
  cut: boolean;
  /** Mean latency of each route in the window, ms. */
  meanMs: Record<Route, number>;
  p99Ms: number;
  roundTrips: Record<Route, number>;
  /** Mean latency of each route with one picker alone, ms. */
  aloneMs: Record<Route, number>;
  /** Statements PostgreSQL ran per step, BEGIN and COMMIT included (BENCH_PG_STATEMENTS=1; else null). */
  statementsPerStep: number | null;
}

/**
 * With BENCH_PG_STATEMENTS=1 (embedded PostgreSQL): how many statements PostgreSQL ran since
 * `reset()` (pg_stat_statements, utility statements such as BEGIN and COMMIT included), counted at
 * the server whatever request made them. Otherwise both do nothing.
 */
function pgCalls(db: Db) {
  const on = process.env.BENCH_PG_STATEMENTS === '1' && !process.env.BENCH_DATABASE_URL;
  return {
    async reset(): Promise<void> {
      if (!on) return;
      await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db);
      await sql`SELECT pg_stat_statements_reset()`.execute(db);
    },
    async total(): Promise<number | null> {
      if (!on) return null;
      const { rows } = await sql<{ calls: string }>`
        SELECT coalesce(sum(calls), 0)::text AS calls FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(db);
      return Number(rows[0]!.calls);
    },
  };
}
type PgCalls = ReturnType<typeof pgCalls>;

/** One step of a picker: the next stop, the pick of one of its lines, the placement into its tote. Null when the walk is done. */
async function step(agent: http.Agent, port: number, lane: Lane, record: (route: Route, ms: number) => void): Promise<boolean> {
  const next = await call<AnyNextStop>(agent, port, 'GET', `/api/picker/batches/${lane.batchId}/next`, lane.picker.auth);
  record('next', next.ms);
  const stop = expectOk('next', next).stop;
  if (!stop) {
    lane.finished = true;
    return false;
  }
  const line = stop.lines.find((l) => !lane.done.has(l.item_id ?? l.itemId!));
  if (!line) throw new Error(`next answered a stop whose lines are all picked and placed: ${JSON.stringify(stop).slice(0, 300)}`);
  const itemId = line.item_id ?? line.itemId!;
  const items = `/api/picker/orders/${line.order_id}/items/${itemId}`;
  const pick = await call(agent, port, 'POST', `${items}/piece-quantity`, lane.picker.auth, { quantity: Number(line.ordered_quantity) });
  record('pick', pick.ms);
  expectOk('piece-quantity', pick);
  const label = line.tote_label ?? line.own_tote_label;
  if (!label) throw new Error(`item ${itemId} has no bound tote`);
  const tote = await call(agent, port, 'POST', `${items}/tote`, lane.picker.auth, { tote_label: label });
  record('tote', tote.ms);
  expectOk('tote', tote);
  lane.done.add(itemId);
  lane.steps++;
  return true;
}

/** Every picker stepping on its own batch for `seconds` after the warm-up; then `aloneLane`'s picker alone. */
async function batchLoad(target: Target, allLanes: Lane[], seconds: number, aloneLane: Lane, pg: PgCalls): Promise<LoadResult> {
  const lanes = allLanes.filter((l) => !l.finished);
  if (lanes.length < allLanes.length / 2) {
    throw new Error('most pickers have walked their whole batch: lower BENCH_SECONDS or BENCH_ROUNDS');
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: lanes.length });
  const stepsSoFar = () => lanes.reduce((n, l) => n + l.steps, 0);
  try {
    await pg.reset();
    const stepsBefore = stepsSoFar();
    const t0 = performance.now();
    const from = t0 + WARMUP_MS;
    const until = from + seconds * 1000;
    const samples: Record<Route, number[]> = { next: [], pick: [], tote: [] };
    const stepsAt: number[] = [];
    let firstDone = Infinity;
    await target.roundTrips(); // from here on
    await Promise.all(
      lanes.map(async (lane) => {
        while (performance.now() < until) {
          const more = await step(agent, target.port, lane, (route, ms) => {
            const now = performance.now();
            if (now >= from && now <= until) samples[route].push(ms);
          });
          if (!more) {
            firstDone = Math.min(firstDone, performance.now());
            return;
          }
          stepsAt.push(performance.now());
        }
      }),
    );
    const trips = await target.roundTrips();
    const end = Math.min(until, firstDone);
    const windowSeconds = (end - from) / 1000;
    if (windowSeconds <= 0) throw new Error('a picker finished its walk during the warm-up: give the batches more lines');
    const steps = stepsAt.filter((t) => t >= from && t <= end).length;
    // One picker alone: no queueing, each route's own cost.
    const alone: Record<Route, number[]> = { next: [], pick: [], tote: [] };
    const aloneUntil = performance.now() + ALONE_MS;
    for (let n = 0; n < ALONE_STEPS && performance.now() < aloneUntil; n++) {
      if (aloneLane.finished || !(await step(agent, target.port, aloneLane, (route, ms) => alone[route].push(ms)))) break;
    }
    const statements = await pg.total();
    const all = ROUTES.flatMap((r) => samples[r]).sort((a, b) => a - b);
    return {
      stepsPerSecond: steps / windowSeconds,
      windowSeconds,
      cut: firstDone < until,
      meanMs: Object.fromEntries(ROUTES.map((r) => [r, mean(samples[r])])) as Record<Route, number>,
      p99Ms: all[Math.floor(all.length * 0.99)] ?? 0,
      roundTrips: Object.fromEntries(ROUTES.map((r) => [r, trips[ROUTE_KEYS[r]]?.perRequest ?? 0])) as Record<Route, number>,
      aloneMs: Object.fromEntries(ROUTES.map((r) => [r, mean(alone[r])])) as Record<Route, number>,
      statementsPerStep: statements === null ? null : statements / (stepsSoFar() - stepsBefore),
    };
  } finally {
    agent.destroy();
  }
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  return sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Takes each picker's batch through the API and binds every tote of it. */
async function takeBatches(base: { port: number; agent: http.Agent }, pickers: Picker[], orders: string[][]): Promise<Lane[]> {
  return inParallel(pickers, 4, async (picker, n) => {
    const batch = expectOk(
      'take batch',
      await call<Schemas['PickingBatchSchema']>(base.agent, base.port, 'POST', '/api/picker/batches', picker.auth, {
        order_ids: orders[n],
      }),
    );
    for (const tote of batch.orders.flatMap((o) => o.totes)) {
      expectOk(
        'bind tote',
        await call(base.agent, base.port, 'POST', `/api/picker/batches/${batch.batch_id}/totes/${tote.tote_id}/bind`, picker.auth, {
          label: `BT-${picker.id}-${tote.tote_id}`,
        }),
      );
    }
    return { picker, batchId: batch.batch_id, done: new Set<number>(), steps: 0, finished: false };
  });
}

// ---------------------------------------------------------------------------------------------
// The floor (child process)

/** Starts the floor on `databaseUrl` in a child process pinned to core 0, as the service runs. */
async function startBatchFloor(databaseUrl: string): Promise<Target & { stop(): void }> {
  const proc: ChildProcess = fork(import.meta.filename, [FLOOR_FLAG, databaseUrl], {
    execPath: 'taskset',
    execArgv: ['-c', '0', process.execPath, '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.on('message', (m: { type: string; port: number }) => m.type === 'ready' && resolve(m.port));
    proc.on('exit', (code) => reject(new Error(`batch floor exited with ${code}`)));
  });
  return {
    port,
    roundTrips: () => askRoundTrips(proc),
    stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}

class Refused extends Error {
  constructor(readonly status: number) {
    super(`refused with ${status}`);
  }
}

const NEXT = /^\/api\/picker\/batches\/(\d+)\/next$/;
const PICK = /^\/api\/picker\/orders\/([0-9a-f-]{36})\/items\/(\d+)\/piece-quantity$/;
const TOTE = /^\/api\/picker\/orders\/([0-9a-f-]{36})\/items\/(\d+)\/tote$/;

async function serveFloor(databaseUrl: string): Promise<void> {
  const roundTrips = await countRoundTrips();
  const config = loadConfig({ ...process.env, APP_ENV: 'TEST', DATABASE_URL: databaseUrl, JWT_SECRET: BENCH_JWT_SECRET });
  const { db } = connect(databaseUrl, { max: 20 });
  const tokens = new TokenService(config.jwt);
  const deps = { db, clock: systemClock };
  const open = (status: string) => status === 'active' || status === 'ready_to_finish';
  const factsOf = (r: WalkItemRow) => ({
    state: r.state,
    clarificationKind: r.clarification_kind,
    actual: r.actual_quantity === null ? null : parseDecimal(r.actual_quantity, 3),
  });
  const isLeft = (r: WalkItemRow) => open(r.session_status) && (!isResolved(factsOf(r)) || (holdsGoods(factsOf(r)) && r.tote_id === null));

  /** GET .../next: the batch, its walk (walkStops over the items), the first stop with work left. */
  const nextStop = async (pickerId: number, batchId: number): Promise<unknown> => {
    const batch = await findBatchOfPicker(db, batchId, pickerId);
    if (!batch) throw new Refused(404);
    const rows = await batchWalkItems(db, batch.id);
    const rank = new Map<string, number>();
    for (const r of rows) if (!rank.has(r.order_id)) rank.set(r.order_id, r.session_id);
    const stops = walkStops(
      rows.map((r) => ({ ...r, itemId: r.id, orderId: r.order_id, productId: r.product_id, sequence: r.location_sequence })),
      (orderId) => rank.get(orderId) ?? 0,
    );
    const remaining = stops.filter((s) => s.lines.some(isLeft));
    return {
      batch_id: batch.id,
      status: rows.some((r) => open(r.session_status)) ? 'open' : 'closed',
      stops_count: stops.length,
      remaining_stops_count: remaining.length,
      remaining_items_count: stops.reduce((n, s) => n + s.lines.filter(isLeft).length, 0),
      stop: remaining[0] ?? null,
    };
  };

  /** The pick: write-path-floor's piece-quantity (read, the state machine, one write with the answer). */
  const pieceQuantity = async (pickerId: number, orderId: string, itemId: number, key: string, quantity: number): Promise<unknown> => {
    const scope = { principal: `picker:${pickerId}`, operationId: 'setPickingItemPieceQuantity', key };
    const fingerprint = fingerprintOf({ order_id: orderId, item_id: String(itemId) }, { quantity }, null);
    for (let attempt = 0; attempt < 5; attempt++) {
      const read = await readItemCommand(db, orderId, pickerId, { itemId, scope, wholeItems: false });
      if (read.taken) throw new Refused(409);
      const { head, item, items } = read;
      if (!head || !head.mine || !item) throw new Refused(404);
      const t = applyItemCommand(itemFacts(item), { type: 'piece_quantity', quantity: BigInt(quantity) * UNIT });
      if (!t.ok) throw new Refused(409);
      const at = systemClock.now();
      const change = itemChange(items, itemId, t.next, chargedPrice(item), 'keep');
      const after = { ...item, ...changedItemColumns(change, at) } as ItemRow;
      const body = {
        status: t.outcome,
        applied: t.applied,
        representation: 'delta',
        session: { ...head, version: head.version + 1, updated_at: at, status: change.status },
        item: after,
      };
      const written = await writeItemCommand(db, {
        orderId,
        session: { id: head.id, storeId: head.store_id, pickerId },
        version: head.version,
        at,
        change,
        scan: null,
        orderChanges: customerView(item) !== customerView(after) ? ['picking_result'] : [],
        approval: null,
        answer: { scope, fingerprint, ttlSeconds: IDEMPOTENCY_TTL_SECONDS, held: false, status: 200, stored: await serializeBody(body) },
      });
      if (written) return body;
    }
    throw new Refused(409);
  };

  /** The placement: the service's transaction (runPickerCommand's locks and reads, the tote's checks and write). */
  const placeInTote = async (pickerId: number, orderId: string, itemId: number, key: string, label: string): Promise<unknown> => {
    const scope = { principal: `picker:${pickerId}`, operationId: 'placePickingItemInTote', key };
    const fingerprint = fingerprintOf({ order_id: orderId, item_id: String(itemId) }, { tote_label: label }, null);
    const reply = await withIdempotency(deps, scope, fingerprint, async (trx) => {
      const order = await lockOrderOfPicker(trx, orderId, pickerId);
      if (!order) throw new Refused(404);
      const head = await lockCommandSession(trx, orderId, pickerId);
      if (!head) throw new Refused(404);
      const items = await loadItems(trx, head.id);
      if (!open(head.status) || head.picker_id !== pickerId || head.batch_id === null) throw new Refused(409);
      const item = items.find((i) => i.id === itemId);
      if (!item) throw new Refused(404);
      const tote = await findOpenToteByLabel(trx, head.store_id, label);
      if (!tote) throw new Refused(422);
      const fit = toteFit(
        { sessionId: tote.session_id, temperatureClass: tote.temperature_class },
        { sessionId: head.id, temperatureClass: item.temperature_class },
      );
      if (fit !== 'fits' || !holdsGoods(itemFacts(item))) throw new Refused(409);
      const applied = item.tote_id !== tote.id;
      const now = systemClock.now();
      if (applied) {
        await placeItemInTote(trx, item.id, tote.id);
        item.tote_id = tote.id;
        item.updated_at = now;
        const unused = () => Promise.reject(new Error('not used by commitSessionChange'));
        await commitSessionChange({ trx, pickerId, lang: 'en', order, head, items, now, full: false, view: unused, answer: unused });
      }
      const placed = (await totesOfSessions(trx, [head.id])).find((t) => t.id === tote.id)!;
      return { status: 200 as const, body: { applied, tote: placed, item, session: head } };
    });
    return reply.body;
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    // Bound to the request's async context, as express's body parsing is: the round trips count by it.
    req.on(
      'end',
      AsyncResource.bind(() => {
        void (async () => {
          try {
            const claims = tokens.verify(String(req.headers.authorization ?? '').slice('Bearer '.length), 'picker_access');
            const pickerId = Number(claims.sub);
            if (!(await isSessionActive(db, claims.sid, { kind: 'picker', pickerId }))) throw new Refused(401);
            const url = req.url ?? '';
            const key = String(req.headers['idempotency-key']);
            let answer: unknown;
            let m: RegExpExecArray | null;
            if ((m = NEXT.exec(url))) answer = await nextStop(pickerId, Number(m[1]));
            else if ((m = PICK.exec(url)))
              answer = await pieceQuantity(pickerId, m[1]!, Number(m[2]), key, (JSON.parse(raw) as { quantity: number }).quantity);
            else if ((m = TOTE.exec(url)))
              answer = await placeInTote(pickerId, m[1]!, Number(m[2]), key, (JSON.parse(raw) as { tote_label: string }).tote_label);
            else throw new Refused(404);
            // Written once (gzipped from about 1 KB), as the service's answers are.
            const serialized = serializedFormOf(answer) ?? (await serializeBody(answer));
            const gzip = serialized.gzip && String(req.headers['accept-encoding'] ?? '').includes('gzip') ? serialized.gzip : null;
            res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
            res.end(gzip ?? serialized.text);
          } catch (err) {
            res.writeHead(err instanceof Refused ? err.status : 500, { 'content-type': 'text/plain' });
            res.end(String(err));
          }
        })();
      }),
    );
  });
  server.keepAliveTimeout = 60_000;
  process.on('message', (m: { type: string }) => {
    if (m.type === 'round-trips') process.send!({ type: 'round-trips', routes: roundTrips() });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ type: 'ready', port: (server.address() as AddressInfo).port }));
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_BATCH_ROUNDS ?? 50);
  const pickersCount = Number(process.env.BENCH_BATCH_PICKERS ?? 32);
  const linesPerOrder = 40;
  console.log(`Node ${process.version}`);
  // The load generator runs on the other core (the service and its floor on core 0).
  try {
    spawn('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* single-core machine: share the core */
  }
  const t0 = performance.now();
  const database = await openBenchDatabase('grocery_bench_batch');
  const handle = connect(database.url, { max: 4 });
  let child: BenchService | null = null;
  try {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
    const tokens = new TokenService(loadConfig({ ...process.env, JWT_SECRET: BENCH_JWT_SECRET }).jwt);
    const stocked = await stockedProducts(handle.db);
    const pieces = stocked.filter((p) => !p.weightBased);
    const rng = prng(SEED);
    // The walk's rounds: 3 orders of 10-40 lines each.
    const walkBaskets = Array.from({ length: rounds }, () =>
      Array.from({ length: ORDERS_PER_BATCH }, () => basket(rng, stocked, rng.int(10, 40))),
    );
    // The commands' batches: 3 orders of 40 piece lines per picker.
    const commandBaskets = Array.from({ length: pickersCount }, () =>
      Array.from({ length: ORDERS_PER_BATCH }, () => basket(rng, pieces, linesPerOrder)),
    );
    // One at a time: orders sharing products reserve the same stock rows.
    const insertOrders = async (baskets: { inventoryId: string; quantity: string }[][][]) => {
      const out: string[][] = [];
      for (const b of baskets) {
        const ids: string[] = [];
        for (const lines of b) ids.push(await insertOrder(handle.db, lines));
        out.push(ids);
      }
      return out;
    };
    const walkOrders = await insertOrders(walkBaskets);
    const commandOrders = await insertOrders(commandBaskets);
    const walkPickers: Picker[] = [];
    for (let n = 0; n < rounds; n++) walkPickers.push(await insertBenchPicker(handle.db, tokens, STORE.id, `bench-walk-${n}`));
    const commandPickers: Picker[] = [];
    for (let n = 0; n < pickersCount; n++) commandPickers.push(await insertBenchPicker(handle.db, tokens, STORE.id, `bench-batch-${n}`));
    console.log(
      `prepared in ${((performance.now() - t0) / 1000).toFixed(0)} s: demo data, ${stocked.length} stocked products in store ${STORE.code} (${stocked.filter((p) => !p.located).length} without a shelf location), ${rounds * ORDERS_PER_BATCH + pickersCount * ORDERS_PER_BATCH} orders`,
    );

    child = await startBenchService(database.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
    const base = { port: child.port, agent };
    const walk = await benchWalk(handle.db, base, walkPickers, walkOrders);
    const lanes = await takeBatches(base, commandPickers, commandOrders);
    agent.destroy();
    await child.stop();
    child = null;

    // Floor and service alternate on the same batches, each alone on core 0: floor, then
    // BENCH_ROUNDS times service and floor; each side's rate is the mean of its runs.
    const pg = pgCalls(handle.db);
    let probes = 0;
    const aloneLane = () => {
      const left = lanes.filter((l) => !l.finished);
      return left[probes++ % left.length]!;
    };
    const floorRun = async () => {
      const floor = await startBatchFloor(database.url);
      try {
        return await batchLoad(floor, lanes, seconds, aloneLane(), pg);
      } finally {
        floor.stop();
      }
    };
    const serviceRun = async (last: boolean) => {
      const svc = await startBenchService(database.url);
      child = svc;
      try {
        const statements = topStatements(handle.db);
        if (last) await statements.start();
        const result = await batchLoad(svc, lanes, seconds, aloneLane(), pg);
        if (last) await statements.print('batch steps, the last service run');
        return result;
      } finally {
        await svc.stop();
        child = null;
      }
    };
    const benchRounds = Number(process.env.BENCH_ROUNDS ?? 3);
    const floors = [await floorRun()];
    const services: LoadResult[] = [];
    for (let r = 1; r <= benchRounds; r++) {
      services.push(await serviceRun(r === benchRounds));
      floors.push(await floorRun());
    }
    const servicePerSecond = mean(services.map((l) => l.stepsPerSecond));
    const floorPerSecond = mean(floors.map((l) => l.stepsPerSecond));
    // Each service run against the floor runs on either side of it (the machine drifts): the median.
    const perRound = services.map((l, r) => l.stepsPerSecond / ((floors[r]!.stepsPerSecond + floors[r + 1]!.stepsPerSecond) / 2));
    const commandRatio = median(perRound);

    const ratio = (a: number, b: number) => (b ? a / b : NaN);
    const walkRatio = ratio(walk.merged.positions, walk.separate.positions);
    const stopsRatio = ratio(walk.merged.stops, walk.separate.stops);
    console.log('');
    console.log(
      `batch walk: ${walk.rounds} rounds of ${ORDERS_PER_BATCH} orders of 10-40 lines (seed ${SEED}, ${walk.lines} lines, ${walk.unlocatedLines} without a location) in store ${STORE.code}, a route of ${walk.route} shelf positions`,
    );
    console.log(
      `  merged walks (the batches' pick lists)     ${walk.merged.positions} shelf positions passed, ${walk.merged.stops} stops at ${walk.merged.places} shelf positions`,
    );
    console.log(
      `  each order walked alone (its session)      ${walk.separate.positions} shelf positions passed, ${walk.separate.stops} stops at ${walk.separate.places} shelf positions`,
    );
    for (const a of walk.anomalies.slice(0, 10)) console.log(`  anomaly: ${a}`);
    if (walk.anomalies.length > 10) console.log(`  ... ${walk.anomalies.length - 10} more anomalies`);
    console.log(`batch walk / separate walks      ${walkRatio.toFixed(3)}  (target <= 0.60)`);
    console.log(`distinct stops, batch / separate ${stopsRatio.toFixed(3)}`);
    console.log('');
    const ms = (r: Record<Route, number>) => ROUTES.map((k) => `${k} ${r[k].toFixed(1)}`).join(', ');
    const trips = (r: Record<Route, number>) => ROUTES.map((k) => `${k} ${+r[k].toFixed(2)}`).join(', ');
    const describe = (label: string, l: LoadResult) => {
      console.log(
        `${label.padEnd(10)} ${l.stepsPerSecond.toFixed(1)} steps/s (${(l.stepsPerSecond * 3).toFixed(0)} requests/s) over ${l.windowSeconds.toFixed(1)} s${l.cut ? ' (cut short: a walk ended)' : ''}, p99 ${l.p99Ms.toFixed(0)} ms`,
      );
      console.log(`           mean ms under load: ${ms(l.meanMs)}; one picker alone: ${ms(l.aloneMs)}`);
      console.log(
        `           round trips per request (at the pg client): ${trips(l.roundTrips)}${l.statementsPerStep === null ? '' : `; statements per step at PostgreSQL ${l.statementsPerStep.toFixed(1)}`}`,
      );
    };
    console.log(
      `batch commands: ${lanes.length} pickers, each a batch of ${ORDERS_PER_BATCH} orders of ${linesPerOrder} piece lines; a step = GET .../next, POST .../piece-quantity, POST .../tote`,
    );
    floors.forEach((f, i) => {
      describe(`floor ${i + 1}`, f);
      if (services[i]) describe(`service ${i + 1}`, services[i]);
    });
    const rates = (runs: LoadResult[]) => runs.map((l) => l.stepsPerSecond.toFixed(1)).join(', ');
    console.log(`service ${servicePerSecond.toFixed(1)} steps/s (runs ${rates(services)})`);
    console.log(`floor (same reads and writes, bare node:http + pg) ${floorPerSecond.toFixed(1)} steps/s (runs ${rates(floors)})`);
    const aloneOf = (runs: LoadResult[], k: Route) => mean(runs.map((l) => l.aloneMs[k]));
    console.log(
      `service cost above the floor, one picker alone: ${ROUTES.map((k) => {
        const d = aloneOf(services, k) - aloneOf(floors, k);
        return `${k} ${d >= 0 ? '+' : ''}${d.toFixed(1)} ms`;
      }).join(', ')}`,
    );
    const walked = Math.max(...lanes.map((l) => l.done.size));
    console.log(`the busiest picker has picked and placed ${walked} of its ${ORDERS_PER_BATCH * linesPerOrder} lines`);
    console.log(
      `batch step / floor  ${commandRatio.toFixed(2)}  (target >= 0.60; median over the service runs, each against the floor runs either side: ${perRound.map((x) => x.toFixed(2)).join(', ')})`,
    );
    console.log(`prepared and measured in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
    console.log(`figure batch-walk/separate-walks ${walkRatio.toFixed(3)}`);
    console.log(`figure batch-steps-per-second ${servicePerSecond.toFixed(1)}`);
    console.log(`figure floor-batch-steps-per-second ${floorPerSecond.toFixed(1)}`);
    console.log(`figure batch-command/floor ${commandRatio.toFixed(2)}`);
  } finally {
    await child?.stop();
    await handle.close();
    await database.close();
  }
}

const at = process.argv.indexOf(FLOOR_FLAG);
if (at >= 0) await serveFloor(process.argv[at + 1]!);
else await main();
