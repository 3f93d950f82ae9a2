// Picking sessions (tables of the 0007 migration): which orders a picker may see and command, the
// session reads and writes, closing and expiry. Query functions take the executor first; the
// handler owns the transaction.
//
// Lock order, the same on every path, so concurrent writers never deadlock: the picker row (start
// and taking a batch), then the order rows (a batch's in id order), then the session rows, then
// their totes. The database's cancellation trigger follows it too (UPDATE orders, then its
// sessions, then their totes).
import { sql, type Selectable } from 'kysely';
import { PICKING_SESSION_COLUMNS, qualified } from '../../columns.js';
import type { Executor } from '../../executor.js';
import type { ClosureSource, PickingSessionsTable, SessionStatus, TemperatureClass } from '../../tables/picking.js';

export type SessionRow = Selectable<PickingSessionsTable>;

export const OPEN_STATUSES: SessionStatus[] = ['active', 'ready_to_finish'];

/** A session `s` is current = open, or closed by the order's cancellation and not yet acknowledged. */
export const isCurrent = sql<boolean>`(s.status IN ('active', 'ready_to_finish') OR (s.closure_source = 'order_cancelled' AND s.cancellation_acknowledged_at IS NULL))`;

/**
 * Whether order `o` is the picker's to see and command: it is in one of the picker's stores, or
 * the picker holds its current session. The second keeps a picker taken off a store mid-session
 * able to finish, cancel or acknowledge it; otherwise that session would block every start.
 */
export const isPickersOrder = (pickerId: number) =>
  sql<boolean>`(EXISTS (SELECT 1 FROM picker_stores ps WHERE ps.store_id = o.store_id AND ps.picker_id = ${pickerId})
    OR EXISTS (SELECT 1 FROM picking_sessions s WHERE s.order_id = o.id AND s.picker_id = ${pickerId} AND ${isCurrent}))`;

/** The order row, locked for a picking change, when it is the picker's (isPickersOrder). */
export function lockOrderOfPicker(db: Executor, orderId: string, pickerId: number) {
  return db
    .selectFrom('orders as o')
    .select([
      'o.id',
      'o.no',
      'o.store_id',
      'o.status',
      'o.type',
      'o.payment_method',
      'o.payment_status',
      'o.goods_total',
      'o.delivery_cost',
      'o.customer_id',
    ])
    .where('o.id', '=', orderId)
    .where(isPickersOrder(pickerId))
    .forNoKeyUpdate()
    .executeTakeFirst();
}

export type LockedOrder = NonNullable<Awaited<ReturnType<typeof lockOrderOfPicker>>>;

/** The order row locked for a server-side picking change (expiry), whoever's store it is in. */
export async function lockOrder(db: Executor, orderId: string): Promise<boolean> {
  const row = await db.selectFrom('orders').select('id').where('id', '=', orderId).forNoKeyUpdate().executeTakeFirst();
  return row !== undefined;
}

/** Whether the order is the picker's (isPickersOrder), for reads that need no lock. */
export async function isOrderOfPicker(db: Executor, orderId: string, pickerId: number): Promise<boolean> {
  const row = await db
    .selectFrom('orders as o')
    .select('o.id')
    .where('o.id', '=', orderId)
    .where(isPickersOrder(pickerId))
    .executeTakeFirst();
  return row !== undefined;
}

/** Serialises the starts of one picker (at most one current session). */
export async function lockPicker(db: Executor, pickerId: number): Promise<void> {
  await db.selectFrom('pickers').select('id').where('id', '=', pickerId).forNoKeyUpdate().execute();
}

/** A session with what its views need from the order, the store and the picker. */
export function sessionHeads(db: Executor) {
  return db
    .selectFrom('picking_sessions as s')
    .innerJoin('orders as o', 'o.id', 's.order_id')
    .innerJoin('stores as st', 'st.id', 's.store_id')
    .innerJoin('pickers as p', 'p.id', 's.picker_id')
    .leftJoin('customers as c', 'c.id', 'o.customer_id')
    .select(qualified('s', PICKING_SESSION_COLUMNS))
    .select([
      'o.no as order_no',
      'o.is_express',
      'o.absence_action',
      'o.comment as customer_comment',
      'o.type as fulfillment_type',
      'o.payment_method',
      'o.status as order_status',
      'o.slot_id',
      'o.slot_date',
      'o.slot_start',
      'o.slot_end',
      'c.phone as customer_phone',
      'st.name_ru as store_name_ru',
      'st.name_en as store_name_en',
      'st.address_ru as store_address_ru',
      'st.address_en as store_address_en',
      'st.timezone as store_timezone',
      'p.login as picker_login',
      'p.display_name as picker_display_name',
      // The slot's window as instants: local date and time in the store's time zone.
      sql<Date | null>`(o.slot_date + o.slot_start) AT TIME ZONE st.timezone`.as('slot_starts_at'),
      sql<Date | null>`(o.slot_date + o.slot_end + CASE WHEN o.slot_end <= o.slot_start THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE st.timezone`.as(
        'slot_ends_at',
      ),
      sessionTotes.as('totes'),
    ]);
}

