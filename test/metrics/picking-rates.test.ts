// GET /metrics: the picking rates of the last hour per store and mode (single sessions, batches),
// from the walks that ended in it, read once per PICKING_RATES_TTL_MS however often it is scraped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { PICKING_RATES_TTL_MS } from '../../platform/metrics.js';
import { stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, type TestPicker } from '../support/picking.js';
import { at, batchOf, pickOrder, placeSession } from '../support/picking-walks.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let picker: TestPicker;
let products: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;
const OTHER_STORE = DEMO_STORES[2]!.id;
/** Whole seconds: every placed time is a whole number of seconds before it. */
const now = new Date(Math.floor(Date.now() / 1000) * 1000);

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The picking samples of the exposition, and the TYPE lines of the picking metrics. */
async function scrapePicking(): Promise<{ samples: Sample[]; types: string[] }> {
  const res = await fetch(`${svc.url}/metrics`);
  expect(res.status).toBe(200);
  const lines = (await res.text()).split('\n');
  const samples = lines
    .map((line) => /^(grocery_picking_\w+)\{store_id="([^"]+)",mode="([^"]+)"\} (\S+)$/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ name: m[1]!, labels: { store_id: m[2]!, mode: m[3]! }, value: Number(m[4]) }));
  return { samples, types: lines.filter((l) => l.startsWith('# TYPE grocery_picking_')) };
}

/** Each store and mode's figures, as `{store_id}/{mode}` -> metric -> value. */
const byStoreMode = (samples: Sample[]) => {
  const out: Record<string, Record<string, number>> = {};
  for (const s of samples) (out[`${s.labels.store_id}/${s.labels.mode}`] ??= {})[s.name.replace('grocery_picking_', '')] = s.value;
  return out;
};

beforeAll(async () => {
  svc = await startTestService({
    env: { ORDER_WORKER_ENABLED: 'false', LOYALTY_WORKER_ENABLED: 'false', PICKING_EXPIRY_SWEEP_SECONDS: '0' },
  });
  products = await stockedProducts(svc, { weight: false, count: 2 });
  picker = await createPicker(svc, [STORE]);
  // A single walk of 600 s with 1 of 2 items picked, and one that ended two hours ago (outside).
  const single = await pickOrder(svc, picker, STORE, products, { removed: 1 });
  await placeSession(svc, single.sessionId, at(now, -1200), at(now, -600));
  const old = await pickOrder(svc, picker, STORE, products);
  await placeSession(svc, old.sessionId, at(now, -7500), at(now, -7200));
  // A batch of two orders from its creation to its last closure: 1500 s, 4 items.
  const c = await pickOrder(svc, picker, STORE, products);
  const d = await pickOrder(svc, picker, STORE, products);
  await placeSession(svc, c.sessionId, at(now, -1795), at(now, -900));
  await placeSession(svc, d.sessionId, at(now, -1790), at(now, -300));
  await batchOf(svc, picker, STORE, at(now, -1800), [c.sessionId, d.sessionId]);
  // Another store: a single walk of 900 s with 2 items.
  const elsewhere = await createPicker(svc, [OTHER_STORE]);
  const otherProducts = await stockedProducts(svc, { storeId: OTHER_STORE, weight: false, count: 2 });
  const o = await pickOrder(svc, elsewhere, OTHER_STORE, otherProducts);
  await placeSession(svc, o.sessionId, at(now, -960), at(now, -60));
});
afterAll(() => svc?.close());

describe('picking rates in /metrics', () => {
  it('reports walks, picking time, items and orders per hour of the last hour, per store and mode', async () => {
    const { samples, types } = await scrapePicking();
    expect(types.sort()).toEqual([
      '# TYPE grocery_picking_items_per_hour gauge',
      '# TYPE grocery_picking_orders_per_hour gauge',
      '# TYPE grocery_picking_seconds gauge',
      '# TYPE grocery_picking_walks gauge',
    ]);
    expect(byStoreMode(samples)).toEqual({
      [`${STORE}/single`]: { walks: 1, seconds: 600, items_per_hour: 6, orders_per_hour: 6 },
      [`${STORE}/batch`]: { walks: 1, seconds: 1500, items_per_hour: 9.6, orders_per_hour: 4.8 },
      [`${OTHER_STORE}/single`]: { walks: 1, seconds: 900, items_per_hour: 8, orders_per_hour: 4 },
    });
  });

  it('reads the walks again only once the last reading is older than its time to live', async () => {
    const before = byStoreMode((await scrapePicking()).samples);
    const more = await pickOrder(svc, picker, STORE, products);
    await placeSession(svc, more.sessionId, at(now, -500), at(now, -200));
    expect(byStoreMode((await scrapePicking()).samples)).toEqual(before);

    svc.clock.advance(PICKING_RATES_TTL_MS);
    // Two walks: 3 items and 2 orders in 600 + 300 s.
    expect(byStoreMode((await scrapePicking()).samples)[`${STORE}/single`]).toEqual({
      walks: 2,
      seconds: 900,
      items_per_hour: 12,
      orders_per_hour: 8,
    });
  });
});
