// Push notifications of the picker app (PushNotificationPayload `picker_*`): an order entering the
// queue reaches the store's idle pickers, the cancellation of a picker's order reaches that picker,
// each in the language of the installation's registration.
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { sweepPicking } from '../../server/jobs/picking-expiry.js';
import { RecordingPushSender } from '../../platform/providers/push/index.js';
import { registerPushDevice } from '../support/accounts.js';
import { assertMatchesSchema } from '../support/client.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, signInDemoCustomer, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let pieces: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;
const OTHER_STORE = DEMO_STORES[2]!.id;

beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  pieces = await stockedProducts(svc, { weight: false, count: 2 });
});
afterAll(() => svc?.close());
afterEach(() => {
  for (const m of recorded().sent) assertMatchesSchema('PushNotificationPayload', m.data);
});

const recorded = () => svc.deps.push as RecordingPushSender;
const sentTo = (token: string) => recorded().sent.filter((m) => m.token === token);
const anOrder = (express = false) =>
  createConfirmedOrder(svc, { express, lines: [{ inventoryId: pieces[0]!.inventoryId, quantity: '1' }] });
/** The worker's fan-out, then its sending. */
const drain = async () => {
  await runOrderWorkerOnce(svc.deps);
  await runOrderWorkerOnce(svc.deps);
};

describe('picker push notifications', () => {
  it("tells the store's idle pickers that an order is waiting, not a busy one, another store's or a slot order days ahead", async () => {
    const idle = await createPicker(svc, [STORE]);
    const busy = await createPicker(svc, [STORE]);
    const elsewhere = await createPicker(svc, [OTHER_STORE]);
    const [idlePhone, busyPhone, elsewherePhone] = [
      await registerPushDevice(svc, idle.auth, { appKind: 'picker', lang: 'ru' }),
      await registerPushDevice(svc, busy.auth, { appKind: 'picker', lang: 'en' }),
      await registerPushDevice(svc, elsewhere.auth, { appKind: 'picker' }),
    ];
    await startPicking(svc, busy, (await anOrder()).orderId);
    await drain();
    recorded().sent.length = 0;

    const express = await anOrder(true);
    const later = await anOrder();
    await svc.deps.db
      .updateTable('orders')
      .set({ slot_starts_at: new Date(Date.now() + 3 * 24 * 3600_000) })
      .where('id', '=', later.orderId)
      .execute();
    await drain();

    expect(sentTo(idlePhone.push_token).map((m) => [m.data.kind, m.data.screen, m.data.order_id, m.title, m.body])).toEqual([
      ['picker_queue', 'picker_queue', express.orderId, 'Новый заказ', `Заказ № ${express.no} (экспресс) ждёт сборки`],
    ]);
    expect(sentTo(busyPhone.push_token)).toEqual([]);
    expect(sentTo(elsewherePhone.push_token)).toEqual([]);
    // A customer's installation hears nothing of it.
    expect(recorded().sent.every((m) => m.data.kind!.startsWith('picker_'))).toBe(true);
  });

  it('tells the picker whose order the customer cancelled during picking', async () => {
    const picker = await createPicker(svc, [STORE]);
    const phone = await registerPushDevice(svc, picker.auth, { appKind: 'picker', lang: 'en' });
    const order = await anOrder();
    await startPicking(svc, picker, order.orderId);
    const customer = await signInDemoCustomer(svc);
    expect(
      (
        await svc.client.call.POST('/api/orders/{order_id}/cancel', {
          params: { path: { order_id: order.orderId } },
          headers: customer.auth,
        })
      ).status,
    ).toBe(200);
    await drain();
    const told = sentTo(phone.push_token).filter((m) => m.data.order_id === order.orderId);
    expect(told.map((m) => [m.data.kind, m.data.screen, m.title, m.body])).toEqual([
      [
        'picker_order_cancelled',
        'picker_session',
        `Order ${order.no} cancelled`,
        'Stop picking it and acknowledge the cancellation in the app',
      ],
    ]);
    const rows = await svc.deps.db
      .selectFrom('push_deliveries')
      .select(['picker_id', 'customer_id', 'state'])
      .where('order_id', '=', order.orderId)
      .where('picker_id', 'is not', null)
      .execute();
    expect(rows).toEqual([{ picker_id: picker.pickerId, customer_id: null, state: 'sent' }]);
  });
});

