// POST /api/orders/: what a placed order records, each rule with its code, idempotent retries,
// and that a refused checkout leaves nothing behind (no order, no stock taken, no slot held).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  ARBAT,
  createInvalidOrder,
  createOrder,
  deliveryBody,
  expressAlwaysOpen,
  getOrder,
  IN_ZONE,
  line,
  makeProduct,
  makeSlot,
  OUTSIDE_ZONES,
  pickupBody,
  reservedOf,
  stockOf,
  TVERSKAYA,
  type OrderInput,
} from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const ordersOf = (customerId: string) => svc.deps.db.selectFrom('orders').selectAll().where('customer_id', '=', customerId).execute();

describe('createOrder', () => {
  it('places a scheduled cash delivery: 201 with the id, priced lines, stock and one slot unit taken', async () => {
    const c = await signInCustomer(svc);
    const bread = await makeProduct(svc, { price: '450.50', stock: '10.000', oldPrice: '500.00' });
    const cheese = await makeProduct(svc, { price: '249.00', stock: '5.000', unit: 'kg' });
    const slot = await makeSlot(svc, { capacity: 3 });
    const r = await createOrder(svc, c.auth, deliveryBody([line(bread, 2), line(cheese, '0.93')], slot), { lang: 'ru' });
    expect(r.status).toBe(201);
    const id = r.body as string;
    expect(r.headers.get('location')).toBe(`/api/orders/${id}`);

    expect(await stockOf(svc, bread)).toBe('8.000');
    expect(await stockOf(svc, cheese)).toBe('4.070');
    expect(await reservedOf(svc, slot)).toBe(1);

    const detail = (await getOrder(svc, c.auth, id)).body;
    // 2 x 450.50 + 0.93 x 249.00 = 901.00 + 231.57 = 1132.57 (< 3000: delivery 199.00)
    expect(detail).toMatchObject({
      id,
      type: 'delivery',
      total_price: '1331.57',
      status: { value: 'confirmed', display: 'Confirmed' },
      can_cancel: true,
      comment: 'Ripe bananas please',
      picking_result: { state: 'pending', items: [] },
      pickup: null,
    });
    expect(detail.items).toEqual([
      expect.objectContaining({
        product_id: bread.productId,
        quantity: '2.000',
        unit_price: '450.50',
        old_price: '500.00',
        unit_name: 'pc',
      }),
      expect.objectContaining({ product_id: cheese.productId, quantity: '0.930', unit_price: '249.00', unit_name: 'kg' }),
    ]);
    expect(detail.delivery).toMatchObject({
      address_line: 'Tverskaya St, 7, Moscow',
      location: IN_ZONE,
      entrance: '2',
      apartment: '54',
      comment: 'Call on arrival',
      is_express: false,
      price: '199.00',
      window: { slot_id: slot },
      tracking: { state: 'pending' },
      courier: null,
    });
    const [row] = await ordersOf(c.customerId);
    expect(row).toMatchObject({ goods_total: '1132.57', delivery_cost: '199.00', payment_status: 'not_required', absence_action: 'call' });
  });

  it('delivers free of charge from the zone threshold', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const id = (await createOrder(svc, c.auth, deliveryBody([line(p, 2)], await makeSlot(svc)))).body;
    expect((await getOrder(svc, c.auth, id)).body).toMatchObject({ total_price: '3000.00', delivery: { price: '0.00' } });
  });

  it('places a pickup order at the store of X-Store-Id with the store address', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '300.00' });
    const slot = await makeSlot(svc, { kind: 'pickup', capacity: 2 });
    const r = await createOrder(svc, c.auth, pickupBody([line(p, 2)], slot, { change: '1000' }));
    expect(r.status).toBe(201);
    const detail = (await getOrder(svc, c.auth, r.body, 'ru')).body;
    expect(detail).toMatchObject({ type: 'pickup', total_price: '600.00', delivery: null, address_line: 'Москва, Тверская ул., 8' });
    expect(detail.pickup).toEqual({
      date: expect.any(String),
      start_time: expect.stringMatching(/^\d\d:\d\d:\d\d\+03:00$/),
      end_time: expect.any(String),
    });
    expect(await reservedOf(svc, slot)).toBe(1);
    const [row] = await ordersOf(c.customerId);
    expect(row!.change_amount).toBe('1000.00');
  });

  it('keeps an online order in created, awaiting payment within the payment window', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1200.00' });
    const r = await createOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc), { payment_method: 'online' }));
    expect(r.status).toBe(201);
    const [row] = await ordersOf(c.customerId);
    expect(row).toMatchObject({ status: 'created', payment_status: 'awaiting' });
    const windowMinutes = (row!.payment_due_at!.getTime() - row!.created_at.getTime()) / 60_000;
    expect(Math.round(windowMinutes)).toBe(svc.config.orders.bank.paymentWindowMinutes);
  });

  it('places an express delivery at the express cost with the promised eta', async () => {
    await expressAlwaysOpen(svc);
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '5000.00' });
    const r = await createOrder(svc, c.auth, deliveryBody([line(p)], null));
    expect(r.status).toBe(201);
    const detail = (await getOrder(svc, c.auth, r.body)).body;
    // Tverskaya: express 45 minutes for 299.00, charged whatever the goods total.
    expect(detail).toMatchObject({ total_price: '5299.00', delivery: { is_express: true, window: null, price: '299.00' } });
    const eta = new Date(detail.delivery.eta).getTime() - new Date(detail.created_at).getTime();
    expect(eta).toBe(45 * 60_000);
  });

  it('answers 401 without a customer token', async () => {
    const p = await signInPicker(svc);
    expect((await createOrder(svc, {}, pickupBody([], randomUUID()))).status).toBe(401);
    expect((await createOrder(svc, p.auth, pickupBody([], randomUUID()))).status).toBe(401);
  });

  it('answers 400 for malformed JSON and 413 for a body over the limit', async () => {
    const c = await signInCustomer(svc);
    const headers = { ...c.auth, 'x-store-id': TVERSKAYA, 'idempotency-key': randomUUID() };
    const malformed = await svc.client.invalid('POST', '/api/orders/', { headers, body: '{"type":' });
    expect(malformed.status).toBe(400);
    const huge = await svc.client.invalid('POST', '/api/orders/', { headers, body: JSON.stringify({ comment: 'x'.repeat(1_100_000) }) });
    expect(huge.status).toBe(413);
  });

  it('answers 422 VALIDATION_ERROR for a body breaking the contract', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc);
    for (const body of [
      { type: 'delivery', payment_method: 'cash' },
      { ...pickupBody([line(p)], randomUUID()), items: [] },
      pickupBody([line(p, 0)], randomUUID()),
      { ...pickupBody([line(p)], randomUUID()), comment: 'x'.repeat(1001) },
      { ...pickupBody([line(p)], randomUUID()), unknown: true },
    ]) {
      const r = await createInvalidOrder(svc, c.auth, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 422 with the store and idempotency codes', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc);
    const body = pickupBody([line(p)], randomUUID());
    expect((await createOrder(svc, c.auth, body, { storeId: null })).body.code).toBe('STORE_REQUIRED');
    expect((await createOrder(svc, c.auth, body, { storeId: randomUUID() })).body.code).toBe('STORE_NOT_FOUND');
    const noKey = await createOrder(svc, c.auth, body, { key: null });
    expect(noKey.status).toBe(422);
    expect(noKey.body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
  });

  it('answers 422 OrderCommandError for each rule of OrderInput', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const grams = await makeProduct(svc, { price: '150.00', unit: 'g100' });
    const slot = await makeSlot(svc);
    const pickupSlot = await makeSlot(svc, { kind: 'pickup' });
    const cases: [OrderInput, string][] = [
      [{ ...deliveryBody([line(p)], slot), delivery_context: null }, 'DELIVERY_CONTEXT_REQUIRED'],
      [{ ...deliveryBody([line(p)], slot), pickup_context: { slot_id: pickupSlot } }, 'DELIVERY_CONTEXT_REQUIRED'],
      [{ ...pickupBody([line(p)], pickupSlot), pickup_context: null }, 'PICKUP_CONTEXT_REQUIRED'],
      [pickupBody([line(p)], pickupSlot, { payment_method: 'online', change: '5000' }), 'CHANGE_NOT_ALLOWED'],
      [pickupBody([line(p)], pickupSlot, { change: '0' }), 'INVALID_CHANGE'],
      // Beyond what an order stores (numeric(12,2)): a clear 422, not a 500.
      [pickupBody([line(p)], pickupSlot, { change: '100000000000' }), 'INVALID_CHANGE'],
      [pickupBody([line(p), line(p, 2)], pickupSlot), 'DUPLICATE_ITEM'],
      [pickupBody([line(p, '1.5')], pickupSlot), 'INVALID_QUANTITY'],
      [pickupBody([line(p, '1.0001')], pickupSlot), 'INVALID_QUANTITY'],
      // 255.5 g: a scale weighs whole grams (and a picked line is kept in kg).
      [pickupBody([line(grams, '2.555')], pickupSlot), 'INVALID_QUANTITY'],
      [
        deliveryBody([line(p)], slot, { delivery_context: { address_line: 'x', location: IN_ZONE, slot_id: slot, is_express: true } }),
        'DELIVERY_MODE_INVALID',
      ],
      [
        deliveryBody([line(p)], slot, { delivery_context: { address_line: 'x', location: IN_ZONE, is_express: false } }),
        'DELIVERY_MODE_INVALID',
      ],
      [
        deliveryBody([line(p)], slot, {
          delivery_context: { address_line: 'x', location: OUTSIDE_ZONES, slot_id: slot, is_express: false },
        }),
        'OUTSIDE_DELIVERY_ZONE',
      ],
      [deliveryBody([line(p)], randomUUID()), 'SLOT_NOT_FOUND'],
      // A pickup window is not a delivery slot, and a slot of another store is unknown here.
      [deliveryBody([line(p)], pickupSlot), 'SLOT_NOT_FOUND'],
      [pickupBody([line(p)], await makeSlot(svc, { kind: 'pickup', storeId: ARBAT })), 'SLOT_NOT_FOUND'],
    ];
    for (const [body, code] of cases) {
      const r = await createOrder(svc, c.auth, body);
      expect([r.status, r.body.code], code).toEqual([422, code]);
    }
    expect(await ordersOf(c.customerId)).toEqual([]);
    expect(await reservedOf(svc, slot)).toBe(0);
  });

  it('answers 422 BELOW_MINIMUM_ORDER under the zone or pickup minimum', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '400.00' });
    const delivery = await createOrder(svc, c.auth, deliveryBody([line(p, 2)], await makeSlot(svc)));
    expect([delivery.status, delivery.body.code]).toEqual([422, 'BELOW_MINIMUM_ORDER']);
    expect(delivery.body.detail).toContain('1000.00');
    const pickup = await createOrder(svc, c.auth, pickupBody([line(p, 1)], await makeSlot(svc, { kind: 'pickup' })));
    expect([pickup.status, pickup.body.code]).toEqual([422, 'BELOW_MINIMUM_ORDER']);
  });

  it('answers 422 EXPRESS_ITEMS_LIMIT and 409 EXPRESS_UNAVAILABLE', async () => {
    const c = await signInCustomer(svc);
    const lines = await Promise.all([1, 2].map(() => makeProduct(svc, { price: '600.00' })));
    await svc.deps.db.updateTable('store_express_delivery').set({ max_items_count: 1 }).where('store_id', '=', TVERSKAYA).execute();
    try {
      await expressAlwaysOpen(svc);
      const tooMany = await createOrder(
        svc,
        c.auth,
        deliveryBody(
          lines.map((p) => line(p)),
          null,
        ),
      );
      expect([tooMany.status, tooMany.body.code]).toEqual([422, 'EXPRESS_ITEMS_LIMIT']);
    } finally {
      await svc.deps.db.updateTable('store_express_delivery').set({ max_items_count: 30 }).where('store_id', '=', TVERSKAYA).execute();
    }
    await expressAlwaysOpen(svc, TVERSKAYA, false);
    try {
      const closed = await createOrder(svc, c.auth, deliveryBody([line(lines[0]!, 2)], null));
      expect([closed.status, closed.body.code]).toEqual([409, 'EXPRESS_UNAVAILABLE']);
    } finally {
      await expressAlwaysOpen(svc);
    }
  });

  it('answers 409 with every failing line, the code by precedence', async () => {
    const c = await signInCustomer(svc);
    const scarce = await makeProduct(svc, { price: '700.00', stock: '1.000' });
    const limited = await makeProduct(svc, { price: '700.00', stock: '50.000', limit: '2.000' });
    const elsewhere = await makeProduct(svc, { price: '700.00', storeId: ARBAT });
    const slot = await makeSlot(svc);
    const r = await createOrder(
      svc,
      c.auth,
      deliveryBody(
        [line(scarce, 3), line(limited, 3), line(elsewhere, 1), { product_id: randomUUID(), unit_id: scarce.unitId, quantity: 1 }],
        slot,
      ),
    );
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('OUT_OF_STOCK');
    expect(r.body.lines).toEqual([
      {
        product_id: scarce.productId,
        unit_id: scarce.unitId,
        requested_quantity: '3.000',
        available_quantity: '1.000',
        reason_code: 'OUT_OF_STOCK',
      },
      {
        product_id: limited.productId,
        unit_id: limited.unitId,
        requested_quantity: '3.000',
        available_quantity: '2.000',
        reason_code: 'LIMIT_EXCEEDED',
      },
      expect.objectContaining({ product_id: elsewhere.productId, reason_code: 'NOT_SOLD_IN_STORE' }),
      expect.objectContaining({ reason_code: 'UNKNOWN_PRODUCT' }),
    ]);
    const limitOnly = await createOrder(svc, c.auth, deliveryBody([line(limited, 3)], slot));
    expect([limitOnly.status, limitOnly.body.code]).toEqual([409, 'LIMIT_EXCEEDED']);
    const unavailable = await createOrder(svc, c.auth, deliveryBody([line(elsewhere, 2)], slot));
    expect([unavailable.status, unavailable.body.code]).toEqual([409, 'ITEM_UNAVAILABLE']);
    // Nothing was taken by the refused attempts.
    expect(await stockOf(svc, scarce)).toBe('1.000');
    expect(await stockOf(svc, limited)).toBe('50.000');
    expect(await reservedOf(svc, slot)).toBe(0);
  });

  it('answers 409 SLOT_FULL and SLOT_UNAVAILABLE, and a refused order keeps no stock', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '10.000' });
    const slot = await makeSlot(svc, { capacity: 1 });
    expect((await createOrder(svc, c.auth, deliveryBody([line(p)], slot))).status).toBe(201);
    const full = await createOrder(svc, c.auth, deliveryBody([line(p, 2)], slot));
    expect([full.status, full.body.code]).toEqual([409, 'SLOT_FULL']);
    expect(await stockOf(svc, p)).toBe('9.000');

    const closed = await createOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc, { closed: true })));
    expect([closed.status, closed.body.code]).toEqual([409, 'SLOT_UNAVAILABLE']);
    // Tverskaya takes delivery orders until 120 minutes before a window starts.
    const late = await createOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc, { startsInMinutes: 30 })));
    expect([late.status, late.body.code]).toEqual([409, 'SLOT_UNAVAILABLE']);
    expect((await ordersOf(c.customerId)).length).toBe(1);
    expect(await stockOf(svc, p)).toBe('9.000');
  });
});

