// The queue and the session life cycle: listPickerOrders, startPicking, getPickingSession,
// getActivePickingSession, cancelPicking, acknowledgePickingCancellation, finishPicking, expiry,
// and the order's status moves that go with them. Real PostgreSQL, through the contract client.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { expireIdleSessions, sweepPicking } from '../../server/jobs/picking-expiry.js';
import { signInCustomer } from '../support/accounts.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import {
  createPicker,
  itemCommand,
  sessionCommand,
  signInDemoCustomer,
  startPicking,
  type SessionAction,
  type TestPicker,
} from '../support/picking.js';
import type { paths } from '../../generated/api.test.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let pieces: StockedProduct[];
let weights: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;
const OTHER_STORE = DEMO_STORES[2]!.id;

beforeAll(async () => {
  // The tests drive the orders worker's passes themselves: a background pass would claim an order
  // first (SKIP LOCKED) and commit after the assertion.
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  pieces = await stockedProducts(svc, { weight: false, count: 6 });
  weights = await stockedProducts(svc, { weight: true, count: 2 });
});
afterAll(() => svc?.close());

const anOrder = (spec: Partial<Parameters<typeof createConfirmedOrder>[1]> = {}) =>
  createConfirmedOrder(svc, {
    lines: [
      { inventoryId: pieces[0]!.inventoryId, quantity: '2' },
      { inventoryId: weights[0]!.inventoryId, quantity: '0.800' },
      { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
    ],
    ...spec,
  });
const post = <A extends SessionAction>(
  orderId: string,
  action: A,
  picker: { auth: { authorization: string } },
  body?: Parameters<typeof sessionCommand<A>>[4],
  headers: Record<string, string> = {},
) => sessionCommand(svc, picker, orderId, action, body, headers);
const get = (
  path:
    | '/api/picker/orders'
    | '/api/picker/session/active'
    | '/api/picker/auth/me'
    | '/api/picker/history/sessions'
    | '/api/picker/history/summary',
  headers: Record<string, string>,
) => svc.client.call.GET(path, { headers });
const getSession = (orderId: string, headers: Record<string, string>) =>
  svc.client.call.GET('/api/picker/orders/{order_id}/session', { params: { path: { order_id: orderId } }, headers });
type TrackingState = paths['/api/qa/orders/{order_id}/delivery-tracking']['post']['requestBody']['content']['application/json']['state'];
const orderRow = (id: string) => svc.deps.db.selectFrom('orders').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const queue = (picker: TestPicker, store = STORE) => get('/api/picker/orders', { ...picker.auth, 'x-store-id': store });

/** Picks every item as ordered (scan-free: piece-quantity and weight). */
async function pickAll(
  picker: TestPicker,
  orderId: string,
  session: { items: { item_id: number; is_weight_based: boolean; ordered_quantity: string | number }[] },
) {
  for (const item of session.items) {
    const r = item.is_weight_based
      ? await itemCommand(svc, picker, orderId, item.item_id, 'weight', { weight_kg: String(item.ordered_quantity) })
      : await itemCommand(svc, picker, orderId, item.item_id, 'piece-quantity', { quantity: Number(item.ordered_quantity) });
    expect(r.status).toBe(200);
  }
}

describe('listPickerOrders', () => {
  it("lists the store's waiting orders as cards, express first", async () => {
    const picker = await createPicker(svc, [STORE]);
    const slotOrder = await anOrder({ comment: 'Leave at the door', absenceAction: 'remove' });
    const express = await anOrder({ express: true, placedMinutesAgo: 1 });
    const r = await queue(picker);
    expect(r.status).toBe(200);
    expect(r.headers.get('vary')).toMatch(/X-Store-Id/i);
    const cards = r.body as any[];
    const card = cards.find((c) => c.order_id === slotOrder.orderId);
    expect(card).toMatchObject({
      order_number: String(slotOrder.no),
      is_express: false,
      fulfillment_type: 'delivery',
      items_count: 3,
      has_weight_items: true,
      total: slotOrder.goodsTotal,
      customer_comment: 'Leave at the door',
      absence_preference: 'remove',
      queue_status: 'waiting',
      session_id: null,
      picker: null,
      is_mine: false,
      can_start: true,
      store: { id: STORE, name: DEMO_STORES[0]!.name_en },
    });
    expect(card.slot).not.toBeNull();
    expect(new Date(card.pick_deadline).getTime()).toBe(new Date(card.slot.starts_at).getTime() - 30 * 60_000);
    const expressCard = cards.find((c) => c.order_id === express.orderId);
    expect(expressCard).toMatchObject({ is_express: true, slot: null });
    expect(cards.indexOf(expressCard)).toBeLessThan(cards.indexOf(card));
    // express first, then by deadline
    const flags = cards.map((c) => c.is_express);
    expect(flags).toEqual([...flags].sort((a, b) => Number(b) - Number(a)));
  });

  it('shows who picks a started order, and what the caller may do', async () => {
    const [anna, boris] = [await createPicker(svc, [STORE], 'Anna'), await createPicker(svc, [STORE], 'Boris')];
    const order = await anOrder();
    const session = await startPicking(svc, anna, order.orderId);
    const mine = (await queue(anna)).body.find((c: any) => c.order_id === order.orderId);
    expect(mine).toMatchObject({
      queue_status: 'in_progress',
      session_id: session.session_id,
      picker: { id: anna.pickerId, display_name: 'Anna' },
      is_mine: true,
      can_start: true,
    });
    const theirs = (await queue(boris)).body.find((c: any) => c.order_id === order.orderId);
    expect(theirs).toMatchObject({ queue_status: 'in_progress', is_mine: false, can_start: false });
    // Anna holds a session: she cannot start another waiting order.
    const other = await anOrder();
    expect((await queue(anna)).body.find((c: any) => c.order_id === other.orderId)).toMatchObject({ can_start: false });
  });

  it('answers 401 without a picker token', async () => {
    expect((await get('/api/picker/orders', { 'x-store-id': STORE })).status).toBe(401);
    const customer = await signInCustomer(svc);
    expect((await get('/api/picker/orders', { ...customer.auth, 'x-store-id': STORE })).status).toBe(401);
  });

  it('answers 403 STORE_NOT_ASSIGNED for a store the picker does not work in, 422 without or with an unknown store', async () => {
    const picker = await createPicker(svc, [STORE]);
    const forbidden = await queue(picker, OTHER_STORE);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('STORE_NOT_ASSIGNED');
    expect((await get('/api/picker/orders', picker.auth)).body.code).toBe('STORE_REQUIRED');
    const unknown = await queue(picker, randomUUID());
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('STORE_NOT_FOUND');
  });
});

describe('startPicking', () => {
  it('starts a session at version 1 with one item per line and moves the order to picking', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const r = await post(order.orderId, 'start', picker);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      order_id: order.orderId,
      order_number: String(order.no),
      session_status: 'active',
      version: 1,
      closure_source: 'none',
      is_locked: false,
      is_completed: false,
      is_cancelled: false,
      current_item_index: 0,
      max_added_items: 10,
      added_items_count: 0,
      payment_summary: {
        original_total: order.goodsTotal,
        current_total: order.goodsTotal,
        difference: '0.00',
        reconciliation_status: null,
      },
      store: { id: STORE },
      fulfillment_type: 'delivery',
      customer_phone: '+79990000001',
    });
    expect(r.body.items).toHaveLength(3);
    const weightItem = r.body.items.find((i: any) => i.is_weight_based);
    expect(weightItem).toMatchObject({
      unit: 'kg',
      ordered_quantity: '0.800',
      state: 'pending',
      tolerance: { percent: '10.0', min_quantity: '0.720', max_quantity: '0.880' },
    });
    const o = await orderRow(order.orderId);
    expect(o).toMatchObject({ status: 'picking', picking_result_state: 'in_progress' });
    // The customer hears of it (transactional outbox).
    const events = await svc.deps.db
      .selectFrom('outbox_events')
      .select(['type', 'payload'])
      .where('order_id', '=', order.orderId)
      .execute();
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['order.changed', 'picker.queue.changed', 'picker.session.changed']));
  });

  it("resumes the caller's open session, replays a key and refuses a key reused for another order", async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const key = randomUUID();
    const first = await post(order.orderId, 'start', picker, undefined, { 'idempotency-key': key });
    await itemCommand(svc, picker, order.orderId, first.body.items[0].item_id, 'missing', { action: 'call' });
    const replay = await post(order.orderId, 'start', picker, undefined, { 'idempotency-key': key });
    expect(replay.body).toEqual(first.body);
    const resumed = await post(order.orderId, 'start', picker);
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ session_id: first.body.session_id, version: 2 });
    const other = await anOrder();
    const reused = await post(other.orderId, 'start', picker, undefined, { 'idempotency-key': key });
    expect(reused.status).toBe(409);
    expect(reused.body.code).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('needs a UUID Idempotency-Key', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const none = await svc.client.call.POST('/api/picker/orders/{order_id}/start', {
      params: { path: { order_id: order.orderId } },
      headers: picker.auth,
    });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    const bad = await post(order.orderId, 'start', picker, undefined, { 'idempotency-key': 'not-a-uuid' });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('IDEMPOTENCY_KEY_INVALID');
  });

  it('answers 401 without a picker token and 404 for an order of another store or none', async () => {
    const order = await anOrder();
    expect(
      (
        await svc.client.call.POST('/api/picker/orders/{order_id}/start', {
          params: { path: { order_id: order.orderId } },
          headers: { 'idempotency-key': randomUUID() },
        })
      ).status,
    ).toBe(401);
    const stranger = await createPicker(svc, [OTHER_STORE]);
    const r = await post(order.orderId, 'start', stranger);
    expect(r.status).toBe(404);
    expect((await post(randomUUID(), 'start', stranger)).status).toBe(404);
  });

  it('answers 409 ORDER_BUSY, PICKER_HAS_ACTIVE_SESSION, ORDER_NOT_PICKABLE', async () => {
    const [anna, boris] = [await createPicker(svc, [STORE], 'Anna'), await createPicker(svc, [STORE])];
    const order = await anOrder();
    const session = await startPicking(svc, anna, order.orderId);
    const busy = await post(order.orderId, 'start', boris);
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: 'ORDER_BUSY', session: null });
    expect(busy.body.detail).toContain('Anna');

    const another = await anOrder();
    const holding = await post(another.orderId, 'start', anna);
    expect(holding.status).toBe(409);
    expect(holding.body).toMatchObject({ code: 'PICKER_HAS_ACTIVE_SESSION', session: { session_id: session.session_id } });

    await svc.deps.db.updateTable('orders').set({ status: 'awaiting_payment' }).where('id', '=', another.orderId).execute();
    const unpaid = await post(another.orderId, 'start', boris);
    expect(unpaid.status).toBe(409);
    expect(unpaid.body.code).toBe('ORDER_NOT_PICKABLE');
  });

  it('gives exactly one session when two pickers start one order at the same time', async () => {
    for (let round = 0; round < 5; round++) {
      const pickers = await Promise.all([createPicker(svc, [STORE]), createPicker(svc, [STORE]), createPicker(svc, [STORE])]);
      const order = await anOrder();
      const answers = await Promise.all(pickers.map((p) => post(order.orderId, 'start', p)));
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409]);
      expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === 'ORDER_BUSY')).toBe(true);
      const sessions = await svc.deps.db.selectFrom('picking_sessions').select('id').where('order_id', '=', order.orderId).execute();
      expect(sessions).toHaveLength(1);
    }
  });
});

