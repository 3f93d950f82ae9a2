// Checkout under parallel load on real PostgreSQL: one key is one order however many copies
// race, the last units of stock are sold exactly once, a slot takes exactly its capacity.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer } from '../support/accounts.js';
import { createConfirmedOrder } from '../support/orders.js';
import { createPicker, itemCommand, sessionCommand, startPicking, type TestPicker } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  cancelOrder,
  createOrder,
  deliveryBody,
  line,
  makeProduct,
  makeSlot,
  pickupBody,
  reservedOf,
  stockOf,
  TVERSKAYA,
} from './fixtures.js';

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
    expect(orders).toEqual([{ id: created[0]!.body }]);
    expect(await stockOf(svc, p)).toBe('99.000');
    expect(await reservedOf(svc, slot)).toBe(1);
    // A retry after the first finished gets the stored answer.
    const late = await createOrder(svc, c.auth, body, { key });
    expect([late.status, late.body]).toEqual([201, created[0]!.body]);
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
      Array.from({ length: 200 }, (_, i) => createOrder(svc, customers[i % customers.length]!.auth, pickupBody([line(p, 1)], slot))),
    );
    running = false;
    await sampler;

    expect(countBy(replies.map((r) => r.status))).toEqual({ 201: 10, 409: 190 });
    for (const r of replies.filter((x) => x.status === 409)) {
      expect(r.body.code).toBe('OUT_OF_STOCK');
      expect(r.body.lines).toEqual([
        expect.objectContaining({ product_id: p.productId, reason_code: 'OUT_OF_STOCK', available_quantity: '0.000' }),
      ]);
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

describe('stock rows locked in one order by every writer', () => {
  it('lets checkouts race cancellations of orders with the same products without a deadlock', async () => {
    // Checkout locks the cart's inventory rows in id order; a cancellation that gave stock back in
    // the order of its lines locked them the other way round, and PostgreSQL broke the cycle by
    // failing one transaction: a 500 for one of the two customers.
    const [first, second] = [await makeProduct(svc, { stock: '100000' }), await makeProduct(svc, { stock: '100000' })];
    const [low, high] = first.inventoryId < second.inventoryId ? [first, second] : [second, first];
    const slot = await makeSlot(svc, { capacity: 100_000 });
    const customers = await Promise.all(Array.from({ length: 4 }, () => signInCustomer(svc)));
    const ROUNDS = 30;
    const placed: { auth: Record<string, string>; id: string }[] = [];
    for (let n = 0; n < ROUNDS; n++) {
      const c = customers[n % customers.length];
      // Lines in descending id order: the cancellation's join meets them that way.
      const r = await createOrder(svc, c!.auth, deliveryBody([line(high, '1'), line(low, '1')], slot));
      expect(r.status).toBe(201);
      placed.push({ auth: c!.auth, id: r.body as string });
    }
    const statuses = await Promise.all(
      placed.flatMap(({ auth, id }, n) => [
        cancelOrder(svc, auth, id).then((r) => r.status),
        createOrder(svc, customers[(n + 1) % customers.length]!.auth, deliveryBody([line(low, '1'), line(high, '1')], slot)).then(
          (r) => r.status,
        ),
      ]),
    );
    expect(countBy(statuses)).toEqual({ 200: ROUNDS, 201: ROUNDS });
    // Every cancellation gave its two units back; every new order took two.
    expect(await stockOf(svc, low)).toBe(String(100000 - ROUNDS) + '.000');
    expect(await stockOf(svc, high)).toBe(String(100000 - ROUNDS) + '.000');
  });

  it('lets checkouts race picking finishes that give back what was not taken, without a deadlock', async () => {
    // Finishing gives back, item by item, what was ordered and not taken; in item order that was
    // the reverse of checkout's id order for these lines.
    const [first, second] = [await makeProduct(svc, { stock: '100000' }), await makeProduct(svc, { stock: '100000' })];
    const [low, high] = first.inventoryId < second.inventoryId ? [first, second] : [second, first];
    const slot = await makeSlot(svc, { capacity: 100_000 });
    const customer = await signInCustomer(svc);
    const SESSIONS = 24;
    const sessions: { picker: TestPicker; orderId: string }[] = [];
    for (let n = 0; n < SESSIONS; n++) {
      const order = await createConfirmedOrder(svc, {
        storeId: TVERSKAYA,
        lines: [
          { inventoryId: high.inventoryId, quantity: '2' },
          { inventoryId: low.inventoryId, quantity: '2' },
        ],
      });
      const picker = await createPicker(svc, [TVERSKAYA]);
      const session = await startPicking(svc, picker, order.orderId);
      for (const item of session.items) {
        // One of the two: a discrepancy, confirmed.
        expect((await itemCommand(svc, picker, order.orderId, item.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
        const confirmed = await itemCommand(svc, picker, order.orderId, item.item_id, 'clarification/confirm', {
          resolution: 'quantity_mismatch',
          quantity: 1,
        });
        expect(confirmed.body.item.state).toBe('picked');
      }
      sessions.push({ picker, orderId: order.orderId });
    }
    const before = { low: Number(await stockOf(svc, low)), high: Number(await stockOf(svc, high)) };
    const statuses = await Promise.all(
      sessions.flatMap(({ picker, orderId }) => [
        sessionCommand(svc, picker, orderId, 'finish').then((r) => r.status),
        createOrder(svc, customer.auth, deliveryBody([line(low, '1'), line(high, '1')], slot)).then((r) => r.status),
      ]),
    );
    expect(countBy(statuses)).toEqual({ 200: SESSIONS, 201: SESSIONS });
    // Each finish gave one unit of each back; each checkout took one of each.
    expect(Number(await stockOf(svc, low))).toBe(before.low);
    expect(Number(await stockOf(svc, high))).toBe(before.high);
  });
});
