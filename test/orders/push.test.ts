// Push notifications from the outbox: one per event the customer should see, to each registered
// installation, carrying the event's notification_id; honouring the preference; shared safely by
// several instances (each delivery sent once).
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { RecordingPushSender } from '../../platform/providers/push/index.js';
import { startService } from '../../server/runtime.js';
import { createLogger } from '../../platform/logger.js';
import { signInCustomer } from '../support/accounts.js';
import { assertMatchesSchema } from '../support/client.js';
import { startTestService, type TestService } from '../support/service.js';
import type { components, paths } from '../../generated/api.test.js';
import type { Defaulted } from '../support/client.js';
import {
  bankInvoice,
  deliveryBody,
  expressAlwaysOpen,
  line,
  makeProduct,
  makeSlot,
  placedOrder,
  setTracking,
  settleSandboxInvoice,
  type TrackingInput,
} from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());
afterEach(() => {
  for (const m of recorded().sent) assertMatchesSchema('PushNotificationPayload', m.data);
});

const recorded = (deps = svc.deps) => deps.push as RecordingPushSender;
type PushDeviceInput = components['schemas']['PushDeviceInput'];
const registerDevice = (auth: Record<string, string>, platform: PushDeviceInput['platform'] = 'android') => {
  // app_kind left to its default (customer), which the generated type makes required.
  const device: Defaulted<PushDeviceInput, 'app_kind'> = {
    push_token: `token-${randomUUID()}`,
    device_id: randomUUID(),
    platform,
    app_version: '3.14.0',
    build_number: '3140',
  };
  return svc.client.call.PUT('/api/accounts/me/push-devices', { headers: auth, body: device as PushDeviceInput }).then(() => device);
};
const qa = (auth: Record<string, string>, id: string, state: TrackingInput['state']) => setTracking(svc, auth, id, { state });
const updatePreferences = (
  auth: Record<string, string>,
  body: paths['/api/accounts/me/preferences']['patch']['requestBody']['content']['application/json'],
) => svc.client.call.PATCH('/api/accounts/me/preferences', { headers: auth, body });

async function orderWithCourier(auth: Record<string, string>) {
  const p = await makeProduct(svc, { price: '1100.00' });
  const id = await placedOrder(svc, auth, deliveryBody([line(p)], await makeSlot(svc)));
  await qa(auth, id, 'searching_courier');
  await qa(auth, id, 'courier_assigned');
  return id;
}

