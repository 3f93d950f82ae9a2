// Item commands and additional items through the contract client: each command's success, its
// declared errors and the rules common to picker commands (401, 404, Idempotency-Key,
// X-Expected-Version, replays), on real PostgreSQL.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ean13 } from '../../domain/codes/barcode.js';
import { scaleLabel } from '../../domain/codes/scale-label.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { command, createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import {
  createPicker,
  invalidItemCommand,
  itemCommand,
  startPicking,
  type ItemAction,
  type ItemBody,
  type TestPicker,
} from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import type { components } from '../../generated/api.test.js';

type AdditionalItemInput = components['schemas']['AdditionalItemInput'];

let svc: TestService;
let pieces: StockedProduct[];
let weights: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;
/** A valid EAN-13 that no demo product carries (demo barcodes start 460-469). */
const UNKNOWN_BARCODE = ean13('400000000001');

beforeAll(async () => {
  // A small added-items limit, to reach it in a test.
  svc = await startTestService({ env: { PICKING_MAX_ADDED_ITEMS: '2' } });
  pieces = await stockedProducts(svc, { weight: false, count: 5 });
  weights = await stockedProducts(svc, { weight: true, count: 2 });
});
afterAll(() => svc?.close());

interface Fixture {
  picker: TestPicker;
  orderId: string;
  session: any;
  /** Items by role: a piece line of 2, a piece line of 1, a weight line of 1.000 kg. */
  two: number;
  one: number;
  kg: number;
}