/** A session's totes as JSON (what PickingToteSchema shows); empty for a session outside a batch. */
export interface SessionTote {
  tote_id: number;
  temperature_class: TemperatureClass;
  label: string | null;
  bound_at: string | null;
  released_at: string | null;
  items_count: number;
}

const sessionTotes = sql<SessionTote[]>`(SELECT coalesce(json_agg(json_build_object(
    'tote_id', t.id, 'temperature_class', t.temperature_class, 'label', t.label, 'bound_at', t.bound_at, 'released_at', t.released_at,
    'items_count', (SELECT count(*) FROM picking_items i WHERE i.session_id = t.session_id AND i.tote_id = t.id AND i.state = 'picked'))
    ORDER BY t.id), '[]'::json) FROM picking_totes t WHERE t.session_id = s.id)`;

export type SessionHead = NonNullable<Awaited<ReturnType<ReturnType<typeof sessionHeads>['executeTakeFirst']>>>;

export const isOpen = sql<boolean>`s.status IN ('active', 'ready_to_finish')`;

/**
 * The session a picker command addresses, locked: the order's open session (the caller's or
 * another picker's), else the caller's latest closed session of the order.
 */
export function lockCommandSession(db: Executor, orderId: string, pickerId: number) {
  return sessionHeads(db)
    .where('s.order_id', '=', orderId)
    .where((eb) => eb.or([eb('s.picker_id', '=', pickerId), eb(isOpen, '=', true)]))
    .orderBy(isOpen, 'desc')
    .orderBy('s.id', 'desc')
    .limit(1)
    .forUpdate('s')
    .executeTakeFirst();
}

/** The latest session of the order: the open one, else the most recently closed (any picker). */
export function findLatestSessionOfOrder(db: Executor, orderId: string) {
  return sessionHeads(db).where('s.order_id', '=', orderId).orderBy(isOpen, 'desc').orderBy('s.id', 'desc').limit(1).executeTakeFirst();
}

