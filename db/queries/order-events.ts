// The one way an order change becomes an event (TrackingEventEnvelope of the spec): the order's
// version rises by one and the envelope is written to the outbox in the caller's transaction, so
// the event exists if and only if the change committed. Push delivery and the WebSocket fan-out
// both read the outbox.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import type { OrderStatus, TrackingState } from '../tables/orders.js';

export type OrderChange = 'status' | 'picking_result' | 'payment' | 'can_cancel' | 'delivery';

export interface TrackingChange {
  previous_state: TrackingState;
  state: TrackingState;
  comment: string | null;
  eta: string | null;
  /** `display` in each language; the socket sends the one of its connection. */
  display: { ru: string; en: string };
}

export interface RecordedEvent {
  event_id: string;
  notification_id: string | null;
  order_version: number;
}

/**
 * Records one committed change of an order: `delivery.tracking.changed` when `tracking` is given,
 * `order.changed` otherwise. `notify` says whether the customer gets a push for it (then the
 * envelope carries the push's `notification_id`).
 */
export async function recordOrderChange(
  db: Executor,
  orderId: string,
  changes: OrderChange[],
  options: { tracking?: TrackingChange; notify?: boolean } = {},
): Promise<RecordedEvent> {
  const order = await db
    .updateTable('orders')
    .set((eb) => ({ order_version: eb('order_version', '+', 1), updated_at: sql<Date>`now()` }))
    .where('id', '=', orderId)
    .returning(['order_version', 'customer_id', 'store_id', 'status', 'no'])
    .executeTakeFirstOrThrow();
  const eventId = randomUUID();
  const notificationId = options.notify ? randomUUID() : null;
  const occurredAt = new Date().toISOString();
  const type = options.tracking ? 'delivery.tracking.changed' : 'order.changed';
  const data = options.tracking
    ? {
        event_id: eventId,
        order_id: orderId,
        order_no: order.no,
        order_version: order.order_version,
        state: options.tracking.state,
        previous_state: options.tracking.previous_state,
        display: options.tracking.display.en,
        comment: options.tracking.comment,
        eta: options.tracking.eta,
      }
    : { event_id: eventId, order_id: orderId, order_version: order.order_version, status: order.status as OrderStatus, changes };
  const envelope = {
    type,
    event_id: eventId,
    notification_id: notificationId,
    occurred_at: occurredAt,
    data,
    // Per-language overrides of `data`, applied by the socket for its connection's language.
    ...(options.tracking ? { i18n: { ru: { display: options.tracking.display.ru }, en: { display: options.tracking.display.en } } } : {}),
  };
  await db
    .insertInto('outbox_events')
    .values({ event_id: eventId, type, customer_id: order.customer_id, store_id: order.store_id, order_id: orderId, payload: JSON.stringify(envelope) })
    .execute();
  return { event_id: eventId, notification_id: notificationId, order_version: order.order_version };
}