/** A started session of a fresh picker on an order of three lines. */
async function fixture(): Promise<Fixture> {
  const picker = await createPicker(svc, [STORE]);
  const order = await createConfirmedOrder(svc, {
    lines: [
      { inventoryId: pieces[0]!.inventoryId, quantity: '2' },
      { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
      { inventoryId: weights[0]!.inventoryId, quantity: '1.000' },
    ],
  });
  const session = await startPicking(svc, picker, order.orderId);
  const idOf = (productId: string) => session.items.find((i: any) => i.product_id === productId)!.item_id;
  return {
    picker,
    orderId: order.orderId,
    session,
    two: idOf(pieces[0]!.productId),
    one: idOf(pieces[1]!.productId),
    kg: idOf(weights[0]!.productId),
  };
}

const send = <A extends ItemAction>(f: Fixture, itemId: number, action: A, body: ItemBody<A>, headers: Record<string, string> = {}) =>
  itemCommand(svc, f.picker, f.orderId, itemId, action, body, headers);
/** A command with a deliberately invalid body (see ContractClient.invalid). */
const sendInvalid = (f: Fixture, itemId: number, action: string, body: unknown, headers: Record<string, string> = {}) =>
  invalidItemCommand(svc, f.picker, f.orderId, itemId, action, body, headers);
/** The item as the answer shows it: the delta's `item`, or one of a full answer's `session.items`. */
const itemOf = (r: { body: any }, itemId: number) =>
  r.body.item?.item_id === itemId ? r.body.item : r.body.session.items?.find((i: any) => i.item_id === itemId);
const version = async (f: Fixture) =>
  (
    await svc.client.call.GET('/api/picker/orders/{order_id}/session', {
      params: { path: { order_id: f.orderId } },
      headers: f.picker.auth,
    })
  ).body.version as number;

describe('scanPickingItem', () => {
  it("counts pieces of the item's product, then answers already_picked", async () => {
    const f = await fixture();
    const first = await send(f, f.two, 'scan', { barcode: pieces[0]!.barcode! });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'ok', applied: true, label_weight_kg: null, session: { version: 2 } });
    expect(first.body.item).toMatchObject({
      state: 'awaiting_quantity',
      actual_quantity: '1.000',
      pick_source: 'scan',
      last_scanned_barcode: pieces[0]!.barcode,
    });
    expect(first.body.scanned_product).toMatchObject({ product_id: pieces[0]!.productId, kind: 'piece', barcode: pieces[0]!.barcode });
    const second = await send(f, f.two, 'scan', { barcode: pieces[0]!.barcode! });
    expect(second.body.item).toMatchObject({ state: 'picked', actual_quantity: '2.000', is_resolved: true });
    const third = await send(f, f.two, 'scan', { barcode: pieces[0]!.barcode! });
    expect(third.body).toMatchObject({ status: 'already_picked', applied: false, session: { version: 3 } });
  });

  it('weighs a weight item by its scale label', async () => {
    const f = await fixture();
    const inside = await send(f, f.kg, 'scan', { barcode: scaleLabel(weights[0]!.plu!, 1020) });
    expect(inside.body).toMatchObject({ status: 'ok', applied: true, label_weight_kg: '1.020' });
    expect(inside.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.020', pick_source: 'scale_label' });
    const outside = await send(f, f.kg, 'scan', { barcode: scaleLabel(weights[0]!.plu!, 1260) });
    expect(outside.body).toMatchObject({ status: 'clarification_required', applied: true, label_weight_kg: '1.260' });
    expect(outside.body.item).toMatchObject({ state: 'clarified', clarification_kind: 'weight_mismatch', confirmed_quantity: '1.260' });
    expect(outside.body.message).toContain('1.260');
  });

  it('answers mismatch for another product and not_found for an unknown barcode, changing nothing', async () => {
    const f = await fixture();
    const other = await send(f, f.two, 'scan', { barcode: pieces[1]!.barcode! });
    expect(other.body).toMatchObject({
      status: 'mismatch',
      applied: false,
      session: { version: 1 },
      scanned_product: { product_id: pieces[1]!.productId },
    });
    const label = await send(f, f.two, 'scan', { barcode: scaleLabel(weights[0]!.plu!, 500) });
    expect(label.body).toMatchObject({
      status: 'mismatch',
      scanned_product: { product_id: weights[0]!.productId, kind: 'weight' },
      label_weight_kg: '0.500',
    });
    const unknown = await send(f, f.two, 'scan', { barcode: UNKNOWN_BARCODE });
    expect(unknown.body).toMatchObject({ status: 'not_found', applied: false, scanned_product: null });
    const badCheck = await send(f, f.two, 'scan', {
      barcode: pieces[0]!.barcode!.slice(0, 12) + String((Number(pieces[0]!.barcode!.at(-1)) + 1) % 10),
    });
    expect(badCheck.body.status).toBe('not_found');
    const log = await svc.deps.db.selectFrom('picking_scans').select(['outcome']).where('item_id', '=', f.two).orderBy('id').execute();
    expect(log.map((l) => l.outcome)).toEqual(['mismatch', 'mismatch', 'not_found', 'not_found']);
  });

  it('answers 409 ITEM_STATE_CONFLICT on a missing item, 404 for an item of another session, 422 without a barcode, 401', async () => {
    const f = await fixture();
    await send(f, f.two, 'missing', { action: 'call' });
    const conflict = await send(f, f.two, 'scan', { barcode: pieces[0]!.barcode! });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'ITEM_STATE_CONFLICT', session: { version: 2 } });
    const g = await fixture();
    expect((await send(f, g.two, 'scan', { barcode: pieces[0]!.barcode! })).status).toBe(404);
    const invalid = await sendInvalid(f, f.one, 'scan', {});
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe('VALIDATION_ERROR');
    expect(
      (
        await svc.client.call.POST('/api/picker/orders/{order_id}/items/{item_id}/scan', {
          params: { path: { order_id: f.orderId, item_id: f.one } },
          headers: { 'idempotency-key': randomUUID() },
          body: { barcode: '1' },
        })
      ).status,
    ).toBe(401);
  });
});

