// POST /api/orders/{order_id}/items/changes: a customer changes the lines of an order before
// picking - all the changes or none, at the current prices, with stock held and given back
// exactly, the order's version raised once with one `order.changed`, an online payment settled
// for the new total - and every refusal leaves the order as it was. The detail's new fields
// (`items[].id`, `replacement`, `approval`, `can_change`, `order_version`) are read here too.
import { randomUUID } from 'node:crypto';
import { http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SandboxBank } from '../../platform/providers/bank/index.js';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { assertMatchesSchema } from '../support/client.js';
import { passLocalFailOthers } from '../support/msw.js';
import { createConfirmedOrder } from '../support/orders.js';
import { createPicker, sessionCommand, signInDemoCustomer, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  ARBAT,
  bankInvoice,
  cancelOrder,
  changeItems,
  createOrder,
  deliveryBody,
  expressAlwaysOpen,
  getOrder,
  line,
  makeProduct,
  makeSlot,
  orderChangedEvents,
  orderVersion,
  placedOrder,
  pickupBody,
  roadmapDetail,
  settleSandboxInvoice,
  stockOf,
  TVERSKAYA,
  type OrderLineChange,
  type TestProduct,
} from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  // The worker runs only when a test drives it (refunds, invoice cancellations).
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

type Auth = Record<string, string>;

/** The order's lines by product, with their ids (OrderItemSchema `id`). */
async function linesOf(auth: Auth, id: string, lang?: string) {
  const detail = (await getOrder(svc, auth, id, lang)).body;
  return { detail, byProduct: (p: TestProduct) => detail.items.find((i: { product_id: string }) => i.product_id === p.productId) };
}

