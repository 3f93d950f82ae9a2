// A batch picked the way a handheld walks it: take three orders, bind every tote, then ask for the
// next stop and act on each of its lines (pick, weigh, mark missing, replace, confirm, place into
// the tote) until no stop is left, one order cancelled by its customer on the way; then what each
// customer sees, the events each order and session told, and the stock. And the handheld's answers
// stay small for the largest batch (three 40-line orders). Real PostgreSQL, through the contract
// client (every answer is checked against the spec).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaleLabel } from '../../domain/codes/scale-label.js';
import { parseDecimal } from '../../domain/money/decimal.js';
import { kopecks, lineTotal, money } from '../../domain/money/money.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { components } from '../../generated/api.test.js';
import type { CheckedResponse } from '../support/client.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import {
  createPicker,
  itemCommand,
  sessionCommand,
  signInDemoCustomer,
  type ItemAction,
  type ItemBody,
  type TestPicker,
} from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

type Schemas = components['schemas'];
type Batch = Schemas['PickingBatchSchema'];
type NextStop = Schemas['PickingBatchNextStopSchema'];
type StopLine = Schemas['PickingBatchStopLineSchema'];
type Temperature = Schemas['TemperatureClass'];

let svc: TestService;
let customer: { auth: { authorization: string } };
const STORE = DEMO_STORES[0]!.id;
/** Every order this file creates: none may be left waiting for picking (see the last test). */
const created: string[] = [];

beforeAll(async () => {
  // No orders worker: no courier is requested, so a customer's cancel cancels at once.
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  customer = await signInDemoCustomer(svc);
});
afterAll(() => svc?.close());

/** Puts an inventory row at a shelf location of the store's route. */
const place = (inventoryId: string, sequence: string, temperature: Temperature = 'ambient') =>
  svc.deps.db
    .updateTable('inventories')
    .set({
      location_aisle: sequence.split('-')[0]!,
      location_section: sequence.split('-')[1]!,
      location_shelf: sequence.split('-')[2]!,
      location_sequence: sequence,
      temperature_class: temperature,
    })
    .where('id', '=', inventoryId)
    .execute();

