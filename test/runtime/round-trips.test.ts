// The write paths' round trips to PostgreSQL (issue 23), counted at the pg client within each
// request as the benchmark counts them (scripts/lib/round-trips.ts): a picker item command at most
// 3 (the auth session check, the key's claim with the session read, one write), order creation
// at most 6 (the auth check, the claim with the zones, BEGIN, locks, the write, COMMIT).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRoundTrips, type RoundTrips } from '../../scripts/lib/round-trips.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { signInCustomer } from '../support/accounts.js';
import { createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, itemCommand, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { createOrder, deliveryBody, line, makeProduct, makeSlot } from '../orders/fixtures.js';

let svc: TestService;
let counts: () => RoundTrips;

beforeAll(async () => {
  counts = await countRoundTrips(); // before the service's pool opens a connection
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

describe('round trips to PostgreSQL', () => {
  it('a picker item command makes at most 3', async () => {
    const pieces = await stockedProducts(svc, { storeId: DEMO_STORES[0]!.id, weight: false, count: 2 });
    const picker = await createPicker(svc, [DEMO_STORES[0]!.id]);
    const order = await createConfirmedOrder(svc, { lines: pieces.map((p) => ({ inventoryId: p.inventoryId, quantity: '2' })) });
    const session = await startPicking(svc, picker, order.orderId);
    counts();
    for (const [i, item] of session.items.entries()) {
      const r = await itemCommand(svc, picker, order.orderId, item.item_id, 'piece-quantity', { quantity: 1 + i });
      expect(r.status).toBe(200);
    }
    const trips = counts()['POST /api/picker/orders/{id}/items/{id}/piece-quantity'];
    expect(trips!.requests).toBe(2);
    // Counted at all: the request's async context survives the reading of its JSON body.
    expect(trips!.perRequest).toBeGreaterThanOrEqual(2);
    expect(trips!.perRequest).toBeLessThanOrEqual(3);
  });

  it('order creation makes at most 6', async () => {
    const c = await signInCustomer(svc);
    const bread = await makeProduct(svc, { price: '450.50', stock: '10.000' });
    const slot = await makeSlot(svc, { capacity: 3 });
    // The first order also reads the store into its cache (handlers/support/store.ts), as a
    // running service has long done.
    expect((await createOrder(svc, c.auth, deliveryBody([line(bread, 3)], slot))).status).toBe(201);
    counts();
    const r = await createOrder(svc, c.auth, deliveryBody([line(bread, 3)], slot));
    expect(r.status).toBe(201);
    const trips = counts()['POST /api/orders/'];
    expect(trips!.requests).toBe(1);
    expect(trips!.perRequest).toBeGreaterThanOrEqual(4);
    expect(trips!.perRequest).toBeLessThanOrEqual(6);
  });
});