const orderRow = (id: string) =>
  svc.deps.db
    .selectFrom('orders')
    .select(['goods_total', 'total_price', 'items_count', 'order_version', 'payment_status', 'status'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** A cash delivery order placed through checkout; answers its id, version and line ids by product. */
async function cashOrder(auth: Auth, lines: [TestProduct, number | string][]) {
  const id = await placedOrder(
    svc,
    auth,
    deliveryBody(
      lines.map(([p, q]) => line(p, q)),
      await makeSlot(svc),
    ),
  );
  const { detail, byProduct } = await linesOf(auth, id);
  return { id, version: detail.order_version as number, itemOf: (p: TestProduct) => byProduct(p).id as number };
}

const queueUpdates = (id: string) =>
  svc.deps.db
    .selectFrom('outbox_events')
    .select('payload')
    .where('order_id', '=', id)
    .where('type', '=', 'picker.queue.changed')
    .execute()
    .then((rows) => rows.filter((r) => (r.payload as { event: { reason: string } }).event.reason === 'order_updated'));

describe('changeOrderItems', () => {
  it('adds, removes and sets quantities and preferences together: prices, totals, stock, one version, one event', async () => {
    const c = await signInCustomer(svc);
    const [a, b, gone, added, named] = await Promise.all([
      makeProduct(svc, { price: '600.00', stock: '10.000' }),
      makeProduct(svc, { price: '500.00', stock: '10.000' }),
      makeProduct(svc, { price: '300.00', stock: '10.000' }),
      makeProduct(svc, { price: '250.00', stock: '10.000', oldPrice: '300.00' }),
      makeProduct(svc, { price: '100.00' }),
    ]);
    const order = await cashOrder(c.auth, [
      [a, 2],
      [b, 1],
      [gone, 1],
    ]);
    expect(await orderRow(order.id)).toMatchObject({ goods_total: '2000.00', total_price: '2199.00', items_count: 3 });
    // The store's prices move: a changed quantity takes the new price, an untouched line keeps its own.
    await svc.deps.db.updateTable('inventories').set({ unit_price: '650.00' }).where('id', '=', a.inventoryId).execute();
    await svc.deps.db.updateTable('inventories').set({ unit_price: '550.00' }).where('id', '=', b.inventoryId).execute();

    const r = await changeItems(
      svc,
      c.auth,
      order.id,
      [
        { op: 'set_quantity', item_id: order.itemOf(a), quantity: '3' },
        { op: 'remove', item_id: order.itemOf(gone) },
        {
          op: 'add',
          product_id: added.productId,
          unit_id: added.unitId,
          quantity: 2,
          replacement: { policy: 'named_products', product_ids: [named.productId], approval_required: true },
        },
        { op: 'set_replacement', item_id: order.itemOf(b), replacement: { policy: 'no_replacement', approval_required: false } },
      ],
      { version: order.version },
    );
    expect(r.status).toBe(200);
    // 3 x 650.00 + 1 x 500.00 + 2 x 250.00 = 2950.00; the delivery price of checkout is kept.
    expect(r.body).toMatchObject({ id: order.id, total_price: '3149.00', order_version: order.version + 1, can_change: true });
    expect(r.body.items).toEqual([
      expect.objectContaining({ id: order.itemOf(a), quantity: '3.000', unit_price: '650.00', replacement: null, approval: null }),
      expect.objectContaining({
        id: order.itemOf(b),
        quantity: '1.000',
        unit_price: '500.00',
        replacement: { policy: 'no_replacement', products: [], approval_required: false },
      }),
      expect.objectContaining({
        id: expect.any(Number),
        product_id: added.productId,
        quantity: '2.000',
        unit_price: '250.00',
        old_price: '300.00',
        name: expect.stringMatching(/^Test product/),
        replacement: {
          policy: 'named_products',
          products: [{ product_id: named.productId, name: expect.stringMatching(/^Test product/) }],
          approval_required: true,
        },
        approval: null,
      }),
    ]);
    expect(await orderRow(order.id)).toMatchObject({ goods_total: '2950.00', total_price: '3149.00', items_count: 3 });
    // Stock exact: one more of a, the removed line back, the added line taken; b untouched.
    expect([await stockOf(svc, a), await stockOf(svc, b), await stockOf(svc, gone), await stockOf(svc, added)]).toEqual([
      '7.000',
      '9.000',
      '10.000',
      '8.000',
    ]);
    // One version, one event naming `items`; the queue card of the confirmed order is refreshed.
    const events = (await orderChangedEvents(svc, order.id)).filter((e) => e.order_version > order.version);
    expect(events).toEqual([{ order_version: order.version + 1, changes: ['items'] }]);
    const cards = await queueUpdates(order.id);
    expect(cards).toHaveLength(1);
    assertMatchesSchema('PickerRealtimeEvent', (cards[0]!.payload as { event: unknown }).event);
    // The read answers what the change answered.
    expect((await getOrder(svc, c.auth, order.id)).body).toEqual(r.body);
  });

  it('puts a line back on the order’s absence_action with a null preference, and names products in the reader’s language', async () => {
    const c = await signInCustomer(svc);
    const [p, alt] = await Promise.all([makeProduct(svc, { price: '1200.00' }), makeProduct(svc, { price: '90.00' })]);
    const body = deliveryBody(
      [{ ...line(p), replacement: { policy: 'named_products', product_ids: [alt.productId], approval_required: false } }],
      await makeSlot(svc),
    );
    const id = await placedOrder(svc, c.auth, body);
    const { detail } = await linesOf(c.auth, id, 'ru');
    expect(detail.items[0].replacement).toEqual({
      policy: 'named_products',
      products: [{ product_id: alt.productId, name: expect.stringMatching(/^Тестовый товар/) }],
      approval_required: false,
    });
    const r = await changeItems(svc, c.auth, id, [{ op: 'set_replacement', item_id: detail.items[0].id, replacement: null }], {
      version: detail.order_version,
    });
    expect(r.status).toBe(200);
    expect(r.body.items[0]).toMatchObject({ replacement: null, quantity: '1.000', unit_price: '1200.00' });
    expect(r.body.total_price).toBe(detail.total_price);
    const row = await svc.deps.db
      .selectFrom('order_items')
      .select(['replacement_policy', 'replacement_product_ids', 'replacement_approval'])
      .where('id', '=', detail.items[0].id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ replacement_policy: null, replacement_product_ids: [], replacement_approval: false });
  });

  it('answers 401 without a customer token', async () => {
    const p = await signInPicker(svc);
    const change: OrderLineChange[] = [{ op: 'remove', item_id: 1 }];
    expect((await changeItems(svc, {}, randomUUID(), change, { version: 1 })).status).toBe(401);
    expect((await changeItems(svc, p.auth, randomUUID(), change, { version: 1 })).status).toBe(401);
  });

  it('answers 404 for another customer’s order and an unknown one, changing nothing', async () => {
    const [owner, other] = [await signInCustomer(svc), await signInCustomer(svc)];
    const p = await makeProduct(svc, { price: '1200.00', stock: '10.000' });
    const order = await cashOrder(owner.auth, [[p, 1]]);
    const change: OrderLineChange[] = [{ op: 'set_quantity', item_id: order.itemOf(p), quantity: '2' }];
    for (const id of [order.id, randomUUID()]) {
      const r = await changeItems(svc, other.auth, id, change, { version: order.version });
      expect([r.status, r.body.code]).toEqual([404, 'NOT_FOUND']);
    }
    expect(await stockOf(svc, p)).toBe('9.000');
    expect((await orderRow(order.id)).order_version).toBe(order.version);
  });

  it('answers 409 VERSION_CONFLICT at a stale version, changing nothing', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1200.00', stock: '10.000' });
    const order = await cashOrder(c.auth, [[p, 1]]);
    const change = (q: string): OrderLineChange[] => [{ op: 'set_quantity', item_id: order.itemOf(p), quantity: q }];
    expect((await changeItems(svc, c.auth, order.id, change('2'), { version: order.version })).status).toBe(200);
    const stale = await changeItems(svc, c.auth, order.id, change('3'), { version: order.version });
    expect([stale.status, stale.body.code]).toEqual([409, 'VERSION_CONFLICT']);
    expect(await stockOf(svc, p)).toBe('8.000');
    expect((await orderRow(order.id)).order_version).toBe(order.version + 1);
  });

  it('answers 409 PICKING_STARTED once a picker started the order, even after the picker released it', async () => {
    const demo = await signInDemoCustomer(svc);
    const [p] = await Promise.all([makeProduct(svc, { price: '700.00', stock: '10.000' })]);
    const order = await createConfirmedOrder(svc, { storeId: TVERSKAYA, lines: [{ inventoryId: p.inventoryId, quantity: '2' }] });
    const before = (await getOrder(svc, demo.auth, order.orderId)).body;
    expect(before.can_change).toBe(true);
    const picker = await createPicker(svc, [TVERSKAYA]);
    await startPicking(svc, picker, order.orderId);
    const change: OrderLineChange[] = [{ op: 'set_quantity', item_id: before.items[0].id, quantity: '3' }];
    const started = await changeItems(svc, demo.auth, order.orderId, change, { version: before.order_version });
    expect([started.status, started.body.code]).toEqual([409, 'PICKING_STARTED']);
    const picking = (await getOrder(svc, demo.auth, order.orderId)).body;
    expect(picking).toMatchObject({ can_change: false, status: { value: 'picking' } });
    // Released: back in the queue, `confirmed`, but what the picker saw stays.
    expect((await sessionCommand(svc, picker, order.orderId, 'cancel')).status).toBe(200);
    const released = (await getOrder(svc, demo.auth, order.orderId)).body;
    expect(released).toMatchObject({ can_change: false, status: { value: 'confirmed' } });
    const again = await changeItems(svc, demo.auth, order.orderId, change, { version: released.order_version });
    expect([again.status, again.body.code]).toEqual([409, 'PICKING_STARTED']);
    expect(await stockOf(svc, p)).toBe('8.000');
  });

  it('answers 409 ORDER_NOT_CHANGEABLE for a cancelled order; the cancel answers can_change and order_version', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1200.00', stock: '10.000' });
    const order = await cashOrder(c.auth, [[p, 1]]);
    const cancelled = await cancelOrder(svc, c.auth, order.id);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ can_change: false, order_version: order.version + 1, items: [{ id: order.itemOf(p) }] });
    const r = await changeItems(svc, c.auth, order.id, [{ op: 'set_quantity', item_id: order.itemOf(p), quantity: '2' }], {
      version: cancelled.body.order_version,
    });
    expect([r.status, r.body.code]).toEqual([409, 'ORDER_NOT_CHANGEABLE']);
    expect(await stockOf(svc, p)).toBe('10.000');
  });

  it('answers 409 with the failing lines for stock, limits and lines no longer sold, counting what a line holds', async () => {
    const c = await signInCustomer(svc);
    const [scarce, limited, dropped, other] = await Promise.all([
      makeProduct(svc, { price: '700.00', stock: '3.000' }),
      makeProduct(svc, { price: '700.00', stock: '50.000', limit: '2.000' }),
      makeProduct(svc, { price: '700.00', stock: '50.000' }),
      makeProduct(svc, { price: '100.00', stock: '1.000' }),
    ]);
    const order = await cashOrder(c.auth, [
      [scarce, 2],
      [limited, 1],
      [dropped, 1],
    ]);
    expect(await stockOf(svc, scarce)).toBe('1.000');
    const version = order.version;
    const stockOut = await changeItems(
      svc,
      c.auth,
      order.id,
      [
        // 2 held + 1 in stock: 4 is one too many.
        { op: 'set_quantity', item_id: order.itemOf(scarce), quantity: '4' },
        { op: 'add', product_id: other.productId, unit_id: other.unitId, quantity: '2' },
      ],
      { version },
    );
    expect([stockOut.status, stockOut.body.code]).toEqual([409, 'OUT_OF_STOCK']);
    expect(stockOut.body.lines).toEqual([
      {
        product_id: scarce.productId,
        unit_id: scarce.unitId,
        requested_quantity: '4.000',
        available_quantity: '3.000',
        reason_code: 'OUT_OF_STOCK',
      },
      {
        product_id: other.productId,
        unit_id: other.unitId,
        requested_quantity: '2.000',
        available_quantity: '1.000',
        reason_code: 'OUT_OF_STOCK',
      },
    ]);
    const limit = await changeItems(svc, c.auth, order.id, [{ op: 'set_quantity', item_id: order.itemOf(limited), quantity: '3' }], {
      version,
    });
    expect([limit.status, limit.body.code]).toEqual([409, 'LIMIT_EXCEEDED']);
    expect(limit.body.lines).toEqual([expect.objectContaining({ product_id: limited.productId, available_quantity: '2.000' })]);
    await svc.deps.db.updateTable('products').set({ is_active: false }).where('id', '=', dropped.productId).execute();
    const unavailable = await changeItems(svc, c.auth, order.id, [{ op: 'set_quantity', item_id: order.itemOf(dropped), quantity: '2' }], {
      version,
    });
    expect([unavailable.status, unavailable.body.code]).toEqual([409, 'ITEM_UNAVAILABLE']);
    expect(unavailable.body.lines).toEqual([expect.objectContaining({ product_id: dropped.productId, reason_code: 'UNKNOWN_PRODUCT' })]);
    // Nothing moved; all the held stock is still there to be set: 3 of scarce is 2 held + 1.
    expect([await stockOf(svc, scarce), await stockOf(svc, other), await stockOf(svc, limited)]).toEqual(['1.000', '1.000', '49.000']);
    const exact = await changeItems(svc, c.auth, order.id, [{ op: 'set_quantity', item_id: order.itemOf(scarce), quantity: '3' }], {
      version,
    });
    expect(exact.status).toBe(200);
    expect(await stockOf(svc, scarce)).toBe('0.000');
    // A line whose product left the catalog (its stock rows with it) can still be removed.
    const removed = await changeItems(svc, c.auth, order.id, [{ op: 'remove', item_id: order.itemOf(dropped) }], { version: version + 1 });
    expect(removed.status).toBe(200);
    expect(removed.body.items.map((i: { product_id: string }) => i.product_id)).toEqual([scarce.productId, limited.productId]);
  });

  it('answers 422 for each rule of OrderChangeInput, changing nothing', async () => {
    const c = await signInCustomer(svc);
    const [a, b, elsewhere, grams] = await Promise.all([
      makeProduct(svc, { price: '600.00', stock: '10.000' }),
      makeProduct(svc, { price: '600.00', stock: '10.000' }),
      makeProduct(svc, { price: '600.00', storeId: ARBAT }),
      makeProduct(svc, { price: '150.00', unit: 'g100' }),
    ]);
    const order = await cashOrder(c.auth, [
      [a, 1],
      [b, 1],
    ]);
    const [ia, ib] = [order.itemOf(a), order.itemOf(b)];
    const add = (p: TestProduct, quantity: string | number = 1): OrderLineChange => ({
      op: 'add',
      product_id: p.productId,
      unit_id: p.unitId,
      quantity,
    });
    const cases: [OrderLineChange[], string][] = [
      [[{ op: 'remove' }], 'INVALID_ORDER_CHANGE'],
      [[{ op: 'remove', item_id: ia, quantity: '1' }], 'INVALID_ORDER_CHANGE'],
      [[{ op: 'add', product_id: a.productId, unit_id: a.unitId }], 'INVALID_ORDER_CHANGE'],
      [[{ op: 'set_quantity', item_id: ia }], 'INVALID_ORDER_CHANGE'],
      [[{ op: 'set_replacement', item_id: ia }], 'INVALID_ORDER_CHANGE'],
      [[{ op: 'set_quantity', item_id: ia, quantity: '2', replacement: null }], 'INVALID_ORDER_CHANGE'],
      [[{ op: 'remove', item_id: 2_000_000_000 }], 'ORDER_LINE_NOT_FOUND'],
      [
        [
          { op: 'set_quantity', item_id: ia, quantity: '2' },
          { op: 'remove', item_id: ia },
        ],
        'DUPLICATE_ITEM',
      ],
      [[add(a)], 'DUPLICATE_ITEM'],
      [[add(grams, '2.5'), add(grams, '2.5')], 'DUPLICATE_ITEM'],
      [
        [
          { op: 'remove', item_id: ia },
          { op: 'remove', item_id: ib },
        ],
        'ORDER_WOULD_BE_EMPTY',
      ],
      [[{ op: 'set_quantity', item_id: ia, quantity: '1.5' }], 'INVALID_QUANTITY'],
      [[add(grams, '2.555')], 'INVALID_QUANTITY'],
      [[{ op: 'remove', item_id: ib }], 'BELOW_MINIMUM_ORDER'],
      [[add(elsewhere)], 'UNKNOWN_PRODUCT'],
      [
        [{ op: 'set_replacement', item_id: ia, replacement: { policy: 'named_products', approval_required: false } }],
        'REPLACEMENT_PREFERENCE_INVALID',
      ],
      [
        [
          {
            op: 'set_replacement',
            item_id: ia,
            replacement: { policy: 'picker_choice', product_ids: [b.productId], approval_required: false },
          },
        ],
        'REPLACEMENT_PREFERENCE_INVALID',
      ],
    ];
    for (const [changes, code] of cases) {
      const r = await changeItems(svc, c.auth, order.id, changes, { version: order.version });
      expect([r.status, r.body.code], `${code}: ${JSON.stringify(changes)}`).toEqual([422, code]);
    }
    const below = await changeItems(svc, c.auth, order.id, [{ op: 'remove', item_id: ib }], { version: order.version });
    expect(below.body.detail).toContain('1000.00');
    const unsold = await changeItems(svc, c.auth, order.id, [add(elsewhere), add(grams, '1.5')], { version: order.version });
    expect(unsold.body.lines).toEqual([
      {
        product_id: elsewhere.productId,
        unit_id: elsewhere.unitId,
        requested_quantity: '1.000',
        available_quantity: '0.000',
        reason_code: 'NOT_SOLD_IN_STORE',
      },
    ]);
    // A named product that is the line's own, or one this store does not sell: the line is named.
    for (const [named, reason] of [
      [a, 'REPLACEMENT_PREFERENCE_INVALID'],
      [elsewhere, 'NOT_SOLD_IN_STORE'],
    ] as const) {
      const r = await changeItems(
        svc,
        c.auth,
        order.id,
        [
          {
            op: 'set_replacement',
            item_id: ia,
            replacement: { policy: 'named_products', product_ids: [named.productId], approval_required: true },
          },
        ],
        { version: order.version },
      );
      expect([r.status, r.body.code]).toEqual([422, 'REPLACEMENT_PREFERENCE_INVALID']);
      expect(r.body.lines).toEqual([
        { product_id: a.productId, unit_id: a.unitId, requested_quantity: '1.000', available_quantity: '0.000', reason_code: reason },
      ]);
    }
    const noKey = await changeItems(svc, c.auth, order.id, [{ op: 'remove', item_id: ib }], { version: order.version, key: null });
    expect([noKey.status, noKey.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REQUIRED']);
    expect(await orderRow(order.id)).toMatchObject({ order_version: order.version, goods_total: '1200.00', items_count: 2 });
    expect([await stockOf(svc, a), await stockOf(svc, b), await stockOf(svc, grams)]).toEqual(['9.000', '9.000', '100.000']);
  });

  it('answers 422 EXPRESS_ITEMS_LIMIT when an express order would pass its line limit', async () => {
    await expressAlwaysOpen(svc);
    const c = await signInCustomer(svc);
    const [a, b, d] = await Promise.all([1, 2, 3].map(() => makeProduct(svc, { price: '600.00' })));
    const r = await createOrder(svc, c.auth, deliveryBody([line(a!), line(b!)], null));
    expect(r.status).toBe(201);
    const id = r.body as string;
    const version = await orderVersion(svc, c.auth, id);
    await svc.deps.db.updateTable('store_express_delivery').set({ max_items_count: 2 }).where('store_id', '=', TVERSKAYA).execute();
    try {
      const more = await changeItems(svc, c.auth, id, [{ op: 'add', product_id: d!.productId, unit_id: d!.unitId, quantity: 1 }], {
        version,
      });
      expect([more.status, more.body.code]).toEqual([422, 'EXPRESS_ITEMS_LIMIT']);
      // Within the limit the lines still change.
      const items = (await getOrder(svc, c.auth, id)).body.items;
      const swap = await changeItems(
        svc,
        c.auth,
        id,
        [
          { op: 'remove', item_id: items[1].id },
          { op: 'add', product_id: d!.productId, unit_id: d!.unitId, quantity: 1 },
        ],
        { version },
      );
      expect(swap.status).toBe(200);
    } finally {
      await svc.deps.db.updateTable('store_express_delivery').set({ max_items_count: 30 }).where('store_id', '=', TVERSKAYA).execute();
    }
  });

  it('answers 422 VALIDATION_ERROR for a request breaking the contract, and 400, 413, 415 for bodies that are not one', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1200.00' });
    const order = await cashOrder(c.auth, [[p, 1]]);
    const path = `/api/orders/${order.id}/items/changes`;
    const headers = { ...c.auth, 'idempotency-key': randomUUID(), 'x-expected-version': String(order.version) };
    const { ['x-expected-version']: _version, ...noVersion } = headers;
    for (const [name, init] of [
      ['no X-Expected-Version', { headers: noVersion, body: { changes: [{ op: 'remove', item_id: order.itemOf(p) }] } }],
      ['no changes', { headers, body: { changes: [] } }],
      ['an unknown op', { headers, body: { changes: [{ op: 'replace', item_id: order.itemOf(p) }] } }],
      ['an unknown field', { headers, body: { changes: [{ op: 'remove', item_id: order.itemOf(p), note: 'x' }] } }],
    ] as const) {
      const r = await svc.client.invalid('POST', path, init);
      expect([r.status, r.body.code], name).toEqual([422, 'VALIDATION_ERROR']);
    }
    expect((await svc.client.invalid('POST', path, { headers, body: '{"changes":' })).status).toBe(400);
    expect((await svc.client.invalid('POST', path, { headers, body: JSON.stringify({ changes: 'x'.repeat(1_100_000) }) })).status).toBe(
      413,
    );
    expect(
      (await svc.client.invalid('POST', path, { headers: { ...headers, 'content-type': 'text/plain' }, body: '{"changes":[]}' })).status,
    ).toBe(415);
    expect((await orderRow(order.id)).order_version).toBe(order.version);
  });
});

