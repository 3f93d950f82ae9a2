// The one way an order change becomes an event (TrackingEventEnvelope of the spec): the order's
// version rises by one and the envelope is written to the outbox in the caller's transaction, so
// the event exists if and only if the change committed. Push delivery and the WebSocket fan-out
// both read the outbox.
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { components } from '../../generated/api.test.js';
import type { Executor } from '../executor.js';
import type { TrackingState } from '../tables/orders.js';
import { outboxInsertSql, type OrderChange, type OutboxPayload, type TrackingEnvelope, type TrackingEventType } from './outbox.js';

export type { OrderChange } from './outbox.js';

export interface TrackingChange {
  previous_state: TrackingState;
  state: TrackingState;
  comment: string | null;
  eta: string | null;
  /** `display` in each language; the socket sends the one of its connection. */
  display: { ru: string; en: string };
}

/** What the statement writing an envelope adds to `data`: the order's new version, status (and number). */
type DataBeforeBump<T extends TrackingEventType> = Omit<TrackingEnvelope<T>['data'], 'order_version' | 'status' | 'order_no'>;
/** The envelope before the statement adds to `data` and sets the top-level `order_id`/`order_version`. */
type EnvelopeBeforeBump<T extends TrackingEventType> = Omit<TrackingEnvelope<T>, 'data' | 'order_id' | 'order_version'> & {
  data: DataBeforeBump<T>;
};

export interface RecordedEvent {
  event_id: string;
  notification_id: string | null;
  order_version: number;
}

/**
 * Records one committed change of an order: its version rises once and an `order.changed` announces
 * it (what a client following the interface spec listens to, then re-reads the order); when
 * `tracking` is given a `delivery.tracking.changed` of the same version follows it. `notify` says
 * whether the change is worth a push; the customer gets one (and the envelope carries its
 * `notification_id`: the tracking one when there is one) when they have the app installed and
 * want order updates. Every envelope names `order_id` and `order_version` at the top level too.
 * Returns the tracking event when there is one, else the `order.changed`.
 */
