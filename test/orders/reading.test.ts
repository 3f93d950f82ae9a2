// Reading orders (list, detail, roadmaps) and cancelling them. Another customer's order is a 404
// on every operation, exactly like an unknown one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOrderStatus } from '../../db/queries/orders.js';
import { DEMO_CUSTOMER } from '../../db/seed/accounts.js';
import { startSession } from '../../handlers/services/sessions.js';
import { TokenService } from '../../server/auth/tokens.js';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { deliveryBody, getOrder, line, makeProduct, makeSlot, pickupBody, placedOrder, reservedOf, stockOf } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

const get = (path: string, auth: Record<string, string>, lang?: string) =>
  svc.client.raw('GET', path, { headers: { ...auth, ...(lang ? { 'accept-language': lang } : {}) } });
const cancel = (auth: Record<string, string>, id: string) => svc.client.raw('POST', `/api/orders/${id}/cancel`, { headers: auth });
const qaTracking = (auth: Record<string, string>, id: string, body: object) => svc.client.raw('POST', `/api/qa/orders/${id}/delivery-tracking`, { headers: auth, body });

/** The store's side of the order, as picking (issue 7) moves it: confirmed -> picking -> picked. */
async function pickOrder(id: string) {
  await setOrderStatus(svc.deps.db, id, 'picking');
  await setOrderStatus(svc.deps.db, id, 'picked');
}

async function cashDelivery(auth: Record<string, string>, price = '1100.00') {
  const p = await makeProduct(svc, { price, stock: '20.000' });
  const slot = await makeSlot(svc, { capacity: 5 });
  const id = await placedOrder(svc, auth, deliveryBody([line(p, 1)], slot));
  return { id, p, slot };
}

describe('listOrders', () => {
  it('pages the caller’s orders newest first and filters by active', async () => {
    const c = await signInCustomer(svc);
    const other = await signInCustomer(svc);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await cashDelivery(c.auth)).id);
    await cashDelivery(other.auth);
    expect((await cancel(c.auth, ids[0])).status).toBe(200);

    const first = await get('/api/orders/?page=1&page_size=2', c.auth);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ count: 3, has_next: true });
    expect(first.body.items.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.items[0]).toMatchObject({ type: 'delivery', address_line: 'Tverskaya St, 7, Moscow', total_price: '1299.00', picking_result_state: 'pending', has_picking_changes: false });
    const second = await get('/api/orders/?page=2&page_size=2', c.auth);
    expect(second.body).toMatchObject({ count: 3, has_next: false, items: [{ id: ids[0] }] });
    expect((await get('/api/orders/?page=5', c.auth)).body).toMatchObject({ count: 3, has_next: false, items: [] });

    const active = await get('/api/orders/?active=true', c.auth);
    expect(active.body.items.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
    const finished = await get('/api/orders/?active=false', c.auth);
    expect(finished.body.items.map((o: { id: string }) => o.id)).toEqual([ids[0]]);
  });

  it('answers 401 without a customer token and 422 for malformed paging', async () => {
    const p = await signInPicker(svc);
    expect((await get('/api/orders/', {})).status).toBe(401);
    expect((await get('/api/orders/', p.auth)).status).toBe(401);
    const c = await signInCustomer(svc);
    for (const q of ['page=0', 'page_size=101', 'active=maybe']) expect((await get(`/api/orders/?${q}`, c.auth)).status, q).toBe(422);
  });
});

describe('the demo customer', () => {
  it('has a finished order history in the demo data', async () => {
    const session = await startSession(svc.deps.db, new TokenService(svc.config.jwt), { kind: 'customer', customerId: DEMO_CUSTOMER.id }, svc.deps.clock.now());
    const auth = { authorization: `Bearer ${session.access}` };
    const finished = (await get('/api/orders/?active=false', auth)).body;
    expect(finished.count).toBe(3);
    const delivered = finished.items.find((o: { type: string; picking_result_state: string }) => o.type === 'delivery' && o.picking_result_state === 'completed');
    const roadmap = (await get(`/api/orders/roadmap/${delivered.id}/detail`, auth, 'ru')).body;
    expect(roadmap.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'done', 'done', 'done', 'current']);
    expect(roadmap).toMatchObject({ status: { value: 'completed', display: 'Доставлен' }, payment_status: 'paid', delivery: { tracking: { state: 'delivered' }, eta: null } });
    const cancelled = finished.items.find((o: { picking_result_state: string }) => o.picking_result_state === 'cancelled');
    expect((await getOrder(svc, auth, cancelled.id)).body.status).toMatchObject({ value: 'cancelled', comment: 'The order was not paid in time.' });
  });
});