describe('changeOrderItems idempotency', () => {
  it('replays the stored answer for the same key, and refuses the key with another body or version', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1200.00', stock: '10.000' });
    const order = await cashOrder(c.auth, [[p, 1]]);
    const key = randomUUID();
    const change: OrderLineChange[] = [{ op: 'set_quantity', item_id: order.itemOf(p), quantity: '2' }];
    const first = await changeItems(svc, c.auth, order.id, change, { version: order.version, key });
    const again = await changeItems(svc, c.auth, order.id, change, { version: order.version, key });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.text).toBe(first.text);
    expect(await stockOf(svc, p)).toBe('8.000');
    expect((await orderRow(order.id)).order_version).toBe(order.version + 1);
    const otherBody = await changeItems(svc, c.auth, order.id, [{ ...change[0]!, quantity: '3' }], { version: order.version, key });
    expect([otherBody.status, otherBody.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    const otherVersion = await changeItems(svc, c.auth, order.id, change, { version: order.version + 1, key });
    expect([otherVersion.status, otherVersion.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    // A refusal is the key's answer too, replayed even once its cause is gone.
    const refusedKey = randomUUID();
    const refused = await changeItems(svc, c.auth, order.id, [{ ...change[0]!, quantity: '20' }], {
      version: order.version + 1,
      key: refusedKey,
    });
    expect([refused.status, refused.body.code]).toEqual([409, 'OUT_OF_STOCK']);
    await svc.deps.db.updateTable('inventories').set({ stock: '100.000' }).where('id', '=', p.inventoryId).execute();
    const replayed = await changeItems(svc, c.auth, order.id, [{ ...change[0]!, quantity: '20' }], {
      version: order.version + 1,
      key: refusedKey,
    });
    expect([replayed.status, replayed.body.code]).toEqual([409, 'OUT_OF_STOCK']);
    expect(await stockOf(svc, p)).toBe('100.000');
  });
});

describe('changeOrderItems and online payment', () => {
  /** An online order placed and paid at the sandbox bank. */
  async function paidOrder(auth: Auth, p: TestProduct, quantity: number) {
    const id = await placedOrder(svc, auth, deliveryBody([line(p, quantity)], await makeSlot(svc), { payment_method: 'online' }));
    expect((await bankInvoice(svc, auth, id)).status).toBe(200);
    expect((await settleSandboxInvoice(svc, auth, id, 'paid')).status).toBe(200);
    const { detail, byProduct } = await linesOf(auth, id);
    return { id, version: detail.order_version as number, item: byProduct(p).id as number };
  }

  const invoicesOf = (id: string) =>
    svc.deps.db.selectFrom('bank_invoices').select(['status', 'amount']).where('order_id', '=', id).orderBy('created_at').execute();

  const openInvoiceLink = async (id: string) =>
    (
      await svc.deps.db
        .selectFrom('bank_invoices')
        .select('link')
        .where('order_id', '=', id)
        .where('status', '=', 'open')
        .executeTakeFirstOrThrow()
    ).link;

  /** The refunds the sandbox bank is asked for during one pass of the orders worker. */
  async function refundsOfWorkerPass(): Promise<string[]> {
    const refund = vi.spyOn(SandboxBank.prototype, 'refund');
    try {
      await runOrderWorkerOnce(svc.deps);
      return refund.mock.calls.map(([r]) => r.amount);
    } finally {
      refund.mockRestore();
    }
  }

  it('makes a paid order await the difference of a higher total through a new invoice, and refunds a lower one', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1234.50', stock: '20.000' });
    const order = await paidOrder(c.auth, p, 1);
    const set = (quantity: string, version: number) =>
      changeItems(svc, c.auth, order.id, [{ op: 'set_quantity', item_id: order.item, quantity }], { version });

    // 1 -> 2: 1433.50 paid, 2668.00 now: 1234.50 to pay, through an invoice issued with the change.
    const higher = await set('2', order.version);
    expect(higher.status).toBe(200);
    expect(higher.body).toMatchObject({ total_price: '2668.00', status: { value: 'confirmed' }, can_change: true });
    expect((await roadmapDetail(svc, c.auth, order.id)).body).toMatchObject({ payment_status: 'awaiting', amount_due: '1234.50' });
    expect(await invoicesOf(order.id)).toEqual([
      { status: 'paid', amount: '1433.50' },
      { status: 'open', amount: '1234.50' },
    ]);
    // The invoice the app opens is that one.
    expect((await bankInvoice(svc, c.auth, order.id)).body.link).toBe(await openInvoiceLink(order.id));
    expect((await orderChangedEvents(svc, order.id)).at(-1)).toEqual({ order_version: order.version + 1, changes: ['items', 'payment'] });
    expect((await settleSandboxInvoice(svc, c.auth, order.id, 'paid')).status).toBe(200);
    expect(await orderRow(order.id)).toMatchObject({ payment_status: 'paid', status: 'confirmed' });

    // 2 -> 1: 2668.00 paid, 1433.50 now: 1234.50 back to the card.
    const lower = await set('1', await orderVersion(svc, c.auth, order.id));
    expect(lower.status).toBe(200);
    expect(await orderRow(order.id)).toMatchObject({ payment_status: 'paid', total_price: '1433.50' });
    expect((await roadmapDetail(svc, c.auth, order.id)).body.amount_due).toBeNull();
    expect(await refundsOfWorkerPass()).toEqual(['1234.50']);
    expect(await orderRow(order.id)).toMatchObject({ payment_status: 'paid' });

    // 1 -> 3: what was paid is 2668.00 less the 1234.50 returned: 2469.00 to pay.
    const again = await set('3', await orderVersion(svc, c.auth, order.id));
    expect(again.status).toBe(200);
    expect((await roadmapDetail(svc, c.auth, order.id)).body).toMatchObject({ payment_status: 'awaiting', amount_due: '2469.00' });
    expect((await bankInvoice(svc, c.auth, order.id)).status).toBe(200);
    expect((await invoicesOf(order.id)).at(-1)).toEqual({ status: 'open', amount: '2469.00' });
    expect(await stockOf(svc, p)).toBe('17.000');
  });

  it('replaces the open invoice of an unpaid order by one for the new total', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1234.50', stock: '20.000' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc), { payment_method: 'online' }));
    const first = (await bankInvoice(svc, c.auth, id)).body;
    expect(await invoicesOf(id)).toEqual([{ status: 'open', amount: '1433.50' }]);
    const { detail, byProduct } = await linesOf(c.auth, id);
    const r = await changeItems(svc, c.auth, id, [{ op: 'set_quantity', item_id: byProduct(p).id, quantity: '2' }], {
      version: detail.order_version,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ total_price: '2668.00', status: { value: 'awaiting_payment' } });
    expect(await invoicesOf(id)).toEqual([
      { status: 'cancelled', amount: '1433.50' },
      { status: 'open', amount: '2668.00' },
    ]);
    const replaced = (await bankInvoice(svc, c.auth, id)).body;
    expect(replaced.link).toBe(await openInvoiceLink(id));
    expect(replaced.link).not.toBe(first.link);
    const cancels = await svc.deps.db
      .selectFrom('provider_commands')
      .select('kind')
      .where('order_id', '=', id)
      .where('kind', '=', 'bank.cancel_invoice')
      .execute();
    expect(cancels).toHaveLength(1);
    expect((await settleSandboxInvoice(svc, c.auth, id, 'paid')).body).toMatchObject({ amount: '2668.00', payment_status: 'paid' });
  });

  it('keeps an online order without an invoice awaiting the new total', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1234.50', stock: '20.000' });
    const id = await placedOrder(svc, c.auth, pickupBody([line(p)], await makeSlot(svc, { kind: 'pickup' }), { payment_method: 'online' }));
    const { detail, byProduct } = await linesOf(c.auth, id);
    const r = await changeItems(svc, c.auth, id, [{ op: 'set_quantity', item_id: byProduct(p).id, quantity: '2' }], {
      version: detail.order_version,
    });
    expect(r.status).toBe(200);
    expect(await invoicesOf(id)).toEqual([]);
    expect((await roadmapDetail(svc, c.auth, id)).body).toMatchObject({ payment_status: 'awaiting', amount_due: '2469.00' });
    expect((await orderChangedEvents(svc, id)).at(-1)!.changes).toEqual(['items', 'payment']);
  });
});