describe('replacePickingItem', () => {
  it('records the substitute of a missing item the customer agreed to replace, and counts its first piece', async () => {
    const f = await fixture();
    const missing = await send(f, f.two, 'missing', { action: 'call' });
    expect(itemOf(missing, f.two).replacement_options.length).toBeGreaterThan(0);
    const r = await send(f, f.two, 'replacement', { barcode: pieces[2]!.barcode! });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ok', applied: true, scanned_product: { product_id: pieces[2]!.productId } });
    expect(r.body.item).toMatchObject({
      state: 'awaiting_quantity',
      actual_quantity: '1.000',
      missing_action: null,
      replacement: {
        product_id: pieces[2]!.productId,
        inventory_id: pieces[2]!.inventoryId,
        unit_price: pieces[2]!.unitPrice,
        is_weight_based: false,
      },
      replacement_options: [],
    });
    // Its barcode now matches the item; the ordered product's does not.
    expect((await send(f, f.two, 'scan', { barcode: pieces[0]!.barcode! })).body.status).toBe('mismatch');
    const done = await send(f, f.two, 'scan', { barcode: pieces[2]!.barcode! });
    expect(done.body.item).toMatchObject({ state: 'picked', actual_quantity: '2.000' });
    const price = Math.round(Number(pieces[2]!.unitPrice) * 200) / 100;
    expect(done.body.item.current_line_total).toBe(price.toFixed(2));
  });

  it('answers same_product, kind_mismatch and not_found without a change', async () => {
    const f = await fixture();
    await send(f, f.two, 'missing', { action: 'call' });
    expect((await send(f, f.two, 'replacement', { barcode: pieces[0]!.barcode! })).body).toMatchObject({
      status: 'same_product',
      applied: false,
    });
    expect((await send(f, f.two, 'replacement', { barcode: scaleLabel(weights[1]!.plu!, 700) })).body).toMatchObject({
      status: 'kind_mismatch',
      applied: false,
    });
    expect((await send(f, f.two, 'replacement', { barcode: UNKNOWN_BARCODE })).body).toMatchObject({ status: 'not_found', applied: false });
    expect(await version(f)).toBe(2);
  });

  it('answers 409 ITEM_STATE_CONFLICT unless the item is missing with action call', async () => {
    const f = await fixture();
    expect((await send(f, f.two, 'replacement', { barcode: pieces[2]!.barcode! })).body.code).toBe('ITEM_STATE_CONFLICT');
    await send(f, f.two, 'missing', { action: 'remove' });
    expect((await send(f, f.two, 'replacement', { barcode: pieces[2]!.barcode! })).body.code).toBe('ITEM_STATE_CONFLICT');
  });
});

