// Courier dispatch (server/jobs/courier-dispatch.ts): which delivery orders the worker hands to the
// courier service, and that it finds them without reading the orders booked ahead.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesDueForCourierQuery } from '../../db/queries/orders.js';
import { dispatchCouriers } from '../../server/jobs/courier-dispatch.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { deliveryBody, expressAlwaysOpen, line, makeProduct, makeSlot, placedOrder } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  // Passes are run by the test; the lead is the default, 45 minutes.
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

const trackingOf = async (id: string) =>
  (await svc.deps.db.selectFrom('order_deliveries').select('tracking_state').where('order_id', '=', id).executeTakeFirstOrThrow())
    .tracking_state;

describe('courier dispatch', () => {
  it('requests a courier for a scheduled delivery once its slot starts within the lead, not before', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const ahead = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    const due = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    // Time passes for one of them: its slot now starts in 30 minutes.
    await sql`UPDATE orders SET slot_starts_at = now() + interval '30 minutes' WHERE id = ${due}`.execute(svc.deps.db);
    await dispatchCouriers(svc.deps);
    expect(await trackingOf(due)).toBe('searching_courier');
    expect(await trackingOf(ahead)).toBe('pending');
    expect(await dispatchCouriers(svc.deps)).toBe(0);
  });

  it('requests a courier for an express delivery once picking started', async () => {
    await expressAlwaysOpen(svc);
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], null));
    await dispatchCouriers(svc.deps);
    expect(await trackingOf(id)).toBe('pending');
    await svc.deps.db.updateTable('orders').set({ status: 'picking' }).where('id', '=', id).execute();
    await dispatchCouriers(svc.deps);
    expect(await trackingOf(id)).toBe('searching_courier');
  });

  it('is answered from the index of active orders by slot start, whatever the orders booked ahead', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const model = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    // A store's week ahead: 5,000 scheduled deliveries, each waiting for its courier.
    const { db } = svc.deps;
    const { rows } = await sql<{ columns: string }>`
      SELECT string_agg(quote_ident(column_name), ', ') AS columns FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = 'orders' AND column_name NOT IN ('id', 'no', 'slot_starts_at')
        AND is_generated = 'NEVER' AND is_identity = 'NO'`.execute(db);
    const columns = sql.raw(rows[0]!.columns);
    await sql`WITH copies AS (
        INSERT INTO orders (id, slot_starts_at, ${columns})
        SELECT gen_random_uuid(), now() + interval '1 day' + g * interval '1 minute', ${columns}
        FROM orders, generate_series(1, 5000) g WHERE orders.id = ${model}
        RETURNING id
      )
      INSERT INTO order_deliveries (order_id, tracking_state) SELECT id, 'pending' FROM copies`.execute(db);
    await sql`ANALYZE orders`.execute(db);
    await sql`ANALYZE order_deliveries`.execute(db);
    const plan = (await deliveriesDueForCourierQuery(db, 45, 20).explain()).map((r) => String(r['QUERY PLAN'])).join('\n');
    expect(plan).toContain('orders_active_slot_start');
    expect(plan).not.toContain('Seq Scan');
  });
});