describe('the order detail’s lines', () => {
  it('show each line’s latest approval of the picker’s proposals', async () => {
    const demo = await signInDemoCustomer(svc);
    const [p, q, r] = await Promise.all([1, 2, 3].map(() => makeProduct(svc, { price: '700.00', stock: '10.000' })));
    const order = await createConfirmedOrder(svc, {
      storeId: TVERSKAYA,
      lines: [p!, q!].map((x) => ({ inventoryId: x.inventoryId, quantity: '1' })),
    });
    const picker = await createPicker(svc, [TVERSKAYA]);
    const session = await startPicking(svc, picker, order.orderId);
    const item = session.items.find((i) => i.product_id === p!.productId)!;
    const picking = await svc.deps.db
      .selectFrom('picking_items')
      .select(['id', 'order_item_id', 'session_id'])
      .where('id', '=', item.item_id)
      .executeTakeFirstOrThrow();
    const proposal = (status: 'withdrawn' | 'pending') => ({
      order_id: order.orderId,
      order_item_id: picking.order_item_id!,
      session_id: picking.session_id,
      picking_item_id: picking.id,
      kind: 'replacement' as const,
      status,
      decided_by: status === 'pending' ? null : ('picker' as const),
      decided_at: status === 'pending' ? null : new Date(),
      proposed_product_id: r!.productId,
      proposed_name_ru: 'Молоко 3,2% 1 л',
      proposed_name_en: 'Milk 3.2% 1 l',
      proposed_image: null,
      proposed_unit_price: '94.90',
      proposed_quantity: '1.000',
      proposed_line_total: '94.90',
      expires_at: new Date(Date.now() + 300_000),
    });
    await svc.deps.db.insertInto('item_approvals').values(proposal('withdrawn')).execute();
    const latest = await svc.deps.db.insertInto('item_approvals').values(proposal('pending')).returning('id').executeTakeFirstOrThrow();

    const detail = (await getOrder(svc, demo.auth, order.orderId, 'ru')).body;
    expect(detail.can_change).toBe(false);
    const withApproval = detail.items.find((i: { id: number }) => i.id === picking.order_item_id);
    expect(withApproval.approval).toMatchObject({
      id: latest.id,
      item_id: picking.order_item_id,
      kind: 'replacement',
      status: 'pending',
      decided_by: null,
      decided_at: null,
      proposed: { product_id: r!.productId, name: 'Молоко 3,2% 1 л', unit_price: '94.90', quantity: '1.000', line_total: '94.90' },
    });
    expect(detail.items.find((i: { id: number }) => i.id !== picking.order_item_id).approval).toBeNull();
  });
});

