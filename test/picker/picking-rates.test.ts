// The picking rates of the picker's history summary (getPickerHistorySummary `rates`): walks of
// single sessions and of batches, their picking time, items and orders per hour, and the period
// filters applied to walks. Real PostgreSQL, through the contract client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, sessionCommand, type TestPicker } from '../support/picking.js';
import { at, batchOf, pickOrder, placeSession } from '../support/picking-walks.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let products: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;
/** Whole seconds, some hours back: every placed time is a whole number of seconds after it. */
const t0 = new Date(Math.floor(Date.now() / 1000) * 1000 - 5 * 3600_000);

beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false', PICKING_EXPIRY_SWEEP_SECONDS: '0' } });
  products = await stockedProducts(svc, { weight: false, count: 2 });
});
afterAll(() => svc?.close());

const summary = async (picker: TestPicker, query: { started_at?: string; ended_at?: string } = {}) => {
  const r = await svc.client.call.GET('/api/picker/history/summary', { params: { query }, headers: picker.auth });
  expect(r.status).toBe(200);
  return r.body;
};
const none = { walks_count: 0, orders_count: 0, items_count: 0, picking_seconds: 0, items_per_hour: null, orders_per_hour: null };

describe('picking rates in the history summary', () => {
  let picker: TestPicker;

  beforeAll(async () => {
    picker = await createPicker(svc, [STORE]);
    // Two single walks: 600 s with 1 of 2 items picked, 900 s with both.
    const a = await pickOrder(svc, picker, STORE, products, { removed: 1 });
    const b = await pickOrder(svc, picker, STORE, products);
    await placeSession(svc, a.sessionId, t0, at(t0, 600));
    await placeSession(svc, b.sessionId, at(t0, 3600), at(t0, 4500));
    // One batch of two orders, created at +7200 and ended by its last closure at +9000: 1800 s.
    const c = await pickOrder(svc, picker, STORE, products);
    const d = await pickOrder(svc, picker, STORE, products);
    await placeSession(svc, c.sessionId, at(t0, 7205), at(t0, 8200));
    await placeSession(svc, d.sessionId, at(t0, 7210), at(t0, 9000));
    await batchOf(svc, picker, STORE, at(t0, 7200), [c.sessionId, d.sessionId]);
  });

  it('counts walks, orders, picked items and picking time per mode, and rates them per hour', async () => {
    const body = await summary(picker);
    expect(body.rates).toEqual({
      single: { walks_count: 2, orders_count: 2, items_count: 3, picking_seconds: 1500, items_per_hour: '7.20', orders_per_hour: '4.80' },
      batch: { walks_count: 1, orders_count: 2, items_count: 4, picking_seconds: 1800, items_per_hour: '8.00', orders_per_hour: '4.00' },
      // 7 items and 4 orders in 3300 s: 7.6363... and 4.3636... per hour
      all: { walks_count: 3, orders_count: 4, items_count: 7, picking_seconds: 3300, items_per_hour: '7.64', orders_per_hour: '4.36' },
    });
    // The batch's time counts once, not per session as the sessions' durations do (600 + 900 + 995 + 1790).
    expect(body).toMatchObject({ completed_sessions_count: 4, picked_items_count: 7, total_duration_seconds: 4285 });
  });

  it('keeps the walks that started at or after started_at and ended at or before ended_at', async () => {
    const iso = (seconds: number) => at(t0, seconds).toISOString();
    const afterFirst = await summary(picker, { started_at: iso(1800) });
    expect(afterFirst.rates).toMatchObject({
      single: { walks_count: 1, orders_count: 1, items_count: 2, picking_seconds: 900, items_per_hour: '8.00', orders_per_hour: '4.00' },
      batch: { walks_count: 1, picking_seconds: 1800 },
    });
    // The batch ends with its last session, after ended_at, though its first one closed before.
    const beforeBatchEnd = await summary(picker, { ended_at: iso(8500) });
    expect(beforeBatchEnd.rates).toMatchObject({ single: { walks_count: 2, picking_seconds: 1500 }, batch: none });
    expect(beforeBatchEnd.completed_sessions_count).toBe(3);
    // The batch starts when it was created, before started_at, though its sessions started after.
    const afterBatchCreated = await summary(picker, { started_at: iso(7201) });
    expect(afterBatchCreated.rates).toEqual({ single: none, batch: none, all: none });
    expect(afterBatchCreated.completed_sessions_count).toBe(2);
    const exactly = await summary(picker, { started_at: iso(7200), ended_at: iso(9000) });
    expect(exactly.rates).toMatchObject({ single: none, batch: { walks_count: 1, picking_seconds: 1800 } });
  });

  it('counts a batch once all its sessions are closed, and only the completed ones as orders', async () => {
    const other = await createPicker(svc, [STORE]);
    const base = at(t0, 3 * 3600);
    // A session cancelled on its own is a walk without orders: its time was spent picking.
    const dropped = await pickOrder(svc, other, STORE, products, { finish: false });
    expect((await sessionCommand(svc, other, dropped.orderId, 'cancel', { reason: 'Wrong order' })).status).toBe(200);
    await placeSession(svc, dropped.sessionId, base, at(base, 300));
    const done = await pickOrder(svc, other, STORE, products);
    const open = await pickOrder(svc, other, STORE, products, { finish: false });
    await placeSession(svc, done.sessionId, at(base, 1005), at(base, 1600));
    await placeSession(svc, open.sessionId, at(base, 1010), null);
    await batchOf(svc, other, STORE, at(base, 1000), [done.sessionId, open.sessionId]);

    const single = {
      walks_count: 1,
      orders_count: 0,
      items_count: 0,
      picking_seconds: 300,
      items_per_hour: '0.00',
      orders_per_hour: '0.00',
    };
    expect((await summary(other)).rates).toMatchObject({ single, batch: none });

    // Cancelled after picking every item: the batch ends, with one order and the items of that one.
    expect((await sessionCommand(svc, other, open.orderId, 'cancel', { reason: 'Customer called' })).status).toBe(200);
    await placeSession(svc, open.sessionId, at(base, 1010), at(base, 2200));
    expect((await summary(other)).rates).toEqual({
      single,
      batch: { walks_count: 1, orders_count: 1, items_count: 2, picking_seconds: 1200, items_per_hour: '6.00', orders_per_hour: '3.00' },
      all: { walks_count: 2, orders_count: 1, items_count: 2, picking_seconds: 1500, items_per_hour: '4.80', orders_per_hour: '2.40' },
    });
  });

  it('has zero walks and no rates for a picker who has not picked', async () => {
    expect((await summary(await createPicker(svc, [STORE]))).rates).toEqual({ single: none, batch: none, all: none });
  });
});