describe('getPickingSession and getActivePickingSession', () => {
  it("returns the caller's session, and another picker's read-only", async () => {
    const [anna, boris] = [await createPicker(svc, [STORE]), await createPicker(svc, [STORE])];
    const order = await anOrder();
    const session = await startPicking(svc, anna, order.orderId);
    const own = await getSession(order.orderId, anna.auth);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ session_id: session.session_id, is_locked: false });
    const read = await getSession(order.orderId, boris.auth);
    expect(read.body).toMatchObject({ session_id: session.session_id, is_locked: true });
  });

  it('answers 404 for an order never started or of another store, 401 without a token', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    expect((await getSession(order.orderId, picker.auth)).status).toBe(404);
    const stranger = await createPicker(svc, [OTHER_STORE]);
    await startPicking(svc, picker, order.orderId);
    expect((await getSession(order.orderId, stranger.auth)).status).toBe(404);
    expect((await getSession(order.orderId, {})).status).toBe(401);
  });

  it('gives the current session, or 204 when there is none', async () => {
    const picker = await createPicker(svc, [STORE]);
    const none = await get('/api/picker/session/active', picker.auth);
    expect(none.status).toBe(204);
    expect(none.body).toBeUndefined();
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    const active = await get('/api/picker/session/active', picker.auth);
    expect(active.status).toBe(200);
    expect(active.body.session_id).toBe(session.session_id);
    const me = await get('/api/picker/auth/me', picker.auth);
    expect(me.body).toMatchObject({ active_session_id: session.session_id, active_order_id: order.orderId });
    expect((await get('/api/picker/session/active', {})).status).toBe(401);
  });
});

