// Checkout under parallel load on real PostgreSQL: one key is one order however many copies
// race, the last units of stock are sold exactly once, a slot takes exactly its capacity.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { createOrder, deliveryBody, line, makeProduct, makeSlot, pickupBody, reservedOf, stockOf } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const countBy = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

describe('checkout under concurrency', () => {
  it('creates exactly one order from 50 parallel requests with one key', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '100.000' });
    const slot = await makeSlot(svc, { capacity: 100 });
    const body = deliveryBody([line(p)], slot);
    const key = randomUUID();
    const replies = await Promise.all(Array.from({ length: 50 }, () => createOrder(svc, c.auth, body, { key })));

    const created = replies.filter((r) => r.status === 201);
    const inProgress = replies.filter((r) => r.status === 409);
    expect(created.length + inProgress.length).toBe(50);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body)).size).toBe(1);
    for (const r of inProgress) {
      expect(r.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    const orders = await svc.deps.db.selectFrom('orders').select('id').where('customer_id', '=', c.customerId).execute();
    expect(orders).toEqual([{ id: created[0].body }]);
    expect(await stockOf(svc, p)).toBe('99.000');
    expect(await reservedOf(svc, slot)).toBe(1);
    // A retry after the first finished gets the stored answer.
    const late = await createOrder(svc, c.auth, body, { key });
    expect([late.status, late.body]).toEqual([201, created[0].body]);
  });

  it('sells the last 10 units exactly once to 200 parallel orders; stock never goes below zero', async () => {
    const customers = await Promise.all(Array.from({ length: 20 }, () => signInCustomer(svc)));
    const p = await makeProduct(svc, { price: '600.00', stock: '10.000' });
    const slot = await makeSlot(svc, { kind: 'pickup', capacity: 1000 });
    // Sampled while the orders run: the stock is never seen below zero.
    let lowest = Infinity;
    let running = true;
    const sampler = (async () => {
      while (running) {
        lowest = Math.min(lowest, Number(await stockOf(svc, p)));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const replies = await Promise.all(
      Array.from({ length: 200 }, (_, i) => createOrder(svc, customers[i % customers.length].auth, pickupBody([line(p, 1)], slot))),
    );
    running = false;
    await sampler;

    expect(countBy(replies.map((r) => r.status))).toEqual({ 201: 10, 409: 190 });
    for (const r of replies.filter((x) => x.status === 409)) {
      expect(r.body.code).toBe('OUT_OF_STOCK');
      expect(r.body.lines).toEqual([expect.objectContaining({ product_id: p.productId, reason_code: 'OUT_OF_STOCK', available_quantity: '0.000' })]);
    }
    expect(await stockOf(svc, p)).toBe('0.000');
    expect(lowest).toBeGreaterThanOrEqual(0);
    const sold = await svc.deps.db
      .selectFrom('order_items')
      .select((eb) => eb.fn.sum<string>('quantity').as('total'))
      .where('product_id', '=', p.productId)
      .executeTakeFirstOrThrow();
    expect(sold.total).toBe('10.000');
    expect(await reservedOf(svc, slot)).toBe(10);
  });

  it('gives a slot of capacity K exactly K orders', async () => {
    const K = 7;
    const customers = await Promise.all(Array.from({ length: 30 }, () => signInCustomer(svc)));
    const p = await makeProduct(svc, { price: '1100.00', stock: '1000.000' });
    const slot = await makeSlot(svc, { capacity: K });
    const replies = await Promise.all(customers.map((c) => createOrder(svc, c.auth, deliveryBody([line(p)], slot))));

    expect(countBy(replies.map((r) => r.status))).toEqual({ 201: K, 409: 30 - K });
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.code).toBe('SLOT_FULL');
    expect(await reservedOf(svc, slot)).toBe(K);
    const holds = await svc.deps.db.selectFrom('slot_holds').select('order_id').where('slot_id', '=', slot).execute();
    expect(holds.length).toBe(K);
    // Refused orders gave their stock back with their transaction.
    expect(await stockOf(svc, p)).toBe(String(1000 - K) + '.000');
  });
});