describe('changeOrderItems with the HTTP bank', () => {
  const BANK = 'https://acquiring.bank.example.test/v1';
  const issued: { amount: string; key: string | null }[] = [];
  const cancelled: string[] = [];
  const bank = setupServer(
    http.post(`${BANK}/invoices`, async ({ request }) => {
      const body = (await request.json()) as { amount: { value: string } };
      issued.push({ amount: body.amount.value, key: request.headers.get('idempotency-key') });
      const ref = `inv-${issued.length}`;
      return HttpResponse.json({ id: ref, payment_url: `https://pay.bank.example.test/${ref}` }, { status: 201 });
    }),
    http.post(`${BANK}/invoices/:ref/cancel`, ({ params }) => {
      cancelled.push(String(params.ref));
      return HttpResponse.json({ status: 'cancelled' });
    }),
    // Asked about every open or withdrawn invoice by the worker: still unpaid.
    http.get(`${BANK}/invoices/:ref`, () => HttpResponse.json({ status: 'pending' })),
  );
  let remote: TestService;
  beforeAll(async () => {
    bank.listen(passLocalFailOthers);
    remote = await startTestService({
      env: {
        ORDER_WORKER_ENABLED: 'false',
        BANK_PROVIDER: 'http',
        BANK_HTTP_URL: BANK,
        BANK_HTTP_TOKEN: 'bank-token',
        BANK_TIMEOUT_MS: '300',
      },
    });
  });
  afterEach(() => bank.resetHandlers());
  afterAll(async () => {
    await remote?.close();
    bank.close();
  });

  async function unpaidWithInvoice() {
    const c = await signInCustomer(remote);
    const p = await makeProduct(remote, { price: '1234.50', stock: '20.000' });
    const id = await placedOrder(remote, c.auth, deliveryBody([line(p)], await makeSlot(remote), { payment_method: 'online' }));
    expect((await bankInvoice(remote, c.auth, id)).body.link).toBe(`https://pay.bank.example.test/inv-${issued.length}`);
    const detail = (await getOrder(remote, c.auth, id)).body;
    return { c, id, item: detail.items[0].id as number, version: detail.order_version as number };
  }

  it('issues the replacing invoice at the bank with the change and withdraws the old one', async () => {
    const o = await unpaidWithInvoice();
    const before = issued.length;
    const r = await changeItems(remote, o.c.auth, o.id, [{ op: 'set_quantity', item_id: o.item, quantity: '2' }], { version: o.version });
    expect(r.status).toBe(200);
    expect(issued.slice(before)).toEqual([{ amount: '2668.00', key: expect.any(String) }]);
    const invoices = await remote.deps.db
      .selectFrom('bank_invoices')
      .select(['id', 'status', 'amount', 'provider_ref'])
      .where('order_id', '=', o.id)
      .orderBy('created_at')
      .execute();
    expect(invoices.map((i) => [i.status, i.amount])).toEqual([
      ['cancelled', '1433.50'],
      ['open', '2668.00'],
    ]);
    expect(issued.at(-1)!.key).toBe(invoices[1]!.id);
    expect((await bankInvoice(remote, o.c.auth, o.id)).body.link).toBe(`https://pay.bank.example.test/${invoices[1]!.provider_ref}`);
    await runOrderWorkerOnce(remote.deps);
    expect(cancelled).toContain(invoices[0]!.provider_ref);
  });

  it('keeps the change when the bank cannot issue the new invoice: the next read of the invoice issues it', async () => {
    const o = await unpaidWithInvoice();
    bank.use(http.post(`${BANK}/invoices`, () => HttpResponse.json({ error: 'down' }, { status: 503 })));
    const r = await changeItems(remote, o.c.auth, o.id, [{ op: 'set_quantity', item_id: o.item, quantity: '2' }], { version: o.version });
    expect(r.status).toBe(200);
    expect(r.body.total_price).toBe('2668.00');
    const open = () =>
      remote.deps.db.selectFrom('bank_invoices').select('amount').where('order_id', '=', o.id).where('status', '=', 'open').execute();
    expect(await open()).toEqual([]);
    bank.resetHandlers();
    expect((await bankInvoice(remote, o.c.auth, o.id)).status).toBe(200);
    expect(await open()).toEqual([{ amount: '2668.00' }]);
  });
});
