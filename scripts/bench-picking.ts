// npm run bench, the picking scenario, on a real PostgreSQL (BENCH_DATABASE_URL, or an
// embedded one in a temporary folder). Not a test. 32 pickers, each with an order of 40 lines:
//   start   - POST .../start of every order (latency per start);
//   items   - item commands for BENCH_SECONDS from 32 concurrent pickers (each on its own session:
//             the command path, not lock contention), every one a real change with a new
//             Idempotency-Key (piece-quantity alternating between the ordered count and one
//             less), asking for gzip as the apps do, reported as commands/s and as a ratio to
//             the trivial operation (GET /api/logistics/map/config) measured on the same
//             service in the same run.
//             Target: ratio >= 0.30;
//   finish  - every item picked, then POST .../finish (latency per finish).
// The service runs in a child process pinned to core 0 (scripts/lib/bench-service.ts); the load
// runs here.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { insertConfirmedOrder } from '../db/seed/picking.js';
import { DEMO_CUSTOMER } from '../db/seed/accounts.js';
import { DEMO_STORES } from '../db/seed/stores.js';
import { TokenService } from '../platform/tokens.js';
import { loadConfig } from '../platform/config.js';
import { openBenchDatabase, topStatements } from './lib/bench-database.js';
import { BENCH_JWT_SECRET, startBenchService, type BenchService } from './lib/bench-service.js';
import { startWritePathFloor } from './lib/write-path-floor.js';

const TRIVIAL = '/api/logistics/map/config';
const STORE = DEMO_STORES[0]!.id;
const PICKERS = 32;
const LINES = 40;

type Db = ReturnType<typeof connect>['db'];

const openDatabase = () => openBenchDatabase('grocery_bench_picking');

export interface Lane {
  auth: string;
  orderId: string;
  items: { id: number; ordered: number }[];
  next: number;
}

/** 32 pickers of the store, each signed in, and an order of 40 piece lines for each. */
export async function prepareLanes(db: Db): Promise<Lane[]> {
  const tokens = new TokenService(loadConfig({ ...process.env, JWT_SECRET: BENCH_JWT_SECRET }).jwt);
  const inventories = await db
    .selectFrom('inventories as i')
    .innerJoin('products as p', 'p.id', 'i.product_id')
    .select('i.id')
    .where('i.store_id', '=', STORE)
    .where('i.is_default', '=', true)
    .where('p.weight_based', '=', false)
    .orderBy('p.code')
    .limit(LINES)
    .execute();
  const lanes: Lane[] = [];
  for (let n = 0; n < PICKERS; n++) {
    const picker = await db
      .insertInto('pickers')
      .values({ login: `bench-picker-${n}`, display_name: `Bench ${n}`, password_hash: 'not-used', default_store_id: STORE })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db.insertInto('picker_stores').values({ picker_id: picker.id, store_id: STORE }).execute();
    const sessionId = randomUUID();
    await db
      .insertInto('auth_sessions')
      .values({
        id: sessionId,
        principal_kind: 'picker',
        picker_id: picker.id,
        refresh_jti: randomUUID(),
        expires_at: new Date(Date.now() + 86_400_000),
      })
      .execute();
    const order = await db.transaction().execute((trx) =>
      insertConfirmedOrder(
        trx,
        {
          customerId: DEMO_CUSTOMER.id,
          storeId: STORE,
          type: 'delivery',
          express: true,
          lines: inventories.map((inv, i) => ({ inventoryId: inv.id, quantity: String(2 + (i % 3)) })),
        },
        new Date(),
      ),
    );
    lanes.push({
      auth: `Bearer ${tokens.sign('picker_access', String(picker.id), sessionId)}`,
      orderId: order.orderId,
      items: [],
      next: 0,
    });
  }
  return lanes;
}

/** What the picker endpoints called here answer (start, finish): only `items` is read. */
interface PickingAnswer {
  items?: { item_id: number; ordered_quantity: string }[];
}

export async function post(
  base: string,
  lane: Lane,
  path: string,
  body?: object,
): Promise<{ status: number; body: PickingAnswer | undefined; ms: number }> {
  const t0 = performance.now();
  const r = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { authorization: lane.auth, 'idempotency-key': randomUUID(), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as PickingAnswer) : undefined, ms: performance.now() - t0 };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Updates of the rows every item command changes, and how many were heap-only (no index entries written). */
async function updateCounts(db: Db): Promise<Map<string, { updates: number; hot: number }>> {
  // The statistics of the commands just ended reach the view within a second (PostgreSQL 15+).
  await new Promise((r) => setTimeout(r, 1500));
  const { rows } = await sql<{ relname: string; updates: string; hot: string }>`
    SELECT relname, n_tup_upd AS updates, n_tup_hot_upd AS hot FROM pg_stat_user_tables
    WHERE relname IN ('picking_sessions', 'picking_items', 'orders')`.execute(db);
  return new Map(rows.map((r) => [r.relname, { updates: Number(r.updates), hot: Number(r.hot) }]));
}

