// Push fan-out (order worker, job 1): outbox events with a notification_id become one push
// delivery per customer device; the picker events that push, one per picker device.
import { randomUUID } from 'node:crypto';
import {
  claimUnpushedEvents,
  customerPushTargets,
  insertPushDeliveries,
  markEventsPushed,
  orderFactsForPush,
  pickerPushTargets,
  storeQueuePushTargets,
  type OrderPushFacts,
  type PushDeliveryInput,
} from '../../db/queries/push.js';
import type { Executor } from '../../db/executor.js';
import type { PickerOutboxPayload, StoredTrackingEnvelope } from '../../db/queries/outbox.js';
import { pushNotice, quantityText, type PushEvent } from '../../domain/texts/orders.js';
import { pickerPushNotice } from '../../domain/picking/messages.js';
import type { AppDeps } from '../../services/deps.js';

type UnpushedEvent = Awaited<ReturnType<typeof claimUnpushedEvents>>[number];

/**
 * One batch of outbox events that push, fanned out in a fixed number of statements whatever the
 * batch holds: the events, the facts of their orders, their audiences' installations, the
 * deliveries, the mark. Returns how many events it took (a full batch: more may be waiting).
 */
export async function fanOutPushes(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const events = await claimUnpushedEvents(trx, deps.config.orders.worker.batchSize);
    if (!events.length) return 0;
    const audiences = await audiencesOf(trx, events, deps.config.picking.queueHorizonHours);
    const now = deps.clock.now();
    await insertPushDeliveries(
      trx,
      events.flatMap((e) => (e.type.startsWith('picker.') ? pickerDeliveries(e, audiences, now) : customerDeliveries(e, audiences, now))),
    );
    await markEventsPushed(
      trx,
      events.map((e) => e.id),
    );
    return events.length;
  });
}

/** Who the batch's events go to and what they say of their orders, each looked up once for the batch. */
interface Audiences {
  orders: Map<string, OrderPushFacts>;
  customerDevices: Map<string, { device_id: string; language: 'ru' | 'en' }[]>;
  storeQueueDevices: Map<string, PickerDevice[]>;
  pickerDevices: Map<number, PickerDevice[]>;
}
type PickerDevice = { device_id: string; picker_id: number | null; language: 'ru' | 'en' | null };

async function audiencesOf(trx: Executor, events: UnpushedEvent[], horizonHours: number): Promise<Audiences> {
  const distinct = <T>(values: (T | null | undefined)[]) => [...new Set(values.filter((v): v is T => v != null))];
  const customerEvents = events.filter((e) => !e.type.startsWith('picker.'));
  const queueEvents = events.filter((e) => e.type === 'picker.queue.changed');
  const cancelledEvents = events.filter((e) => e.type === 'picker.order.cancelled');
  const orders = await orderFactsForPush(trx, distinct(events.map((e) => e.order_id)), horizonHours);
  const customers = await customerPushTargets(trx, distinct(customerEvents.map((e) => e.customer_id)));
  const stores = await storeQueuePushTargets(trx, distinct(queueEvents.map((e) => e.store_id)));
  const pickers = await pickerPushTargets(trx, distinct(cancelledEvents.map((e) => audiencePickerOf(e))));
  const groupBy = <K, V>(rows: V[], key: (row: V) => K) => {
    const groups = new Map<K, V[]>();
    for (const row of rows) {
      const group = groups.get(key(row));
      if (group) group.push(row);
      else groups.set(key(row), [row]);
    }
    return groups;
  };
  return {
    orders: new Map(orders.map((o) => [o.id, o])),
    customerDevices: groupBy(customers, (d) => d.customer_id!),
    storeQueueDevices: groupBy(stores, (d) => d.store_id),
    pickerDevices: groupBy(pickers, (d) => d.picker_id!),
  };
}

