// npm run bench, part two: order creation, on a real PostgreSQL (BENCH_DATABASE_URL, or an
// embedded one in a temporary folder). Not a test.
//   orders  - POST /api/orders/ from 32 concurrent clients (each its own customer, product and
//             slot: the pipeline, not lock contention), reported as orders/s and as a ratio to the
//             trivial operation (GET /api/logistics/map/config) measured on the same service in
//             the same run. Target: ratio >= 0.20.
// The tracking sockets are scripts/bench-sockets.ts.
// The service runs in a child process pinned to core 0; load and clients run here.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { DEMO_STORES } from '../db/seed/stores.js';
import { TokenService } from '../platform/tokens.js';
import { loadConfig } from '../platform/config.js';
import { insertBenchCustomers } from './lib/bench-accounts.js';
import { openBenchDatabase, topStatements } from './lib/bench-database.js';
import { BENCH_JWT_SECRET, startBenchService, type BenchService } from './lib/bench-service.js';
import { startWritePathFloor } from './lib/write-path-floor.js';

const TRIVIAL = '/api/logistics/map/config';
const STORE = DEMO_STORES.find((s) => s.code === 'MSK-TVERSKAYA')!.id;
const ADDRESS = { lon: 37.6106, lat: 55.7579 };

const openDatabase = () => openBenchDatabase('grocery_bench');

/** Customers with an active session each, made in bulk; returns their access tokens. */
function customersWithTokens(db: ReturnType<typeof connect>['db'], count: number): Promise<{ customerId: string; token: string }[]> {
  return insertBenchCustomers(db, new TokenService(loadConfig({ ...process.env, JWT_SECRET: BENCH_JWT_SECRET }).jwt), count);
}

/** Puts back (or takes away) the NOTIFY trigger of migration 0001 that migration 2101 dropped. */
export async function notifyTrigger(db: ReturnType<typeof connect>['db'], on: boolean): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS outbox_events_notify ON outbox_events`.execute(db);
  if (!on) return;
  await sql`CREATE OR REPLACE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('outbox_events', NEW.id::text);
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events FOR EACH ROW EXECUTE FUNCTION outbox_notify()`.execute(db);
}

export async function benchOrders(
  child: Pick<BenchService, 'port' | 'roundTrips'>,
  db: ReturnType<typeof connect>['db'],
  seconds: number,
  CLIENTS = 32,
  measureTrivial = true,
): Promise<{ trivial: number; orders: number; roundTrips: number; p99: number }> {
  const customers = await customersWithTokens(db, CLIENTS);
  const unit = await db.selectFrom('measurement_units').select('id').where('code', '=', 'pc').executeTakeFirstOrThrow();
  const lanes: { auth: string; body: string }[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    const product = await db
      .insertInto('products')
      .values({ code: `BENCH-${i}-${randomUUID().slice(0, 6)}`, name_ru: `Товар ${i}`, name_en: `Product ${i}` })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('inventories')
      .values({ product_id: product.id, store_id: STORE, unit_id: unit.id, is_default: true, stock: '1000000.000', unit_price: '600.00' })
      .execute();
    const slotId = randomUUID();
    await sql`INSERT INTO store_slots (id, store_id, kind, slot_date, starts_at, ends_at, capacity)
      VALUES (${slotId}, ${STORE}, 'delivery', (now() AT TIME ZONE 'Europe/Moscow')::date + 2, now() + interval '2 days' + make_interval(mins => ${i}),
              now() + interval '2 days 2 hours' + make_interval(mins => ${i}), 1000000)`.execute(db);
    lanes.push({
      auth: `Bearer ${customers[i]!.token}`,
      body: JSON.stringify({
        type: 'delivery',
        payment_method: 'cash',
        items: [{ product_id: product.id, unit_id: unit.id, quantity: '2' }],
        delivery_context: { address_line: 'Tverskaya St, 7, Moscow', location: ADDRESS, slot_id: slotId },
      }),
    });
  }
  const base = `http://127.0.0.1:${child.port}`;
  let trivialRps = 0;
  if (measureTrivial) {
    await autocannon({ url: `${base}${TRIVIAL}`, connections: CLIENTS, duration: 1 });
    const trivial = await autocannon({ url: `${base}${TRIVIAL}`, connections: CLIENTS, duration: seconds });
    if (trivial.non2xx || trivial.errors) throw new Error(`trivial: ${trivial.non2xx} non-2xx, ${trivial.errors} errors`);
    trivialRps = trivial.requests.average;
  }

  let nextLane = 0;
  const statuses = new Map<number, number>();
  const statements = topStatements(db);
  await statements.start();
  await child.roundTrips(); // from here on
  const orders = await autocannon({
    url: `${base}/api/orders/`,
    connections: CLIENTS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (req, context) => {
          const lane = ((context as { lane?: { auth: string; body: string } }).lane ??= lanes[nextLane++ % lanes.length]);
          return {
            ...req,
            headers: {
              'content-type': 'application/json',
              authorization: lane!.auth,
              'x-store-id': STORE,
              'idempotency-key': randomUUID(),
            },
            body: lane!.body,
          };
        },
        onResponse: (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1),
      },
    ],
  });
  await statements.print('order creation');
  const trips = (await child.roundTrips())['POST /api/orders/'];
  const created = statuses.get(201) ?? 0;
  if (created !== orders.requests.total || orders.errors) {
    throw new Error(`orders: statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${orders.errors} errors`);
  }
  return { trivial: trivialRps, orders: created / seconds, roundTrips: trips!.perRequest, p99: orders.latency.p99 };
}

