// Query functions of push delivery: outbox events still to be fanned out to devices, the
// customer's devices and preferences, and the per-device deliveries the worker sends and retries.
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import { isCurrent } from './picking/sessions.js';
import type { PushDeliveryState } from '../tables/payments.js';

/**
 * Outbox events that push and were not fanned out yet, locked for this worker: a customer's
 * order events that carry a notification_id, and the picker events of PushNotificationPayload
 * (an order entering a store's queue, the cancellation of a picker's order). The same predicate
 * as the partial index outbox_events_push_pending (migration 0020).
 */
export function claimUnpushedEvents(db: Executor, limit: number) {
  return db
    .selectFrom('outbox_events')
    .select(['id', 'event_id', 'type', 'customer_id', 'store_id', 'order_id', 'payload'])
    .where('pushed_at', 'is', null)
    .where(
      sql<boolean>`((payload->>'notification_id') IS NOT NULL
  OR type = 'picker.order.cancelled'
  OR (type = 'picker.queue.changed' AND payload #>> '{event,reason}' = 'order_added'))`,
    )
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function markEventsPushed(db: Executor, ids: number[]): Promise<void> {
  if (ids.length)
    await db
      .updateTable('outbox_events')
      .set({ pushed_at: sql<Date>`now()` })
      .where(sql<boolean>`id = ANY(${ids}::bigint[])`)
      .execute();
}

/**
 * The installations of these customers that want order pushes, with the customer's language: one
 * row per device (a customer with push_order_updates off, or with no device, has none).
 */
export async function customerPushTargets(db: Executor, customerIds: string[]) {
  if (!customerIds.length) return [];
  return db
    .selectFrom('push_devices as d')
    .leftJoin('customer_preferences as p', 'p.customer_id', 'd.customer_id')
    .select(['d.customer_id', 'd.device_id'])
    .select(sql<'ru' | 'en'>`coalesce(p.language, 'ru')`.as('language'))
    .where(sql<boolean>`d.customer_id = ANY(${customerIds}::uuid[])`)
    .where('d.app_kind', '=', 'customer')
    .where(sql<boolean>`coalesce(p.push_order_updates, true)`)
    .orderBy('d.device_id')
    .execute();
}

/**
 * Picker installations to tell that an order entered one of these stores' queues: those of each
 * store's active pickers with no current session (a picker at work has the queue open).
 */
export async function storeQueuePushTargets(db: Executor, storeIds: string[]) {
  if (!storeIds.length) return [];
  return (
    db
      .selectFrom('push_devices as d')
      .innerJoin('pickers as p', 'p.id', 'd.picker_id')
      .innerJoin('picker_stores as ps', 'ps.picker_id', 'p.id')
      .select(['ps.store_id', 'd.device_id', 'd.picker_id', 'd.language'])
      .where(sql<boolean>`ps.store_id = ANY(${storeIds}::uuid[])`)
      .where('d.app_kind', '=', 'picker')
      .where('p.is_active', '=', true)
      // No current session: none open, and none closed by its order's cancellation still to acknowledge.
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('picking_sessions as s').select('s.id').whereRef('s.picker_id', '=', 'p.id').where(isCurrent))),
      )
      .orderBy('d.device_id')
      .execute()
  );
}

/** These pickers' installations (the cancellation of the order of their session). */
export async function pickerPushTargets(db: Executor, pickerIds: number[]) {
  if (!pickerIds.length) return [];
  return db
    .selectFrom('push_devices')
    .select(['device_id', 'picker_id', 'language'])
    .where(sql<boolean>`picker_id = ANY(${pickerIds}::int[])`)
    .where('app_kind', '=', 'picker')
    .orderBy('device_id')
    .execute();
}

/**
 * What the notifications of these orders say of them: for a customer's (number, type, status,
 * reason, payment) and for a picker's (express, and whether the order is in the queue's horizon).
 */
export async function orderFactsForPush(db: Executor, orderIds: string[], horizonHours: number) {
  if (!orderIds.length) return [];
  return db
    .selectFrom('orders')
    .select([
      'id',
      'no',
      'type',
      'status',
      'status_reason',
      'payment_status',
      'is_express',
      sql<boolean>`is_express OR slot_starts_at IS NULL OR slot_starts_at <= now() + make_interval(hours => ${horizonHours})`.as(
        'in_horizon',
      ),
    ])
    .where(sql<boolean>`id = ANY(${orderIds}::uuid[])`)
    .execute();
}

export type OrderPushFacts = Awaited<ReturnType<typeof orderFactsForPush>>[number];

export interface PushDeliveryInput {
  notification_id: string;
  device_id: string;
  event_id: string;
  customer_id?: string;
  picker_id?: number;
  order_id: string | null;
  title: string;
  body: string;
  data: Record<string, string>;
}

