// Live tracking: the courier simulator (TEST QA operation) moves a delivery through its states by
// the transition table, with its effects on the purchase, and every committed change reaches the
// customer's sockets - and only theirs - as one event with a strictly increasing order_version.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { setOrderStatus } from '../../db/queries/orders.js';
import { registerPushDevice, signInCustomer } from '../support/accounts.js';
import { trackingMessage } from '../support/realtime.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  TVERSKAYA,
  bankInvoice,
  cancelOrder,
  deliveryBody,
  eventually,
  getOrder,
  IN_ZONE,
  line,
  makeProduct,
  makeSlot,
  pickupBody,
  placedOrder,
  roadmapDetail,
  setTracking,
  settleSandboxInvoice,
  stockOf,
  type TrackingInput,
} from './fixtures.js';

let svc: TestService;
let store: { lon: number; lat: number };
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  store = await svc.deps.db.selectFrom('stores').select(['lon', 'lat']).where('id', '=', TVERSKAYA).executeTakeFirstOrThrow();
});
afterAll(() => svc?.close());

const qa = (auth: Record<string, string>, id: string, body: TrackingInput, lang?: string) => setTracking(svc, auth, id, body, lang);
/** A deliberately invalid tracking body (see ContractClient.invalid). */
const invalidQa = (auth: Record<string, string>, id: string, body: unknown) =>
  svc.client.invalid('POST', `/api/qa/orders/${id}/delivery-tracking`, { headers: auth, body: body as object });
const cancel = (auth: Record<string, string>, id: string) => cancelOrder(svc, auth, id);
const detail = async (auth: Record<string, string>, id: string) => (await roadmapDetail(svc, auth, id)).body;

async function pickOrder(id: string) {
  await setOrderStatus(svc.deps.db, id, 'picking');
  await setOrderStatus(svc.deps.db, id, 'picked');
}

