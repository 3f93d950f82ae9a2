// POST /api/orders/delivery/price-estimate: checkout's delivery rules without reserving anything.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import type { components } from '../../generated/api.test.js';
import type { Defaulted } from '../support/client.js';
import { startTestService, type TestService } from '../support/service.js';
import { ARBAT, expressAlwaysOpen, IN_ZONE, line, makeProduct, makeSlot, OUTSIDE_ZONES, reservedOf, TVERSKAYA } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

type EstimateInput = Defaulted<components['schemas']['DeliveryPriceEstimateInput'], 'is_express'>;
const estimateHeaders = (auth: Record<string, string>, storeId?: string) => ({ ...auth, ...(storeId ? { 'x-store-id': storeId } : {}) });
const estimate = (auth: Record<string, string>, body: EstimateInput, storeId?: string) =>
  svc.client.call.POST('/api/orders/delivery/price-estimate', {
    headers: estimateHeaders(auth, storeId),
    body: body as components['schemas']['DeliveryPriceEstimateInput'],
  });
/** A deliberately invalid estimate body (see ContractClient.invalid). */
const invalidEstimate = (auth: Record<string, string>, body: unknown, storeId?: string) =>
  svc.client.invalid('POST', '/api/orders/delivery/price-estimate', { headers: estimateHeaders(auth, storeId), body: body as object });