const hotShare = (before: Map<string, { updates: number; hot: number }>, after: Map<string, { updates: number; hot: number }>) =>
  [...after]
    .map(([table, a]) => {
      const b = before.get(table) ?? { updates: 0, hot: 0 };
      const updates = a.updates - b.updates;
      return `${table} ${updates ? Math.round(((a.hot - b.hot) / updates) * 100) : 0} % of ${updates}`;
    })
    .join(', ');

const COMMAND_ROUTE = 'POST /api/picker/orders/{id}/items/{id}/piece-quantity';

/**
 * Item commands for `seconds` from 32 concurrent pickers against `target` (the service or its
 * floor), each on its own session: every one a real change with a new Idempotency-Key
 * (piece-quantity alternating between the ordered count and one less), asking for gzip as the
 * apps do. Fails unless every command was applied.
 */
export async function itemCommandLoad(target: Pick<BenchService, 'port' | 'roundTrips'>, lanes: Lane[], seconds: number) {
  let nextLane = 0;
  const statuses = new Map<number, number>();
  await target.roundTrips(); // from here on
  const commands = await autocannon({
    url: `http://127.0.0.1:${target.port}`,
    connections: PICKERS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req, context) => {
          const lane = ((context as { lane?: Lane }).lane ??= lanes[nextLane++ % lanes.length]);
          const k = lane!.next++;
          const item = lane!.items[k % lane!.items.length];
          // Each round over the items alternates the full count and one less: every command changes the item.
          const quantity = Math.floor(k / lane!.items.length) % 2 === 0 ? item!.ordered - 1 : item!.ordered;
          return {
            ...req,
            path: `/api/picker/orders/${lane!.orderId}/items/${item!.id}/piece-quantity`,
            // As the apps' HTTP stacks (OkHttp, URLSession) do: the answer comes gzipped.
            headers: {
              'content-type': 'application/json',
              'accept-encoding': 'gzip',
              authorization: lane!.auth,
              'idempotency-key': randomUUID(),
            },
            body: JSON.stringify({ quantity }),
          };
        },
        onResponse: (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1),
      },
    ],
  });
  const trips = (await target.roundTrips())[COMMAND_ROUTE];
  const applied = statuses.get(200) ?? 0;
  if (applied !== commands.requests.total || commands.errors) {
    throw new Error(`item commands: statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${commands.errors} errors`);
  }
  // A lane's next round starts where this one stopped: the alternation goes on with the next target.
  return { perSecond: applied / seconds, p50: commands.latency.p50, p99: commands.latency.p99, roundTrips: +trips!.perRequest.toFixed(2) };
}

/**
 * Item commands on a freshly started server, measured after WARM_UP_SECONDS of the same load: the
 * first second of a new process (its JIT, the pool opening its connections, PostgreSQL backends
 * with empty caches) is a start-up cost, not the command's, and alone it made the p99.
 */
async function warmItemCommandLoad(target: Pick<BenchService, 'port' | 'roundTrips'>, lanes: Lane[], seconds: number) {
  await itemCommandLoad(target, lanes, WARM_UP_SECONDS);
  return itemCommandLoad(target, lanes, seconds);
}
const WARM_UP_SECONDS = 2;

