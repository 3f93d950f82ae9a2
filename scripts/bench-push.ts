// npm run bench:push (not a test): how fast one instance's order worker drains a morning rush's
// push backlog, on a real PostgreSQL (BENCH_DATABASE_URL, or an embedded one in a temporary
// folder). Every order entering a store's queue is a push to each of the store's idle pickers, and
// an order's news one to each of its customer's phones; the scenario commits BENCH_PUSH_ORDERS
// (2,000) of each at once, then starts the order worker as the service does (startOrderWorker:
// its scheduler and ORDER_WORKER_INTERVAL_MS) until nothing is left to push or send, and prints:
//   figure push-events-per-second       outbox events fanned out per second of the drain
//   figure push-deliveries-per-second   deliveries handed to the provider per second
//   figure push-drain-seconds           from the first pass to the last one that did work
//   figure push-statements-per-event    statements of the worker's push jobs per event
// The provider is the recording one (nothing leaves the machine): the figures are the worker's own
// cost. Runs on any commit whose worker has startOrderWorker (copy this file and
// scripts/lib/round-trips.ts to compare an older one side by side).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { recordOrderChange } from '../db/queries/order-events.js';
import { insertConfirmedOrder } from '../db/seed/picking.js';
import { seedDemoData } from '../db/seed/demo.js';
import { DEMO_STORES } from '../db/seed/stores.js';
import { loadConfig } from '../platform/config.js';
import { runOrderWorkerOnce, startOrderWorker } from '../server/jobs/order-worker.js';
import { startService } from '../server/runtime.js';
import { openBenchDatabase } from './lib/bench-database.js';
import { BENCH_JWT_SECRET } from './lib/bench-service.js';
import { countRoundTrips, queriesMadeBy } from './lib/round-trips.js';

const ORDERS = Number(process.env.BENCH_PUSH_ORDERS ?? 2000);
const PICKERS_PER_STORE = Number(process.env.BENCH_PUSH_PICKERS ?? 10);
const CUSTOMERS = 500;

type Db = ReturnType<typeof connect>['db'];

/** Idle pickers with one installation each at every demo store; customers with two phones each. */
async function audience(db: Db): Promise<string[]> {
  for (const store of DEMO_STORES) {
    const pickers = await db
      .insertInto('pickers')
      .values(
        Array.from({ length: PICKERS_PER_STORE }, (_, i) => ({
          login: `bench-${store.code}-${i}-${randomUUID().slice(0, 6)}`,
          display_name: `Picker ${i}`,
          password_hash: 'x',
          default_store_id: store.id,
        })),
      )
      .returning('id')
      .execute();
    await db
      .insertInto('picker_stores')
      .values(pickers.map((p) => ({ picker_id: p.id, store_id: store.id })))
      .execute();
    await db
      .insertInto('push_devices')
      .values(
        pickers.map((p) => ({
          device_id: randomUUID(),
          push_token: `bench-${randomUUID()}`,
          platform: 'android' as const,
          app_version: '3.14.0',
          build_number: '3140',
          app_kind: 'picker' as const,
          principal_kind: 'picker' as const,
          environment: 'TEST' as const,
          picker_id: p.id,
          language: 'ru' as const,
        })),
      )
      .execute();
  }
  const customers = Array.from({ length: CUSTOMERS }, () => randomUUID());
  await db
    .insertInto('customers')
    .values(customers.map((id) => ({ id, phone: null })))
    .execute();
  await db
    .insertInto('customer_preferences')
    .values(customers.map((customer_id, i) => ({ customer_id, language: i % 2 ? ('en' as const) : ('ru' as const) })))
    .execute();
  await db
    .insertInto('push_devices')
    .values(
      customers.flatMap((customer_id) =>
        (['android', 'ios'] as const).map((platform) => ({
          device_id: randomUUID(),
          push_token: `bench-${randomUUID()}`,
          platform,
          app_version: '3.14.0',
          build_number: '3140',
          app_kind: 'customer' as const,
          principal_kind: 'customer' as const,
          environment: 'TEST' as const,
          customer_id,
        })),
      ),
    )
    .execute();
  return customers;
}