describe('getOrder and the roadmaps', () => {
  it('shows the order in the reader’s language', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    const ru = await getOrder(svc, c.auth, id, 'ru');
    expect(ru.status).toBe(200);
    expect(ru.headers.get('vary')).toContain('Accept-Language');
    expect(ru.body).toMatchObject({ status: { value: 'confirmed', display: 'Подтверждён' }, delivery: { tracking: { display: 'Курьер ещё не вызван' } } });
    expect(ru.body.items[0].name).toMatch(/^Тестовый товар/);

    const short = await get(`/api/orders/roadmap/${id}/short`, c.auth);
    expect(short.status).toBe(200);
    expect(short.body).toEqual({
      no: ru.body.no,
      type: 'delivery',
      status: { display: 'Confirmed', value: 'confirmed', comment: null },
      total_price: '1299.00',
      items_count: 1,
      picking_result_state: 'pending',
      has_picking_changes: false,
    });
  });

  it('gives the roadmap detail with the progress line, version, payment and delivery', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    const r = await get(`/api/orders/roadmap/${id}/detail`, c.auth);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, payment_method: 'cash', payment_status: 'not_required', can_cancel: true, pickup: null, delivery: { tracking: { state: 'pending' } } });
    expect(r.body.order_version).toBeGreaterThanOrEqual(2);
    expect(r.body.steps.map((s: { value: string; state: string }) => `${s.value}:${s.state}`)).toEqual([
      'created:done',
      'confirmed:current',
      'picking:upcoming',
      'picked:upcoming',
      'en_route:upcoming',
      'completed:upcoming',
    ]);
  });

  it('answers 404 for another customer’s order and an unknown one, 422 for a malformed id, 401 without a token', async () => {
    const owner = await signInCustomer(svc);
    const stranger = await signInCustomer(svc);
    const { id } = await cashDelivery(owner.auth);
    for (const path of [`/api/orders/${id}`, `/api/orders/roadmap/${id}/short`, `/api/orders/roadmap/${id}/detail`]) {
      const theirs = await get(path, stranger.auth);
      const unknown = await get(path.replace(id, randomUUID()), owner.auth);
      expect([theirs.status, theirs.body.code], path).toEqual([404, 'NOT_FOUND']);
      expect(unknown.body).toMatchObject({ code: theirs.body.code, detail: theirs.body.detail });
      expect((await get(path.replace(id, 'not-a-uuid'), owner.auth)).status).toBe(422);
      expect((await get(path, {})).status).toBe(401);
    }
    expect((await cancel(stranger.auth, id)).status).toBe(404);
    expect((await cancel(owner.auth, 'nope')).status).toBe(422);
    expect((await cancel({}, id)).status).toBe(401);
    expect((await getOrder(svc, owner.auth, id)).body.status.value).toBe('confirmed');
  });
});

describe('cancelOrder', () => {
  it('cancels at once, giving back stock and the slot, and refuses a second cancel', async () => {
    const c = await signInCustomer(svc);
    const { id, p, slot } = await cashDelivery(c.auth);
    expect(await stockOf(svc, p)).toBe('19.000');
    const r = await cancel(c.auth, id);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id, status: { value: 'cancelled', comment: 'Cancelled at your request.' }, can_cancel: false, picking_result_state: 'cancelled', delivery: { tracking: { state: 'cancelled' } } });
    expect(await stockOf(svc, p)).toBe('20.000');
    expect(await reservedOf(svc, slot)).toBe(0);

    const again = await cancel(c.auth, id);
    expect([again.status, again.body.code]).toEqual([409, 'ORDER_ALREADY_CANCELLED']);
  });

  it('cancels a pickup order and frees its pickup slot', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '600.00', stock: '3.000' });
    const slot = await makeSlot(svc, { kind: 'pickup' });
    const id = await placedOrder(svc, c.auth, pickupBody([line(p, 3)], slot));
    expect((await cancel(c.auth, id)).body.status.value).toBe('cancelled');
    expect(await stockOf(svc, p)).toBe('3.000');
    expect(await reservedOf(svc, slot)).toBe(0);
  });

  it('queues the cancellation while a courier is assigned, and says so', async () => {
    const c = await signInCustomer(svc);
    const { id, p } = await cashDelivery(c.auth);
    await qaTracking(c.auth, id, { state: 'searching_courier' });
    await qaTracking(c.auth, id, { state: 'courier_assigned' });
    const r = await cancel(c.auth, id);
    expect(r.status).toBe(200);
    expect(r.body.status).toMatchObject({ value: 'cancellation_requested', display: 'Cancellation requested' });
    expect(r.body.status.comment).toContain('courier');
    expect(r.body.can_cancel).toBe(false);
    // Stock stays reserved until the courier service confirms.
    expect(await stockOf(svc, p)).toBe('19.000');
    const again = await cancel(c.auth, id);
    expect([again.status, again.body.code]).toEqual([409, 'ORDER_NOT_CANCELLABLE']);
    const withdrawals = await svc.deps.db.selectFrom('provider_commands').select('kind').where('order_id', '=', id).execute();
    expect(withdrawals.map((w) => w.kind)).toContain('courier.withdraw');
  });

  it('answers 409 ORDER_NOT_CANCELLABLE once the courier has the order', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store']) await qaTracking(c.auth, id, { state });
    await pickOrder(id);
    expect((await qaTracking(c.auth, id, { state: 'en_route' })).status).toBe(200);
    const r = await cancel(c.auth, id);
    expect([r.status, r.body.code]).toEqual([409, 'ORDER_NOT_CANCELLABLE']);
    expect((await getOrder(svc, c.auth, id)).body.status.value).toBe('en_route');
  });
});