/** The id of the order's latest session (as findLatestSessionOfOrder chooses it), for reads that need only its items. */
export async function latestSessionIdOfOrder(db: Executor, orderId: string): Promise<number | null> {
  const row = await db
    .selectFrom('picking_sessions as s')
    .select('s.id')
    .where('s.order_id', '=', orderId)
    .orderBy(isOpen, 'desc')
    .orderBy('s.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** The caller's latest session of the order, whatever its status. */
export function findLatestSessionOfPicker(db: Executor, orderId: string, pickerId: number) {
  return sessionHeads(db)
    .where('s.order_id', '=', orderId)
    .where('s.picker_id', '=', pickerId)
    .orderBy('s.id', 'desc')
    .limit(1)
    .forUpdate('s')
    .executeTakeFirst();
}

export function findSessionHead(db: Executor, sessionId: number) {
  return sessionHeads(db).where('s.id', '=', sessionId).executeTakeFirst();
}

/**
 * The picker's current session: at most one outside a batch (a unique index says so); of a batch's
 * sessions, a cancellation still to acknowledge first, then the oldest open one.
 */
export function findCurrentSession(db: Executor, pickerId: number) {
  return sessionHeads(db)
    .where('s.picker_id', '=', pickerId)
    .where(isCurrent, '=', true)
    .orderBy(isOpen)
    .orderBy('s.id')
    .limit(1)
    .executeTakeFirst();
}

export function findCurrentSessionRef(db: Executor, pickerId: number) {
  return db
    .selectFrom('picking_sessions as s')
    .select(['s.id', 's.order_id', 's.store_id'])
    .where('s.picker_id', '=', pickerId)
    .where(isCurrent, '=', true)
    .orderBy(isOpen)
    .orderBy('s.id')
    .limit(1)
    .executeTakeFirst();
}

export interface NewSession {
  orderId: string;
  pickerId: number;
  storeId: string;
  status: 'active' | 'ready_to_finish';
  maxAddedItems: number;
  originalTotal: string;
  currentTotal: string;
  /** The batch the session is taken in; absent for a session started on its own. */
  batchId?: number;
}

export async function insertSession(db: Executor, s: NewSession): Promise<number> {
  const row = await db
    .insertInto('picking_sessions')
    .values({
      order_id: s.orderId,
      picker_id: s.pickerId,
      store_id: s.storeId,
      status: s.status,
      max_added_items: s.maxAddedItems,
      original_total: s.originalTotal,
      current_total: s.currentTotal,
      batch_id: s.batchId ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** One applied change: version + 1, the derived status and totals. Returns the new version and time. */
export function bumpSession(db: Executor, sessionId: number, change: { status: SessionStatus; currentTotal: string; addedItems?: number }) {
  return db
    .updateTable('picking_sessions')
    .set((eb) => ({
      version: eb('version', '+', 1),
      status: change.status,
      current_total: change.currentTotal,
      ...(change.addedItems !== undefined ? { added_items_count: eb('added_items_count', '+', change.addedItems) } : {}),
      updated_at: sql<Date>`now()`,
    }))
    .where('id', '=', sessionId)
    .returning(['version', 'updated_at', 'status', 'added_items_count'])
    .executeTakeFirstOrThrow();
}

/** The outcome of settling a completed session's difference with the bank (orders worker). */
export async function setReconciliationStatus(
  db: Executor,
  sessionId: number,
  status: 'completed' | 'failed' | 'not_required',
): Promise<void> {
  await db
    .updateTable('picking_sessions')
    .set({ reconciliation_status: status, updated_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('reconciliation_status', '=', 'pending')
    .execute();
}

/** Closes a session (finish, picker cancel, expiry); version + 1. */
export function closeSession(
  db: Executor,
  sessionId: number,
  c: {
    status: 'completed' | 'cancelled';
    closureSource: Exclude<ClosureSource, 'none' | 'order_cancelled'>;
    finalTotal: string;
    reconciliationStatus: 'not_required' | 'pending' | null;
    cancellationReason: string | null;
    cancelAfterResolvedItems: number | null;
  },
) {
  return db
    .updateTable('picking_sessions')
    .set((eb) => ({
      version: eb('version', '+', 1),
      status: c.status,
      closure_source: c.closureSource,
      current_total: c.finalTotal,
      final_total: c.finalTotal,
      reconciliation_status: c.reconciliationStatus,
      cancellation_reason: c.cancellationReason,
      cancel_after_resolved_items: c.cancelAfterResolvedItems,
      closed_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    }))
    .where('id', '=', sessionId)
    .returning(['version', 'updated_at', 'status'])
    .executeTakeFirstOrThrow();
}

/** cancelled/ack: the order-cancelled session stops being the picker's current one. */
export async function acknowledgeCancellation(db: Executor, sessionId: number): Promise<void> {
  await db
    .updateTable('picking_sessions')
    .set({ cancellation_acknowledged_at: sql<Date>`coalesce(cancellation_acknowledged_at, now())` })
    .where('id', '=', sessionId)
    .execute();
}

/**
 * Open sessions without an applied change for `idleMinutes` (expiry candidates). Found through the
 * partial index of open sessions (picking_sessions_one_open_per_order): its predicate is written out
 * as literals, since a parameter would keep a prepared statement's generic plan from using it.
 */
export function findIdleSessions(db: Executor, idleMinutes: number, limit = 100) {
  return (
    db
      .selectFrom('picking_sessions')
      .select(['id', 'order_id', 'picker_id', 'updated_at'])
      .where(sql<boolean>`status IN ('active', 'ready_to_finish')`)
      .where('updated_at', '<', sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
      // A batch is walked as one: its sessions are idle only while all of them are.
      .where(
        // Parenthesised: a raw condition is joined to the others with AND as written.
        sql<boolean>`(batch_id IS NULL OR NOT EXISTS (SELECT 1 FROM picking_sessions b WHERE b.batch_id = picking_sessions.batch_id
        AND b.status IN ('active', 'ready_to_finish') AND b.updated_at >= now() - make_interval(mins => ${idleMinutes})))`,
      )
      .orderBy('updated_at')
      .limit(limit)
      .execute()
  );
}