async function socketOf(access: string, lang = 'en') {
  const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/?access_token=${access}`, {
    headers: { 'accept-language': lang },
  });
  const messages: any[] = [];
  ws.on('message', (m) => messages.push(trackingMessage(m)));
  await new Promise((r) => ws.once('open', r));
  return { ws, messages };
}

async function cashDelivery(auth: Record<string, string>) {
  const p = await makeProduct(svc, { price: '1100.00', stock: '10.000' });
  return { id: await placedOrder(svc, auth, deliveryBody([line(p)], await makeSlot(svc))), p };
}

describe('simulateDeliveryTracking with the tracking socket', () => {
  it('walks a delivery from the request to the doorstep, one event per change', async () => {
    const c = await signInCustomer(svc);
    await registerPushDevice(svc, c.auth);
    const stranger = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    const ru = await socketOf(c.access, 'ru');
    const en = await socketOf(c.access, 'en');
    const theirs = await socketOf(stranger.access);
    const startVersion = (await detail(c.auth, id)).order_version;

    const searching = await qa(c.auth, id, { state: 'searching_courier' });
    expect(searching.status).toBe(200);
    expect(searching.body).toMatchObject({
      tracking: { state: 'searching_courier', display: 'Looking for a courier' },
      courier: null,
      refresh_after_seconds: null,
    });

    const assigned = await qa(c.auth, id, { state: 'courier_assigned' });
    expect(assigned.body.tracking.state).toBe('courier_assigned');
    expect(assigned.body.courier).toMatchObject({
      name: expect.any(String),
      phone: expect.stringMatching(/^\+7495\d{7}$/),
      location: { lon: store.lon, lat: store.lat },
    });
    expect(assigned.body.refresh_after_seconds).toBe(15);
    expect(new Date(assigned.body.eta).getTime()).toBeGreaterThan(Date.now());

    expect((await qa(c.auth, id, { state: 'courier_at_store' })).status).toBe(200);
    await pickOrder(id);
    const position = { lon: 37.6071, lat: 55.7613 };
    const onTheWay = await qa(c.auth, id, { state: 'en_route', courier_location: position });
    expect(onTheWay.body).toMatchObject({ tracking: { state: 'en_route' }, courier: { location: position, route: [position, IN_ZONE] } });
    expect((await getOrder(svc, c.auth, id)).body.status.value).toBe('en_route');

    // The same state again: the comment is a change (event), the position alone is not.
    expect((await qa(c.auth, id, { state: 'en_route', comment: 'Traffic on Tverskaya' })).body.tracking.comment).toBe(
      'Traffic on Tverskaya',
    );
    const moved = { lon: 37.609, lat: 55.7595 };
    const versionBeforeMove = (await detail(c.auth, id)).order_version;
    const movedOn = await qa(c.auth, id, { state: 'en_route', courier_location: moved });
    expect(movedOn.body.courier).toMatchObject({ location: moved, route: [moved, IN_ZONE] });
    // Closer to the door: the simulator's estimate comes sooner, shown without an event.
    expect(new Date(movedOn.body.eta).getTime()).toBeLessThan(new Date(onTheWay.body.eta).getTime());
    expect((await detail(c.auth, id)).order_version).toBe(versionBeforeMove);

    expect((await qa(c.auth, id, { state: 'arrived' })).status).toBe(200);
    const delivered = await qa(c.auth, id, { state: 'delivered' });
    expect(delivered.body).toMatchObject({
      tracking: { state: 'delivered' },
      eta: null,
      courier: { phone: null, location: null, route: null },
      refresh_after_seconds: null,
    });
    const finalView = await detail(c.auth, id);
    expect(finalView).toMatchObject({ status: { value: 'completed', display: 'Delivered' }, can_cancel: false });

    const states = ['searching_courier', 'courier_assigned', 'courier_at_store', 'en_route', 'en_route', 'arrived', 'delivered'];
    // Each change: an order.changed, then its delivery.tracking.changed.
    await eventually(
      async () => ru.messages.length,
      (n) => n >= 2 * states.length,
    );
    await eventually(
      async () => en.messages.length,
      (n) => n >= 2 * states.length,
    );
    const tracking = ru.messages.filter((m) => m.type === 'delivery.tracking.changed' && m.data.order_id === id);
    expect(tracking.map((m) => m.data.state)).toEqual(states);
    expect(tracking[1].data).toMatchObject({ previous_state: 'searching_courier', display: 'Курьер едет в магазин' });
    expect(en.messages.find((m) => m.data.state === 'courier_assigned').data.display).toBe('Courier is heading to the store');
    expect(tracking[4].data).toMatchObject({ previous_state: 'en_route', comment: 'Traffic on Tverskaya' });
    for (const m of tracking) {
      expect(m.event_id).toBe(m.data.event_id);
      expect(m).not.toHaveProperty('i18n');
    }
    // Strictly increasing versions, each change exactly one event; the last one is what the detail shows.
    const versions = tracking.map((m) => m.data.order_version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    expect(new Set(versions).size).toBe(versions.length);
    expect(versions[0]).toBeGreaterThan(startVersion);
    expect(versions.at(-1)).toBe(finalView.order_version);
    // Events the customer should see on the lock screen carry a notification id.
    expect(tracking.find((m) => m.data.state === 'courier_assigned').notification_id).toEqual(expect.any(String));
    // Every rise of order_version is announced by an order.changed - the event a client that follows
    // the interface spec listens to - just before the tracking message of the same version; every
    // message names order_id and order_version at its top level too.
    const mine = ru.messages.filter((m) => m.data.order_id === id);
    for (const m of mine) expect(m).toMatchObject({ order_id: id, order_version: m.data.order_version });
    for (const t of tracking) {
      expect(mine[mine.indexOf(t) - 1]).toMatchObject({
        type: 'order.changed',
        order_version: t.order_version,
        notification_id: null,
        data: { changes: expect.arrayContaining(['delivery']) },
      });
    }
    // en_route and delivered (-> completed) changed the purchase status in the same step.
    const announcementOf = (state: string) =>
      mine.find((m) => m.type === 'order.changed' && m.order_version === tracking.find((t) => t.data.state === state).order_version);
    expect(announcementOf('en_route').data).toMatchObject({ status: 'en_route', changes: expect.arrayContaining(['status', 'delivery']) });
    expect(announcementOf('delivered').data).toMatchObject({
      status: 'completed',
      changes: expect.arrayContaining(['status', 'delivery']),
    });
    expect(theirs.messages).toEqual([]);
    for (const s of [ru, en, theirs]) s.ws.close();
  });

  it('finishes a queued cancellation when the courier service withdraws the courier', async () => {
    const c = await signInCustomer(svc);
    const { id, p } = await cashDelivery(c.auth);
    await qa(c.auth, id, { state: 'searching_courier' });
    await qa(c.auth, id, { state: 'courier_assigned' });
    expect((await cancel(c.auth, id)).body.status.value).toBe('cancellation_requested');
    const withdrawn = await qa(c.auth, id, { state: 'cancelled', comment: 'The courier service cancelled the delivery' });
    expect(withdrawn.body).toMatchObject({
      tracking: { state: 'cancelled', comment: 'The courier service cancelled the delivery' },
      courier: null,
      eta: null,
    });
    expect((await getOrder(svc, c.auth, id)).body.status).toMatchObject({
      value: 'cancelled',
      comment: 'Cancelled at your request; the courier was withdrawn.',
    });
    expect(await stockOf(svc, p)).toBe('10.000');
  });

  it('moves a cancelling order en route when the courier collected it first', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    for (const state of ['searching_courier', 'courier_assigned'] as const) await qa(c.auth, id, { state });
    await pickOrder(id);
    await qa(c.auth, id, { state: 'courier_at_store' });
    expect((await cancel(c.auth, id)).body.status.value).toBe('cancellation_requested');
    expect((await qa(c.auth, id, { state: 'en_route' })).status).toBe(200);
    const order = (await getOrder(svc, c.auth, id)).body;
    expect(order.status).toMatchObject({
      value: 'en_route',
      comment: 'The courier had already collected the order, so it could not be cancelled.',
    });
  });

  it('keeps the purchase en route when only the courier request is cancelled (rule 1) and drops the marker', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store'] as const) await qa(c.auth, id, { state });
    await pickOrder(id);
    await qa(c.auth, id, { state: 'en_route' });
    const returning = await qa(c.auth, id, { state: 'returning', comment: 'We could not reach you' });
    expect(returning.body).toMatchObject({
      tracking: { state: 'returning' },
      eta: null,
      refresh_after_seconds: null,
      courier: { location: null, route: null },
    });
    expect(returning.body.courier.name).toEqual(expect.any(String));
    const view = await detail(c.auth, id);
    expect(view.status.value).toBe('en_route');

    const other = await cashDelivery(c.auth);
    for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store'] as const) await qa(c.auth, other.id, { state });
    await pickOrder(other.id);
    await qa(c.auth, other.id, { state: 'en_route' });
    const cancelled = await qa(c.auth, other.id, { state: 'cancelled' });
    expect(cancelled.body).toMatchObject({ tracking: { state: 'cancelled' }, courier: null });
    // Withdrawn from a courier who had collected it: the order is back at the store, still open.
    expect((await detail(c.auth, other.id)).status).toMatchObject({ value: 'picked' });
    // The store re-dispatches while the purchase is open.
    expect((await qa(c.auth, other.id, { state: 'searching_courier' })).body.tracking.state).toBe('searching_courier');
  });

  it('ends a delivery that failed after pickup: back at the store it is re-dispatched and delivered, or cancelled and refunded', async () => {
    const c = await signInCustomer(svc);
    const goOut = async (id: string) => {
      for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store'] as const)
        expect((await qa(c.auth, id, { state })).status).toBe(200);
    };
    // Re-dispatch: returned -> a new courier collects it again and hands it over.
    const { id } = await cashDelivery(c.auth);
    await goOut(id);
    await pickOrder(id);
    expect((await qa(c.auth, id, { state: 'en_route' })).status).toBe(200);
    expect((await qa(c.auth, id, { state: 'returning', comment: 'We could not reach you' })).status).toBe(200);
    expect((await detail(c.auth, id)).status.value).toBe('en_route'); // the goods are still with the courier
    expect((await qa(c.auth, id, { state: 'returned' })).status).toBe(200);
    const back = await detail(c.auth, id);
    expect(back).toMatchObject({ status: { value: 'picked' }, can_cancel: true, delivery: { tracking: { state: 'returned' } } });
    expect(back.status.comment).toMatch(/back at the store/);
    await goOut(id);
    expect((await qa(c.auth, id, { state: 'en_route' })).status).toBe(200); // was 409 ORDER_NOT_READY_FOR_COURIER
    expect((await detail(c.auth, id)).status.value).toBe('en_route');
    for (const state of ['arrived', 'delivered'] as const) expect((await qa(c.auth, id, { state })).status).toBe(200);
    expect((await detail(c.auth, id)).status.value).toBe('completed');

    // Close instead: a paid online order that came back is cancelled by the customer and refunded.
    const p = await makeProduct(svc, { price: '700.00', stock: '5.000' });
    const paid = await placedOrder(svc, c.auth, deliveryBody([line(p, '2')], await makeSlot(svc), { payment_method: 'online' }));
    expect((await bankInvoice(svc, c.auth, paid)).status).toBe(200);
    expect((await settleSandboxInvoice(svc, c.auth, paid, 'paid')).status).toBe(200);
    await goOut(paid);
    await pickOrder(paid);
    for (const state of ['en_route', 'arrived', 'returning', 'returned'] as const)
      expect((await qa(c.auth, paid, { state })).status).toBe(200);
    const refused = await cancel(c.auth, paid);
    expect(refused.status).toBe(200); // was 409 ORDER_NOT_CANCELLABLE
    const closed = await detail(c.auth, paid);
    expect(closed.status.value).toBe('cancelled');
    expect(['refund_pending', 'refunded']).toContain(closed.payment_status);
    expect(await stockOf(svc, p)).toBe('5.000'); // the goods are back on the shelf
  });

  it('answers 409 for moves outside the table and for orders that cannot take them', async () => {
    const c = await signInCustomer(svc);
    const { id } = await cashDelivery(c.auth);
    const skip = await qa(c.auth, id, { state: 'delivered' });
    expect([skip.status, skip.body.code]).toEqual([409, 'DELIVERY_TRANSITION_NOT_ALLOWED']);
    for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store'] as const) await qa(c.auth, id, { state });
    const early = await qa(c.auth, id, { state: 'en_route' });
    expect([early.status, early.body.code]).toEqual([409, 'ORDER_NOT_READY_FOR_COURIER']);

    const closed = await cashDelivery(c.auth);
    await cancel(c.auth, closed.id);
    const redispatch = await qa(c.auth, closed.id, { state: 'searching_courier' });
    expect([redispatch.status, redispatch.body.code]).toEqual([409, 'ORDER_CLOSED']);

    const p = await makeProduct(svc, { price: '600.00' });
    const pickup = await placedOrder(svc, c.auth, pickupBody([line(p)], await makeSlot(svc, { kind: 'pickup' })));
    const none = await qa(c.auth, pickup, { state: 'searching_courier' });
    expect([none.status, none.body.code]).toEqual([409, 'ORDER_HAS_NO_DELIVERY']);
  });

  it('answers 404 for another customer’s order, 401 without a token, 422 and 400 for bad input', async () => {
    const owner = await signInCustomer(svc);
    const stranger = await signInCustomer(svc);
    const { id } = await cashDelivery(owner.auth);
    expect((await qa(stranger.auth, id, { state: 'searching_courier' })).status).toBe(404);
    expect((await qa(owner.auth, randomUUID(), { state: 'searching_courier' })).status).toBe(404);
    expect((await qa({}, id, { state: 'searching_courier' })).status).toBe(401);
    expect((await invalidQa(owner.auth, id, { state: 'teleported' })).status).toBe(422);
    expect((await invalidQa(owner.auth, id, { state: 'en_route', courier_location: { lon: 200, lat: 55 } })).status).toBe(422);
    const malformed = await svc.client.invalid('POST', `/api/qa/orders/${id}/delivery-tracking`, { headers: owner.auth, body: '{' });
    expect(malformed.status).toBe(400);
    expect((await detail(owner.auth, id)).delivery.tracking.state).toBe('pending');
  });
});