describe('estimateDeliveryPrice', () => {
  it('answers 422 to a quantity or cash amount beyond what an order line holds (numeric(12, 3)), never a 404-digit total', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '10.00', stock: '5.000' });
    const slot = await makeSlot(svc, { capacity: 1 });
    for (const quantity of ['9'.repeat(400), '1000000000', 1e10, `1.${'0'.repeat(40)}`]) {
      const r = await estimate(c.auth, { location: IN_ZONE, items: [{ ...line(p, 1), quantity }], slot_id: slot }, TVERSKAYA);
      expect(r.status, String(quantity).slice(0, 20)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
      expect(r.body.detail[0].loc).toEqual(['body', 'items', 0, 'quantity']);
    }
    // The largest a line holds is still an answer (priced, not refused by a bound).
    const largest = await estimate(
      c.auth,
      { location: IN_ZONE, items: [{ ...line(p, 1), quantity: '999999999' }], slot_id: slot },
      TVERSKAYA,
    );
    expect(largest.status).not.toBe(500);
    expect(largest.status).not.toBe(422);
  });

  it('prices standard delivery into a slot with the zone terms, reserving nothing', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1240.25', stock: '0.000' });
    const slot = await makeSlot(svc, { capacity: 1 });
    const r = await estimate(c.auth, { location: IN_ZONE, items: [line(p, 2)], slot_id: slot }, TVERSKAYA);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      store_id: TVERSKAYA,
      is_express: false,
      slot_id: slot,
      items_total: '2480.50',
      delivery_price: '199.00',
      total_price: '2679.50',
      currency: 'RUB',
      min_order_amount: '1000.00',
      meets_minimum: true,
      amount_to_minimum: '0.00',
      free_delivery_threshold: '3000.00',
      amount_to_free_delivery: '519.50',
      eta_minutes: null,
    });
    const validFor = new Date(r.body.valid_until).getTime() - Date.now();
    expect(validFor).toBeGreaterThan(4 * 60_000);
    expect(validFor).toBeLessThanOrEqual(5 * 60_000);
    expect(await reservedOf(svc, slot)).toBe(0);
  });

  it('says how far the cart is from the minimum and from free delivery', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '320.00' });
    const r = await estimate(c.auth, { location: IN_ZONE, items: [line(p, 2)] }, TVERSKAYA);
    expect(r.body).toMatchObject({
      items_total: '640.00',
      meets_minimum: false,
      amount_to_minimum: '360.00',
      amount_to_free_delivery: '2360.00',
      slot_id: null,
    });
  });

  it('prices express with its own cost and the courier service’s time', async () => {
    await expressAlwaysOpen(svc);
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '640.00' });
    const r = await estimate(c.auth, { location: IN_ZONE, items: [line(p)], is_express: true }, TVERSKAYA);
    expect(r.body).toMatchObject({
      is_express: true,
      delivery_price: '299.00',
      total_price: '939.00',
      free_delivery_threshold: null,
      amount_to_free_delivery: null,
      eta_minutes: 45,
    });
  });

  it('chooses the store by the zone rule when X-Store-Id is absent', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1000.00', storeId: ARBAT });
    // West of 37.605 the Arbat zone is cheaper than Tverskaya's at the same priority.
    const r = await estimate(c.auth, { location: { lon: 37.595, lat: 55.752 }, items: [line(p)] });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ store_id: ARBAT, delivery_price: '149.00', min_order_amount: '800.00' });
  });

  it('answers 422 with the rule that fails', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1000.00' });
    const full = await makeSlot(svc, { capacity: 0 });
    const closed = await makeSlot(svc, { closed: true });
    const cases: [EstimateInput, string, string | undefined][] = [
      [{ location: OUTSIDE_ZONES, items: [line(p)] }, 'OUTSIDE_DELIVERY_ZONE', TVERSKAYA],
      [{ location: IN_ZONE, items: [line(p)] }, 'STORE_NOT_FOUND', randomUUID()],
      [{ location: IN_ZONE, items: [line(p)], is_express: true, slot_id: full }, 'DELIVERY_MODE_INVALID', TVERSKAYA],
      [{ location: IN_ZONE, items: [line(p)], slot_id: randomUUID() }, 'SLOT_NOT_FOUND', TVERSKAYA],
      [{ location: IN_ZONE, items: [line(p)], slot_id: full }, 'SLOT_FULL', TVERSKAYA],
      [{ location: IN_ZONE, items: [line(p)], slot_id: closed }, 'SLOT_UNAVAILABLE', TVERSKAYA],
      [{ location: IN_ZONE, items: [line(p, '0.5')] }, 'INVALID_QUANTITY', TVERSKAYA],
      [{ location: IN_ZONE, items: [line(p), line(p, 2)] }, 'DUPLICATE_ITEM', TVERSKAYA],
    ];
    for (const [body, code, store] of cases) {
      const r = await estimate(c.auth, body, store);
      expect([r.status, r.body.code], code).toEqual([422, code]);
    }
    // A window of a day the store closed after the window was made: as checkout and the listing say.
    const onClosedDay = await makeSlot(svc, { startsInMinutes: 9 * 24 * 60 });
    const { slot_date } = await svc.deps.db
      .selectFrom('store_slots')
      .select(sql<string>`slot_date::text`.as('slot_date'))
      .where('id', '=', onClosedDay)
      .executeTakeFirstOrThrow();
    await svc.deps.db.insertInto('store_closures').values({ store_id: TVERSKAYA, closed_on: slot_date, reason: 'stock-taking' }).execute();
    try {
      const r = await estimate(c.auth, { location: IN_ZONE, items: [line(p)], slot_id: onClosedDay }, TVERSKAYA);
      expect([r.status, r.body.code]).toEqual([422, 'SLOT_UNAVAILABLE']);
    } finally {
      await svc.deps.db.deleteFrom('store_closures').where('store_id', '=', TVERSKAYA).where('closed_on', '=', slot_date).execute();
    }
    const unknown = await estimate(
      c.auth,
      { location: IN_ZONE, items: [line(p), { product_id: randomUUID(), unit_id: p.unitId, quantity: 1 }] },
      TVERSKAYA,
    );
    expect([unknown.status, unknown.body.code]).toEqual([422, 'UNKNOWN_PRODUCT']);
    expect(unknown.body.lines).toEqual([expect.objectContaining({ reason_code: 'UNKNOWN_PRODUCT', requested_quantity: '1.000' })]);
  });

  it('answers 422 EXPRESS_UNAVAILABLE when the store takes no express orders now', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1000.00' });
    await expressAlwaysOpen(svc, TVERSKAYA, false);
    try {
      const r = await estimate(c.auth, { location: IN_ZONE, items: [line(p)], is_express: true }, TVERSKAYA);
      expect([r.status, r.body.code]).toEqual([422, 'EXPRESS_UNAVAILABLE']);
    } finally {
      await expressAlwaysOpen(svc);
    }
  });

  it('answers 401 without a customer token, 400 for malformed JSON, 422 for a contract violation', async () => {
    const picker = await signInPicker(svc);
    const body = { location: IN_ZONE, items: [{ product_id: randomUUID(), unit_id: randomUUID(), quantity: 1 }] };
    expect((await estimate({}, body)).status).toBe(401);
    expect((await estimate(picker.auth, body)).status).toBe(401);
    const c = await signInCustomer(svc);
    expect((await svc.client.invalid('POST', '/api/orders/delivery/price-estimate', { headers: c.auth, body: '[' })).status).toBe(400);
    const r = await invalidEstimate(c.auth, { location: { lon: 37.6, lat: 95 }, items: [] });
    expect([r.status, r.body.code]).toEqual([422, 'VALIDATION_ERROR']);
  });
});