/**
 * New deliveries, in the order given (their seq orders one device's notifications); a repeat is
 * ignored. One statement of one text whatever the number of rows (arrays, not a VALUES list that
 * would make a new prepared statement for every row count).
 */
export async function insertPushDeliveries(db: Executor, rows: PushDeliveryInput[]): Promise<void> {
  if (!rows.length) return;
  const column = <K extends keyof PushDeliveryInput>(key: K) => rows.map((r) => r[key] ?? null);
  await sql`INSERT INTO push_deliveries (notification_id, device_id, event_id, customer_id, picker_id, order_id, title, body, data)
    SELECT r.notification_id, r.device_id, r.event_id, r.customer_id, r.picker_id, r.order_id, r.title, r.body, r.data
    FROM unnest(${column('notification_id')}::uuid[], ${column('device_id')}::uuid[], ${column('event_id')}::uuid[],
                ${column('customer_id')}::uuid[], ${column('picker_id')}::int[], ${column('order_id')}::uuid[],
                ${column('title')}::text[], ${column('body')}::text[], ${rows.map((r) => JSON.stringify(r.data))}::jsonb[])
      WITH ORDINALITY AS r(notification_id, device_id, event_id, customer_id, picker_id, order_id, title, body, data, n)
    ORDER BY r.n
    ON CONFLICT (notification_id, device_id) DO NOTHING`.execute(db);
}

/**
 * Deliveries due now with the device's current token (null when the installation was removed or
 * moved to someone else), oldest first, locked for this worker. `superseded`: a later
 * notification about the same order was made for the device, so this one is not worth sending
 * (a phone back online shows the order's latest news); payment notices ask the customer to act
 * and are never superseded.
 */
export function claimDuePushDeliveries(db: Executor, limit: number) {
  return db
    .selectFrom('push_deliveries as p')
    .leftJoin('push_devices as d', (j) =>
      j
        .onRef('d.device_id', '=', 'p.device_id')
        .on((eb) => eb.or([eb('d.customer_id', '=', eb.ref('p.customer_id')), eb('d.picker_id', '=', eb.ref('p.picker_id'))])),
    )
    .select(['p.notification_id', 'p.device_id', 'p.title', 'p.body', 'p.data', 'p.attempts', 'd.push_token', 'd.platform'])
    .select(
      sql<boolean>`p.order_id IS NOT NULL AND p.data->>'kind' <> 'payment'
        AND NOT (p.data->>'kind' = 'replacement_approval' AND EXISTS (
          SELECT 1 FROM item_approvals a WHERE a.id = (p.data->>'approval_id')::bigint AND a.status = 'pending'))
        AND EXISTS (
        SELECT 1 FROM push_deliveries n WHERE n.device_id = p.device_id AND n.order_id = p.order_id AND n.seq > p.seq AND n.state IN ('pending', 'sent'))`.as(
        'superseded',
      ),
    )
    .where('p.state', '=', 'pending')
    .where('p.next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('p.next_attempt_at')
    .orderBy('p.seq')
    .limit(limit)
    .forUpdate('p')
    .skipLocked()
    .execute();
}

export type DuePushRow = Awaited<ReturnType<typeof claimDuePushDeliveries>>[number];

/** What became of one delivery: sent, given up on (with why), or due again after a delay. */
export type PushDeliveryOutcome = { notification_id: string; device_id: string } & (
  { state: Exclude<PushDeliveryState, 'pending'>; error?: string } | { state: 'pending'; error: string; delaySeconds: number }
);

/** Records what became of a batch of deliveries, in one statement. */
export async function finishPushDeliveries(db: Executor, outcomes: PushDeliveryOutcome[]): Promise<void> {
  if (!outcomes.length) return;
  await sql`UPDATE push_deliveries p
    SET state = o.state,
        attempts = p.attempts + 1,
        last_error = o.error,
        sent_at = CASE WHEN o.state = 'sent' THEN now() END,
        next_attempt_at = now() + make_interval(secs => o.delay_seconds)
    FROM unnest(${outcomes.map((o) => o.notification_id)}::uuid[], ${outcomes.map((o) => o.device_id)}::uuid[],
                ${outcomes.map((o) => o.state)}::text[], ${outcomes.map((o) => o.error ?? null)}::text[],
                ${outcomes.map((o) => (o.state === 'pending' ? o.delaySeconds : 0))}::int[])
      AS o(notification_id, device_id, state, error, delay_seconds)
    WHERE p.notification_id = o.notification_id AND p.device_id = o.device_id`.execute(db);
}

/** The provider says the token reaches nobody: the installation is forgotten. */
export async function forgetPushDevice(db: Executor, deviceId: string, token: string): Promise<void> {
  // Only if the token is still the dead one: the app may have re-registered a fresh token meanwhile.
  await db.deleteFrom('push_devices').where('device_id', '=', deviceId).where('push_token', '=', token).execute();
}
