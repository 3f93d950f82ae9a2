// A whole picking of an order with each kind of change - a weight outside the tolerance
// confirmed, a missing item removed, a replacement, an added item - and what it does to the
// customer's order (detail as the customer reads it, total, events), to stock, and to the
// picker's history.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaleLabel } from '../../domain/codes/scale-label.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { registerPushDevice } from '../support/accounts.js';
import { command, createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import {
  createPicker,
  itemCommand,
  signInDemoCustomer,
  startPicking,
  type ItemAction,
  type ItemBody,
  type TestPicker,
} from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
const STORE = DEMO_STORES[0]!.id;

beforeAll(async () => {
  svc = await startTestService();
  // The demo customer, whose order is picked, has the app installed (so status moves push).
  await registerPushDevice(svc, (await signInDemoCustomer(svc)).auth);
});
afterAll(() => svc?.close());

const money = (n: number) => (Math.round(n * 100) / 100).toFixed(2);
const stockOf = async (inventoryId: string) =>
  (await svc.deps.db.selectFrom('inventories').select('stock').where('id', '=', inventoryId).executeTakeFirstOrThrow()).stock!;

describe('a full picking of an order', () => {
  let picker: TestPicker;
  let p: StockedProduct[];
  let w: StockedProduct;
  let orderId: string;
  let sessionId: number;
  let stockBefore: Record<string, number>;
  let finish: any;

  beforeAll(async () => {
    picker = await createPicker(svc, [STORE], 'Anna Picker');
    // a: 2 pcs picked as ordered; c: missing, removed; d: replaced by e; f: added by the picker.
    p = await stockedProducts(svc, { weight: false, count: 5, skip: 10 });
    w = (await stockedProducts(svc, { weight: true, count: 1, skip: 3 }))[0]!;
    stockBefore = Object.fromEntries(await Promise.all([...p, w].map(async (x) => [x.inventoryId, Number(await stockOf(x.inventoryId))])));
    const order = await createConfirmedOrder(svc, {
      comment: 'Call me if something is missing',
      absenceAction: 'call',
      lines: [
        { inventoryId: p[0]!.inventoryId, quantity: '2' },
        { inventoryId: w.inventoryId, quantity: '1.000' },
        { inventoryId: p[1]!.inventoryId, quantity: '1' },
        { inventoryId: p[2]!.inventoryId, quantity: '2' },
      ],
    });
    orderId = order.orderId;
  });

  it('picks every item with each kind of change and finishes', async () => {
    const session = await startPicking(svc, picker, orderId);
    sessionId = session.session_id;
    const idOf = (x: StockedProduct) => session.items.find((i: any) => i.product_id === x.productId)!.item_id;
    const send = <A extends ItemAction>(item: number, action: A, body: ItemBody<A>) =>
      itemCommand(svc, picker, orderId, item, action, body);

    // As ordered: two scans.
    await send(idOf(p[0]!), 'scan', { barcode: p[0]!.barcode! });
    expect((await send(idOf(p[0]!), 'scan', { barcode: p[0]!.barcode! })).body.item.state).toBe('picked');
    // Weight outside the 10 % tolerance, by scale label, confirmed.
    const heavy = await send(idOf(w), 'scan', { barcode: scaleLabel(w.plu!, 1260) });
    expect(heavy.body).toMatchObject({ status: 'clarification_required', label_weight_kg: '1.260' });
    expect((await send(idOf(w), 'clarification/confirm', { resolution: 'weight_mismatch', quantity_kg: '1.260' })).body.item.state).toBe(
      'picked',
    );
    // Missing; the customer chose removal.
    await send(idOf(p[1]!), 'missing', { action: 'remove' });
    expect((await send(idOf(p[1]!), 'clarification/resolve', { resolution: 'remove' })).body.item.clarification_kind).toBe('removed');
    // Missing; the customer agreed to a substitute, scanned twice.
    await send(idOf(p[2]!), 'missing', { action: 'call' });
    await send(idOf(p[2]!), 'replacement', { barcode: p[3]!.barcode! });
    expect((await send(idOf(p[2]!), 'scan', { barcode: p[3]!.barcode! })).body.item).toMatchObject({
      state: 'picked',
      replacement: { product_id: p[3]!.productId },
    });
    // Added at the customer's request, then picked.
    const added = await svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
      params: { path: { order_id: orderId } },
      headers: command(picker.auth),
      body: { inventory_id: p[4]!.inventoryId, quantity: '1' },
    });
    expect(added.status).toBe(200);
    const ready = await send(added.body.item.item_id, 'manual-pick', { quantity: 1, confirm: false });
    expect(ready.body.session.session_status).toBe('ready_to_finish');

    finish = await svc.client.call.POST('/api/picker/orders/{order_id}/finish', {
      params: { path: { order_id: orderId } },
      headers: command(picker.auth),
    });
    expect(finish.status).toBe(200);
    const expected =
      2 * Number(p[0]!.unitPrice) +
      Math.round(1.26 * Number(w.unitPrice) * 100) / 100 +
      2 * Number(p[3]!.unitPrice) +
      Number(p[4]!.unitPrice);
    const original = 2 * Number(p[0]!.unitPrice) + Number(w.unitPrice) + Number(p[1]!.unitPrice) + 2 * Number(p[2]!.unitPrice);
    expect(finish.body.session).toMatchObject({
      session_status: 'completed',
      closure_source: 'picker_finish',
      added_items_count: 1,
      payment_summary: {
        original_total: money(original),
        current_total: money(expected),
        difference: money(expected - original),
        reconciliation_status: 'not_required',
      },
    });
  });

  it('shows the customer the picking result and the new total', async () => {
    const customer = await signInDemoCustomer(svc);
    const r = await svc.client.call.GET('/api/orders/{order_id}', { params: { path: { order_id: orderId } }, headers: customer.auth });
    expect(r.status).toBe(200);
    const current = Number(finish.body.session.payment_summary.current_total);
    expect(r.body).toMatchObject({
      status: { value: 'picked' },
      picking_result_state: 'completed',
      has_picking_changes: true,
      picking_result: { state: 'completed', summary: { removed: 1, changed: 3, unchanged: 1 } },
    });
    // Only PickingResultSchema's fields (Redocly Respect's schema check refuses undeclared ones).
    expect(Object.keys(r.body.picking_result).sort()).toEqual(['completed_at', 'items', 'state', 'summary']);
    const deliveryCost = Number(
      (await svc.deps.db.selectFrom('orders').select('delivery_cost').where('id', '=', orderId).executeTakeFirstOrThrow()).delivery_cost,
    );
    expect(r.body.total_price).toBe(money(current + deliveryCost));
    const lines = r.body.picking_result.items.map((i: any) => [i.group, i.changes, i.reason?.code ?? null]);
    expect(lines).toEqual([
      ['removed', ['removed'], 'missing'],
      ['changed', ['weight'], 'weight_mismatch'],
      ['changed', expect.arrayContaining(['product']), 'replaced'],
      ['changed', ['added'], 'added'],
      ['unchanged', [], null],
    ]);
    const weighed = r.body.picking_result.items.find((i: any) => i.reason?.code === 'weight_mismatch');
    expect(weighed.original).toMatchObject({ quantity: '1.000', weight: '1.000' });
    expect(weighed.final).toMatchObject({
      quantity: '1.260',
      weight: '1.260',
      line_total: money(Math.round(1.26 * Number(w.unitPrice) * 100) / 100),
    });
    const replaced = r.body.picking_result.items.find((i: any) => i.reason?.code === 'replaced');
    expect(replaced.final).toMatchObject({ product_id: p[3]!.productId, quantity: '2.000', barcode: p[3]!.barcode });
    expect(replaced.original).toMatchObject({ product_id: p[2]!.productId });
  });

  it('told the customer through order.changed events, with a push for the status moves', async () => {
    const events = await svc.deps.db
      .selectFrom('outbox_events')
      .select(['type', 'payload'])
      .where('order_id', '=', orderId)
      .where('type', '=', 'order.changed')
      .orderBy('id')
      .execute();
    const changes = events.map((e: any) => e.payload.data.changes);
    expect(changes[0]).toEqual(['status', 'picking_result']);
    expect(changes.at(-1)).toEqual(['status', 'picking_result', 'payment']);
    expect(changes.filter((c: string[]) => c.length === 1 && c[0] === 'picking_result').length).toBeGreaterThanOrEqual(4);
    const versions = events.map((e: any) => e.payload.data.order_version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect((events.at(-1)!.payload as any).notification_id).not.toBeNull();
  });

  it('gave back the stock of what was not taken and took what was', async () => {
    const delta = async (x: StockedProduct) =>
      Math.round((Number(await stockOf(x.inventoryId)) - stockBefore[x.inventoryId]!) * 1000) / 1000;
    expect(await delta(p[0]!)).toBe(-2);
    expect(await delta(w)).toBe(-1.26);
    expect(await delta(p[1]!)).toBe(0);
    expect(await delta(p[2]!)).toBe(0);
    expect(await delta(p[3]!)).toBe(-2);
    expect(await delta(p[4]!)).toBe(-1);
  });

  it("is in the picker's history with its items as they ended", async () => {
    const list = await svc.client.call.GET('/api/picker/history/sessions', { headers: picker.auth });
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, limit: 20, offset: 0, has_more: false });
    expect(list.body.items[0]).toMatchObject({
      session_id: sessionId,
      order_id: orderId,
      picker_id: picker.pickerId,
      picker_display_name: 'Anna Picker',
      session_status: 'completed',
      closure_source: 'picker_finish',
      items_count: 5,
      picked_items_count: 4,
      // the weight and the replacement (an added item is counted as added, not as changed)
      changed_items_count: 2,
      removed_items_count: 1,
      added_items_count: 1,
      final_total: finish.body.session.payment_summary.current_total,
    });
    const detail = await svc.client.call.GET('/api/picker/history/sessions/{session_id}', {
      params: { path: { session_id: sessionId } },
      headers: picker.auth,
    });
    expect(detail.status).toBe(200);
    const byProduct = (name: string) => detail.body.items.find((i: any) => i.original_name === name);
    expect(byProduct(w.name)).toMatchObject({
      source: 'scale_label',
      state: 'picked',
      resolution_type: 'weight_confirmed',
      actual_quantity: '1.260',
      plu_code: w.plu!.padStart(5, '0'),
    });
    expect(byProduct(p[1]!.name)).toMatchObject({
      state: 'clarified/removed',
      is_removed: true,
      resolution_type: 'removed',
      actual_quantity: '0.000',
      source: 'none',
    });
    expect(byProduct(p[2]!.name)).toMatchObject({
      final_name: p[3]!.name,
      resolution_type: 'replaced',
      final_unit_price: p[3]!.unitPrice,
      final_barcode: p[3]!.barcode,
    });
    expect(byProduct(p[4]!.name)).toMatchObject({ is_added: true, resolution_type: 'picked', source: 'manual' });

    const summary = await svc.client.call.GET('/api/picker/history/summary', { headers: picker.auth });
    expect(summary.status).toBe(200);
    expect(summary.body).toMatchObject({
      sessions_count: 1,
      completed_sessions_count: 1,
      cancelled_sessions_count: 0,
      items_count: 5,
      picked_items_count: 4,
      changed_items_count: 2,
      replaced_items_count: 1,
      removed_items_count: 1,
      added_items_count: 1,
      missing_rate: '0.2000',
      replacement_rate: '0.2000',
      completed_total: finish.body.session.payment_summary.current_total,
      started_at: null,
      ended_at: null,
    });
  });

  it("filters history by period and refuses a reversed one; 404 for another picker's session; 401", async () => {
    const future = new Date(Date.now() + 3600_000).toISOString();
    const later = await svc.client.call.GET('/api/picker/history/sessions', {
      params: { query: { started_at: future } },
      headers: picker.auth,
    });
    expect(later.body).toMatchObject({ total: 0, items: [] });
    const summary = await svc.client.call.GET('/api/picker/history/summary', {
      params: { query: { started_at: future } },
      headers: picker.auth,
    });
    expect(summary.body).toMatchObject({ sessions_count: 0, items_per_minute: null, average_duration_seconds: null, started_at: future });
    // Offsets as short as the contract's date-time admits ("+03"), and a leap second, are read too.
    const hoursOnly = (d: Date) => `${new Date(d.getTime() + 3 * 3600_000).toISOString().slice(0, 19)}+03`;
    const shortOffset = await svc.client.call.GET('/api/picker/history/sessions', {
      params: { query: { started_at: hoursOnly(new Date(future)) } },
      headers: picker.auth,
    });
    expect(shortOffset.body).toMatchObject({ total: 0, items: [] });
    const sinceAnHourAgo = await svc.client.call.GET('/api/picker/history/summary', {
      params: { query: { started_at: hoursOnly(new Date(Date.now() - 3600_000)) } },
      headers: picker.auth,
    });
    expect(sinceAnHourAgo.body).toMatchObject({ sessions_count: 1 });
    expect(
      (
        await svc.client.call.GET('/api/picker/history/sessions', {
          params: { query: { ended_at: '2016-12-31T23:59:60Z' } },
          headers: picker.auth,
        })
      ).body,
    ).toMatchObject({ total: 0 });
    const past = new Date(Date.now() - 3600_000).toISOString();
    for (const path of ['/api/picker/history/sessions', '/api/picker/history/summary'] as const) {
      const reversed = await svc.client.call.GET(path, { params: { query: { started_at: future, ended_at: past } }, headers: picker.auth });
      expect(reversed.status).toBe(422);
      expect(reversed.body.code).toBe('INVALID_PERIOD');
      expect((await svc.client.call.GET(path, {})).status).toBe(401);
    }
    const other = await createPicker(svc, [STORE]);
    expect(
      (
        await svc.client.call.GET('/api/picker/history/sessions/{session_id}', {
          params: { path: { session_id: sessionId } },
          headers: other.auth,
        })
      ).status,
    ).toBe(404);
    expect(
      (await svc.client.call.GET('/api/picker/history/sessions/{session_id}', { params: { path: { session_id: sessionId } } })).status,
    ).toBe(401);
  });
});