describe('cancelPicking', () => {
  it('cancels the session with the reason and returns the order to the queue', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    const twoPieces = session.items.find((i: any) => i.ordered_quantity === '2.000')!;
    expect((await itemCommand(svc, picker, order.orderId, twoPieces.item_id, 'piece-quantity', { quantity: 2 })).status).toBe(200);
    const r = await post(order.orderId, 'cancel', picker, { reason: 'Scanner broken' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'ok',
      applied: true,
      item: null,
      session: {
        session_status: 'cancelled',
        closure_source: 'picker_cancel',
        is_cancelled: true,
        is_locked: true,
        cancellation_reason: 'Scanner broken',
        cancel_after_resolved_items: 1,
        version: 3,
      },
    });
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'confirmed', picking_result_state: 'pending' });
    expect((await queue(picker)).body.find((c: any) => c.order_id === order.orderId)).toMatchObject({
      queue_status: 'waiting',
      can_start: true,
    });
    expect((await get('/api/picker/session/active', picker.auth)).status).toBe(204);
    // The closed session refuses commands; a new start is a new session.
    const late = await itemCommand(svc, picker, order.orderId, session.items[1]!.item_id, 'missing', { action: 'call' });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ code: 'SESSION_CLOSED', session: { session_id: session.session_id } });
    const again = await startPicking(svc, picker, order.orderId);
    expect(again.session_id).not.toBe(session.session_id);
    expect(again.items.every((i: any) => i.state === 'pending')).toBe(true);
  });

  it('accepts no body; answers 404 without a session of the order, 401 without a token', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    expect((await post(order.orderId, 'cancel', picker)).status).toBe(404);
    await startPicking(svc, picker, order.orderId);
    const r = await post(order.orderId, 'cancel', picker);
    expect(r.status).toBe(200);
    expect(r.body.session.cancellation_reason).toBeNull();
    expect(
      (
        await svc.client.call.POST('/api/picker/orders/{order_id}/cancel', {
          params: { path: { order_id: order.orderId } },
          headers: { 'idempotency-key': randomUUID() },
        })
      ).status,
    ).toBe(401);
  });

  it('answers 409 ORDER_BUSY to another picker', async () => {
    const [anna, boris] = [await createPicker(svc, [STORE]), await createPicker(svc, [STORE])];
    const order = await anOrder();
    await startPicking(svc, anna, order.orderId);
    const r = await post(order.orderId, 'cancel', boris);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('ORDER_BUSY');
  });
});