/** The rush: ORDERS express orders enter their stores' queues, and each has news for its customer. */
async function rush(db: Db, customers: string[]): Promise<void> {
  const unit = await db.selectFrom('measurement_units').select('id').where('code', '=', 'pc').executeTakeFirstOrThrow();
  const inventories = new Map<string, string>();
  for (const store of DEMO_STORES) {
    const product = await db
      .insertInto('products')
      .values({ code: `BENCH-PUSH-${store.code}-${randomUUID().slice(0, 6)}`, name_ru: 'Товар', name_en: 'Product' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const inventory = await db
      .insertInto('inventories')
      .values({
        product_id: product.id,
        store_id: store.id,
        unit_id: unit.id,
        is_default: true,
        stock: '1000000.000',
        unit_price: '100.00',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    inventories.set(store.id, inventory.id);
  }
  for (let i = 0; i < ORDERS; i++) {
    const store = DEMO_STORES[i % DEMO_STORES.length]!;
    await db.transaction().execute(async (trx) => {
      const order = await insertConfirmedOrder(
        trx,
        {
          customerId: customers[i % customers.length]!,
          storeId: store.id,
          type: 'delivery',
          express: true,
          lines: [{ inventoryId: inventories.get(store.id)!, quantity: '1' }],
        },
        new Date(),
      );
      await recordOrderChange(trx, order.orderId, ['status'], { now: new Date(), notify: true });
    });
  }
}

async function main(): Promise<void> {
  await countRoundTrips(); // before the service's pool opens a connection
  const database = await openBenchDatabase('grocery_bench_push');
  const handle = connect(database.url, { max: 4 });
  let service: Awaited<ReturnType<typeof startService>> | null = null;
  try {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
    const config = loadConfig({
      ...process.env,
      APP_ENV: 'TEST',
      DATABASE_URL: database.url,
      JWT_SECRET: BENCH_JWT_SECRET,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
      SEED_DEMO_DATA: 'false',
      ORDER_WORKER_ENABLED: 'false',
      PORT: '0',
      HOST: '127.0.0.1',
    });
    service = await startService({ config });
    const { deps } = service;
    await runOrderWorkerOnce(deps); // what the demo data left
    const customers = await audience(handle.db);
    await rush(handle.db, customers);
    await sql`ANALYZE`.execute(handle.db);

    // The worker as the service runs it (startOrderWorker: its scheduler, its interval), its
    // statements counted; the backlog (the fan-out's claim predicate, db/queries/push.ts) polled
    // from outside, uncounted, every 50 ms.
    const remaining = async () => {
      const { rows } = await sql<{ events: string; deliveries: string }>`SELECT
          (SELECT count(*) FROM outbox_events WHERE pushed_at IS NULL AND ((payload->>'notification_id') IS NOT NULL
             OR type = 'picker.order.cancelled' OR (type = 'picker.queue.changed' AND payload #>> '{event,reason}' = 'order_added'))) AS events,
          (SELECT count(*) FROM push_deliveries WHERE state = 'pending') AS deliveries`.execute(handle.db);
      return { events: Number(rows[0]!.events), deliveries: Number(rows[0]!.deliveries) };
    };
    const backlog = await remaining();
    let drained!: () => void;
    const done = new Promise<void>((resolve) => (drained = resolve));
    const started = performance.now();
    let eventsDone = started;
    const counted = queriesMadeBy(async () => {
      // The service was started with its worker off (so that the rush is committed first).
      const worker = startOrderWorker({
        ...deps,
        config: { ...config, orders: { ...config.orders, worker: { ...config.orders.worker, enabled: true } } },
      });
      await done;
      await worker.stop();
    });
    for (;;) {
      await new Promise((r) => setTimeout(r, 50));
      const left = await remaining();
      if (left.events === 0 && eventsDone === started) eventsDone = performance.now();
      if (left.events === 0 && left.deliveries === 0) break;
    }
    const finished = performance.now();
    drained();
    const { queries: statements } = await counted;
    const { sent, events } = await handle.db
      .selectFrom('push_deliveries')
      .select(({ fn }) => [fn.countAll<string>().as('sent'), sql<string>`count(DISTINCT event_id)`.as('events')])
      .where('state', '=', 'sent')
      .executeTakeFirstOrThrow()
      .then((r) => ({ sent: Number(r.sent), events: Number(r.events) }));
    const seconds = (finished - started) / 1000;
    if (events !== ORDERS * 2 || backlog.events !== ORDERS * 2)
      throw new Error(`${backlog.events} events waiting, ${events} pushed: expected ${ORDERS * 2}`);
    console.log(
      `push backlog of ${ORDERS} queue entries (${PICKERS_PER_STORE} idle pickers a store) and ${ORDERS} customer notices (2 phones each)`,
    );
    console.log(
      `drained in ${seconds.toFixed(1)} s (every event fanned out after ${((eventsDone - started) / 1000).toFixed(1)} s): ${Math.round(events / seconds)} events/s, ${Math.round(sent / seconds)} deliveries/s, ${(statements / events).toFixed(2)} statements per event`,
    );
    console.log(`figure push-events-per-second ${Math.round(events / seconds)}`);
    console.log(`figure push-deliveries-per-second ${Math.round(sent / seconds)}`);
    console.log(`figure push-drain-seconds ${seconds.toFixed(1)}`);
    console.log(`figure push-statements-per-event ${(statements / events).toFixed(2)}`);
  } finally {
    await service?.stop(0);
    await handle.db.destroy();
    await database.close();
  }
}

await main();
