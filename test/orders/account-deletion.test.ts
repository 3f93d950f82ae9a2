// DELETE /api/accounts/me/ while orders are in progress: refused with 409 ACCOUNT_HAS_ACTIVE_ORDERS;
// once they are finished the account goes and its orders keep no address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { cancelOrder, deliveryBody, getOrder, line, makeProduct, makeSlot, placedOrder } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

const deleteAccount = (auth: Record<string, string>) => svc.client.call.DELETE('/api/accounts/me/', { headers: auth });

describe('deleteAccount with orders', () => {
  it('answers 409 ACCOUNT_HAS_ACTIVE_ORDERS while an order is unfinished, and keeps the account', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    const r = await deleteAccount(c.auth);
    expect([r.status, r.body.code]).toEqual([409, 'ACCOUNT_HAS_ACTIVE_ORDERS']);
    expect((await svc.client.call.GET('/api/accounts/me/', { headers: c.auth })).status).toBe(200);

    expect((await cancelOrder(svc, c.auth, id)).status).toBe(200);
    expect((await deleteAccount(c.auth)).status).toBe(204);
    const order = await svc.deps.db
      .selectFrom('orders')
      .select(['address_line', 'delivery_lon', 'apartment', 'total_price', 'status'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(order).toEqual({ address_line: '', delivery_lon: null, apartment: null, total_price: '1299.00', status: 'cancelled' });
    expect((await getOrder(svc, c.auth, id)).status).toBe(401);
  });
});