describe('a slot order entering the queue', () => {
  it('is announced when its slot start comes within the horizon, once, with a push to idle pickers', async () => {
    const picker = await createPicker(svc, [STORE]);
    const phone = await registerPushDevice(svc, picker.auth, { appKind: 'picker', lang: 'en' });
    await sweepPicking(svc.deps); // the watermark
    const order = await anOrder();
    // Confirmed days ago, for a slot that now starts 24 h and 2 minutes from now: outside the
    // 24-hour horizon at confirmation.
    await svc.deps.db
      .updateTable('order_status_history')
      .set({ occurred_at: new Date(Date.now() - 3 * 24 * 3600_000) })
      .where('order_id', '=', order.orderId)
      .execute();
    const startsAt = (minutes: number) =>
      svc.deps.db
        .updateTable('orders')
        .set({ slot_starts_at: new Date(Date.now() + minutes * 60_000) })
        .where('id', '=', order.orderId)
        .execute();
    await startsAt(24 * 60 + 2);
    await sweepPicking(svc.deps);
    await drain();
    const added = () =>
      svc.deps.db
        .selectFrom('outbox_events')
        .select('payload')
        .where('order_id', '=', order.orderId)
        .where('type', '=', 'picker.queue.changed')
        .where(sql<boolean>`payload #>> '{event,reason}' = 'order_added'`)
        .execute();
    expect(await added()).toHaveLength(1); // at confirmation only
    expect(sentTo(phone.push_token).filter((m) => m.data.order_id === order.orderId)).toEqual([]);

    // Three minutes on, as if: the last sweep was three minutes ago, and the slot start has
    // crossed the horizon since.
    await startsAt(24 * 60 - 1);
    await svc.deps.db
      .updateTable('picker_queue_horizon')
      .set({ swept_until: new Date(Date.now() + (24 * 60 - 3) * 60_000) })
      .execute();
    expect((await sweepPicking(svc.deps)).announced).toBeGreaterThanOrEqual(1);
    const events = await added();
    expect(events).toHaveLength(2);
    assertMatchesSchema('PickerRealtimeEvent', (events[1]!.payload as { event: object }).event);
    await drain();
    expect(
      sentTo(phone.push_token)
        .filter((m) => m.data.order_id === order.orderId)
        .map((m) => m.data.kind),
    ).toEqual(['picker_queue']);
    // The next sweep does not announce it again.
    await sweepPicking(svc.deps);
    expect(await added()).toHaveLength(2);

    // An order confirmed with its slot already within the horizon was announced at confirmation:
    // the sweep that sees its slot start cross the horizon's edge does not announce it again.
    const recent = await anOrder();
    await svc.deps.db.updateTable('order_status_history').set({ occurred_at: new Date() }).where('order_id', '=', recent.orderId).execute();
    await svc.deps.db
      .updateTable('orders')
      .set({ slot_starts_at: new Date(Date.now() + (24 * 60 - 1) * 60_000) })
      .where('id', '=', recent.orderId)
      .execute();
    await svc.deps.db
      .updateTable('picker_queue_horizon')
      .set({ swept_until: new Date(Date.now() + (24 * 60 - 3) * 60_000) })
      .execute();
    await sweepPicking(svc.deps);
    const recentAdded = await svc.deps.db
      .selectFrom('outbox_events')
      .select('id')
      .where('order_id', '=', recent.orderId)
      .where(sql<boolean>`payload #>> '{event,reason}' = 'order_added'`)
      .execute();
    expect(recentAdded).toHaveLength(1);
  });
});