/** The picker a cancellation is for (the one whose session the order had). */
const audiencePickerOf = (e: UnpushedEvent) => (e.payload as Partial<PickerOutboxPayload<'order.cancelled'>>).audience?.picker_id;

/** What the push of an order event says, from the stored envelope (in `language` where it has overrides). */
function pushEventOf(env: StoredTrackingEnvelope, order: OrderPushFacts, language: 'ru' | 'en'): PushEvent {
  // A tracking event of an older build reads as a tracking change alone.
  const { status = order.status, changes = ['delivery'] } = env.data;
  switch (env.type) {
    case 'delivery.tracking.changed':
      return { type: env.type, state: env.data.state, status, changes, reason: order.status_reason };
    case 'order.approval.requested': {
      const localized = { ...env.data, ...env.i18n?.[language] };
      const { approval, original } = localized as typeof env.data;
      return {
        type: env.type,
        status,
        changes,
        approvalKind: approval.kind,
        proposedName: approval.proposed.name,
        originalName: original.name,
        proposedQuantity: quantityText(approval.kind, String(approval.proposed.quantity), language),
      };
    }
    default:
      return { type: env.type, status, changes, orderType: order.type, paymentStatus: order.payment_status, reason: order.status_reason };
  }
}

/** A customer's order event, to the installations of the customer's app that want order news. */
function customerDeliveries(e: UnpushedEvent, audiences: Audiences, now: Date): PushDeliveryInput[] {
  const env = e.payload as StoredTrackingEnvelope;
  if (!e.customer_id || !e.order_id || !env.notification_id) return [];
  const devices = audiences.customerDevices.get(e.customer_id) ?? [];
  const order = audiences.orders.get(e.order_id);
  if (!devices.length || !order) return [];
  const language = devices[0]!.language;
  const notice = pushNotice(pushEventOf(env, order, language), order.no, language);
  // PushNotificationPayload: it selects the screen and triggers a re-read, it is not a snapshot
  // of the order. Made once, so every retry sends the same notification.
  const data: Record<string, string> = {
    notification_id: env.notification_id,
    kind: notice.kind,
    screen: env.type === 'order.approval.requested' ? 'order_approval' : 'order',
    title: notice.title,
    body: notice.body,
    sent_at: now.toISOString(),
    event_id: env.event_id,
    order_id: e.order_id,
    order_no: String(order.no),
    order_version: String(env.data.order_version),
    ...(env.type === 'order.approval.requested' ? { approval_id: String(env.data.approval.id) } : {}),
  };
  return devices.map((d) => ({
    notification_id: env.notification_id!,
    device_id: d.device_id,
    event_id: env.event_id,
    customer_id: e.customer_id!,
    order_id: e.order_id,
    title: notice.title,
    body: notice.body,
    data,
  }));
}

/**
 * A picker event that pushes (PushNotificationPayload `picker_*`): an order entering a store's
 * queue, to the store's pickers with no current session, if it is in the queue's horizon (a slot
 * order days ahead is not in the queue yet); the cancellation of a picker's order, to that
 * picker. Each in the language of the installation's registration.
 */
function pickerDeliveries(e: UnpushedEvent, audiences: Audiences, now: Date): PushDeliveryInput[] {
  if (!e.order_id || !e.store_id) return [];
  const order = audiences.orders.get(e.order_id);
  if (!order) return [];
  const cancelled = e.type === 'picker.order.cancelled';
  if (!cancelled && (order.status !== 'confirmed' || !order.in_horizon)) return [];
  const pickerId = audiencePickerOf(e);
  const targets = cancelled
    ? typeof pickerId === 'number'
      ? (audiences.pickerDevices.get(pickerId) ?? [])
      : []
    : (audiences.storeQueueDevices.get(e.store_id) ?? []);
  if (!targets.length) return [];
  const kind = cancelled ? 'picker_order_cancelled' : 'picker_queue';
  const notificationId = randomUUID();
  const sentAt = now.toISOString();
  return targets.map((t) => {
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
  });
}