describe('the customer cancels the order during picking', () => {
  it('closes the session; commands answer order_cancelled until the picker acknowledges', async () => {
    const picker = await createPicker(svc, [STORE]);
    const customer = await signInDemoCustomer(svc);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    const cancel = await svc.client.call.POST('/api/orders/{order_id}/cancel', {
      params: { path: { order_id: order.orderId } },
      headers: customer.auth,
    });
    expect(cancel.status).toBe(200);

    const r = await itemCommand(svc, picker, order.orderId, session.items[0]!.item_id, 'piece-quantity', { quantity: 1 });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      code: 'order_cancelled',
      session: {
        session_id: session.session_id,
        session_status: 'cancelled',
        closure_source: 'order_cancelled',
        version: 2,
        is_locked: true,
      },
    });
    for (const path of ['finish', 'cancel'] as const) {
      const x = await post(order.orderId, path, picker);
      expect(x.body.code).toBe('order_cancelled');
    }
    // Still the picker's current session, so nothing else can be started.
    expect((await get('/api/picker/session/active', picker.auth)).body).toMatchObject({
      session_id: session.session_id,
      closure_source: 'order_cancelled',
    });
    const other = await anOrder();
    expect((await post(other.orderId, 'start', picker)).body.code).toBe('PICKER_HAS_ACTIVE_SESSION');
    expect((await post(order.orderId, 'start', picker)).body.code).toBe('order_cancelled');
    expect((await queue(picker)).body.some((c: any) => c.order_id === order.orderId)).toBe(false);

    const ack = await post(order.orderId, 'cancelled/ack', picker);
    expect(ack.status).toBe(204);
    expect((await post(order.orderId, 'cancelled/ack', picker)).status).toBe(204);
    expect((await get('/api/picker/session/active', picker.auth)).status).toBe(204);
    expect((await post(other.orderId, 'start', picker)).status).toBe(200);
  });

  it('ends the picking at once when the cancel has to wait for an assigned courier; the order is cancelled once the courier is withdrawn', async () => {
    const picker = await createPicker(svc, [STORE]);
    const customer = await signInDemoCustomer(svc);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    const track = (state: TrackingState) =>
      svc.client.call.POST('/api/qa/orders/{order_id}/delivery-tracking', {
        params: { path: { order_id: order.orderId } },
        headers: customer.auth,
        body: { state },
      });
    for (const state of ['searching_courier', 'courier_assigned'] as const) expect((await track(state)).status).toBe(200);
    const cancel = await svc.client.call.POST('/api/orders/{order_id}/cancel', {
      params: { path: { order_id: order.orderId } },
      headers: customer.auth,
    });
    expect(cancel.body.status.value).toBe('cancellation_requested');

    // The store stops at once: the picker can neither go on nor finish, and is told why.
    const r = await itemCommand(svc, picker, order.orderId, session.items[0]!.item_id, 'piece-quantity', { quantity: 1 });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      code: 'order_cancelled',
      session: { session_status: 'cancelled', closure_source: 'order_cancelled', is_locked: true },
    });
    for (const path of ['finish', 'cancel'] as const) expect((await post(order.orderId, path, picker)).body.code).toBe('order_cancelled');
    const status = async () =>
      (await svc.deps.db.selectFrom('orders').select('status').where('id', '=', order.orderId).executeTakeFirstOrThrow()).status;
    expect(await status()).toBe('cancellation_requested');
    // Starting it again is refused as for a cancelled order, with the session to apply.
    const again = await post(order.orderId, 'start', picker);
    expect([again.status, again.body.code, again.body.session?.closure_source]).toEqual([409, 'order_cancelled', 'order_cancelled']);
    const another = await createPicker(svc, [STORE]);
    expect((await post(order.orderId, 'start', another)).body.code).toBe('order_cancelled');
    expect((await post(order.orderId, 'cancelled/ack', picker)).status).toBe(204);

    expect((await track('cancelled')).status).toBe(200);
    expect(await status()).toBe('cancelled');
  });

  it('lets a picker taken off the store acknowledge or cancel the session still held there, then work elsewhere', async () => {
    const picker = await createPicker(svc, [STORE, OTHER_STORE]);
    const customer = await signInDemoCustomer(svc);
    const offStore = () =>
      svc.deps.db.deleteFrom('picker_stores').where('picker_id', '=', picker.pickerId).where('store_id', '=', STORE).execute();
    const onStore = () => svc.deps.db.insertInto('picker_stores').values({ picker_id: picker.pickerId, store_id: STORE }).execute();
    const [there] = await stockedProducts(svc, { storeId: OTHER_STORE, weight: false, count: 1 });
    const elsewhere = await createConfirmedOrder(svc, {
      storeId: OTHER_STORE,
      lines: [{ inventoryId: there!.inventoryId, quantity: '1' }],
    });

    // A session cancelled by its order, then the picker is moved: the ack still goes through.
    const cancelled = await anOrder();
    await startPicking(svc, picker, cancelled.orderId);
    expect(
      (
        await svc.client.call.POST('/api/orders/{order_id}/cancel', {
          params: { path: { order_id: cancelled.orderId } },
          headers: customer.auth,
        })
      ).status,
    ).toBe(200);
    await offStore();
    expect((await post(elsewhere.orderId, 'start', picker)).body.code).toBe('PICKER_HAS_ACTIVE_SESSION');
    expect((await getSession(cancelled.orderId, picker.auth)).status).toBe(200);
    expect((await post(cancelled.orderId, 'cancelled/ack', picker)).status).toBe(204);

    // An open session, then the picker is moved: it can still be cancelled (the order goes back to the queue).
    await onStore();
    const open = await anOrder();
    await startPicking(svc, picker, open.orderId);
    await offStore();
    const cancel = await post(open.orderId, 'cancel', picker);
    expect([cancel.status, cancel.body.session?.session_status]).toEqual([200, 'cancelled']);
    expect((await orderRow(open.orderId)).status).toBe('confirmed');
    // Once it is no longer theirs, the store's orders are out of reach again.
    expect((await getSession(open.orderId, picker.auth)).status).toBe(404);
    expect((await post(open.orderId, 'start', picker)).status).toBe(404);
    expect((await post(elsewhere.orderId, 'start', picker)).status).toBe(200);
  });

  it('ack answers 409 SESSION_NOT_CANCELLED for a session the order did not close, 404 without a session, 422 without a key, 401', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    expect((await post(order.orderId, 'cancelled/ack', picker)).status).toBe(404);
    const session = await startPicking(svc, picker, order.orderId);
    const r = await post(order.orderId, 'cancelled/ack', picker);
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ code: 'SESSION_NOT_CANCELLED', session: { session_id: session.session_id } });
    const keyless = await svc.client.call.POST('/api/picker/orders/{order_id}/cancelled/ack', {
      params: { path: { order_id: order.orderId } },
      headers: picker.auth,
    });
    expect(keyless.body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    expect(
      (
        await svc.client.call.POST('/api/picker/orders/{order_id}/cancelled/ack', {
          params: { path: { order_id: order.orderId } },
          headers: { 'idempotency-key': randomUUID() },
        })
      ).status,
    ).toBe(401);
  });
});