describe('push dispatch', () => {
  it('sends the customer’s installations one notification per event, with the event’s notification_id', async () => {
    const c = await signInCustomer(svc);
    const phone = await registerDevice(c.auth, 'android');
    const tablet = await registerDevice(c.auth, 'ios');
    const id = await orderWithCourier(c.auth);
    await runOrderWorkerOnce(svc.deps);

    const event = await svc.deps.db
      .selectFrom('outbox_events')
      .select(['event_id', 'payload'])
      .where('order_id', '=', id)
      .where('type', '=', 'delivery.tracking.changed')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const notificationId = (event.payload as { notification_id: string }).notification_id;
    const sent = recorded().sent.filter((m) => m.data.order_id === id);
    // Only courier_assigned notifies; the order's creation and the courier search do not.
    expect(sent.map((m) => m.token).sort()).toEqual([phone.push_token, tablet.push_token].sort());
    for (const m of sent) {
      expect(m).toMatchObject({ notificationId, title: expect.stringMatching(/^Order \d+$/), body: 'Courier is heading to the store' });
      expect(m.data).toEqual({
        notification_id: notificationId,
        kind: 'delivery_tracking',
        screen: 'order',
        title: m.title,
        body: 'Courier is heading to the store',
        sent_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        event_id: event.event_id,
        order_id: id,
        order_no: m.title.replace('Order ', ''),
        order_version: String((event.payload as { data: { order_version: number } }).data.order_version),
      });
      assertMatchesSchema('PushNotificationPayload', m.data);
    }
    // Nothing is sent twice.
    await runOrderWorkerOnce(svc.deps);
    expect(recorded().sent.filter((m) => m.data.order_id === id).length).toBe(2);
  });

  it('writes in the customer’s language and respects push_order_updates', async () => {
    const ru = await signInCustomer(svc);
    await updatePreferences(ru.auth, { language: 'ru' });
    await registerDevice(ru.auth);
    const ruOrder = await orderWithCourier(ru.auth);

    const quiet = await signInCustomer(svc);
    await updatePreferences(quiet.auth, { push_order_updates: false });
    await registerDevice(quiet.auth);
    const quietOrder = await orderWithCourier(quiet.auth);

    await runOrderWorkerOnce(svc.deps);
    expect(
      recorded()
        .sent.filter((m) => m.data.order_id === ruOrder)
        .map((m) => [m.title.startsWith('Заказ №'), m.body]),
    ).toEqual([[true, 'Курьер едет в магазин']]);
    expect(recorded().sent.filter((m) => m.data.order_id === quietOrder)).toEqual([]);
  });

  it('says an order cancelled with its delivery is cancelled, with the reason, and marks payment news as payment', async () => {
    const c = await signInCustomer(svc);
    await registerDevice(c.auth);
    const p = await makeProduct(svc, { price: '1100.00' });
    // Express orders, whose courier is sought at once (the demo schedule takes them only by day).
    await expressAlwaysOpen(svc);
    const online = () => placedOrder(svc, c.auth, deliveryBody([line(p)], null, { payment_method: 'online' }));

    // Not paid in time: the purchase and its courier delivery end in one step.
    const unpaid = await online();
    await svc.deps.db
      .updateTable('orders')
      .set({ payment_due_at: new Date(Date.now() - 60_000) })
      .where('id', '=', unpaid)
      .execute();
    // Paid at the sandbox bank: the order is confirmed by the payment.
    const paid = await online();
    expect((await bankInvoice(svc, c.auth, paid)).status).toBe(200);
    expect((await settleSandboxInvoice(svc, c.auth, paid, 'paid')).status).toBe(200);
    await runOrderWorkerOnce(svc.deps);
    await runOrderWorkerOnce(svc.deps);

    const sentFor = (id: string) =>
      recorded()
        .sent.filter((m) => m.data.order_id === id)
        .map((m) => [m.data.kind, m.body]);
    expect(sentFor(unpaid)).toEqual([['order_status', 'The order was not paid in time.']]);
    expect(sentFor(paid)).toEqual([['payment', 'Payment received, the order is confirmed']]);
  });

  it('sends a backlog in order, dropping news superseded by later news of the same order but never a payment notice', async () => {
    const c = await signInCustomer(svc);
    const phone = await registerDevice(c.auth);
    // Paid online (a payment notice), then a courier assigned, then withdrawn: all before the worker runs.
    const p = await makeProduct(svc, { price: '1100.00' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc), { payment_method: 'online' }));
    expect((await bankInvoice(svc, c.auth, id)).status).toBe(200);
    expect((await settleSandboxInvoice(svc, c.auth, id, 'paid')).status).toBe(200);
    for (const state of ['searching_courier', 'courier_assigned', 'cancelled'] as const)
      expect((await qa(c.auth, id, state)).status).toBe(200);
    await runOrderWorkerOnce(svc.deps);
    await runOrderWorkerOnce(svc.deps);

    const sent = recorded().sent.filter((m) => m.token === phone.push_token);
    expect(sent.map((m) => [m.data.kind, m.body])).toEqual([
      ['payment', 'Payment received, the order is confirmed'],
      ['delivery_tracking', 'Courier delivery cancelled'],
    ]);
    const rows = await svc.deps.db
      .selectFrom('push_deliveries')
      .select(['body', 'state', 'last_error'])
      .where('order_id', '=', id)
      .orderBy('seq')
      .execute();
    expect(rows.map((r) => [r.body, r.state])).toEqual([
      ['Payment received, the order is confirmed', 'sent'],
      ['Courier is heading to the store', 'skipped'],
      ['Courier delivery cancelled', 'sent'],
    ]);
    expect(rows[1]!.last_error).toMatch(/superseded/);
  });

  it("puts a notification_id on the socket's event only when a push goes out", async () => {
    const withApp = await signInCustomer(svc);
    await registerDevice(withApp.auth);
    const quiet = await signInCustomer(svc);
    await registerDevice(quiet.auth);
    await updatePreferences(quiet.auth, { push_order_updates: false });
    const noApp = await signInCustomer(svc);
    const assignedEvent = async (auth: Record<string, string>) => {
      const id = await orderWithCourier(auth);
      const e = await svc.deps.db
        .selectFrom('outbox_events')
        .select('payload')
        .where('order_id', '=', id)
        .where('type', '=', 'delivery.tracking.changed')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      return (e.payload as { notification_id: string | null }).notification_id;
    };
    expect(await assignedEvent(withApp.auth)).toEqual(expect.any(String));
    expect(await assignedEvent(quiet.auth)).toBeNull();
    expect(await assignedEvent(noApp.auth)).toBeNull();
  });

  it('shares the work between instances: each notification reaches each device once', async () => {
    const second = await startService({ config: svc.config, database: svc.database, log: createLogger('silent') });
    try {
      const customers = await Promise.all(Array.from({ length: 6 }, () => signInCustomer(svc)));
      const ids: string[] = [];
      for (const c of customers) {
        await registerDevice(c.auth);
        ids.push(await orderWithCourier(c.auth));
      }
      await Promise.all([
        runOrderWorkerOnce(svc.deps),
        runOrderWorkerOnce(second.deps),
        runOrderWorkerOnce(svc.deps),
        runOrderWorkerOnce(second.deps),
      ]);
      const all = [...recorded().sent, ...recorded(second.deps).sent].filter((m) => ids.includes(m.data.order_id!));
      expect(all.length).toBe(ids.length);
      expect(new Set(all.map((m) => m.notificationId)).size).toBe(ids.length);
      const states = await svc.deps.db.selectFrom('push_deliveries').select('state').where('order_id', 'in', ids).execute();
      expect(states.map((s) => s.state)).toEqual(ids.map(() => 'sent'));
    } finally {
      await second.stop();
    }
  });
});