describe('createOrder replacement preferences', () => {
  it('stores each line’s preference, named products in order, and shows it with the names', async () => {
    const c = await signInCustomer(svc);
    const [milk, kefir, yogurt, bread, tea] = await Promise.all([1, 2, 3, 4, 5].map(() => makeProduct(svc, { price: '300.00' })));
    const body = deliveryBody(
      [
        {
          ...line(milk!, 2),
          replacement: { policy: 'named_products', product_ids: [yogurt!.productId, kefir!.productId], approval_required: true },
        },
        { ...line(bread!, 1), replacement: { policy: 'picker_choice', approval_required: false } },
        { ...line(tea!, 1), replacement: null },
        line(kefir!, 1),
      ],
      await makeSlot(svc),
    );
    // approval_required may be left out (false): the request is sent as the app writes it.
    const sent = { ...body, items: [...body.items, { ...line(yogurt!, 1), replacement: { policy: 'no_replacement' } }] };
    const r = await createInvalidOrder(svc, c.auth, sent);
    expect(r.status).toBe(201);
    const rows = await svc.deps.db
      .selectFrom('order_items')
      .select(['product_id', 'replacement_policy', 'replacement_product_ids', 'replacement_approval'])
      .where('order_id', '=', r.body)
      .orderBy('line_no')
      .execute();
    expect(rows.map(({ product_id: _id, ...preference }) => preference)).toEqual([
      { replacement_policy: 'named_products', replacement_product_ids: [yogurt!.productId, kefir!.productId], replacement_approval: true },
      { replacement_policy: 'picker_choice', replacement_product_ids: [], replacement_approval: false },
      { replacement_policy: null, replacement_product_ids: [], replacement_approval: false },
      { replacement_policy: null, replacement_product_ids: [], replacement_approval: false },
      { replacement_policy: 'no_replacement', replacement_product_ids: [], replacement_approval: false },
    ]);
    const detail = (await getOrder(svc, c.auth, r.body)).body;
    expect(detail.items.map((i: { replacement: unknown }) => i.replacement)).toEqual([
      {
        policy: 'named_products',
        products: [
          { product_id: yogurt!.productId, name: expect.stringMatching(/^Test product/) },
          { product_id: kefir!.productId, name: expect.stringMatching(/^Test product/) },
        ],
        approval_required: true,
      },
      { policy: 'picker_choice', products: [], approval_required: false },
      null,
      null,
      { policy: 'no_replacement', products: [], approval_required: false },
    ]);
    expect(detail).toMatchObject({ can_change: true, order_version: 2 });
    expect(detail.items.every((i: { id: number; approval: unknown }) => Number.isInteger(i.id) && i.approval === null)).toBe(true);
  });

  it('answers 422 REPLACEMENT_PREFERENCE_INVALID for each rule of ReplacementPreferenceInput, placing nothing', async () => {
    const c = await signInCustomer(svc);
    const [milk, kefir] = await Promise.all([makeProduct(svc, { price: '1200.00', stock: '10.000' }), makeProduct(svc)]);
    const elsewhere = await makeProduct(svc, { storeId: ARBAT });
    const slot = await makeSlot(svc);
    const order = (replacement: NonNullable<OrderInput['items'][number]['replacement']>) =>
      createOrder(svc, c.auth, deliveryBody([{ ...line(milk, 2), replacement }], slot));
    for (const replacement of [
      { policy: 'named_products' as const, approval_required: false },
      { policy: 'no_replacement' as const, product_ids: [kefir.productId], approval_required: false },
      { policy: 'picker_choice' as const, product_ids: [kefir.productId], approval_required: true },
    ]) {
      const r = await order(replacement);
      expect([r.status, r.body.code], JSON.stringify(replacement)).toEqual([422, 'REPLACEMENT_PREFERENCE_INVALID']);
      expect(r.body.lines).toBeUndefined();
    }
    // A named product that is the line's own, not sold here, or unknown: `lines` name the line.
    for (const [named, reason] of [
      [milk.productId, 'REPLACEMENT_PREFERENCE_INVALID'],
      [elsewhere.productId, 'NOT_SOLD_IN_STORE'],
      [randomUUID(), 'UNKNOWN_PRODUCT'],
    ] as const) {
      const r = await order({ policy: 'named_products', product_ids: [kefir.productId, named], approval_required: false });
      expect([r.status, r.body.code], reason).toEqual([422, 'REPLACEMENT_PREFERENCE_INVALID']);
      expect(r.body.lines).toEqual([
        { product_id: milk.productId, unit_id: milk.unitId, requested_quantity: '2.000', available_quantity: '0.000', reason_code: reason },
      ]);
      expect(r.body.detail).toContain(named);
    }
    expect(await ordersOf(c.customerId)).toEqual([]);
    expect(await stockOf(svc, milk)).toBe('10.000');
    expect(await reservedOf(svc, slot)).toBe(0);
  });
});

