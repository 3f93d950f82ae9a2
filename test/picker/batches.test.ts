// Batch picking: proposePickingBatch, takePickingBatch, getCurrentPickingBatch, getPickingBatch,
// getPickingBatchPickList, getPickingBatchNextStop, bindPickingTote, placePickingItemInTote, and
// what a batch changes in finishPicking, cancelPicking and the customer's order. Real PostgreSQL,
// through the contract client (every answer is checked against the spec).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { components } from '../../generated/api.test.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, itemCommand, sessionCommand, signInDemoCustomer, startPicking, type TestPicker } from '../support/picking.js';
import { expireIdleSessions } from '../../server/jobs/picking-expiry.js';
import { startTestService, type TestService } from '../support/service.js';

type Schemas = components['schemas'];
type Batch = Schemas['PickingBatchSchema'];

let svc: TestService;
let pieces: StockedProduct[];
let weights: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;
const OTHER_STORE = DEMO_STORES[2]!.id;

beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  pieces = await stockedProducts(svc, { weight: false, count: 8, skip: 30 });
  weights = await stockedProducts(svc, { weight: true, count: 2, skip: 4 });
  // A known layout for these products: two share a shelf, one is chilled.
  const place = (inventoryId: string, sequence: string, temperature: 'ambient' | 'chilled' | 'frozen' = 'ambient') =>
    svc.deps.db
      .updateTable('inventories')
      .set({
        location_aisle: sequence.slice(0, 2),
        location_section: 'A',
        location_shelf: '1',
        location_sequence: sequence,
        temperature_class: temperature,
      })
      .where('id', '=', inventoryId)
      .execute();
  for (const [i, p] of pieces.entries()) await place(p.inventoryId, `0${i + 1}-A-1`);
  await place(pieces[7]!.inventoryId, '90-A-1', 'chilled');
  await place(weights[0]!.inventoryId, '05-B-1');
  await place(weights[1]!.inventoryId, '06-B-1');
});
afterAll(() => svc?.close());

// Each test takes the store's queue as it is: orders of earlier tests are finished or released.
let picker: TestPicker;
beforeEach(async () => {
  picker = await createPicker(svc, [STORE]);
});

const anOrder = (lines: { inventoryId: string; quantity: string }[], storeId = STORE) => createConfirmedOrder(svc, { lines, storeId });
const take = (p: TestPicker, orderIds: string[], key = randomUUID()) =>
  svc.client.call.POST('/api/picker/batches', {
    headers: { ...p.auth, 'idempotency-key': key },
    body: { order_ids: orderIds },
  });