export async function recordOrderChange(
  db: Executor,
  orderId: string,
  changes: OrderChange[],
  /** `now`: when the change happened (the caller's clock), the event's `occurred_at`. */
  options: { now: Date; tracking?: TrackingChange; notify?: boolean },
): Promise<RecordedEvent> {
  const eventId = randomUUID();
  const notificationId = options.notify ? randomUUID() : null;
  const occurredAt = options.now.toISOString();
  const type: TrackingEventType = options.tracking ? 'delivery.tracking.changed' : 'order.changed';
  // `data` without what only the version bump knows (new version, status, number): the one
  // statement below adds those, so a change costs one round trip, not two. The statement's
  // additions are checked against the spec by test/runtime/outbox-events.test.ts.
  const data: DataBeforeBump<'delivery.tracking.changed'> | DataBeforeBump<'order.changed'> = options.tracking
    ? {
        event_id: eventId,
        order_id: orderId,
        state: options.tracking.state,
        previous_state: options.tracking.previous_state,
        display: options.tracking.display.en,
        comment: options.tracking.comment,
        eta: options.tracking.eta,
        changes: changes.includes('delivery') ? changes : ['delivery', ...changes],
      }
    : { event_id: eventId, order_id: orderId, changes };
  const envelope: EnvelopeBeforeBump<TrackingEventType> = {
    type,
    event_id: eventId,
    notification_id: notificationId,
    occurred_at: occurredAt,
    data,
    // Per-language overrides of `data`, applied by the socket for its connection's language.
    ...(options.tracking ? { i18n: { ru: { display: options.tracking.display.ru }, en: { display: options.tracking.display.en } } } : {}),
  };
  const bumped = options.tracking
    ? sql`jsonb_build_object('order_version', o.order_version, 'order_no', o.no, 'status', o.status)`
    : sql`jsonb_build_object('order_version', o.order_version, 'status', o.status)`;
  // A tracking change is announced first by an order.changed of the same version (no push of its
  // own: the tracking event carries the alert). The main INSERT reads it, so it is written (and
  // numbered in the outbox) first, and delivered first.
  const announcement = options.tracking
    ? (() => {
        const id = randomUUID();
        const announced: DataBeforeBump<'order.changed'> = { event_id: id, order_id: orderId, changes: data.changes };
        const head: Omit<EnvelopeBeforeBump<'order.changed'>, 'data'> & { order_id: string } = {
          type: 'order.changed',
          event_id: id,
          notification_id: null,
          occurred_at: occurredAt,
          order_id: orderId,
        };
        const insert = outboxInsertSql(
          {
            type: 'order.changed',
            event_id: sql`${id}`,
            customer_id: sql`o.customer_id`,
            store_id: sql`o.store_id`,
            order_id: sql`${orderId}`,
            payload: sql<TrackingEnvelope<'order.changed'>>`${JSON.stringify(head)}::jsonb
                   || jsonb_build_object('order_version', o.order_version,
                        'data', ${JSON.stringify(announced)}::jsonb || jsonb_build_object('order_version', o.order_version, 'status', o.status))`,
          },
          sql`FROM o RETURNING id`,
        );
        return sql`, announced AS (${insert})`;
      })()
    : sql``;
  const written = outboxInsertSql(
    {
      type,
      event_id: sql`${eventId}`,
      customer_id: sql`o.customer_id`,
      store_id: sql`o.store_id`,
      order_id: sql`${orderId}`,
      payload: sql<OutboxPayload<'order.changed' | 'delivery.tracking.changed'>>`jsonb_set(
          jsonb_set(${JSON.stringify(envelope)}::jsonb, '{data}', ${JSON.stringify(data)}::jsonb || ${bumped}),
          '{notification_id}', coalesce(to_jsonb((SELECT notification_id FROM pushed)), 'null'::jsonb))
        || jsonb_build_object('order_id', ${orderId}::text, 'order_version', o.order_version)`,
    },
    sql`FROM o${options.tracking ? sql`, (SELECT count(*) FROM announced) AS first_announced` : sql``}
      RETURNING (payload #>> '{data,order_version}')::int AS order_version, payload ->> 'notification_id' AS notification_id`,
  );
  // The envelope's notification_id is the push's, so it is set only when a push will go out:
  // the customer has an installation of the app and has not turned order updates off.
  const { rows } = await sql<{ order_version: number; notification_id: string | null }>`
    WITH o AS (
      UPDATE orders SET order_version = order_version + 1, updated_at = now() WHERE id = ${orderId}
      RETURNING order_version, customer_id, store_id, status, no
    ), pushed AS (
      SELECT ${notificationId}::uuid AS notification_id FROM o
      WHERE ${notificationId}::uuid IS NOT NULL
        AND EXISTS (SELECT 1 FROM push_devices d WHERE d.customer_id = o.customer_id AND d.app_kind = 'customer')
        AND coalesce((SELECT p.push_order_updates FROM customer_preferences p WHERE p.customer_id = o.customer_id), true)
    )${announcement}
    ${written}`.execute(db);
  if (!rows.length) throw new Error(`recordOrderChange: no order ${orderId}`);
  return { event_id: eventId, notification_id: rows[0]!.notification_id, order_version: rows[0]!.order_version };
}

/**
 * The outbox row of an `order.changed` without a push, for a statement that raises the order's
 * version itself (picker item commands, order creation: one round trip for the change and its
 * event): `payload` is `jsonb_set(envelope, '{data}', data || {order_version, status})` with the
 * version and status of the changed row, as recordOrderChange writes it.
 */
export function orderChangedEvent(orderId: string, changes: OrderChange[], now: Date): { eventId: string; envelope: string; data: string } {
  const eventId = randomUUID();
  const data: DataBeforeBump<'order.changed'> = { event_id: eventId, order_id: orderId, changes };
  const envelope: EnvelopeBeforeBump<'order.changed'> = {
    type: 'order.changed',
    event_id: eventId,
    notification_id: null,
    occurred_at: now.toISOString(),
    data,
  };
  return { eventId, envelope: JSON.stringify(envelope), data: JSON.stringify(data) };
}