/** Runs the picking scenario and prints it (called by scripts/bench.ts after the router rounds). */
export async function benchPicking(): Promise<{ commandsPerSecond: number; floorPerSecond: number | null }> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const database = await openDatabase();
  const handle = connect(database.url, { max: 4 });
  let child: BenchService | null = null;
  try {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
    const lanes = await prepareLanes(handle.db);
    child = await startBenchService(database.url);
    let base = `http://127.0.0.1:${child.port}`;

    const starts = await Promise.all(lanes.map((lane) => post(base, lane, `/api/picker/orders/${lane.orderId}/start`)));
    starts.forEach((s, i) => {
      if (s.status !== 200) throw new Error(`start answered ${s.status}: ${JSON.stringify(s.body)}`);
      lanes[i]!.items = s.body!.items!.map((it) => ({ id: it.item_id, ordered: Number(it.ordered_quantity) }));
    });

    await autocannon({ url: `${base}${TRIVIAL}`, connections: PICKERS, duration: 1 });
    const trivial = await autocannon({ url: `${base}${TRIVIAL}`, connections: PICKERS, duration: seconds });
    if (trivial.non2xx || trivial.errors) throw new Error(`trivial: ${trivial.non2xx} non-2xx, ${trivial.errors} errors`);

    // The answer of one item command on a 40-line order, as sent to a client without gzip: the
    // delta, and the whole session (Prefer: return=representation).
    const sample = lanes[0];
    const sampleItem = sample!.items[0];
    const answerSize = async (quantity: number, prefer: Record<string, string>) => {
      const r = await fetch(`${base}/api/picker/orders/${sample!.orderId}/items/${sampleItem!.id}/piece-quantity`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: sample!.auth,
          'idempotency-key': randomUUID(),
          'accept-encoding': 'identity',
          ...prefer,
        },
        body: JSON.stringify({ quantity }),
      });
      const bytes = (await r.arrayBuffer()).byteLength;
      if (r.status !== 200) throw new Error(`piece-quantity answered ${r.status}`);
      return bytes;
    };
    const answerBytes = await answerSize(sampleItem!.ordered - 1, {});
    const fullAnswerBytes = await answerSize(sampleItem!.ordered, { prefer: 'return=representation' });

    // The floor (scripts/lib/write-path-floor.ts) runs the same reads and writes on the same
    // sessions before and after the service (the mean of the two, so that neither side gets the
    // emptier tables), each alone on core 0.
    await child.stop();
    child = null;
    const floorRun = async () => {
      const floorServer = await startWritePathFloor(database.url);
      try {
        return await warmItemCommandLoad(floorServer, lanes, seconds);
      } finally {
        await floorServer.stop();
      }
    };
    const withFloor = process.env.BENCH_FLOORS !== '0';
    const floorBefore = withFloor ? await floorRun() : null;
    child = await startBenchService(database.url);
    const statements = topStatements(handle.db);
    await statements.start();
    const updatesBefore = await updateCounts(handle.db);
    const service = await warmItemCommandLoad(child, lanes, seconds);
    await statements.print('item commands');
    const hot = hotShare(updatesBefore, await updateCounts(handle.db));
    await child.stop();
    child = null;
    const floorAfter = withFloor ? await floorRun() : null;
    const floor = floorBefore && floorAfter ? { ...floorAfter, perSecond: (floorBefore.perSecond + floorAfter.perSecond) / 2 } : null;
    child = await startBenchService(database.url);
    base = `http://127.0.0.1:${child.port}`;
    // Pick every item in full, then finish.
    for (const lane of lanes) {
      for (const item of lane.items) {
        const r = await post(base, lane, `/api/picker/orders/${lane.orderId}/items/${item.id}/piece-quantity`, { quantity: item.ordered });
        if (r.status !== 200) throw new Error(`piece-quantity answered ${r.status}`);
      }
    }
    const finishes = await Promise.all(lanes.map((lane) => post(base, lane, `/api/picker/orders/${lane.orderId}/finish`)));
    for (const f of finishes) if (f.status !== 200) throw new Error(`finish answered ${f.status}: ${JSON.stringify(f.body)}`);

    const perSecond = service.perSecond;
    console.log('');
    console.log(`picking: ${PICKERS} pickers, orders of ${LINES} lines`);
    console.log(
      `start (${PICKERS} at once)        mean ${mean(starts.map((s) => s.ms)).toFixed(0)} ms, max ${Math.max(...starts.map((s) => s.ms)).toFixed(0)} ms`,
    );
    console.log(`trivial operation (${TRIVIAL}) ${Math.round(trivial.requests.average)} req/s on the full service`);
    console.log(
      `item commands, ${PICKERS} pickers    ${Math.round(perSecond)} commands/s (p50 ${service.p50} ms, p99 ${service.p99} ms), ${service.roundTrips} round trips each`,
    );
    if (floor)
      console.log(
        `floor (same reads and writes, bare node:http + pg) ${Math.round(floor.perSecond)} commands/s (before ${Math.round(floorBefore!.perSecond)}, after ${Math.round(floorAfter!.perSecond)}; p99 ${floor.p99} ms), ${floor.roundTrips} round trips each`,
      );
    console.log(`item command / trivial  ${(perSecond / trivial.requests.average).toFixed(3)}  (target >= 0.30)`);
    console.log(
      `finish (${PICKERS} at once)       mean ${mean(finishes.map((s) => s.ms)).toFixed(0)} ms, max ${Math.max(...finishes.map((s) => s.ms)).toFixed(0)} ms`,
    );
    console.log(`heap-only (HOT) updates of the item commands: ${hot}`);
    console.log(`figure picker-commands-per-second ${Math.round(perSecond)}`);
    console.log(`figure picker-command-p99-ms ${service.p99}`);
    console.log(
      `answer of an item command on a ${LINES}-line order: ${answerBytes} bytes (the whole session on request: ${fullAnswerBytes})`,
    );
    console.log(`figure picker-command-answer-bytes ${answerBytes}`);
    console.log(`figure picker-command-full-answer-bytes ${fullAnswerBytes}`);
    console.log(`figure picker-command-round-trips ${service.roundTrips}`);
    if (floor) {
      console.log(`figure floor-picker-command-per-second ${Math.round(floor.perSecond)}`);
      console.log(`figure picker-command/floor ${(perSecond / floor.perSecond).toFixed(2)}`);
    }
    return { commandsPerSecond: perSecond, floorPerSecond: floor?.perSecond ?? null };
  } finally {
    await child?.stop();
    await handle.close();
    await database.close();
  }
}