const takeOk = async (p: TestPicker, orderIds: string[]): Promise<Batch> => {
  const r = await take(p, orderIds);
  if (r.status !== 200) throw new Error(`take answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
};
const bind = (p: TestPicker, batchId: number, toteId: number, label: string) =>
  svc.client.call.POST('/api/picker/batches/{batch_id}/totes/{tote_id}/bind', {
    params: { path: { batch_id: batchId, tote_id: toteId } },
    headers: { ...p.auth, 'idempotency-key': randomUUID() },
    body: { label },
  });
const next = (p: TestPicker, batchId: number) =>
  svc.client.call.GET('/api/picker/batches/{batch_id}/next', { params: { path: { batch_id: batchId } }, headers: p.auth });
const pickList = (p: TestPicker, batchId: number) =>
  svc.client.call.GET('/api/picker/batches/{batch_id}/pick-list', { params: { path: { batch_id: batchId } }, headers: p.auth });
const session = (p: TestPicker, orderId: string) =>
  svc.client.call.GET('/api/picker/orders/{order_id}/session', { params: { path: { order_id: orderId } }, headers: p.auth });
const label = () => `T-${randomUUID().slice(0, 8)}`;

/** Binds a fresh label to every tote of the batch; returns label by tote id. */
async function bindAll(p: TestPicker, batch: Batch): Promise<Map<number, string>> {
  const labels = new Map<number, string>();
  for (const o of batch.orders)
    for (const t of o.totes) {
      const l = label();
      const r = await bind(p, batch.batch_id, t.tote_id, l);
      expect(r.status).toBe(200);
      expect(r.body.label).toBe(l);
      labels.set(t.tote_id, l);
    }
  return labels;
}

describe('a proposal', () => {
  it('starts with the most urgent waiting order and adds the one sharing most shelves, within the limits', async () => {
    // The demo data's waiting orders are taken by other pickers first, so the queue holds this test's orders only.
    const queue = await svc.client.call.GET('/api/picker/orders', { headers: { ...picker.auth, 'x-store-id': STORE } });
    for (const card of (queue.body as Schemas['PickerOrderSchema'][]).filter((c) => c.queue_status === 'waiting'))
      await startPicking(svc, await createPicker(svc, [STORE]), card.order_id);
    const a = await anOrder([
      { inventoryId: pieces[0]!.inventoryId, quantity: '1' },
      { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
    ]);
    const b = await anOrder([{ inventoryId: pieces[5]!.inventoryId, quantity: '1' }]);
    const c = await anOrder([
      { inventoryId: pieces[0]!.inventoryId, quantity: '2' },
      { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
    ]);
    const r = await svc.client.call.GET('/api/picker/batches/proposal', {
      params: { query: { max_orders: 2 } },
      headers: { ...picker.auth, 'x-store-id': STORE },
    });
    expect(r.status).toBe(200);
    expect(r.body.max_orders).toBe(2);
    const ids = (r.body as Schemas['PickingBatchProposalSchema']).orders.map((o) => o.order_id);
    expect(ids).toHaveLength(2);
    // Whatever the queue held before, an order sharing both shelves with the first is preferred to one sharing none.
    // Equally urgent (one slot), so the order sharing both shelves with the first joins it, not the one sharing none.
    expect(ids).toEqual([a.orderId, c.orderId]);
    expect(r.body.orders[1]!.shared_locations_count).toBe(2);
    expect(r.body.lines_count).toBe(4);
    expect(r.body.stops_count).toBe(2);
    expect(r.body.separate_stops_count).toBe(4);
    // Release them for the other tests: take and cancel.
    const batch = await takeOk(picker, [a.orderId, b.orderId, c.orderId]);
    for (const o of batch.orders) expect((await sessionCommand(svc, picker, o.order_id, 'cancel')).status).toBe(200);
  });

  it('answers 401 without a token, 403 for a store the picker does not work in, 422 without a store', async () => {
    expect((await svc.client.call.GET('/api/picker/batches/proposal', { headers: { 'x-store-id': STORE } })).status).toBe(401);
    const other = await svc.client.call.GET('/api/picker/batches/proposal', { headers: { ...picker.auth, 'x-store-id': OTHER_STORE } });
    expect(other.status).toBe(403);
    expect(other.body.code).toBe('STORE_NOT_ASSIGNED');
    const none = await svc.client.call.GET('/api/picker/batches/proposal', { headers: picker.auth });
    expect(none.status).toBe(422);
    expect(none.body.code).toBe('STORE_REQUIRED');
  });
});

describe('taking a batch', () => {
  it('opens one session per order with its totes, idempotently, and merges the walk in shelf order', async () => {
    const a = await anOrder([
      { inventoryId: pieces[2]!.inventoryId, quantity: '1' },
      { inventoryId: pieces[0]!.inventoryId, quantity: '1' },
      { inventoryId: pieces[7]!.inventoryId, quantity: '1' },
    ]);
    const b = await anOrder([
      { inventoryId: pieces[0]!.inventoryId, quantity: '2' },
      { inventoryId: weights[0]!.inventoryId, quantity: '0.500' },
    ]);
    const key = randomUUID();
    const first = await take(picker, [a.orderId, b.orderId], key);
    expect(first.status).toBe(200);
    const again = await take(picker, [b.orderId, a.orderId], key);
    expect(again.status).toBe(200);
    expect(again.body.batch_id).toBe(first.body.batch_id);
    const batch: Batch = first.body;
    expect(batch.status).toBe('open');
    expect(batch.orders.map((o) => o.order_id).sort()).toEqual([a.orderId, b.orderId].sort());
    const ofA = batch.orders.find((o) => o.order_id === a.orderId)!;
    const ofB = batch.orders.find((o) => o.order_id === b.orderId)!;
    expect(ofA.totes.map((t) => t.temperature_class)).toEqual(['ambient', 'chilled']);
    expect(ofB.totes.map((t) => t.temperature_class)).toEqual(['ambient']);
    expect(ofA.version).toBe(1);
    // The product both ordered is one stop with two lines; stops follow the shelf sequence.
    const list = await pickList(picker, batch.batch_id);
    expect(list.status).toBe(200);
    const stops = (list.body as Schemas['PickingBatchPickListSchema']).stops;
    const sequences = stops.map((s) => s.location.sequence);
    expect(sequences).toEqual(['01-A-1', '03-A-1', '05-B-1', '90-A-1']);
    expect(stops[0]!.lines.map((l) => l.order_id).sort()).toEqual([a.orderId, b.orderId].sort());
    expect(batch.stops_count).toBe(4);
    // The picker's current batch and the batch by id are the same.
    const current = await svc.client.call.GET('/api/picker/batches/current', { headers: picker.auth });
    expect(current.status).toBe(200);
    expect(current.body.batch_id).toBe(batch.batch_id);
    // The session of each order says it is in the batch, and lists its totes.
    const s = await session(picker, a.orderId);
    expect(s.body.batch_id).toBe(batch.batch_id);
    expect(s.body.totes).toHaveLength(2);
    for (const o of batch.orders) expect((await sessionCommand(svc, picker, o.order_id, 'cancel')).status).toBe(200);
    const closed = await svc.client.call.GET('/api/picker/batches/{batch_id}', {
      params: { path: { batch_id: batch.batch_id } },
      headers: picker.auth,
    });
    expect(closed.body.status).toBe('closed');
    expect((await svc.client.call.GET('/api/picker/batches/current', { headers: picker.auth })).status).toBe(404);
  });

  it('refuses too many orders, orders of two stores, and a picker who already picks', async () => {
    const orders = await Promise.all([1, 2, 3, 4].map(() => anOrder([{ inventoryId: pieces[3]!.inventoryId, quantity: '1' }])));
    const tooMany = await take(
      picker,
      orders.map((o) => o.orderId),
    );
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.code).toBe('BATCH_TOO_LARGE');
    const two = await createPicker(svc, [STORE, OTHER_STORE]);
    const elsewhere = await anOrder(
      [{ inventoryId: (await stockedProducts(svc, { storeId: OTHER_STORE, weight: false, count: 1 }))[0]!.inventoryId, quantity: '1' }],
      OTHER_STORE,
    );
    const mixed = await take(two, [orders[0]!.orderId, elsewhere.orderId]);
    expect(mixed.status).toBe(422);
    expect(mixed.body.code).toBe('BATCH_STORES_DIFFER');
    const batch = await takeOk(picker, [orders[0]!.orderId, orders[1]!.orderId]);
    const busy = await take(picker, [orders[2]!.orderId]);
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('PICKER_HAS_ACTIVE_SESSION');
    const otherPicker = await createPicker(svc, [STORE]);
    const taken = await take(otherPicker, [orders[3]!.orderId, orders[1]!.orderId]);
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('ORDER_BUSY');
    expect(taken.body.order_id).toBe(orders[1]!.orderId);
    // Nothing of the refused batch was kept: its other order is still waiting.
    expect((await takeOk(otherPicker, [orders[3]!.orderId, orders[2]!.orderId])).orders).toHaveLength(2);
    for (const o of batch.orders) await sessionCommand(svc, picker, o.order_id, 'cancel');
    for (const o of orders.slice(2)) await sessionCommand(svc, otherPicker, o.orderId, 'cancel');
    for (const o of [elsewhere]) expect(o.orderId).toBeTruthy();
  });

  it('answers 401 without a token and 404 for an order outside the picker stores', async () => {
    expect(
      (
        await svc.client.call.POST('/api/picker/batches', {
          headers: { 'idempotency-key': randomUUID() },
          body: { order_ids: [randomUUID()] },
        })
      ).status,
    ).toBe(401);
    const r = await take(picker, [randomUUID()]);
    expect(r.status).toBe(404);
    expect(
      (await svc.client.call.GET('/api/picker/batches/{batch_id}', { params: { path: { batch_id: 999999 } }, headers: picker.auth }))
        .status,
    ).toBe(404);
    expect((await pickList(picker, 999999)).status).toBe(404);
    expect((await next(picker, 999999)).status).toBe(404);
    expect((await svc.client.call.GET('/api/picker/batches/current', {})).status).toBe(401);
  });
});

describe('two pickers taking overlapping batches', () => {
  it('leave every order in exactly one batch, the loser told which order is busy (20 rounds)', async () => {
    const rivals = [picker, await createPicker(svc, [STORE])];
    for (let round = 0; round < 20; round++) {
      const [x, y, z] = await Promise.all([1, 2, 3].map(() => anOrder([{ inventoryId: pieces[4]!.inventoryId, quantity: '1' }])));
      const [r1, r2] = await Promise.all([take(rivals[0]!, [x!.orderId, y!.orderId]), take(rivals[1]!, [y!.orderId, z!.orderId])]);
      const statuses = [r1.status, r2.status].sort();
      expect(statuses).toEqual([200, 409]);
      const loser = r1.status === 409 ? r1 : r2;
      expect(loser.body.code).toBe('ORDER_BUSY');
      expect(loser.body.order_id).toBe(y!.orderId);
      const { rows } = await svc.deps.db
        .selectFrom('picking_sessions')
        .select(['order_id', 'batch_id'])
        .where('order_id', 'in', [x!.orderId, y!.orderId, z!.orderId])
        .where('status', 'in', ['active', 'ready_to_finish'])
        .execute()
        .then((r) => ({ rows: r }));
      expect(rows.filter((s) => s.order_id === y!.orderId)).toHaveLength(1);
      expect(rows).toHaveLength(2);
      const winner = r1.status === 200 ? rivals[0]! : rivals[1]!;
      for (const s of rows) expect((await sessionCommand(svc, winner, s.order_id, 'cancel')).status).toBe(200);
    }
  });
});

describe('totes', () => {
  it('bind once per label, refuse a label in use, a second label, and a tote of another batch', async () => {
    const a = await anOrder([{ inventoryId: pieces[5]!.inventoryId, quantity: '1' }]);
    const b = await anOrder([{ inventoryId: pieces[6]!.inventoryId, quantity: '1' }]);
    const batch = await takeOk(picker, [a.orderId, b.orderId]);
    const [ta, tb] = [a, b].map((o) => batch.orders.find((x) => x.order_id === o.orderId)!.totes[0]!);
    const l = label();
    expect((await bind(picker, batch.batch_id, ta!.tote_id, l)).status).toBe(200);
    const same = await bind(picker, batch.batch_id, ta!.tote_id, l);
    expect(same.status).toBe(200);
    expect(same.body.label).toBe(l);
    const inUse = await bind(picker, batch.batch_id, tb!.tote_id, l);
    expect(inUse.status).toBe(409);
    expect(inUse.body.code).toBe('TOTE_LABEL_IN_USE');
    const second = await bind(picker, batch.batch_id, ta!.tote_id, label());
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('TOTE_ALREADY_BOUND');
    expect((await bind(picker, batch.batch_id, 99_999_999, label())).status).toBe(404);
    const unauth = await svc.client.call.POST('/api/picker/batches/{batch_id}/totes/{tote_id}/bind', {
      params: { path: { batch_id: batch.batch_id, tote_id: ta!.tote_id } },
      headers: { 'idempotency-key': randomUUID() },
      body: { label: label() },
    });
    expect(unauth.status).toBe(401);
    // Once the order leaves the batch its label is free again.
    expect((await sessionCommand(svc, picker, a.orderId, 'cancel')).status).toBe(200);
    expect((await bind(picker, batch.batch_id, tb!.tote_id, l)).status).toBe(200);
    const closed = await bind(picker, batch.batch_id, ta!.tote_id, label());
    expect(closed.status).toBe(409);
    expect(closed.body.code).toBe('SESSION_CLOSED');
    await sessionCommand(svc, picker, b.orderId, 'cancel');
  });

  it('take an item of their own order and class only, and a batch order finishes with every picked item in a tote', async () => {
    const customer = await signInDemoCustomer(svc);
    const a = await anOrder([
      { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
      { inventoryId: pieces[7]!.inventoryId, quantity: '1' },
    ]);
    const b = await anOrder([{ inventoryId: pieces[1]!.inventoryId, quantity: '1' }]);
    const batch = await takeOk(picker, [a.orderId, b.orderId]);
    const labels = await bindAll(picker, batch);
    const ofA = batch.orders.find((o) => o.order_id === a.orderId)!;
    const ofB = batch.orders.find((o) => o.order_id === b.orderId)!;
    const ambientA = labels.get(ofA.totes.find((t) => t.temperature_class === 'ambient')!.tote_id)!;
    const chilledA = labels.get(ofA.totes.find((t) => t.temperature_class === 'chilled')!.tote_id)!;
    const toteB = labels.get(ofB.totes[0]!.tote_id)!;
    const sa: Schemas['PickingSessionSchema'] = (await session(picker, a.orderId)).body;
    const ambientItem = sa.items.find((i) => i.location?.temperature_class === 'ambient')!;
    const chilledItem = sa.items.find((i) => i.location?.temperature_class === 'chilled')!;

    const tote = (itemId: number, toteLabel: string, orderId = a.orderId, headers: Record<string, string> = {}) =>
      itemCommand(svc, picker, orderId, itemId, 'tote', { tote_label: toteLabel }, headers);
    // Not picked yet: no goods to place.
    const early = await tote(ambientItem.item_id, ambientA);
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('ITEM_STATE_CONFLICT');
    for (const item of sa.items)
      expect((await itemCommand(svc, picker, a.orderId, item.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    const before = (await session(picker, a.orderId)).body.version;
    const wrongOrder = await tote(ambientItem.item_id, toteB);
    expect(wrongOrder.status).toBe(409);
    expect(wrongOrder.body.code).toBe('TOTE_OF_ANOTHER_ORDER');
    expect(wrongOrder.body.tote_order_id).toBe(b.orderId);
    const wrongClass = await tote(ambientItem.item_id, chilledA);
    expect(wrongClass.status).toBe(409);
    expect(wrongClass.body.code).toBe('TOTE_TEMPERATURE_MISMATCH');
    const unknown = await tote(ambientItem.item_id, label());
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('TOTE_UNKNOWN');
    // Nothing was recorded by the refusals.
    expect((await session(picker, a.orderId)).body.version).toBe(before);
    // Finish refuses while a picked item is outside its tote.
    const early2 = await sessionCommand(svc, picker, a.orderId, 'finish');
    expect(early2.status).toBe(409);
    expect(early2.body.code).toBe('ITEMS_NOT_IN_TOTES');
    expect(early2.body.unresolved_item_ids?.sort()).toEqual([ambientItem.item_id, chilledItem.item_id].sort());
    const stale = await tote(ambientItem.item_id, ambientA, a.orderId, { 'x-expected-version': String(before - 1) });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('VERSION_CONFLICT');
    const placed = await tote(ambientItem.item_id, ambientA);
    expect(placed.status).toBe(200);
    expect(placed.body.applied).toBe(true);
    expect(placed.body.session.version).toBe(before + 1);
    expect(placed.body.item.tote_id).toBe(placed.body.tote.tote_id);
    expect(placed.body.tote.items_count).toBe(1);
    const again = await tote(ambientItem.item_id, ambientA);
    expect(again.body.applied).toBe(false);
    expect((await tote(chilledItem.item_id, chilledA)).status).toBe(200);
    const finished = await sessionCommand(svc, picker, a.orderId, 'finish', undefined, { prefer: 'return=representation' });
    expect(finished.status).toBe(200);
    expect((finished.body as Schemas['PickingActionOutput']).session.totes?.map((t) => [t.temperature_class, t.items_count])).toEqual([
      ['ambient', 1],
      ['chilled', 1],
    ]);
    // The customer sees the tote count.
    const detail = await svc.client.call.GET('/api/orders/{order_id}', {
      params: { path: { order_id: a.orderId } },
      headers: customer.auth,
    });
    expect(detail.status).toBe(200);
    expect(detail.body.tote_count).toBe(2);
    // A session outside a batch has no totes.
    const single = await anOrder([{ inventoryId: pieces[2]!.inventoryId, quantity: '1' }]);
    await sessionCommand(svc, picker, b.orderId, 'cancel');
    const started = await sessionCommand(svc, picker, single.orderId, 'start');
    expect(started.status).toBe(200);
    const s = (await session(picker, single.orderId)).body;
    await itemCommand(svc, picker, single.orderId, s.items[0]!.item_id, 'piece-quantity', { quantity: 1 });
    const notBatch = await itemCommand(svc, picker, single.orderId, s.items[0]!.item_id, 'tote', { tote_label: toteB });
    expect(notBatch.status).toBe(409);
    expect(notBatch.body.code).toBe('SESSION_NOT_IN_BATCH');
    expect((await sessionCommand(svc, picker, single.orderId, 'finish')).status).toBe(200);
    const unauth = await svc.client.call.POST('/api/picker/orders/{order_id}/items/{item_id}/tote', {
      params: { path: { order_id: single.orderId, item_id: s.items[0]!.item_id } },
      headers: { 'idempotency-key': randomUUID() },
      body: { tote_label: toteB },
    });
    expect(unauth.status).toBe(401);
  });
});

describe('the next stop', () => {
  it('is the first stop with work left, small, and null once every line is picked and placed', async () => {
    const a = await anOrder([
      { inventoryId: pieces[3]!.inventoryId, quantity: '1' },
      { inventoryId: pieces[4]!.inventoryId, quantity: '1' },
    ]);
    const b = await anOrder([{ inventoryId: pieces[3]!.inventoryId, quantity: '1' }]);
    const batch = await takeOk(picker, [a.orderId, b.orderId]);
    const labels = await bindAll(picker, batch);
    const first = await next(picker, batch.batch_id);
    expect(first.status).toBe(200);
    expect(first.body.stop?.location.sequence).toBe('04-A-1');
    expect(first.body.stop?.lines).toHaveLength(2);
    expect(first.body.remaining_items_count).toBe(3);
    expect(JSON.stringify(first.body).length).toBeLessThan(4096);
    for (let step = 0; step < 5; step++) {
      const n = (await next(picker, batch.batch_id)).body;
      if (!n.stop) break;
      for (const line of n.stop.lines) {
        if (!line.is_resolved) await itemCommand(svc, picker, line.order_id, line.item_id, 'piece-quantity', { quantity: 1 });
        const r = await itemCommand(svc, picker, line.order_id, line.item_id, 'tote', { tote_label: labels.get(line.tote_id)! });
        expect(r.status).toBe(200);
      }
    }
    const done = await next(picker, batch.batch_id);
    expect(done.body.stop).toBeNull();
    expect(done.body.remaining_stops_count).toBe(0);
    for (const o of [a, b]) expect((await sessionCommand(svc, picker, o.orderId, 'finish')).status).toBe(200);
    expect((await next(picker, batch.batch_id)).body.status).toBe('closed');
  });
});

describe('changes mid-batch', () => {
  it("a customer's cancel takes its order out of the walk and frees its totes; the others go on", async () => {
    const customer = await signInDemoCustomer(svc);
    const a = await anOrder([{ inventoryId: pieces[5]!.inventoryId, quantity: '1' }]);
    const b = await anOrder([{ inventoryId: pieces[6]!.inventoryId, quantity: '1' }]);
    const batch = await takeOk(picker, [a.orderId, b.orderId]);
    const labels = await bindAll(picker, batch);
    const cancel = await svc.client.call.POST('/api/orders/{order_id}/cancel', {
      params: { path: { order_id: a.orderId } },
      headers: customer.auth,
    });
    expect(cancel.status).toBe(200);
    const after = await svc.client.call.GET('/api/picker/batches/{batch_id}', {
      params: { path: { batch_id: batch.batch_id } },
      headers: picker.auth,
    });
    const ofA = (after.body as Batch).orders.find((o) => o.order_id === a.orderId)!;
    expect(ofA.closure_source).toBe('order_cancelled');
    expect(ofA.totes[0]!.released_at).not.toBeNull();
    expect(after.body.status).toBe('open');
    const list = await pickList(picker, batch.batch_id);
    expect((list.body as Schemas['PickingBatchPickListSchema']).stops.flatMap((s) => s.lines.map((l) => l.order_id))).toEqual([b.orderId]);
    // B goes on undisturbed.
    const sb = (await session(picker, b.orderId)).body;
    expect((await itemCommand(svc, picker, b.orderId, sb.items[0]!.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    const toteB = batch.orders.find((o) => o.order_id === b.orderId)!.totes[0]!;
    expect(
      (await itemCommand(svc, picker, b.orderId, sb.items[0]!.item_id, 'tote', { tote_label: labels.get(toteB.tote_id)! })).status,
    ).toBe(200);
    expect((await sessionCommand(svc, picker, b.orderId, 'finish')).status).toBe(200);
    expect((await sessionCommand(svc, picker, a.orderId, 'cancelled/ack')).status).toBe(204);
  });
});

describe('an idle batch', () => {
  it('expires as one: its orders go back to the queue only once every session of it is idle', async () => {
    const orders = await Promise.all([1, 2].map(() => anOrder([{ inventoryId: pieces[2]!.inventoryId, quantity: '1' }])));
    const batch = await takeOk(
      picker,
      orders.map((o) => o.orderId),
    );
    const [first, second] = batch.orders;
    const idleSince = (sessionId: number, hours: number) =>
      svc.deps.db
        .updateTable('picking_sessions')
        .set({ updated_at: new Date(Date.now() - hours * 3_600_000) })
        .where('id', '=', sessionId)
        .execute();
    // One session untouched for 5 hours, the other worked on a minute ago: the batch is being walked.
    await idleSince(first!.session_id, 5);
    await idleSince(second!.session_id, 0.02);
    await expireIdleSessions(svc.deps.db, 240, svc.deps.clock);
    const open = await svc.client.call.GET('/api/picker/batches/{batch_id}', {
      params: { path: { batch_id: batch.batch_id } },
      headers: picker.auth,
    });
    expect((open.body as Batch).orders.map((o) => o.session_status)).toEqual(['active', 'active']);
    // Both idle: both released, as a single idle session is.
    await idleSince(second!.session_id, 5);
    await expireIdleSessions(svc.deps.db, 240, svc.deps.clock);
    const closed = await svc.client.call.GET('/api/picker/batches/{batch_id}', {
      params: { path: { batch_id: batch.batch_id } },
      headers: picker.auth,
    });
    expect((closed.body as Batch).status).toBe('closed');
    expect((closed.body as Batch).orders.map((o) => o.closure_source)).toEqual(['expired', 'expired']);
    for (const o of orders) {
      const row = await svc.deps.db.selectFrom('orders').select('status').where('id', '=', o.orderId).executeTakeFirstOrThrow();
      expect(row.status).toBe('confirmed');
    }
    expect((closed.body as Batch).orders.flatMap((o) => o.totes.map((t) => t.released_at !== null))).toEqual([true, true]);
  });
});

describe('edges of batches and totes', () => {
  it('takes one order sent twice in two letter cases as one order', async () => {
    const a = await anOrder([{ inventoryId: pieces[6]!.inventoryId, quantity: '1' }]);
    const batch = await takeOk(picker, [a.orderId, a.orderId.toUpperCase()]);
    expect(batch.orders.map((o) => o.order_id)).toEqual([a.orderId]);
    expect((await sessionCommand(svc, picker, a.orderId, 'cancel')).status).toBe(200);
  });

  it('lets one of many binds of one label at once win, the others told the label is in use', async () => {
    const orders = await Promise.all([1, 2, 3].map(() => anOrder([{ inventoryId: pieces[5]!.inventoryId, quantity: '1' }])));
    const batch = await takeOk(
      picker,
      orders.map((o) => o.orderId),
    );
    const l = label();
    const answers = await Promise.all(batch.orders.map((o) => bind(picker, batch.batch_id, o.totes[0]!.tote_id, l)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    for (const r of answers.filter((x) => x.status === 409)) expect(r.body.code).toBe('TOTE_LABEL_IN_USE');
    for (const o of orders) expect((await sessionCommand(svc, picker, o.orderId, 'cancel')).status).toBe(200);
  });

  it('gives an added product of a class the order had no tote for a tote of its own', async () => {
    const a = await anOrder([{ inventoryId: pieces[4]!.inventoryId, quantity: '1' }]);
    const batch = await takeOk(picker, [a.orderId]);
    expect(batch.orders[0]!.totes.map((t) => t.temperature_class)).toEqual(['ambient']);
    const added = await svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
      params: { path: { order_id: a.orderId } },
      headers: { ...picker.auth, 'idempotency-key': randomUUID() },
      body: { inventory_id: pieces[7]!.inventoryId, quantity: '1' },
    });
    expect(added.status).toBe(200);
    expect((added.body as Schemas['PickingActionOutput']).session.totes?.map((t) => t.temperature_class)).toEqual(['ambient', 'chilled']);
    const after = await svc.client.call.GET('/api/picker/batches/{batch_id}', {
      params: { path: { batch_id: batch.batch_id } },
      headers: picker.auth,
    });
    expect((after.body as Batch).orders[0]!.totes.map((t) => t.temperature_class)).toEqual(['ambient', 'chilled']);
    expect((await sessionCommand(svc, picker, a.orderId, 'cancel')).status).toBe(200);
  });
});
