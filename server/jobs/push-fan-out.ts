// Push fan-out (order worker, job 1): outbox events with a notification_id become one push
// delivery per customer device; the picker events that push, one per picker device.
import { randomUUID } from 'node:crypto';
import {
  claimUnpushedEvents,
  customerPushTargets,
  insertPushDeliveries,
  markEventsPushed,
  orderFactsForPickerPush,
  orderFactsForPush,
  pickerPushTargets,
  storeQueuePushTargets,
} from '../../db/queries/push.js';
import type { Executor } from '../../db/executor.js';
import type { OrderStatus, TrackingState } from '../../db/tables/orders.js';
import { pushNotice } from '../../domain/texts/orders.js';
import { pickerPushNotice } from '../../domain/picking/messages.js';
import type { AppDeps } from '../deps.js';

interface Envelope {
  type: 'order.changed' | 'delivery.tracking.changed';
  event_id: string;
  notification_id: string | null;
  /** `status` and `changes` of a tracking event: absent from envelopes of older builds. */
  data: { order_id: string; order_version: number; status?: OrderStatus; changes?: string[]; state?: TrackingState };
}

type UnpushedEvent = Awaited<ReturnType<typeof claimUnpushedEvents>>[number];

export async function fanOutPushes(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const events = await claimUnpushedEvents(trx, deps.config.orders.worker.batchSize);
    for (const e of events) {
      if (e.type.startsWith('picker.')) await fanOutPickerPush(trx, deps, e);
      else await fanOutCustomerPush(trx, e, deps.clock.now());
    }
    await markEventsPushed(
      trx,
      events.map((e) => e.id),
    );
    return events.length;
  });
}

/** A customer's order event, to the installations of the customer's app. */
async function fanOutCustomerPush(trx: Executor, e: UnpushedEvent, now: Date): Promise<void> {
  const env = e.payload as Envelope;
  if (!e.customer_id || !e.order_id || !env.notification_id) return;
  const targets = await customerPushTargets(trx, e.customer_id);
  if (!targets.wantsOrderUpdates || !targets.deviceIds.length) return;
  const order = await orderFactsForPush(trx, e.order_id);
  if (!order) return;
  // A tracking event of an older build reads as a tracking change alone.
  const { status = order.status, changes = ['delivery'] } = env.data;
  const notice = pushNotice(
    env.type === 'delivery.tracking.changed'
      ? { type: env.type, state: env.data.state!, status, changes, reason: order.status_reason }
      : { type: env.type, status, changes, orderType: order.type, paymentStatus: order.payment_status, reason: order.status_reason },
    order.no,
    targets.language,
  );
  // PushNotificationPayload: it selects the screen and triggers a re-read, it is not a snapshot
  // of the order. Made once, so every retry sends the same notification.
  const data: Record<string, string> = {
    notification_id: env.notification_id,
    kind: notice.kind,
    screen: 'order',
    title: notice.title,
    body: notice.body,
    sent_at: now.toISOString(),
    event_id: env.event_id,
    order_id: e.order_id,
    order_no: String(order.no),
    order_version: String(env.data.order_version),
  };
  await insertPushDeliveries(
    trx,
    targets.deviceIds.map((deviceId) => ({
      notification_id: env.notification_id!,
      device_id: deviceId,
      event_id: env.event_id,
      customer_id: e.customer_id!,
      order_id: e.order_id,
      title: notice.title,
      body: notice.body,
      data,
    })),
  );
}

/**
 * A picker event that pushes (PushNotificationPayload `picker_*`): an order entering a store's
 * queue, to the store's pickers with no current session, if it is in the queue's horizon (a slot
 * order days ahead is not in the queue yet); the cancellation of a picker's order, to that
 * picker. Each in the language of the installation's registration.
 */
async function fanOutPickerPush(trx: Executor, deps: AppDeps, e: UnpushedEvent): Promise<void> {
  const payload = e.payload as { audience?: { picker_id?: number } };
  if (!e.order_id || !e.store_id) return;
  const order = await orderFactsForPickerPush(trx, e.order_id, deps.config.picking.queueHorizonHours);
  if (!order) return;
  const cancelled = e.type === 'picker.order.cancelled';
  if (!cancelled && (order.status !== 'confirmed' || !order.in_horizon)) return;
  const pickerId = payload.audience?.picker_id;
  const targets = cancelled
    ? typeof pickerId === 'number'
      ? await pickerPushTargets(trx, pickerId)
      : []
    : await storeQueuePushTargets(trx, e.store_id);
  if (!targets.length) return;
  const kind = cancelled ? 'picker_order_cancelled' : 'picker_queue';
  const notificationId = randomUUID();
  const sentAt = deps.clock.now().toISOString();
  await insertPushDeliveries(
    trx,
    targets.map((t) => {
      const notice = pickerPushNotice(
        cancelled ? { kind: 'picker_order_cancelled' } : { kind: 'picker_queue', isExpress: order.is_express },
        order.no,
        t.language ?? 'ru',
      );
      return {
        notification_id: notificationId,
        device_id: t.device_id,
        event_id: e.event_id,
        picker_id: t.picker_id!,
        order_id: e.order_id,
        title: notice.title,
        body: notice.body,
        data: {
          notification_id: notificationId,
          kind,
          screen: cancelled ? 'picker_session' : 'picker_queue',
          title: notice.title,
          body: notice.body,
          sent_at: sentAt,
          order_id: e.order_id!,
        },
      };
    }),
  );
}
