// Query functions of push delivery: outbox events still to be fanned out to devices, the
// customer's devices and preferences, and the per-device deliveries the worker sends and retries.
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import type { PushDeliveryState } from '../tables/payments.js';

/** Outbox events that carry a notification_id and were not fanned out yet, locked for this worker. */
export function claimUnpushedEvents(db: Executor, limit: number) {
  return db
    .selectFrom('outbox_events')
    .select(['id', 'event_id', 'type', 'customer_id', 'order_id', 'payload'])
    .where('pushed_at', 'is', null)
    .where(sql<boolean>`(payload->>'notification_id') IS NOT NULL`)
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export async function markEventsPushed(db: Executor, ids: number[]): Promise<void> {
  if (ids.length) await db.updateTable('outbox_events').set({ pushed_at: sql<Date>`now()` }).where('id', 'in', ids).execute();
}

/** The customer's app installations and whether (and in which language) they want order pushes. */
export async function customerPushTargets(db: Executor, customerId: string) {
  const [devices, prefs] = await Promise.all([
    db.selectFrom('push_devices').select(['device_id']).where('customer_id', '=', customerId).where('app_kind', '=', 'customer').execute(),
    db.selectFrom('customer_preferences').select(['language', 'push_order_updates']).where('customer_id', '=', customerId).executeTakeFirst(),
  ]);
  return { deviceIds: devices.map((d) => d.device_id), language: prefs?.language ?? 'ru', wantsOrderUpdates: prefs?.push_order_updates ?? true };
}

export function orderFactsForPush(db: Executor, orderId: string) {
  return db.selectFrom('orders').select(['no', 'type', 'status', 'status_reason', 'payment_status']).where('id', '=', orderId).executeTakeFirst();
}

export async function insertPushDeliveries(
  db: Executor,
  rows: { notification_id: string; device_id: string; event_id: string; customer_id: string; order_id: string | null; title: string; body: string; data: Record<string, string> }[],
): Promise<void> {
  if (!rows.length) return;
  await db
    .insertInto('push_deliveries')
    .values(rows.map((r) => ({ ...r, data: JSON.stringify(r.data) })))
    .onConflict((oc) => oc.columns(['notification_id', 'device_id']).doNothing())
    .execute();
}

/** Deliveries due now with the device's current token, locked for this worker. */
export function claimDuePushDeliveries(db: Executor, limit: number) {
  return db
    .selectFrom('push_deliveries as p')
    .leftJoin('push_devices as d', (j) => j.onRef('d.device_id', '=', 'p.device_id').onRef('d.customer_id', '=', 'p.customer_id'))
    .select(['p.notification_id', 'p.device_id', 'p.title', 'p.body', 'p.data', 'p.attempts', 'd.push_token', 'd.platform'])
    .where('p.state', '=', 'pending')
    .where('p.next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('p.next_attempt_at')
    .limit(limit)
    .forUpdate('p')
    .skipLocked()
    .execute();
}

export type DuePushRow = Awaited<ReturnType<typeof claimDuePushDeliveries>>[number];

export async function finishPushDelivery(
  db: Executor,
  key: { notification_id: string; device_id: string },
  outcome: { state: Exclude<PushDeliveryState, 'pending'>; error?: string } | { state: 'pending'; error: string; delaySeconds: number },
): Promise<void> {
  await db
    .updateTable('push_deliveries')
    .set((eb) => ({
      state: outcome.state,
      attempts: eb('attempts', '+', 1),
      last_error: outcome.error ?? null,
      sent_at: outcome.state === 'sent' ? sql<Date>`now()` : null,
      next_attempt_at: outcome.state === 'pending' ? sql<Date>`now() + make_interval(secs => ${outcome.delaySeconds})` : sql<Date>`now()`,
    }))
    .where('notification_id', '=', key.notification_id)
    .where('device_id', '=', key.device_id)
    .execute();
}

/** The provider says the token reaches nobody: the installation is forgotten. */
export async function forgetPushDevice(db: Executor, deviceId: string, token: string): Promise<void> {
  // Only if the token is still the dead one: the app may have re-registered a fresh token meanwhile.
  await db.deleteFrom('push_devices').where('device_id', '=', deviceId).where('push_token', '=', token).execute();
}
