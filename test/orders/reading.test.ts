// Reading orders (list, detail, roadmaps) and cancelling them. Another customer's order is a 404
// on every operation, exactly like an unknown one.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOrderStatus } from '../../db/queries/orders.js';
import { DEMO_CUSTOMER } from '../../db/seed/accounts.js';
import { startSession } from '../../services/sessions.js';
import type { paths } from '../../generated/api.test.js';
import { TokenService } from '../../platform/tokens.js';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import type { CheckedResponse } from '../support/client.js';
import { startTestService, type TestService } from '../support/service.js';
import { deliveryBody, getOrder, line, makeProduct, makeSlot, pickupBody, placedOrder, reservedOf, stockOf } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

type ListQuery = NonNullable<paths['/api/orders/']['get']['parameters']['query']>;
const list = (query: ListQuery, auth: Record<string, string>) => svc.client.call.GET('/api/orders/', { params: { query }, headers: auth });
const withLang = (auth: Record<string, string>, lang?: string) => ({ ...auth, ...(lang ? { 'accept-language': lang } : {}) });
const readRoadmap = (kind: 'short' | 'detail', id: string, auth: Record<string, string>, lang?: string) =>
  kind === 'short'
    ? svc.client.call.GET('/api/orders/roadmap/{order_id}/short', { params: { path: { order_id: id } }, headers: withLang(auth, lang) })
    : svc.client.call.GET('/api/orders/roadmap/{order_id}/detail', { params: { path: { order_id: id } }, headers: withLang(auth, lang) });
const cancel = (auth: Record<string, string>, id: string) =>
  svc.client.call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id: id } }, headers: auth });
const qaTracking = (
  auth: Record<string, string>,
  id: string,
  body: paths['/api/qa/orders/{order_id}/delivery-tracking']['post']['requestBody']['content']['application/json'],
) => svc.client.call.POST('/api/qa/orders/{order_id}/delivery-tracking', { params: { path: { order_id: id } }, headers: auth, body });

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
    expect((await cancel(c.auth, ids[0]!)).status).toBe(200);

    const first = await list({ page: 1, page_size: 2 }, c.auth);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ count: 3, has_next: true });
    expect(first.body.items.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.items[0]).toMatchObject({
      type: 'delivery',
      address_line: 'Tverskaya St, 7, Moscow',
      total_price: '1299.00',
      picking_result_state: 'pending',
      has_picking_changes: false,
    });
    const second = await list({ page: 2, page_size: 2 }, c.auth);
    expect(second.body).toMatchObject({ count: 3, has_next: false, items: [{ id: ids[0] }] });
    expect((await list({ page: 5 }, c.auth)).body).toMatchObject({ count: 3, has_next: false, items: [] });

    const active = await list({ active: true }, c.auth);
    expect(active.body.items.map((o: { id: string }) => o.id)).toEqual([ids[2], ids[1]]);
    const finished = await list({ active: false }, c.auth);
    expect(finished.body.items.map((o: { id: string }) => o.id)).toEqual([ids[0]]);
  });

  it('answers 401 without a customer token and 422 for malformed paging', async () => {
    const p = await signInPicker(svc);
    expect((await list({}, {})).status).toBe(401);
    expect((await list({}, p.auth)).status).toBe(401);
    const c = await signInCustomer(svc);
    for (const q of ['page=0', 'page_size=101', 'active=maybe'])
      expect((await svc.client.invalid('GET', `/api/orders/?${q}`, { headers: c.auth })).status, q).toBe(422);
  });
});

describe('the demo customer', () => {
  it('has a finished order history in the demo data', async () => {
    const session = await startSession(
      svc.deps.db,
      new TokenService(svc.config.jwt),
      { kind: 'customer', customerId: DEMO_CUSTOMER.id },
      svc.deps.clock.now(),
    );
    const auth = { authorization: `Bearer ${session.access}` };
    const finished = (await list({ active: false }, auth)).body;
    expect(finished.count).toBe(3);
    const delivered = finished.items.find(
      (o: { type: string; picking_result_state: string }) => o.type === 'delivery' && o.picking_result_state === 'completed',
    );
    const roadmap = (await readRoadmap('detail', delivered.id, auth, 'ru')).body;
    expect(roadmap.steps.map((s: { state: string }) => s.state)).toEqual(['done', 'done', 'done', 'done', 'done', 'done', 'current']);
    expect(roadmap).toMatchObject({
      status: { value: 'completed', display: 'Доставлен' },
      payment_status: 'paid',
      delivery: { tracking: { state: 'delivered' }, eta: null },
    });
    const cancelled = finished.items.find((o: { picking_result_state: string }) => o.picking_result_state === 'cancelled');
    expect((await getOrder(svc, auth, cancelled.id)).body.status).toMatchObject({
      value: 'cancelled',
      comment: 'The order was not paid in time.',
    });
  });
});

describe('getOrder and the roadmaps', () => {
  it('shows the order in the reader’s language', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    const ru = await getOrder(svc, c.auth, id, 'ru');
    expect(ru.status).toBe(200);
    expect(ru.headers.get('vary')).toContain('Accept-Language');
    expect(ru.body).toMatchObject({
      status: { value: 'confirmed', display: 'Подтверждён' },
      delivery: { tracking: { display: 'Курьер ещё не вызван' } },
    });
    expect(ru.body.items[0].name).toMatch(/^Тестовый товар/);

    const short = await readRoadmap('short', id, c.auth);
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
    const r = await readRoadmap('detail', id, c.auth);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id,
      payment_method: 'cash',
      payment_status: 'not_required',
      can_cancel: true,
      pickup: null,
      delivery: { tracking: { state: 'pending' } },
    });
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
    const readers: [string, (orderId: string, auth: Record<string, string>) => Promise<CheckedResponse>][] = [
      [`/api/orders/${id}`, (orderId, auth) => getOrder(svc, auth, orderId)],
      [`/api/orders/roadmap/${id}/short`, (orderId, auth) => readRoadmap('short', orderId, auth)],
      [`/api/orders/roadmap/${id}/detail`, (orderId, auth) => readRoadmap('detail', orderId, auth)],
    ];
    for (const [path, read] of readers) {
      const theirs = await read(id, stranger.auth);
      const unknown = await read(randomUUID(), owner.auth);
      expect([theirs.status, theirs.body.code], path).toEqual([404, 'NOT_FOUND']);
      expect(unknown.body).toMatchObject({ code: theirs.body.code, detail: theirs.body.detail });
      expect((await svc.client.invalid('GET', path.replace(id, 'not-a-uuid'), { headers: owner.auth })).status).toBe(422);
      expect((await read(id, {})).status).toBe(401);
    }
    expect((await cancel(stranger.auth, id)).status).toBe(404);
    expect((await svc.client.invalid('POST', '/api/orders/nope/cancel', { headers: owner.auth })).status).toBe(422);
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
    expect(r.body).toMatchObject({
      id,
      status: { value: 'cancelled', comment: 'Cancelled at your request.' },
      can_cancel: false,
      picking_result_state: 'cancelled',
      delivery: { tracking: { state: 'cancelled' } },
    });
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
    for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store'] as const) await qaTracking(c.auth, id, { state });
    await pickOrder(id);
    expect((await qaTracking(c.auth, id, { state: 'en_route' })).status).toBe(200);
    const r = await cancel(c.auth, id);
    expect([r.status, r.body.code]).toEqual([409, 'ORDER_NOT_CANCELLABLE']);
    expect((await getOrder(svc, c.auth, id)).body.status.value).toBe('en_route');
  });
});