describe('finishPicking', () => {
  it('answers 409 NOT_READY_TO_FINISH with the unresolved items', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    const twoPieces = session.items.find((i: any) => i.ordered_quantity === '2.000')!;
    expect((await itemCommand(svc, picker, order.orderId, twoPieces.item_id, 'piece-quantity', { quantity: 2 })).status).toBe(200);
    const r = await post(order.orderId, 'finish', picker);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('NOT_READY_TO_FINISH');
    const unresolved = session.items.filter((i: any) => i.item_id !== twoPieces.item_id).map((i: any) => i.item_id);
    expect([...r.body.unresolved_item_ids].sort()).toEqual(unresolved.sort());
    expect(r.body.session.session_id).toBe(session.session_id);
  });

  it('completes a ready session, moves the order to picked and closes the session to commands', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    await pickAll(picker, order.orderId, session);
    expect((await getSession(order.orderId, picker.auth)).body.session_status).toBe('ready_to_finish');
    const r = await post(order.orderId, 'finish', picker);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'ok',
      applied: true,
      item: null,
      session: {
        session_status: 'completed',
        closure_source: 'picker_finish',
        is_completed: true,
        is_locked: true,
        payment_summary: { reconciliation_status: 'not_required' },
      },
    });
    const o = await orderRow(order.orderId);
    expect(o).toMatchObject({ status: 'picked', picking_result_state: 'completed', has_picking_changes: false });
    expect(o.final_total).toBe((Number(order.goodsTotal) + Number(o.delivery_cost)).toFixed(2));
    // Commands after finish answer 409 SESSION_CLOSED, finish too.
    for (const [action, body] of [
      ['piece-quantity', { quantity: 1 }],
      ['missing', { action: 'call' }],
    ] as const) {
      const late = await itemCommand(svc, picker, order.orderId, session.items[0]!.item_id, action, body);
      expect(late.status).toBe(409);
      expect(late.body).toMatchObject({ code: 'SESSION_CLOSED', session: { session_status: 'completed' } });
    }
    expect((await post(order.orderId, 'finish', picker)).body.code).toBe('SESSION_CLOSED');
    expect((await get('/api/picker/session/active', picker.auth)).status).toBe(204);
  });

  it('makes a pickup order ready for pickup, and cancels an order of which nothing could be picked', async () => {
    const picker = await createPicker(svc, [STORE]);
    const pickup = await anOrder({ type: 'pickup' });
    const s1 = await startPicking(svc, picker, pickup.orderId);
    await pickAll(picker, pickup.orderId, s1);
    expect((await post(pickup.orderId, 'finish', picker)).status).toBe(200);
    expect(await orderRow(pickup.orderId)).toMatchObject({ status: 'ready_for_pickup' });

    const nothing = await anOrder();
    const s2 = await startPicking(svc, picker, nothing.orderId);
    for (const item of s2.items) {
      await itemCommand(svc, picker, nothing.orderId, item.item_id, 'missing', { action: 'remove' });
      await itemCommand(svc, picker, nothing.orderId, item.item_id, 'clarification/resolve', { resolution: 'remove' });
    }
    const before = (await orderRow(nothing.orderId)).order_version;
    expect((await post(nothing.orderId, 'finish', picker)).status).toBe(200);
    expect(await orderRow(nothing.orderId)).toMatchObject({
      status: 'cancelled',
      status_reason: 'nothing_picked',
      final_total: '0.00',
      order_version: before + 1,
    });
    // One change of the order: its order.changed, then (the delivery's cancellation) its tracking message.
    const told = await svc.deps.db
      .selectFrom('outbox_events')
      .select('type')
      .where('order_id', '=', nothing.orderId)
      .where('customer_id', 'is not', null)
      .where(sql<boolean>`(payload->'data'->>'order_version')::int > ${before}`)
      .orderBy('id')
      .execute();
    expect(told).toEqual([{ type: 'order.changed' }, { type: 'delivery.tracking.changed' }]);
    const hold = await svc.deps.db.selectFrom('slot_holds').select('slot_id').where('order_id', '=', nothing.orderId).executeTakeFirst();
    expect(hold).toBeUndefined();
  });

  it('withdraws an assigned courier when nothing could be picked: no live courier on a cancelled order', async () => {
    const picker = await createPicker(svc, [STORE]);
    const customer = await signInDemoCustomer(svc);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    for (const state of ['searching_courier', 'courier_assigned'] as const) {
      expect(
        (
          await svc.client.call.POST('/api/qa/orders/{order_id}/delivery-tracking', {
            params: { path: { order_id: order.orderId } },
            headers: customer.auth,
            body: { state },
          })
        ).status,
      ).toBe(200);
    }
    for (const item of session.items) {
      await itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'remove' });
      await itemCommand(svc, picker, order.orderId, item.item_id, 'clarification/resolve', { resolution: 'remove' });
    }
    expect((await post(order.orderId, 'finish', picker)).status).toBe(200);
    const detail = (
      await svc.client.call.GET('/api/orders/roadmap/{order_id}/detail', {
        params: { path: { order_id: order.orderId } },
        headers: customer.auth,
      })
    ).body;
    expect(detail.status.value).toBe('cancelled');
    expect(detail.delivery).toMatchObject({ tracking: { state: 'cancelled' }, courier: null });
    const withdrawals = await svc.deps.db
      .selectFrom('provider_commands')
      .select('kind')
      .where('order_id', '=', order.orderId)
      .where('kind', '=', 'courier.withdraw')
      .execute();
    expect(withdrawals).toHaveLength(1);
  });

  it('counts in history as changed only a confirmed discrepancy or a replacement, not a weight within tolerance', async () => {
    const picker = await createPicker(svc, [STORE]);
    const finishAs = async (pieceQuantity: number) => {
      const order = await anOrder();
      const session = await startPicking(svc, picker, order.orderId);
      for (const item of session.items) {
        const r = item.is_weight_based
          ? await itemCommand(svc, picker, order.orderId, item.item_id, 'weight', { weight_kg: '0.801' }) // ordered 0.800, tolerance 10 %
          : await itemCommand(svc, picker, order.orderId, item.item_id, 'manual-pick', {
              quantity: item.product_id === pieces[0]!.productId ? pieceQuantity : Number(item.ordered_quantity),
              confirm: true,
            });
        expect(r.body.item.state).toBe('picked');
      }
      expect((await post(order.orderId, 'finish', picker)).status).toBe(200);
      return session.session_id;
    };
    const asOrdered = await finishAs(2);
    const history = await get('/api/picker/history/sessions', picker.auth);
    expect(history.body.items.find((h: any) => h.session_id === asOrdered)).toMatchObject({
      picked_items_count: 3,
      changed_items_count: 0,
    });
    expect((await get('/api/picker/history/summary', picker.auth)).body).toMatchObject({ picked_items_count: 3, changed_items_count: 0 });
    const short = await finishAs(1);
    const again = await get('/api/picker/history/sessions', picker.auth);
    expect(again.body.items.find((h: any) => h.session_id === short)).toMatchObject({ changed_items_count: 1 });
    expect((await get('/api/picker/history/summary', picker.auth)).body).toMatchObject({ picked_items_count: 6, changed_items_count: 1 });
  });

  it('cancels a pickup order not collected a day after its slot ended, and gives back what was picked', async () => {
    const picker = await createPicker(svc, [STORE]);
    const late = await anOrder({ type: 'pickup' });
    const waiting = await anOrder({ type: 'pickup' });
    for (const o of [late, waiting]) {
      await pickAll(picker, o.orderId, await startPicking(svc, picker, o.orderId));
      expect((await post(o.orderId, 'finish', picker)).status).toBe(200);
    }
    const endedAgo = (id: string, hours: number) =>
      svc.deps.db
        .updateTable('orders')
        .set({ slot_ends_at: new Date(Date.now() - hours * 3_600_000) })
        .where('id', '=', id)
        .execute();
    await endedAgo(late.orderId, 25);
    await endedAgo(waiting.orderId, 23);
    const stock = async () =>
      (await svc.deps.db.selectFrom('inventories').select('stock').where('id', '=', pieces[0]!.inventoryId).executeTakeFirstOrThrow())
        .stock;
    const before = Number(await stock());
    await runOrderWorkerOnce(svc.deps);
    expect(await orderRow(late.orderId)).toMatchObject({ status: 'cancelled', status_reason: 'not_collected' });
    expect(await orderRow(waiting.orderId)).toMatchObject({ status: 'ready_for_pickup' });
    // Its two pieces of the first product go back to the shelf.
    expect(Number(await stock())).toBe(before + 2);
  });

  it("answers 401 without a token and 404 for an order without the caller's session", async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    expect((await post(order.orderId, 'finish', picker)).status).toBe(404);
    expect(
      (
        await svc.client.call.POST('/api/picker/orders/{order_id}/finish', {
          params: { path: { order_id: order.orderId } },
          headers: { 'idempotency-key': randomUUID() },
        })
      ).status,
    ).toBe(401);
  });
});