/** Runs order creation and its floor and prints them (called by scripts/bench.ts after the router rounds). */
export async function benchOrderCreation(): Promise<{ ordersPerSecond: number; floorPerSecond: number | null }> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const database = await openDatabase();
  const handle = connect(database.url, { max: 4 });
  let child: BenchService | null = null;
  try {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
    // The floor (scripts/lib/write-path-floor.ts): the same checks and writes, run before and after
    // the service on the same database (the mean of the two), each alone on core 0.
    const floorRun = async () => {
      const floorServer = await startWritePathFloor(database.url);
      try {
        return await benchOrders(floorServer, handle.db, seconds, 32, false);
      } finally {
        await floorServer.stop();
      }
    };
    const withFloor = process.env.BENCH_FLOORS !== '0';
    const floorBefore = withFloor ? await floorRun() : null;
    child = await startBenchService(database.url);
    const o = await benchOrders(child, handle.db, seconds);
    await child.stop();
    child = null;
    const floorAfter = withFloor ? await floorRun() : null;
    const floor = floorBefore && floorAfter ? (floorBefore.orders + floorAfter.orders) / 2 : null;
    console.log('');
    console.log(`trivial operation (${TRIVIAL}) ${Math.round(o.trivial)} req/s on the full service`);
    console.log(`order creation, 32 clients      ${Math.round(o.orders)} orders/s`);
    console.log(`orders / trivial  ${(o.orders / o.trivial).toFixed(3)}  (target >= 0.20)`);
    console.log(`figure orders-per-second ${Math.round(o.orders)}`);
    console.log(`figure order-creation-p99-ms ${o.p99}`);
    console.log(`figure order-creation-round-trips ${+o.roundTrips.toFixed(2)}`);
    if (floor !== null) {
      console.log(
        `floor (same checks and writes, bare node:http + pg) ${Math.round(floor)} orders/s (before ${Math.round(floorBefore!.orders)}, after ${Math.round(floorAfter!.orders)}), ${+floorAfter!.roundTrips.toFixed(2)} round trips each`,
      );
      console.log(`figure floor-order-creation-per-second ${Math.round(floor)}`);
      console.log(`figure order-creation/floor ${(o.orders / floor).toFixed(2)}`);
    }
    console.log('');
    // What the outbox trigger's NOTIFY costs order creation. A transaction that
    // issued NOTIFY takes a database-wide lock at commit, so committing notifiers run one at a
    // time. Order creation at 32 and 128 clients with the trigger (put back: migration 2101 dropped
    // it) and without it (the wake-up after commit, as the service runs now). BENCH_NOTIFY=0 skips;
    // scripts/bench-notify.ts alternates rounds, on a durable cluster too.
    if (process.env.BENCH_NOTIFY !== '0') {
      const service = await startBenchService(database.url);
      try {
        const rates: Record<string, number> = {};
        for (const notify of [true, false]) {
          await notifyTrigger(handle.db, notify);
          for (const clients of [32, 128]) {
            const r = await benchOrders(service, handle.db, seconds, clients, false);
            rates[`${clients}/${notify ? 'notify' : 'none'}`] = r.orders;
          }
        }
        await notifyTrigger(handle.db, false);
        for (const clients of [32, 128]) {
          const withNotify = rates[`${clients}/notify`];
          const without = rates[`${clients}/none`];
          console.log(
            `order creation, ${clients} clients: ${Math.round(withNotify!)} orders/s with the NOTIFY trigger, ${Math.round(without!)} without (cost ${((1 - withNotify! / without!) * 100).toFixed(1)} %)`,
          );
          console.log(`figure order-creation-notify-cost-${clients} ${(1 - withNotify! / without!).toFixed(3)}`);
        }
      } finally {
        await service.stop();
      }
    }
    return { ordersPerSecond: o.orders, floorPerSecond: floor };
  } finally {
    if (child) await child.stop();
    await handle.close();
    await database.close();
  }
}