/**
 * The INSERT of an `order.changed` without a push (orderChangedEvent) inside a statement that
 * raises the order's version itself: `row` names the CTE that returns the changed order's
 * order_version, customer_id, store_id and status. One row when `row` has one, else none.
 */
export function orderChangedInsertSql(orderId: string, changes: OrderChange[], now: Date, row: string): RawBuilder<unknown> {
  const e = orderChangedEvent(orderId, changes, now);
  const column = (c: string) => sql.ref(`${row}.${c}`);
  return outboxInsertSql(
    {
      type: 'order.changed',
      event_id: sql`${e.eventId}::uuid`,
      customer_id: column('customer_id'),
      store_id: column('store_id'),
      order_id: sql`${orderId}::uuid`,
      payload: sql<TrackingEnvelope<'order.changed'>>`jsonb_set(${e.envelope}::jsonb, '{data}',
        ${e.data}::jsonb || jsonb_build_object('order_version', ${column('order_version')}, 'status', ${column('status')}))`,
    },
    sql`FROM ${sql.table(row)}`,
  );
}

type Schemas = components['schemas'];

/** What an `order.approval.requested` tells the customer, in each language (the socket picks its connection's). */
export interface ApprovalRequestedData {
  approval: { ru: Schemas['ItemApprovalSchema']; en: Schemas['ItemApprovalSchema'] };
  original: { ru: Schemas['ApprovalOriginalSchema']; en: Schemas['ApprovalOriginalSchema'] };
}

/**
 * The INSERT of an `order.approval.requested` inside a statement that raises the order's version
 * itself and writes its `order.changed` (`after`, a CTE the INSERT waits for, so the announcement
 * is numbered first): `row` names the CTE returning the changed order's order_version,
 * customer_id, store_id, status and no. It carries a push's notification_id when the customer has
 * the app installed and wants order updates (push fan-out sends it).
 */
export function approvalRequestedInsertSql(
  orderId: string,
  d: ApprovalRequestedData,
  now: Date,
  row: string,
  after: string,
): RawBuilder<unknown> {
  const eventId = randomUUID();
  const notificationId = randomUUID();
  const data: DataBeforeBump<'order.approval.requested'> = {
    event_id: eventId,
    order_id: orderId,
    changes: ['approval'],
    approval: d.approval.en,
    original: d.original.en,
  };
  const envelope: Omit<EnvelopeBeforeBump<'order.approval.requested'>, 'notification_id'> = {
    type: 'order.approval.requested',
    event_id: eventId,
    occurred_at: now.toISOString(),
    data,
    i18n: { ru: { approval: d.approval.ru, original: d.original.ru }, en: { approval: d.approval.en, original: d.original.en } },
  };
  const column = (c: string) => sql.ref(`${row}.${c}`);
  return outboxInsertSql(
    {
      type: 'order.approval.requested',
      event_id: sql`${eventId}::uuid`,
      customer_id: column('customer_id'),
      store_id: column('store_id'),
      order_id: sql`${orderId}::uuid`,
      payload: sql<TrackingEnvelope<'order.approval.requested'>>`jsonb_set(${JSON.stringify(envelope)}::jsonb, '{data}',
          ${JSON.stringify(data)}::jsonb
          || jsonb_build_object('order_version', ${column('order_version')}, 'status', ${column('status')}, 'order_no', ${column('no')}))
        || jsonb_build_object('order_id', ${orderId}::text, 'order_version', ${column('order_version')},
          'notification_id', CASE
            WHEN EXISTS (SELECT 1 FROM push_devices d WHERE d.customer_id = ${column('customer_id')} AND d.app_kind = 'customer')
             AND coalesce((SELECT p.push_order_updates FROM customer_preferences p WHERE p.customer_id = ${column('customer_id')}), true)
            THEN ${notificationId}::text END)`,
    },
    sql`FROM ${sql.table(row)}, (SELECT count(*) FROM ${sql.table(after)}) AS announced_first`,
  );
}