describe('expiry', () => {
  it('closes a session idle for longer than the limit and returns the order to the queue', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    await svc.deps.db
      .updateTable('picking_sessions')
      .set({ updated_at: new Date(Date.now() - 5 * 3600_000) })
      .where('id', '=', session.session_id)
      .execute();
    expect(await expireIdleSessions(svc.deps.db, 240, svc.deps.clock)).toBeGreaterThanOrEqual(1);
    const r = await getSession(order.orderId, picker.auth);
    expect(r.body).toMatchObject({ session_status: 'cancelled', closure_source: 'expired', version: 2 });
    expect(await orderRow(order.orderId)).toMatchObject({ status: 'confirmed' });
    const late = await itemCommand(svc, picker, order.orderId, session.items[0]!.item_id, 'missing', { action: 'call' });
    expect(late.body.code).toBe('SESSION_CLOSED');
  });

  it('leaves a session that is being worked on alone, however many idle ones the sweep closes', async () => {
    const picker = await createPicker(svc, [STORE]);
    const busy = await anOrder();
    const busySession = await startPicking(svc, picker, busy.orderId);
    await expireIdleSessions(svc.deps.db, 240, svc.deps.clock);
    expect((await getSession(busy.orderId, picker.auth)).body).toMatchObject({ session_status: 'active', version: busySession.version });
  });

  it('expires nothing when sessions never expire (PICKING_SESSION_IDLE_MINUTES=0), and the sweep still runs', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await anOrder();
    const session = await startPicking(svc, picker, order.orderId);
    await svc.deps.db
      .updateTable('picking_sessions')
      .set({ updated_at: new Date(Date.now() - 30 * 24 * 3600_000) })
      .where('id', '=', session.session_id)
      .execute();
    const neverExpiring = { ...svc.deps, config: { ...svc.config, picking: { ...svc.config.picking, sessionIdleMinutes: 0 } } };
    expect(await sweepPicking(neverExpiring)).toMatchObject({ expired: 0, announced: expect.any(Number) });
    expect((await getSession(order.orderId, picker.auth)).body).toMatchObject({ session_status: 'active', version: 1 });
    // The same sweep with the default limit closes it.
    expect((await sweepPicking(svc.deps)).expired).toBeGreaterThanOrEqual(1);
    expect((await getSession(order.orderId, picker.auth)).body).toMatchObject({ closure_source: 'expired' });
  });
});