describe('setPickingItemPieceQuantity and manualPickPickingItem', () => {
  it('picks with the ordered count, and records fewer as a quantity mismatch', async () => {
    const f = await fixture();
    const partial = await send(f, f.two, 'piece-quantity', { quantity: 1 });
    expect(partial.body).toMatchObject({ status: 'clarification_required', applied: true });
    expect(partial.body.item).toMatchObject({
      state: 'clarified',
      clarification_kind: 'quantity_mismatch',
      actual_quantity: '1.000',
      confirmed_quantity: '1.000',
      pick_source: 'manual',
    });
    const full = await send(f, f.two, 'piece-quantity', { quantity: 2 });
    expect(full.body.item).toMatchObject({ state: 'picked', actual_quantity: '2.000', confirmed_quantity: null });
  });

  it('refuses a weight item (409), a missing item (409), and quantities above ordered, zero or fractional (422)', async () => {
    const f = await fixture();
    expect((await send(f, f.kg, 'piece-quantity', { quantity: 1 })).body.code).toBe('ITEM_IS_WEIGHT_BASED');
    const above = await send(f, f.two, 'piece-quantity', { quantity: 3 });
    expect(above.status).toBe(422);
    expect(above.body).toMatchObject({ code: 'QUANTITY_ABOVE_ORDERED', session: { version: 1 } });
    for (const quantity of [0, 1.5]) {
      const r = await send(f, f.two, 'piece-quantity', { quantity });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    await send(f, f.one, 'missing', { action: 'remove' });
    expect((await send(f, f.one, 'piece-quantity', { quantity: 1 })).body.code).toBe('ITEM_STATE_CONFLICT');
  });

  it('manual-pick saves a different count as a mismatch, or picks it with confirm', async () => {
    const f = await fixture();
    const more = await send(f, f.one, 'manual-pick', { quantity: 3, confirm: false });
    expect(more.body).toMatchObject({ status: 'clarification_required' });
    expect(more.body.item).toMatchObject({
      state: 'clarified',
      clarification_kind: 'quantity_mismatch',
      actual_quantity: '3.000',
      pick_source: 'manual',
    });
    const confirmed = await send(f, f.two, 'manual-pick', { quantity: 1, confirm: true });
    expect(confirmed.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.000', confirmed_quantity: '1.000' });
    expect((await send(f, f.kg, 'manual-pick', { quantity: 1, confirm: false })).body.code).toBe('ITEM_IS_WEIGHT_BASED');
    expect((await send(f, f.one, 'manual-pick', { quantity: 10000, confirm: false })).body.code).toBe('VALIDATION_ERROR');
    await send(f, f.one, 'missing', { action: 'call' });
    expect((await send(f, f.one, 'manual-pick', { quantity: 1, confirm: false })).body.code).toBe('ITEM_STATE_CONFLICT');
  });
});

describe('weighPickingItem', () => {
  it('picks inside the tolerance and asks for confirmation outside it', async () => {
    const f = await fixture();
    const inside = await send(f, f.kg, 'weight', { weight_kg: '0.950' });
    expect(inside.body).toMatchObject({ status: 'ok', applied: true, scanned_product: null, label_weight_kg: null });
    expect(inside.body.item).toMatchObject({ state: 'picked', actual_quantity: '0.950', pick_source: 'weight' });
    const corrected = await send(f, f.kg, 'weight', { weight_kg: 1.05 });
    expect(corrected.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.050' });
    const outside = await send(f, f.kg, 'weight', { weight_kg: '1.260' });
    expect(outside.body).toMatchObject({ status: 'clarification_required' });
    expect(outside.body.item).toMatchObject({ clarification_kind: 'weight_mismatch', confirmed_quantity: '1.260' });
  });

  it("changes nothing when the barcode sent with the weight is another product's", async () => {
    const f = await fixture();
    const r = await send(f, f.kg, 'weight', { weight_kg: '1.000', barcode: scaleLabel(weights[1]!.plu!, 1000) });
    expect(r.body).toMatchObject({ status: 'mismatch', applied: false, scanned_product: { product_id: weights[1]!.productId } });
    const own = await send(f, f.kg, 'weight', { weight_kg: '1.000', barcode: scaleLabel(weights[0]!.plu!, 990) });
    expect(own.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.000', pick_source: 'weight' });
  });

  it('refuses a piece item and a missing item (409) and bad weights (422)', async () => {
    const f = await fixture();
    expect((await send(f, f.two, 'weight', { weight_kg: '1.000' })).body.code).toBe('ITEM_NOT_WEIGHT_BASED');
    const precise = await send(f, f.kg, 'weight', { weight_kg: 1.2345 });
    expect(precise.status).toBe(422);
    expect(precise.body.code).toBe('WEIGHT_INVALID');
    for (const weight_kg of ['0', '-1', '1.2345', 0, -0.5]) {
      const r = await send(f, f.kg, 'weight', { weight_kg });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    await send(f, f.kg, 'missing', { action: 'call' });
    expect((await send(f, f.kg, 'weight', { weight_kg: '1.000' })).body.code).toBe('ITEM_STATE_CONFLICT');
  });
});

describe('markPickingItemMissing, resolvePickingItemClarification, reopenPickingItem', () => {
  it('marks missing with call (offering replacements), then remove, then resolves it as removed', async () => {
    const f = await fixture();
    const call = await send(f, f.two, 'missing', { action: 'call' });
    expect(call.status).toBe(200);
    const item = itemOf(call, f.two);
    expect(item).toMatchObject({ state: 'missing', missing_action: 'call', actual_quantity: null, current_line_total: '0.00' });
    expect(item.replacement_options.length).toBeLessThanOrEqual(5);
    expect(item.replacement_options.every((o: any) => o.id !== pieces[0]!.inventoryId)).toBe(true);
    expect((await send(f, f.two, 'clarification/resolve', { resolution: 'remove' })).body.code).toBe('ITEM_STATE_CONFLICT');
    const again = await send(f, f.two, 'missing', { action: 'call' });
    expect(again.body).toMatchObject({ status: 'ok', applied: false });
    await send(f, f.two, 'missing', { action: 'remove' });
    const removed = await send(f, f.two, 'clarification/resolve', { resolution: 'remove' });
    expect(removed.body.item).toMatchObject({ state: 'clarified', clarification_kind: 'removed', is_resolved: true });
  });

  it('reopens a removed item found in store, and a picked item to recheck', async () => {
    const f = await fixture();
    await send(f, f.one, 'missing', { action: 'remove' });
    await send(f, f.one, 'clarification/resolve', { resolution: 'remove' });
    const found = await send(f, f.one, 'clarification/reopen', { reason: 'found_in_store' });
    expect(found.body.item).toMatchObject({ state: 'pending', missing_action: null, actual_quantity: null });
    await send(f, f.two, 'piece-quantity', { quantity: 2 });
    expect((await send(f, f.two, 'clarification/reopen', { reason: 'found_in_store' })).body.code).toBe('ITEM_STATE_CONFLICT');
    const recheck = await send(f, f.two, 'clarification/reopen', { reason: 'recheck' });
    expect(recheck.body.item).toMatchObject({ state: 'pending', actual_quantity: null, confirmed_quantity: null });
    const pending = await send(f, f.two, 'clarification/reopen', { reason: 'recheck' });
    expect(pending.status).toBe(409);
    expect(pending.body.code).toBe('ITEM_STATE_CONFLICT');
    expect((await sendInvalid(f, f.two, 'clarification/reopen', { reason: 'lost' })).body.code).toBe('VALIDATION_ERROR');
  });

  it('turns a ready session back to active when an item is marked missing', async () => {
    const f = await fixture();
    await send(f, f.two, 'piece-quantity', { quantity: 2 });
    await send(f, f.one, 'piece-quantity', { quantity: 1 });
    const ready = await send(f, f.kg, 'weight', { weight_kg: '1.000' });
    expect(ready.body.session).toMatchObject({ session_status: 'ready_to_finish', current_item_index: 3 });
    const back = await send(f, f.one, 'missing', { action: 'call' });
    expect(back.body.session.session_status).toBe('active');
  });
});

describe('confirmPickingItemClarification', () => {
  it('confirms a quantity or weight discrepancy with the recorded value', async () => {
    const f = await fixture();
    await send(f, f.two, 'piece-quantity', { quantity: 1 });
    expect((await send(f, f.two, 'clarification/confirm', { quantity: 2 })).body.code).toBe('CONFIRMED_QUANTITY_MISMATCH');
    const missingValue = await send(f, f.two, 'clarification/confirm', { resolution: 'quantity_mismatch' });
    expect(missingValue.status).toBe(422);
    expect(missingValue.body.code).toBe('CONFIRMED_QUANTITY_REQUIRED');
    expect((await send(f, f.two, 'clarification/confirm', { resolution: 'weight_mismatch', quantity: 1 })).body.code).toBe(
      'ITEM_STATE_CONFLICT',
    );
    const ok = await send(f, f.two, 'clarification/confirm', { resolution: 'quantity_mismatch', quantity: 1 });
    expect(ok.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.000', confirmed_quantity: '1.000' });

    await send(f, f.kg, 'weight', { weight_kg: '1.260' });
    const weighed = await send(f, f.kg, 'clarification/confirm', { quantity_kg: 1.26 });
    expect(weighed.body.item).toMatchObject({ state: 'picked', actual_quantity: '1.260' });
    expect((await send(f, f.kg, 'clarification/confirm', { quantity_kg: '1.260' })).body.code).toBe('ITEM_STATE_CONFLICT');
  });
});

describe('addPickingItem', () => {
  const add = (f: Fixture, body: AdditionalItemInput, headers: Record<string, string> = {}) =>
    svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
      params: { path: { order_id: f.orderId } },
      headers: command(f.picker.auth, headers),
      body,
    });

  it('adds a product of the store as a pending item, up to max_added_items', async () => {
    const f = await fixture();
    const r = await add(f, { inventory_id: pieces[3]!.inventoryId, quantity: '2' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ok', applied: true, session: { added_items_count: 1, max_added_items: 2, version: 2 } });
    expect(r.body.item).toMatchObject({
      is_added: true,
      state: 'pending',
      ordered_quantity: '2.000',
      ordered_line_total: '0.00',
      unit_price: pieces[3]!.unitPrice,
      product_id: pieces[3]!.productId,
    });
    const weighed = await add(f, { inventory_id: weights[1]!.inventoryId, quantity: 0.455 });
    expect(weighed.body.item).toMatchObject({
      is_weight_based: true,
      ordered_quantity: '0.455',
      unit: 'kg',
      tolerance: { min_quantity: '0.410', max_quantity: '0.501' },
    });
    const limit = await add(f, { inventory_id: pieces[4]!.inventoryId, quantity: '1' });
    expect(limit.status).toBe(409);
    expect(limit.body).toMatchObject({ code: 'ADDED_ITEMS_LIMIT', session: { added_items_count: 2 } });
  });

  it("refuses a product already in the session (409), another store's inventory and bad quantities (422)", async () => {
    const f = await fixture();
    expect((await add(f, { inventory_id: pieces[0]!.inventoryId, quantity: '1' })).body.code).toBe('PRODUCT_ALREADY_IN_SESSION');
    const elsewhere = await stockedProducts(svc, { storeId: DEMO_STORES[2]!.id, weight: false, count: 1 });
    const inventory = await add(f, { inventory_id: elsewhere[0]!.inventoryId, quantity: '1' });
    expect(inventory.status).toBe(422);
    expect(inventory.body).toMatchObject({ code: 'INVENTORY_NOT_FOUND', session: { version: 1 } });
    expect((await add(f, { inventory_id: pieces[3]!.inventoryId, quantity: '1.5' })).body.code).toBe('QUANTITY_NOT_INTEGER');
    expect((await add(f, { inventory_id: weights[1]!.inventoryId, quantity: 0.0005 })).body.code).toBe('QUANTITY_INVALID');
    expect((await add(f, { inventory_id: weights[1]!.inventoryId, quantity: '0' })).body.code).toBe('VALIDATION_ERROR');
    // Beyond what an item stores: a clear 422, not a 500.
    for (const quantity of ['1000', '100000000', 1000.5]) {
      const big = await add(f, { inventory_id: weights[1]!.inventoryId, quantity });
      expect([big.status, big.body.code]).toEqual([422, 'QUANTITY_INVALID']);
    }
    expect((await add(f, { inventory_id: weights[1]!.inventoryId, quantity: '999.999' })).status).toBe(200);
  });
});

describe('rules common to picker commands', () => {
  it('refuses a stale X-Expected-Version with the current session', async () => {
    const f = await fixture();
    await send(f, f.two, 'piece-quantity', { quantity: 2 });
    const stale = await send(f, f.one, 'piece-quantity', { quantity: 1 }, { 'x-expected-version': '1' });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: 'VERSION_CONFLICT', session: { version: 2 } });
    const fresh = await send(f, f.one, 'piece-quantity', { quantity: 1 }, { 'x-expected-version': '2' });
    expect(fresh.body.session.version).toBe(3);
  });

  it('lets exactly one of two commands racing on one version through', async () => {
    for (let round = 0; round < 5; round++) {
      const f = await fixture();
      const [a, b] = await Promise.all([
        send(f, f.two, 'piece-quantity', { quantity: 2 }, { 'x-expected-version': '1' }),
        send(f, f.one, 'missing', { action: 'call' }, { 'x-expected-version': '1' }),
      ]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.body).toMatchObject({ code: 'VERSION_CONFLICT', session: { version: 2 } });
      expect(await version(f)).toBe(2);
    }
  });

  it('replays a key with its answer, whatever happened since, and refuses it with another body', async () => {
    const f = await fixture();
    const key = randomUUID();
    const first = await send(f, f.two, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    await send(f, f.two, 'piece-quantity', { quantity: 2 });
    const replay = await send(f, f.two, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(await version(f)).toBe(3);
    const other = await send(f, f.two, 'piece-quantity', { quantity: 2 }, { 'idempotency-key': key });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('IDEMPOTENCY_CONFLICT');
    // A refused command replays its refusal too.
    const refusedKey = randomUUID();
    const refused = await send(f, f.kg, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': refusedKey });
    expect((await send(f, f.kg, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': refusedKey })).body).toMatchObject({
      code: refused.body.code,
      detail: refused.body.detail,
    });
  });

  /** A record of `key` for the piece-quantity command, answered long ago and expired since. */
  const expiredRecord = (f: Fixture, key: string) =>
    svc.deps.db
      .insertInto('idempotency_keys')
      .values({
        principal: `picker:${f.picker.pickerId}`,
        operation_id: 'setPickingItemPieceQuantity',
        key,
        fingerprint: 'an earlier action',
        state: 'completed',
        response_status: 200,
        response_body: JSON.stringify({ earlier: true }),
        expires_at: new Date(Date.now() - 1000),
      })
      .execute();

  it('takes over an expired record of its key: the command applies and its answer replaces the record', async () => {
    const f = await fixture();
    const key = randomUUID();
    await expiredRecord(f, key);
    const first = await send(f, f.two, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ applied: true, session: { version: 2 } });
    const replay = await send(f, f.two, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    expect(replay.body).toEqual(first.body);
    expect(await version(f)).toBe(2);
    // A refusal under a taken-over key is its answer too.
    const refusedKey = randomUUID();
    await expiredRecord(f, refusedKey);
    const refused = await send(f, f.kg, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': refusedKey });
    expect([refused.status, refused.body.code]).toEqual([409, 'ITEM_IS_WEIGHT_BASED']);
    const { request_id: _, ...refusal } = refused.body;
    expect((await send(f, f.kg, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': refusedKey })).body).toMatchObject(refusal);
  });

  it('applies a command sent many times at once exactly once', async () => {
    const f = await fixture();
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => send(f, f.two, 'scan', { barcode: pieces[0]!.barcode! }, { 'idempotency-key': key })),
    );
    for (const a of answers) {
      if (a.status === 409) {
        expect(a.body).toMatchObject({ code: 'IDEMPOTENCY_IN_PROGRESS', retry_after_seconds: 1 });
        expect(a.headers.get('retry-after')).toBe('1');
      } else expect(a.status).toBe(200);
    }
    expect(answers.some((a) => a.status === 200)).toBe(true);
    expect(await version(f)).toBe(2);
    expect(itemOf(await send(f, f.two, 'scan', { barcode: pieces[1]!.barcode! }), f.two).actual_quantity).toBe('1.000');
  });

  it("needs a UUID key and a known order; another picker's session is busy", async () => {
    const f = await fixture();
    const keyless = await svc.client.call.POST('/api/picker/orders/{order_id}/items/{item_id}/missing', {
      params: { path: { order_id: f.orderId, item_id: f.two } },
      headers: f.picker.auth,
      body: { action: 'call' },
    });
    expect(keyless.body.code).toBe('IDEMPOTENCY_KEY_REQUIRED');
    expect((await send(f, f.two, 'missing', { action: 'call' }, { 'idempotency-key': '12345' })).body.code).toBe('IDEMPOTENCY_KEY_INVALID');
    expect((await itemCommand(svc, f.picker, randomUUID(), f.two, 'missing', { action: 'call' })).status).toBe(404);
    const other = await createPicker(svc, [STORE]);
    const busy = await itemCommand(svc, other, f.orderId, f.two, 'missing', { action: 'call' });
    expect(busy.status).toBe(409);
    expect(busy.body).toMatchObject({ code: 'ORDER_BUSY', session: null });
    const stranger = await createPicker(svc, [DEMO_STORES[2]!.id]);
    expect((await itemCommand(svc, stranger, f.orderId, f.two, 'missing', { action: 'call' })).status).toBe(404);
  });
});

describe('answer representation: delta by default, the whole session on request', () => {
  const readSession = async (f: Fixture) =>
    (
      await svc.client.call.GET('/api/picker/orders/{order_id}/session', {
        params: { path: { order_id: f.orderId } },
        headers: f.picker.auth,
      })
    ).body;
  const FULL = { prefer: 'return=representation' };

  /** The client's algorithm of PickingActionOutput: apply a delta to the local copy, or take a full answer. */
  function apply(local: any, body: any): { local: any; stale: boolean } {
    if (body.representation === 'full') return { local: body.session, stale: false };
    const { session, item } = body;
    if (session.version === local.version) return { local: { ...local, ...session, items: local.items }, stale: false };
    if (session.version !== local.version + 1) return { local, stale: true };
    const items = [...local.items];
    const at = item ? items.findIndex((i: any) => i.item_id === item.item_id) : -1;
    if (item && at >= 0) items[at] = item;
    else if (item) items.push(item);
    return { local: { ...session, items }, stale: false };
  }

  it('answers the header and the changed item; applied in order, the deltas rebuild the session exactly', async () => {
    const f = await fixture();
    let local = f.session;
    const steps = [
      () => send(f, f.two, 'piece-quantity', { quantity: 1 }),
      () => send(f, f.kg, 'weight', { weight_kg: '1.500' }),
      () => send(f, f.one, 'missing', { action: 'call' }),
      () =>
        svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
          params: { path: { order_id: f.orderId } },
          headers: command(f.picker.auth),
          body: { inventory_id: pieces[3]!.inventoryId, quantity: '1' },
        }),
      () => send(f, f.kg, 'clarification/confirm', { quantity_kg: '1.500' }),
    ];
    for (const step of steps) {
      const r = await step();
      expect(r.status).toBe(200);
      expect(r.body.representation).toBe('delta');
      expect(r.body.session).not.toHaveProperty('items');
      expect(r.body.item).not.toBeNull();
      const next = apply(local, r.body);
      expect(next.stale).toBe(false);
      local = next.local;
    }
    // The missing/call item's replacement options travel with it in the delta.
    expect(local.items.find((i: any) => i.item_id === f.one).replacement_options.length).toBeGreaterThan(0);
    expect(local).toEqual(await readSession(f));
  });

  it('answers the whole session with Prefer: return=representation (the earlier shape)', async () => {
    const f = await fixture();
    const r = await send(f, f.two, 'piece-quantity', { quantity: 2 }, FULL);
    expect(r.status).toBe(200);
    expect(r.body.representation).toBe('full');
    expect(r.body.session.items).toHaveLength(3);
    expect(r.body.item).toEqual(r.body.session.items.find((i: any) => i.item_id === f.two));
    expect(r.body.session).toEqual(await readSession(f));
    // Among other preferences, and finish / cancel too.
    const cancel = await svc.client.call.POST('/api/picker/orders/{order_id}/cancel', {
      params: { path: { order_id: f.orderId } },
      headers: command(f.picker.auth, { prefer: 'respond-async, return=representation; foo=bar' }),
      body: {},
    });
    expect([cancel.status, cancel.body.representation, cancel.body.session.items?.length]).toEqual([200, 'full', 3]);
  });

  it('delta of finish and cancel: the header, no item', async () => {
    const f = await fixture();
    const cancel = await svc.client.call.POST('/api/picker/orders/{order_id}/cancel', {
      params: { path: { order_id: f.orderId } },
      headers: command(f.picker.auth),
      body: {},
    });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ representation: 'delta', item: null, session: { session_status: 'cancelled', version: 2 } });
    expect(cancel.body.session).not.toHaveProperty('items');
  });

  it('a stale copy (X-Expected-Version behind) gets 409 VERSION_CONFLICT with the whole session, whatever was asked', async () => {
    const f = await fixture();
    await send(f, f.two, 'piece-quantity', { quantity: 2 });
    const stale = await send(f, f.one, 'piece-quantity', { quantity: 1 }, { 'x-expected-version': '1' });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('VERSION_CONFLICT');
    expect(stale.body.session).toEqual(await readSession(f));
    expect(stale.body.session.items).toHaveLength(3);
  });

  it('a version jump (another device changed the session in between) tells the client to re-read', async () => {
    const f = await fixture();
    const local = f.session;
    await send(f, f.two, 'piece-quantity', { quantity: 2 }); // the other device
    const r = await send(f, f.one, 'piece-quantity', { quantity: 1 });
    expect(r.body.session.version).toBe(local.version + 2);
    expect(apply(local, r.body).stale).toBe(true);
  });

  it('a replay answers the same bytes, in the representation of the first answer', async () => {
    const f = await fixture();
    const key = randomUUID();
    const first = await send(f, f.two, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    await send(f, f.one, 'piece-quantity', { quantity: 1 });
    const again = await send(f, f.two, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key, ...FULL });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.body.representation).toBe('delta');
    const fullKey = randomUUID();
    const full = await send(f, f.kg, 'weight', { weight_kg: '1.000' }, { 'idempotency-key': fullKey, ...FULL });
    const fullAgain = await send(f, f.kg, 'weight', { weight_kg: '1.000' }, { 'idempotency-key': fullKey });
    expect(full.body.representation).toBe('full');
    expect(fullAgain.text).toBe(full.text);
  });
});