const anOrder = async (lines: { inventoryId: string; quantity: string }[]) => {
  const order = await createConfirmedOrder(svc, { lines, storeId: STORE, absenceAction: 'call' });
  created.push(order.orderId);
  return order;
};
const ok = (r: CheckedResponse, what: string) => {
  if (r.status !== 200) throw new Error(`${what} answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r;
};
const takeBatch = async (p: TestPicker, orderIds: string[]): Promise<Batch> =>
  ok(
    await svc.client.call.POST('/api/picker/batches', {
      headers: { ...p.auth, 'idempotency-key': randomUUID() },
      body: { order_ids: orderIds },
    }),
    'take',
  ).body;
const bind = (p: TestPicker, batchId: number, toteId: number, label: string) =>
  svc.client.call.POST('/api/picker/batches/{batch_id}/totes/{tote_id}/bind', {
    params: { path: { batch_id: batchId, tote_id: toteId } },
    headers: { ...p.auth, 'idempotency-key': randomUUID() },
    body: { label },
  });
const next = (p: TestPicker, batchId: number, lang: 'en' | 'ru' = 'en') =>
  svc.client.call.GET('/api/picker/batches/{batch_id}/next', {
    params: { path: { batch_id: batchId } },
    headers: { ...p.auth, 'accept-language': lang },
  });
const batchOf = async (p: TestPicker, batchId: number): Promise<Batch> =>
  ok(await svc.client.call.GET('/api/picker/batches/{batch_id}', { params: { path: { batch_id: batchId } }, headers: p.auth }), 'batch')
    .body;
const sessionOf = async (p: TestPicker, orderId: string): Promise<Schemas['PickingSessionSchema']> =>
  ok(
    await svc.client.call.GET('/api/picker/orders/{order_id}/session', { params: { path: { order_id: orderId } }, headers: p.auth }),
    'session',
  ).body;
const customerOrder = async (orderId: string) =>
  ok(await svc.client.call.GET('/api/orders/{order_id}', { params: { path: { order_id: orderId } }, headers: customer.auth }), 'order')
    .body;
const cancelByCustomer = (orderId: string) =>
  svc.client.call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id: orderId } }, headers: customer.auth });
const orderVersion = async (orderId: string): Promise<number> =>
  ok(
    await svc.client.call.GET('/api/orders/roadmap/{order_id}/detail', {
      params: { path: { order_id: orderId } },
      headers: customer.auth,
    }),
    'roadmap',
  ).body.order_version;
const stockOf = async (inventoryId: string) =>
  Number((await svc.deps.db.selectFrom('inventories').select('stock').where('id', '=', inventoryId).executeTakeFirstOrThrow()).stock);
/** Bytes of an answer as sent (UTF-8), and of its parsed body serialised again. */
const sizes = (r: CheckedResponse) => [Buffer.byteLength(r.text, 'utf8'), Buffer.byteLength(JSON.stringify(r.body), 'utf8')];
/** A tote label of the largest size the spec admits (32 characters). */
const longLabel = () => `T-${randomUUID().replaceAll('-', '')}`.slice(0, 32);

/** Binds a fresh label to every tote of the batch; returns the label of each tote id. */
async function bindAll(p: TestPicker, batch: Batch, label = () => `T-${randomUUID().slice(0, 8)}`): Promise<Map<number, string>> {
  const labels = new Map<number, string>();
  for (const o of batch.orders)
    for (const t of o.totes) {
      const l = label();
      const r = ok(await bind(p, batch.batch_id, t.tote_id, l), 'bind');
      expect(r.body).toMatchObject({ tote_id: t.tote_id, order_id: o.order_id, label: l, released_at: null, items_count: 0 });
      labels.set(t.tote_id, l);
    }
  return labels;
}

describe('a batch of three orders walked to the end', () => {
  let picker: TestPicker;
  let p: StockedProduct[];
  let w: StockedProduct[];
  /** Orders: A (a weight confirmed, a missing item removed, a chilled item), B (a replacement, a weighed item, fewer pieces), C (cancelled mid-batch). */
  let a: string;
  let b: string;
  let c: string;
  let batch: Batch;
  let labels: Map<number, string>;
  let stockBefore: Map<string, number>;
  let versionBefore: Map<string, number>;
  const visited: { sequence: string | null; orders: string[] }[] = [];

  beforeAll(async () => {
    picker = await createPicker(svc, [STORE], 'Batch Walker');
    // Products with a barcode (scanned), weight products with a PLU (scale labels).
    p = (await stockedProducts(svc, { weight: false, count: 20, skip: 20 })).filter((x) => x.barcode).slice(0, 7);
    w = (await stockedProducts(svc, { weight: true, count: 6, skip: 1 })).filter((x) => x.plu).slice(0, 2);
    expect(p).toHaveLength(7);
    expect(w).toHaveLength(2);
    // The store's route: P0 01, W0 02, P1 03, P2 04, P3 (the replacement) 05, W1 06, P4 07, P5 08, P6 chilled at 90.
    await place(p[0]!.inventoryId, '01-A-1');
    await place(w[0]!.inventoryId, '02-B-1');
    await place(p[1]!.inventoryId, '03-A-1');
    await place(p[2]!.inventoryId, '04-A-1');
    await place(p[3]!.inventoryId, '05-A-1');
    await place(w[1]!.inventoryId, '06-B-1');
    await place(p[4]!.inventoryId, '07-A-1');
    await place(p[5]!.inventoryId, '08-A-1');
    await place(p[6]!.inventoryId, '90-A-1', 'chilled');
    stockBefore = new Map(await Promise.all([...p, ...w].map(async (x) => [x.inventoryId, await stockOf(x.inventoryId)] as const)));
    a = (
      await anOrder([
        { inventoryId: p[0]!.inventoryId, quantity: '2' },
        { inventoryId: w[0]!.inventoryId, quantity: '1.000' },
        { inventoryId: p[1]!.inventoryId, quantity: '1' },
        { inventoryId: p[6]!.inventoryId, quantity: '1' },
      ])
    ).orderId;
    b = (
      await anOrder([
        { inventoryId: p[0]!.inventoryId, quantity: '1' },
        { inventoryId: p[2]!.inventoryId, quantity: '2' },
        { inventoryId: w[1]!.inventoryId, quantity: '0.500' },
        { inventoryId: p[4]!.inventoryId, quantity: '3' },
      ])
    ).orderId;
    c = (
      await anOrder([
        { inventoryId: p[0]!.inventoryId, quantity: '1' },
        { inventoryId: p[4]!.inventoryId, quantity: '1' },
        { inventoryId: p[5]!.inventoryId, quantity: '1' },
        { inventoryId: p[6]!.inventoryId, quantity: '2' },
      ])
    ).orderId;
    versionBefore = new Map(await Promise.all([a, b, c].map(async (id) => [id, await orderVersion(id)] as const)));
  });

  it('takes the batch, binds every tote and walks every stop until none is left, one order cancelled on the way', async () => {
    batch = await takeBatch(picker, [a, b, c]);
    expect(batch).toMatchObject({ status: 'open', store_id: STORE, stops_count: 8, remaining_stops_count: 8 });
    const ofOrder = (id: string) => batch.orders.find((o) => o.order_id === id)!;
    expect(ofOrder(a).totes.map((t) => t.temperature_class)).toEqual(['ambient', 'chilled']);
    expect(ofOrder(b).totes.map((t) => t.temperature_class)).toEqual(['ambient']);
    expect(ofOrder(c).totes.map((t) => t.temperature_class)).toEqual(['ambient', 'chilled']);
    for (const o of batch.orders) expect(o).toMatchObject({ session_status: 'active', version: 1, closure_source: 'none', items_count: 4 });
    labels = await bindAll(picker, batch);
    const toteLabel = (orderId: string, temperature: Temperature) =>
      labels.get(ofOrder(orderId).totes.find((t) => t.temperature_class === temperature)!.tote_id)!;

    // What the picker does with each line, by order and product; each ends with the goods in the tote.
    const items = new Map<string, Schemas['PickingItemSchema'][]>();
    for (const id of [a, b, c]) items.set(id, (await sessionOf(picker, id)).items);
    const send = <A extends ItemAction>(line: StopLine, action: A, body: ItemBody<A>) =>
      itemCommand(svc, picker, line.order_id, line.item_id, action, body);
    const act = async <A extends ItemAction>(line: StopLine, action: A, body: ItemBody<A>) => ok(await send(line, action, body), action);
    const toTote = async (line: StopLine) => {
      const r = ok(await send(line, 'tote', { tote_label: line.tote_label! }), 'tote');
      expect(r.body).toMatchObject({
        applied: true,
        tote: { tote_id: line.tote_id, order_id: line.order_id },
        item: { tote_id: line.tote_id },
      });
    };
    type Plan = (line: StopLine) => Promise<void>;
    const plans = new Map<string, Plan>([
      // A: two pieces scanned as ordered.
      [
        `${a}:${p[0]!.productId}`,
        async (line) => {
          expect((await act(line, 'scan', { barcode: p[0]!.barcode! })).body.item.state).toBe('awaiting_quantity');
          expect((await act(line, 'scan', { barcode: p[0]!.barcode! })).body.item.state).toBe('picked');
          await toTote(line);
        },
      ],
      // A: 1.260 kg of the 1.000 ordered, by scale label: into the tote while the customer is asked, then confirmed.
      [
        `${a}:${w[0]!.productId}`,
        async (line) => {
          const heavy = await act(line, 'scan', { barcode: scaleLabel(w[0]!.plu!, 1260) });
          expect(heavy.body).toMatchObject({ status: 'clarification_required', label_weight_kg: '1.260' });
          expect(heavy.body.item).toMatchObject({ state: 'clarified', clarification_kind: 'weight_mismatch', is_resolved: false });
          await toTote(line);
          const confirmed = await act(line, 'clarification/confirm', { resolution: 'weight_mismatch', quantity_kg: '1.260' });
          expect(confirmed.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.260', tote_id: line.tote_id });
        },
      ],
      // A: missing; the customer, called, wants it removed. Nothing goes into a tote.
      [
        `${a}:${p[1]!.productId}`,
        async (line) => {
          await act(line, 'missing', { action: 'remove' });
          const removed = await act(line, 'clarification/resolve', { resolution: 'remove' });
          expect(removed.body.item).toMatchObject({ state: 'clarified', clarification_kind: 'removed', is_resolved: true });
          const nothing = await send(line, 'tote', { tote_label: line.tote_label! });
          expect([nothing.status, nothing.body.code]).toEqual([409, 'ITEM_STATE_CONFLICT']);
        },
      ],
      // A: the chilled item goes into A's chilled tote (not its ambient one).
      [
        `${a}:${p[6]!.productId}`,
        async (line) => {
          expect(line.tote_label).toBe(toteLabel(a, 'chilled'));
          await act(line, 'piece-quantity', { quantity: 1 });
          const wrong = await send(line, 'tote', { tote_label: toteLabel(a, 'ambient') });
          expect([wrong.status, wrong.body.code]).toEqual([409, 'TOTE_TEMPERATURE_MISMATCH']);
          await toTote(line);
        },
      ],
      // B: one piece; the tote of another order (A's) is refused first.
      [
        `${b}:${p[0]!.productId}`,
        async (line) => {
          await act(line, 'piece-quantity', { quantity: 1 });
          const wrong = await send(line, 'tote', { tote_label: toteLabel(a, 'ambient') });
          expect([wrong.status, wrong.body.code, wrong.body.tote_order_id]).toEqual([409, 'TOTE_OF_ANOTHER_ORDER', a]);
          await toTote(line);
        },
      ],
      // B: missing; the customer agrees to P3 instead, scanned twice.
      [
        `${b}:${p[2]!.productId}`,
        async (line) => {
          await act(line, 'missing', { action: 'call' });
          const replaced = await act(line, 'replacement', { barcode: p[3]!.barcode! });
          expect(replaced.body.item).toMatchObject({ state: 'awaiting_quantity', replacement: { product_id: p[3]!.productId } });
          expect((await act(line, 'scan', { barcode: p[3]!.barcode! })).body.item).toMatchObject({
            state: 'picked',
            actual_quantity: '2.000',
          });
          await toTote(line);
        },
      ],
      // B: 0.520 kg of the 0.500 ordered: inside the tolerance, picked at once.
      [
        `${b}:${w[1]!.productId}`,
        async (line) => {
          const weighed = await act(line, 'weight', { weight_kg: '0.520' });
          expect(weighed.body.item).toMatchObject({ state: 'picked', actual_quantity: '0.520' });
          await toTote(line);
        },
      ],
      // B: two of the three pieces ordered; the customer accepts two.
      [
        `${b}:${p[4]!.productId}`,
        async (line) => {
          const fewer = await act(line, 'piece-quantity', { quantity: 2 });
          expect(fewer.body).toMatchObject({ status: 'clarification_required', item: { clarification_kind: 'quantity_mismatch' } });
          await toTote(line);
          const accepted = await act(line, 'clarification/confirm', { resolution: 'quantity_mismatch', quantity: 2 });
          expect(accepted.body.item).toMatchObject({ state: 'picked', actual_quantity: '2.000' });
        },
      ],
      // C: only its first stop is walked before its customer cancels it.
      [
        `${c}:${p[0]!.productId}`,
        async (line) => {
          await act(line, 'piece-quantity', { quantity: 1 });
          await toTote(line);
        },
      ],
    ]);
    const planOf = (line: StopLine) => {
      const item = items.get(line.order_id)!.find((i) => i.item_id === line.item_id)!;
      const plan = plans.get(`${line.order_id}:${item.product_id}`);
      if (!plan) throw new Error(`no plan for item ${line.item_id} of order ${line.order_id} (${item.name})`);
      return plan;
    };

    const first = ok(await next(picker, batch.batch_id), 'next').body as NextStop;
    expect(first).toMatchObject({ status: 'open', stops_count: 8, remaining_stops_count: 8, remaining_items_count: 12 });
    for (let step = 0; ; step++) {
      expect(step).toBeLessThan(20);
      const r = ok(await next(picker, batch.batch_id), 'next');
      expect(Buffer.byteLength(r.text, 'utf8')).toBeLessThan(4096);
      const n: NextStop = r.body;
      if (!n.stop) break;
      visited.push({ sequence: n.stop.location.sequence, orders: n.stop.lines.map((l) => l.order_id).sort() });
      for (const line of n.stop.lines) {
        expect(line.tote_label).toBe(labels.get(line.tote_id!));
        expect(line.in_tote).toBe(false);
        await planOf(line)(line);
      }
      if (step > 0) continue;
      // After the first stop, C's customer cancels: C leaves the walk, its totes are freed, A and B go on.
      const cancelled = await cancelByCustomer(c);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status.value).toBe('cancelled');
      const after = await batchOf(picker, batch.batch_id);
      const ofC = after.orders.find((o) => o.order_id === c)!;
      expect(ofC).toMatchObject({ session_status: 'cancelled', closure_source: 'order_cancelled' });
      expect(ofC.totes.map((t) => [t.temperature_class, t.label !== null, t.released_at !== null])).toEqual([
        ['ambient', true, true],
        ['chilled', true, true],
      ]);
      for (const o of after.orders.filter((x) => x.order_id !== c)) {
        expect(o.session_status).toBe('active');
        for (const t of o.totes) expect(t.released_at).toBeNull();
      }
      expect(after).toMatchObject({ status: 'open', stops_count: 7, remaining_stops_count: 6 });
      const left = ok(await next(picker, batch.batch_id), 'next').body as NextStop;
      expect(left).toMatchObject({ stops_count: 7, remaining_stops_count: 6, remaining_items_count: 6 });
      const list = ok(
        await svc.client.call.GET('/api/picker/batches/{batch_id}/pick-list', {
          params: { path: { batch_id: batch.batch_id } },
          headers: picker.auth,
        }),
        'pick-list',
      ).body as Schemas['PickingBatchPickListSchema'];
      expect(list.stops.map((s) => s.location.sequence)).toEqual(['01-A-1', '02-B-1', '03-A-1', '04-A-1', '06-B-1', '07-A-1', '90-A-1']);
      expect(list.stops.flatMap((s) => s.lines).some((l) => l.order_id === c)).toBe(false);
      // Its items cannot be worked on any more.
      const late = await itemCommand(svc, picker, c, items.get(c)![1]!.item_id, 'piece-quantity', { quantity: 1 });
      expect([late.status, late.body.code]).toEqual([409, 'order_cancelled']);
    }
    expect(visited).toEqual([
      { sequence: '01-A-1', orders: [a, b, c].sort() },
      { sequence: '02-B-1', orders: [a] },
      { sequence: '03-A-1', orders: [a] },
      { sequence: '04-A-1', orders: [b] },
      { sequence: '06-B-1', orders: [b] },
      { sequence: '07-A-1', orders: [b] },
      { sequence: '90-A-1', orders: [a] },
    ]);
    const done = ok(await next(picker, batch.batch_id), 'next').body as NextStop;
    expect(done).toMatchObject({ status: 'open', stops_count: 7, remaining_stops_count: 0, remaining_items_count: 0, stop: null });
    const walked = await batchOf(picker, batch.batch_id);
    const itemsIn = (orderId: string) =>
      walked.orders.find((o) => o.order_id === orderId)!.totes.map((t) => [t.temperature_class, t.items_count]);
    expect(itemsIn(a)).toEqual([
      ['ambient', 2],
      ['chilled', 1],
    ]);
    expect(itemsIn(b)).toEqual([['ambient', 4]]);
    for (const id of [a, b])
      expect(walked.orders.find((o) => o.order_id === id)).toMatchObject({ session_status: 'ready_to_finish', resolved_items_count: 4 });

    // Each remaining order is finished on its own and handed over in its totes.
    for (const [id, totes] of [
      [a, itemsIn(a)],
      [b, itemsIn(b)],
    ] as const) {
      const finished = ok(await sessionCommand(svc, picker, id, 'finish', undefined, { prefer: 'return=representation' }), 'finish');
      const s = (finished.body as Schemas['PickingActionOutput']).session;
      expect(s).toMatchObject({ session_status: 'completed', closure_source: 'picker_finish' });
      expect(s.totes?.map((t) => [t.temperature_class, t.items_count])).toEqual(totes);
      for (const t of s.totes ?? []) expect(t.released_at).not.toBeNull();
    }
    expect(ok(await next(picker, batch.batch_id), 'next').body).toMatchObject({ status: 'closed', stop: null });
    // The picker has seen C's cancellation; nothing of the batch is current any more.
    expect((await sessionCommand(svc, picker, c, 'cancelled/ack')).status).toBe(204);
    expect((await svc.client.call.GET('/api/picker/batches/current', { headers: picker.auth })).status).toBe(404);
    const closed = await batchOf(picker, batch.batch_id);
    expect(closed.status).toBe('closed');
    expect(closed.orders.map((o) => [o.order_id, o.session_status, o.closure_source]).sort()).toEqual(
      [
        [a, 'completed', 'picker_finish'],
        [b, 'completed', 'picker_finish'],
        [c, 'cancelled', 'order_cancelled'],
      ].sort(),
    );
  });

  it('shows each customer what was picked, changed, removed and replaced, and the totes', async () => {
    const deliveryCost = async (id: string) =>
      kopecks(
        (await svc.deps.db.selectFrom('orders').select('delivery_cost').where('id', '=', id).executeTakeFirstOrThrow()).delivery_cost,
      );
    const line = (quantity: string, x: StockedProduct) => lineTotal(parseDecimal(quantity, 3)!, kopecks(x.unitPrice));
    // [group, ordered product, final product, changes, reason], in a fixed order.
    type Row = [string, string | null, string | null, string[], string | null];
    const sorted = (rows: Row[]) => rows.sort((x, y) => `${x[0]}${x[1]}`.localeCompare(`${y[0]}${y[1]}`));
    const summaryOf = (r: { picking_result: Schemas['PickingResultSchema'] }) =>
      sorted(
        r.picking_result.items.map((i): Row => [
          i.group,
          i.original?.product_id ?? null,
          i.final?.product_id ?? null,
          i.changes,
          i.reason?.code ?? null,
        ]),
      );

    const ra = await customerOrder(a);
    expect(ra).toMatchObject({
      status: { value: 'picked' },
      picking_result_state: 'completed',
      has_picking_changes: true,
      tote_count: 2,
      picking_result: { state: 'completed', summary: { removed: 1, changed: 1, unchanged: 2 } },
    });
    expect(summaryOf(ra)).toEqual(
      sorted([
        ['removed', p[1]!.productId, null, ['removed'], 'missing'],
        ['changed', w[0]!.productId, w[0]!.productId, ['weight'], 'weight_mismatch'],
        ['unchanged', p[0]!.productId, p[0]!.productId, [], null],
        ['unchanged', p[6]!.productId, p[6]!.productId, [], null],
      ]),
    );
    expect(ra.picking_result.items.find((i: any) => i.reason?.code === 'weight_mismatch').final).toMatchObject({ weight: '1.260' });
    const goodsA = line('2', p[0]!) + line('1.260', w[0]!) + line('1', p[6]!);
    expect(ra.total_price).toBe(money(goodsA + (await deliveryCost(a))));

    const rb = await customerOrder(b);
    expect(rb).toMatchObject({
      status: { value: 'picked' },
      picking_result_state: 'completed',
      has_picking_changes: true,
      tote_count: 1,
      picking_result: { state: 'completed', summary: { removed: 0, changed: 3, unchanged: 1 } },
    });
    const replacedChanges = p[3]!.unitPrice === p[2]!.unitPrice ? ['product'] : ['product', 'price'];
    expect(summaryOf(rb)).toEqual(
      sorted([
        ['changed', p[2]!.productId, p[3]!.productId, replacedChanges, 'replaced'],
        ['changed', w[1]!.productId, w[1]!.productId, ['weight'], 'weighed'],
        ['changed', p[4]!.productId, p[4]!.productId, ['quantity'], 'quantity_mismatch'],
        ['unchanged', p[0]!.productId, p[0]!.productId, [], null],
      ]),
    );
    const replaced = rb.picking_result.items.find((i: any) => i.reason?.code === 'replaced');
    expect(replaced.final).toMatchObject({ product_id: p[3]!.productId, quantity: '2.000', barcode: p[3]!.barcode });
    expect(replaced.original).toMatchObject({ product_id: p[2]!.productId, quantity: '2.000' });
    const goodsB = line('1', p[0]!) + line('2', p[3]!) + line('0.520', w[1]!) + line('2', p[4]!);
    expect(rb.total_price).toBe(money(goodsB + (await deliveryCost(b))));

    const rc = await customerOrder(c);
    expect(rc).toMatchObject({ status: { value: 'cancelled' }, picking_result_state: 'cancelled', tote_count: null, can_cancel: false });
    const totesOfC = await svc.deps.db
      .selectFrom('picking_totes as t')
      .innerJoin('picking_sessions as s', 's.id', 't.session_id')
      .select(['t.released_at', 's.status', 's.closure_source'])
      .where('s.order_id', '=', c)
      .execute();
    expect(totesOfC).toHaveLength(2);
    for (const t of totesOfC)
      expect(t).toMatchObject({ status: 'cancelled', closure_source: 'order_cancelled', released_at: expect.any(Date) });
  });

  it('told each order and each session its story through the outbox, versions without gaps', async () => {
    const eventsOf = (orderId: string, type: string) =>
      svc.deps.db
        .selectFrom('outbox_events')
        .select(['type', 'payload'])
        .where('order_id', '=', orderId)
        .where('type', '=', type)
        .orderBy('id')
        .execute()
        .then((rows) => rows.map((r) => r.payload as any));
    for (const id of [a, b, c]) {
      const changed = await eventsOf(id, 'order.changed');
      const versions = changed.map((e) => e.data.order_version);
      // Every rise of the order's version is one order.changed: from the version before picking to the one read now.
      expect(versions).toEqual(versions.map((_, i) => versionBefore.get(id)! + 1 + i));
      expect(versions.at(-1)).toBe(await orderVersion(id));
      expect(changed[0].data.changes).toEqual(['status', 'picking_result']);
      expect(changed[0].data.status).toBe('picking');
      const sessionId = batch.orders.find((o) => o.order_id === id)!.session_id;
      const sessionEvents = (await eventsOf(id, 'picker.session.changed')).map((e) => e.event);
      for (const e of sessionEvents) expect(e).toMatchObject({ session_id: sessionId, picker_id: picker.pickerId, store_id: STORE });
      // Every version of the session, the tote placements' included, was announced once, in order.
      const sessionVersions = sessionEvents.map((e) => e.version);
      expect(sessionVersions).toEqual(sessionVersions.map((_, i) => 1 + i));
      const final = await sessionOf(picker, id);
      expect(sessionVersions.at(-1)).toBe(final.version);
      const queue = (await eventsOf(id, 'picker.queue.changed')).map((e) => e.event.reason);
      if (id === c) {
        expect(changed.at(-1).data).toMatchObject({ status: 'cancelled', changes: expect.arrayContaining(['status']) });
        expect(sessionEvents.at(-1)).toMatchObject({ session_status: 'cancelled' });
        const told = (await eventsOf(id, 'picker.order.cancelled')).map((e) => e.event);
        expect(told).toEqual([expect.objectContaining({ session_id: sessionId, version: final.version })]);
        expect(queue).toEqual(['order_added', 'order_started', 'order_cancelled']);
      } else {
        expect(changed.at(-1).data).toMatchObject({ status: 'picked', changes: ['status', 'picking_result', 'payment'] });
        expect(changed.filter((e) => e.data.changes.length === 1 && e.data.changes[0] === 'picking_result').length).toBeGreaterThanOrEqual(
          3,
        );
        expect(sessionEvents.at(-1)).toMatchObject({ session_status: 'completed' });
        expect(queue).toEqual(['order_added', 'order_started', 'order_completed']);
      }
    }
  });

  it('took from stock what was picked and gave back the rest, the cancelled order whole', async () => {
    const delta = async (x: StockedProduct) => Math.round(((await stockOf(x.inventoryId)) - stockBefore.get(x.inventoryId)!) * 1000) / 1000;
    // P0: 2 (A) + 1 (B); C's piece went back with its cancellation.
    expect(await delta(p[0]!)).toBe(-3);
    expect(await delta(w[0]!)).toBe(-1.26);
    expect(await delta(p[1]!)).toBe(0);
    expect(await delta(p[2]!)).toBe(0);
    expect(await delta(p[3]!)).toBe(-2);
    expect(await delta(w[1]!)).toBe(-0.52);
    expect(await delta(p[4]!)).toBe(-2);
    expect(await delta(p[5]!)).toBe(0);
    expect(await delta(p[6]!)).toBe(-1);
  });
});

describe('the handheld answer of a batch of three 40-line orders', () => {
  it('stays under 4 KB: the next stop at the start and after some progress, and a command delta', async () => {
    const picker = await createPicker(svc, [STORE]);
    // As many distinct stocked products as the demo catalog gives (up to the 120 lines), those of
    // the walk above left out; the first ten are in all three orders, so their stops carry three
    // lines (the largest stops); the rest of each order's lines are other products as far as they go.
    const { count } = (
      await sql<{ count: number }>`
        SELECT count(*)::int AS count FROM inventories i JOIN products p ON p.id = i.product_id
        WHERE i.store_id = ${STORE} AND i.is_default AND p.is_active AND NOT p.weight_based AND i.stock >= 10`.execute(svc.deps.db)
    ).rows[0]!;
    const used = new Set(
      (await svc.deps.db.selectFrom('order_items').select('inventory_id').where('order_id', 'in', created).execute()).map(
        (r) => r.inventory_id,
      ),
    );
    const products = (await stockedProducts(svc, { weight: false, count })).filter((x) => !used.has(x.inventoryId)).slice(0, 120);
    expect(products.length).toBeGreaterThanOrEqual(40);
    const SHARED = 10;
    const rest = products.slice(SHARED);
    const linesOf = (k: number) => [
      ...products.slice(0, SHARED),
      ...Array.from({ length: 40 - SHARED }, (_, j) => rest[(k * (40 - SHARED) + j) % rest.length]!),
    ];
    // Every product at its own place along the route, one in ten chilled (so the orders have two totes).
    for (const [i, x] of products.entries()) {
      const n = String(i).padStart(3, '0');
      await place(x.inventoryId, i % 10 === 9 ? `99-C-${n}` : `${n.slice(0, 2)}-A-${n}`, i % 10 === 9 ? 'chilled' : 'ambient');
    }
    const orders: string[] = [];
    for (const k of [0, 1, 2]) {
      const lines = linesOf(k);
      expect(new Set(lines.map((l) => l.inventoryId)).size).toBe(40);
      orders.push((await anOrder(lines.map((l) => ({ inventoryId: l.inventoryId, quantity: '2' })))).orderId);
    }
    const batch = await takeBatch(picker, orders);
    expect(batch.orders.map((o) => o.items_count)).toEqual([40, 40, 40]);
    const labels = await bindAll(picker, batch, longLabel);
    expect([...labels.values()].every((l) => l.length === 32)).toBe(true);

    /** The next stop in both languages: under 4096 bytes as sent and as parsed. */
    const small = async () => {
      let stop: NextStop | null = null;
      for (const lang of ['en', 'ru'] as const) {
        const r = ok(await next(picker, batch.batch_id, lang), 'next');
        const [raw, parsed] = sizes(r);
        expect(raw, `next (${lang}) as sent`).toBeLessThan(4096);
        expect(parsed, `next (${lang}) parsed`).toBeLessThan(4096);
        expect(JSON.stringify(r.body).length).toBeLessThan(4096);
        if (lang === 'en') stop = r.body;
      }
      return stop!;
    };
    const start = await small();
    expect(start.stop?.lines).toHaveLength(3);
    expect(start.remaining_items_count).toBe(120);

    // Some progress: the first stops picked and placed, the answers of the commands (deltas) measured too.
    const deltas: number[][] = [];
    for (let step = 0; step < 12; step++) {
      const n = await small();
      expect(n.stop).not.toBeNull();
      for (const line of n.stop!.lines) {
        if (step === 3 && line === n.stop!.lines[0]) {
          // A missing item's answer carries its replacement options: the largest delta.
          const missing = ok(await itemCommand(svc, picker, line.order_id, line.item_id, 'missing', { action: 'call' }), 'missing');
          expect(missing.body.session.items).toBeUndefined();
          deltas.push(sizes(missing));
          ok(await itemCommand(svc, picker, line.order_id, line.item_id, 'missing', { action: 'remove' }), 'missing');
          deltas.push(
            sizes(
              ok(await itemCommand(svc, picker, line.order_id, line.item_id, 'clarification/resolve', { resolution: 'remove' }), 'resolve'),
            ),
          );
          continue;
        }
        const picked = ok(await itemCommand(svc, picker, line.order_id, line.item_id, 'piece-quantity', { quantity: 2 }), 'piece-quantity');
        expect(picked.body.session.items).toBeUndefined();
        deltas.push(sizes(picked));
        deltas.push(
          sizes(ok(await itemCommand(svc, picker, line.order_id, line.item_id, 'tote', { tote_label: line.tote_label! }), 'tote')),
        );
      }
    }
    for (const [raw, parsed] of deltas) {
      expect(raw).toBeLessThan(4096);
      expect(parsed).toBeLessThan(4096);
    }
    const later = await small();
    expect(later.remaining_items_count).toBeLessThan(120 - 12);
    expect(later.stop).not.toBeNull();

    // Out of the way of the file's other tests: the customer cancels the three orders (none goes back to the queue).
    for (const id of orders) expect((await cancelByCustomer(id)).status).toBe(200);
    for (const id of orders) expect((await sessionCommand(svc, picker, id, 'cancelled/ack')).status).toBe(204);
    expect(ok(await next(picker, batch.batch_id), 'next').body).toMatchObject({ status: 'closed', stop: null, stops_count: 0 });
  });
});

describe('this file', () => {
  it('leaves none of its orders waiting for picking or in an open session', async () => {
    expect(created.length).toBeGreaterThanOrEqual(6);
    const open = await svc.deps.db
      .selectFrom('orders')
      .select(['id', 'status'])
      .where('id', 'in', created)
      .where('status', 'in', ['confirmed', 'picking'])
      .execute();
    expect(open).toEqual([]);
    const sessions = await svc.deps.db
      .selectFrom('picking_sessions')
      .select(['order_id', 'status'])
      .where('order_id', 'in', created)
      .where((eb) =>
        eb.or([
          eb('status', 'in', ['active', 'ready_to_finish']),
          eb.and([eb('closure_source', '=', 'order_cancelled'), eb('cancellation_acknowledged_at', 'is', null)]),
        ]),
      )
      .execute();
    expect(sessions).toEqual([]);
  });
});
