// Checkout's transaction plans its statements generically (db/generic-plans.ts): what the
// transaction promises (the settings are its own, commit and rollback), that the generic plans
// of checkout's statements still find a store's stock rows by index in a large catalog - a plan
// that read the inventories would make every order read the whole catalog - and that plans made
// while the tables are nearly empty (foreign-key checks included) read by index too: such a plan is
// kept as the tables grow, and a sequential scan in it would read every order for every order.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type DatabaseHandle } from '../../db/connection.js';
import { transactionWithGenericPlans } from '../../db/generic-plans.js';
import { findStoreForOrder } from '../../db/queries/orders.js';
import { placeOrderOnce } from '../../services/checkout.js';
import { fingerprintOf } from '../../services/idempotency.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { deliveryBody, line, makeProduct, makeSlot, TVERSKAYA } from './fixtures.js';

let svc: TestService;
let own: DatabaseHandle;
/** Every parameterised statement `own` sent, in order. */
const sent: { text: string; values: unknown[] }[] = [];

beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  // One connection, so that the statements below meet the session the transactions ran on.
  own = connect(svc.config.databaseUrl!, { max: 1 });
  own.pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (first: unknown, values?: unknown, ...rest: unknown[]) => {
      if (typeof first === 'string' && Array.isArray(values) && values.length > 0) sent.push({ text: first, values });
      return query(first, values, ...rest);
    };
  });
});
afterAll(async () => {
  await own?.close();
  await svc?.close();
});

/** The transaction's planner settings, e.g. `force_generic_plan, seqscan off`. */
const PLANNER_SETTINGS = sql<{ settings: string }>`
  SELECT current_setting('plan_cache_mode') || ', seqscan ' || current_setting('enable_seqscan') AS settings`;
const plannerSettings = async (db: DatabaseHandle['db']) => (await PLANNER_SETTINGS.execute(db)).rows[0]!.settings;

describe('a transaction with generic plans', () => {
  it('plans generically and by index inside, and the settings end with the transaction', async () => {
    expect(await transactionWithGenericPlans(own.db, (trx) => plannerSettings(trx))).toBe('force_generic_plan, seqscan off');
    expect(await plannerSettings(own.db)).toBe('auto, seqscan on');
  });

  it('commits what the work wrote, and rolls it all back when the work throws', async () => {
    await sql`CREATE TEMP TABLE IF NOT EXISTS generic_plans_probe (n int)`.execute(own.db);
    await transactionWithGenericPlans(own.db, (trx) => sql`INSERT INTO generic_plans_probe VALUES (1)`.execute(trx));
    const refused = new Error('refused');
    await expect(
      transactionWithGenericPlans(own.db, async (trx) => {
        await sql`INSERT INTO generic_plans_probe VALUES (2)`.execute(trx);
        throw refused;
      }),
    ).rejects.toBe(refused);
    const { rows } = await sql<{ n: number }>`SELECT n FROM generic_plans_probe ORDER BY n`.execute(own.db);
    expect(rows.map((r) => r.n)).toEqual([1]);
    expect(await plannerSettings(own.db)).toBe('auto, seqscan on');
  });
});

describe("checkout's statements, planned generically", () => {
  it('find the stock rows by index in a catalog of 20,000 products', async () => {
    const { db } = svc.deps;
    const unit = await db.selectFrom('measurement_units').select('id').where('code', '=', 'pc').executeTakeFirstOrThrow();
    // On the test's own connection, which has no time limits: 20,000 products are setup, not a request.
    await sql`WITH p AS (
        INSERT INTO products (code, name_ru, name_en)
        SELECT 'BULK-' || g, 'Товар ' || g, 'Product ' || g FROM generate_series(1, 20000) g
        RETURNING id)
      INSERT INTO inventories (product_id, store_id, unit_id, is_default, stock, unit_price)
      SELECT id, ${TVERSKAYA}, ${unit.id}, true, 100, 500 FROM p`.execute(own.db);
    await sql`ANALYZE products`.execute(own.db);
    await sql`ANALYZE inventories`.execute(own.db);

    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const body = deliveryBody([line(p)], await makeSlot(svc));
    const store = (await findStoreForOrder(db, TVERSKAYA))!;
    const scope = { principal: `customer:${c.customerId}`, operationId: 'createOrder', key: randomUUID() };
    sent.length = 0;
    const placed = await transactionWithGenericPlans(own.db, (trx) =>
      placeOrderOnce(
        trx,
        svc.deps,
        { customerId: c.customerId, store, body, lang: 'en' },
        { scope, fingerprint: fingerprintOf(store.id, body) },
      ),
    );
    expect(placed.replayed).toBe(false);

    // Each statement of the transaction, prepared and explained as the transaction planned it.
    const writes = sent.filter((s) => /^\s*WITH (k|customer|st) AS/.test(s.text));
    // The key's claim with the zones, lockCheckout, insertPlacedOrder.
    expect(writes.map((s) => /^\s*WITH (\w+)/.exec(s.text)![1])).toEqual(['k', 'customer', 'st']);
    await sql`SET plan_cache_mode = force_generic_plan`.execute(own.db);
    try {
      for (const [i, s] of writes.entries()) {
        // The pool's own statements stay as they are: the probes have names of their own.
        await sql.raw(`PREPARE generic_probe_${i} AS ${s.text}`).execute(own.db);
        const nulls = s.values.map(() => 'NULL').join(', ');
        const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE generic_probe_${i}(${nulls})`).execute(own.db);
        await sql.raw(`DEALLOCATE generic_probe_${i}`).execute(own.db);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan, plan).not.toMatch(/Seq Scan on (inventories|products|orders|store_slots|idempotency_keys)\b/);
        if (i > 0) expect(plan, plan).toMatch(/Index Scan using inventories_\w+ on inventories/);
      }
    } finally {
      await sql`RESET plan_cache_mode`.execute(own.db);
    }
  });

  it('read by index when they were planned in a nearly empty database, foreign-key checks included', async () => {
    const { db } = svc.deps;
    const c = await signInCustomer(svc);
    const store = (await findStoreForOrder(db, TVERSKAYA))!;
    // A connection of its own: its plans (the pool's prepared statements and the foreign-key
    // checks PostgreSQL prepares per connection) are made by the first order below, while the
    // service's database holds a handful of orders.
    const fresh = connect(svc.config.databaseUrl!, { max: 1 });
    try {
      const place = async (p: Awaited<ReturnType<typeof makeProduct>>) => {
        const body = deliveryBody([line(p)], await makeSlot(svc));
        const key = {
          scope: { principal: `customer:${c.customerId}`, operationId: 'createOrder', key: randomUUID() },
          fingerprint: fingerprintOf(store.id, body),
        };
        return transactionWithGenericPlans(fresh.db, async (trx) => {
          const placed = await placeOrderOnce(trx, svc.deps, { customerId: c.customerId, store, body, lang: 'en' }, key);
          expect(placed.replayed).toBe(false);
          // This transaction's own scans so far (its statements and the triggers they fired).
          const { rows } = await sql<{ relname: string; seq_scan: number }>`
            SELECT relname, seq_scan::int AS seq_scan FROM pg_stat_xact_user_tables WHERE seq_scan > 0 ORDER BY relname`.execute(trx);
          return Object.fromEntries(rows.map((r) => [r.relname, r.seq_scan]));
        });
      };
      const p = await makeProduct(svc, { price: '1500.00' });
      expect(await place(p)).toEqual({});
      // The same plans, now reused.
      expect(await place(p)).toEqual({});
    } finally {
      await fresh.close();
    }
  });
});