describe('createOrder idempotency', () => {
  it('replays the first answer for the same key and body and creates one order', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '5.000' });
    const body = deliveryBody([line(p)], await makeSlot(svc));
    const key = randomUUID();
    const first = await createOrder(svc, c.auth, body, { key });
    const again = await createOrder(svc, c.auth, body, { key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers.get('location')).toBe(`/api/orders/${first.body}`);
    expect((await ordersOf(c.customerId)).length).toBe(1);
    expect(await stockOf(svc, p)).toBe('4.000');
  });

  it('stores the answer with the claim, and with the order when an expired key is taken over', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '5.000' });
    const body = deliveryBody([line(p)], await makeSlot(svc));
    const key = randomUUID();
    const record = () =>
      svc.deps.db
        .selectFrom('idempotency_keys')
        .select(['state', 'response_status', 'response_body'])
        .where('principal', '=', `customer:${c.customerId}`)
        .where('key', '=', key)
        .executeTakeFirstOrThrow();
    const first = await createOrder(svc, c.auth, body, { key });
    expect(first.status).toBe(201);
    expect(await record()).toEqual({ state: 'completed', response_status: 201, response_body: first.body });
    // Past its lifetime the key is a new attempt: taken over, and its new answer stored by the order's write.
    await svc.deps.db
      .updateTable('idempotency_keys')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('key', '=', key)
      .execute();
    const second = await createOrder(svc, c.auth, body, { key });
    expect(second.status).toBe(201);
    expect(second.body).not.toBe(first.body);
    expect(await record()).toEqual({ state: 'completed', response_status: 201, response_body: second.body });
    const replayed = await createOrder(svc, c.auth, body, { key });
    expect([replayed.status, replayed.body]).toEqual([201, second.body]);
    expect((await ordersOf(c.customerId)).length).toBe(2);
    expect(await stockOf(svc, p)).toBe('3.000');
  });

  it('answers 409 IDEMPOTENCY_CONFLICT for the same key with another body', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00' });
    const slot = await makeSlot(svc);
    const key = randomUUID();
    expect((await createOrder(svc, c.auth, deliveryBody([line(p)], slot), { key })).status).toBe(201);
    const other = await createOrder(svc, c.auth, deliveryBody([line(p, 2)], slot), { key });
    expect([other.status, other.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
    // The same body at another store is another request too.
    const elsewhere = await createOrder(svc, c.auth, deliveryBody([line(p)], slot), { key, storeId: ARBAT });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
  });

  it('replays a business refusal unchanged, even once the cause is gone', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '1.000' });
    const body = deliveryBody([line(p, 2)], await makeSlot(svc));
    const key = randomUUID();
    const refused = await createOrder(svc, c.auth, body, { key });
    expect([refused.status, refused.body.code]).toEqual([409, 'OUT_OF_STOCK']);
    await svc.deps.db.updateTable('inventories').set({ stock: '10.000' }).where('id', '=', p.inventoryId).execute();
    const replayed = await createOrder(svc, c.auth, body, { key });
    expect(replayed.status).toBe(409);
    expect(replayed.body).toMatchObject({ code: 'OUT_OF_STOCK', lines: refused.body.lines });
    // A new key is a new attempt.
    expect((await createOrder(svc, c.auth, body)).status).toBe(201);
  });

  it('scopes keys to the customer', async () => {
    const a = await signInCustomer(svc);
    const b = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00' });
    const body = deliveryBody([line(p)], await makeSlot(svc));
    const key = randomUUID();
    const ra = await createOrder(svc, a.auth, body, { key });
    const rb = await createOrder(svc, b.auth, body, { key });
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(ra.body).not.toBe(rb.body);
  });

  it('accepts a request without a key when the server does not require one', async () => {
    const relaxed = await startTestService({ env: { ORDER_IDEMPOTENCY_KEY_REQUIRED: 'false' } });
    try {
      const c = await signInCustomer(relaxed);
      const p = await makeProduct(relaxed, { price: '1100.00' });
      const r = await createOrder(relaxed, c.auth, deliveryBody([line(p)], await makeSlot(relaxed)), { key: null });
      expect(r.status).toBe(201);
    } finally {
      await relaxed.close();
    }
  });
});
