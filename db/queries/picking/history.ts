// A picker's closed sessions (completed and cancelled): the list with per-session counts, the
// totals of a period, and the walks behind the picking rates (a picker's, and every store's of
// the last hour). Counts are taken from the items as they ended; `is_resolved` and the states were
// written by the state machine.
import { sql, type RawBuilder } from 'kysely';
import type { PickingMode, WalkTotals } from '../../../domain/picking/rates.js';
import type { Executor } from '../../executor.js';

export interface HistoryPeriod {
  /** Sessions started at or after this instant. */
  startedAt: Date | null;
  /** Sessions closed at or before this instant. */
  endedAt: Date | null;
}

function periodFilter(pickerId: number, p: HistoryPeriod): RawBuilder<unknown> {
  return sql`s.picker_id = ${pickerId} AND s.closed_at IS NOT NULL
    AND (${p.startedAt}::timestamptz IS NULL OR s.started_at >= ${p.startedAt}::timestamptz)
    AND (${p.endedAt}::timestamptz IS NULL OR s.closed_at <= ${p.endedAt}::timestamptz)`;
}

/**
 * Per-session item counts (the same definitions in the list and in the summary). "Changed" is a
 * confirmed discrepancy or a replacement, as resolutionType reads an item: a weight within
 * tolerance is picked as ordered, not a change.
 */
const ITEM_COUNTS = sql`
  count(i.id)::int AS items_count,
  (count(i.id) FILTER (WHERE i.state = 'picked'))::int AS picked_items_count,
  (count(i.id) FILTER (WHERE i.state = 'picked' AND (i.replacement_product_id IS NOT NULL OR i.confirmed_quantity IS NOT NULL)))::int AS changed_items_count,
  (count(i.id) FILTER (WHERE i.state = 'picked' AND i.replacement_product_id IS NOT NULL))::int AS replaced_items_count,
  (count(i.id) FILTER (WHERE i.state = 'clarified' AND i.clarification_kind IN ('removed', 'store_transfer_shortage')))::int AS removed_items_count,
  (count(i.id) FILTER (WHERE i.is_added))::int AS added_items_count`;

export interface HistoryRow {
  session_id: number;
  order_id: string;
  order_no: number;
  picker_id: number;
  picker_login: string;
  picker_display_name: string;
  status: 'completed' | 'cancelled';
  closure_source: 'picker_finish' | 'picker_cancel' | 'order_cancelled' | 'expired';
  started_at: Date;
  closed_at: Date;
  is_express: boolean;
  fulfillment_type: 'delivery' | 'pickup';
  store_id: string;
  store_name_ru: string;
  store_name_en: string;
  store_address_ru: string | null;
  store_address_en: string | null;
  store_timezone: string;
  slot_id: string | null;
  slot_date: string | null;
  slot_start: string | null;
  slot_end: string | null;
  slot_starts_at: Date | null;
  slot_ends_at: Date | null;
  items_count: number;
  picked_items_count: number;
  changed_items_count: number;
  replaced_items_count: number;
  removed_items_count: number;
  added_items_count: number;
  original_total: string;
  final_total: string;
  total: number;
}

/** One page of the picker's closed sessions, newest closing first, and the number matching. */
export async function listClosedSessions(
  db: Executor,
  pickerId: number,
  p: HistoryPeriod,
  limit: number,
  offset: number,
): Promise<{ rows: HistoryRow[]; total: number }> {
  const { rows } = await sql<HistoryRow>`
    SELECT s.id AS session_id, s.order_id, o.no AS order_no, s.picker_id, pk.login AS picker_login, pk.display_name AS picker_display_name,
           s.status, s.closure_source, s.started_at, s.closed_at, o.is_express, o.type AS fulfillment_type,
           st.id AS store_id, st.name_ru AS store_name_ru, st.name_en AS store_name_en, st.address_ru AS store_address_ru,
           st.address_en AS store_address_en, st.timezone AS store_timezone,
           o.slot_id, o.slot_date, o.slot_start, o.slot_end,
           (o.slot_date + o.slot_start) AT TIME ZONE st.timezone AS slot_starts_at,
           (o.slot_date + o.slot_end + CASE WHEN o.slot_end <= o.slot_start THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE st.timezone AS slot_ends_at,
           c.*, s.original_total, coalesce(s.final_total, s.current_total) AS final_total,
           count(*) OVER ()::int AS total
    FROM picking_sessions s
    JOIN orders o ON o.id = s.order_id
    JOIN stores st ON st.id = s.store_id
    JOIN pickers pk ON pk.id = s.picker_id
    CROSS JOIN LATERAL (SELECT ${ITEM_COUNTS} FROM picking_items i WHERE i.session_id = s.id) c
    WHERE ${periodFilter(pickerId, p)}
    ORDER BY s.closed_at DESC, s.id DESC
    LIMIT ${limit} OFFSET ${offset}`.execute(db);
  let total = rows[0]?.total ?? 0;
  if (!rows.length && offset > 0) {
    const counted = await sql<{ n: number }>`SELECT count(*)::int AS n FROM picking_sessions s WHERE ${periodFilter(pickerId, p)}`.execute(
      db,
    );
    total = counted.rows[0]!.n;
  }
  return { rows, total };
}

/** One closed session of the picker (its head; items are loaded separately). */
export async function findClosedSession(db: Executor, pickerId: number, sessionId: number): Promise<HistoryRow | undefined> {
  const { rows } = await sql<HistoryRow>`
    SELECT s.id AS session_id, s.order_id, o.no AS order_no, s.picker_id, pk.login AS picker_login, pk.display_name AS picker_display_name,
           s.status, s.closure_source, s.started_at, s.closed_at, o.is_express, o.type AS fulfillment_type,
           st.id AS store_id, st.name_ru AS store_name_ru, st.name_en AS store_name_en, st.address_ru AS store_address_ru,
           st.address_en AS store_address_en, st.timezone AS store_timezone,
           o.slot_id, o.slot_date, o.slot_start, o.slot_end,
           (o.slot_date + o.slot_start) AT TIME ZONE st.timezone AS slot_starts_at,
           (o.slot_date + o.slot_end + CASE WHEN o.slot_end <= o.slot_start THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE st.timezone AS slot_ends_at,
           0 AS items_count, 0 AS picked_items_count, 0 AS changed_items_count, 0 AS replaced_items_count, 0 AS removed_items_count, 0 AS added_items_count,
           s.original_total, coalesce(s.final_total, s.current_total) AS final_total, 1 AS total
    FROM picking_sessions s
    JOIN orders o ON o.id = s.order_id
    JOIN stores st ON st.id = s.store_id
    JOIN pickers pk ON pk.id = s.picker_id
    WHERE s.id = ${sessionId} AND s.picker_id = ${pickerId} AND s.closed_at IS NOT NULL`.execute(db);
  return rows[0];
}

export interface HistoryTotals {
  sessions_count: number;
  completed_sessions_count: number;
  cancelled_sessions_count: number;
  items_count: number;
  picked_items_count: number;
  changed_items_count: number;
  replaced_items_count: number;
  removed_items_count: number;
  added_items_count: number;
  total_duration_seconds: number;
  completed_total: string;
}

/** Totals of the period; item counts and durations are those of the completed sessions. */
export async function summariseClosedSessions(db: Executor, pickerId: number, p: HistoryPeriod): Promise<HistoryTotals> {
  const { rows } = await sql<HistoryTotals>`
    WITH closed AS (
      SELECT s.id, s.status, s.started_at, s.closed_at, coalesce(s.final_total, s.current_total) AS final_total
      FROM picking_sessions s WHERE ${periodFilter(pickerId, p)}
    ), done AS (
      SELECT d.*, c.* FROM closed d
      CROSS JOIN LATERAL (SELECT ${ITEM_COUNTS} FROM picking_items i WHERE i.session_id = d.id) c
      WHERE d.status = 'completed'
    )
    SELECT (SELECT count(*) FROM closed)::int AS sessions_count,
           (SELECT count(*) FROM done)::int AS completed_sessions_count,
           (SELECT count(*) FROM closed WHERE status = 'cancelled')::int AS cancelled_sessions_count,
           coalesce(sum(items_count), 0)::int AS items_count,
           coalesce(sum(picked_items_count), 0)::int AS picked_items_count,
           coalesce(sum(changed_items_count), 0)::int AS changed_items_count,
           coalesce(sum(replaced_items_count), 0)::int AS replaced_items_count,
           coalesce(sum(removed_items_count), 0)::int AS removed_items_count,
           coalesce(sum(added_items_count), 0)::int AS added_items_count,
           coalesce(sum(floor(extract(epoch FROM closed_at - started_at))), 0)::bigint AS total_duration_seconds,
           coalesce(sum(final_total), 0)::numeric(14,2)::text AS completed_total
    FROM done`.execute(db);
  return rows[0]!; // an aggregate without GROUP BY returns exactly one row
}

/**
 * The walks of a set of sessions, one row per walk: a session started on its own, or a batch.
 * A walk starts when its session started or its batch was created, ends at the last closure of
 * its sessions, and counts only once every session of it is closed; its picking time is measured
 * in whole seconds, like a session's duration. `completed_ids` are its completed sessions, whose
 * picked items are its items. `sessions` must hold every session of a batch it names.
 */
const WALKS_OF = (sessions: RawBuilder<unknown>) => sql`
  SELECT CASE WHEN m.batch_id IS NULL THEN 'single' ELSE 'batch' END AS mode,
         coalesce(b.store_id, m.store_id) AS store_id,
         min(coalesce(b.created_at, m.started_at)) AS started_at,
         max(m.closed_at) AS ended_at,
         count(*) FILTER (WHERE m.status = 'completed') AS orders_count,
         array_agg(m.id) FILTER (WHERE m.status = 'completed') AS completed_ids
  FROM (${sessions}) m
  LEFT JOIN picking_batches b ON b.id = m.batch_id
  GROUP BY m.batch_id, CASE WHEN m.batch_id IS NULL THEN m.id END, coalesce(b.store_id, m.store_id)
  HAVING bool_and(m.closed_at IS NOT NULL)`;

/** Sums walks (rows of WALKS_OF named `w`) into the figures of WalkTotals. */
const WALK_SUMS = sql`
  count(*)::int AS walks_count,
  coalesce(sum(w.orders_count), 0)::int AS orders_count,
  coalesce(sum(c.n), 0)::int AS items_count,
  coalesce(sum(greatest(0, floor(extract(epoch FROM w.ended_at - w.started_at)))), 0)::bigint AS picking_seconds`;

const PICKED_ITEMS = sql`CROSS JOIN LATERAL (
  SELECT count(*) AS n FROM picking_items i WHERE i.session_id = ANY (w.completed_ids) AND i.state = 'picked') c`;

export interface ModeWalkTotals extends WalkTotals {
  mode: PickingMode;
}

/**
 * The picker's walks that ended in the period, summed per mode (a mode without walks has no row).
 * A walk is in the period when it started at or after `startedAt` and ended at or before `endedAt`,
 * as a session is for the other totals.
 */
export async function summariseWalks(db: Executor, pickerId: number, p: HistoryPeriod): Promise<ModeWalkTotals[]> {
  // Closed sessions only (the history index); a batch with a session still open has not ended.
  // That open session is looked up along the batch index per batched session: a NOT EXISTS is
  // planned as a scan of all sessions. A batch's sessions all start at its creation, so the start
  // filter keeps or drops a batch whole.
  const sessions = sql`
    SELECT s.id, s.batch_id, s.store_id, s.status, s.started_at, s.closed_at
    FROM picking_sessions s
    LEFT JOIN picking_batches sb ON sb.id = s.batch_id
    LEFT JOIN LATERAL (
      SELECT 1 AS one FROM picking_sessions o
      WHERE s.batch_id IS NOT NULL AND o.batch_id = s.batch_id AND o.closed_at IS NULL LIMIT 1) still_open ON true
    WHERE s.picker_id = ${pickerId} AND s.closed_at IS NOT NULL AND still_open.one IS NULL
      AND (${p.startedAt}::timestamptz IS NULL OR coalesce(sb.created_at, s.started_at) >= ${p.startedAt}::timestamptz)`;
  const { rows } = await sql<ModeWalkTotals>`
    SELECT w.mode, ${WALK_SUMS}
    FROM (${WALKS_OF(sessions)}) w
    ${PICKED_ITEMS}
    WHERE ${p.endedAt}::timestamptz IS NULL OR w.ended_at <= ${p.endedAt}::timestamptz
    GROUP BY w.mode`.execute(db);
  return rows;
}

export interface StoreWalkTotals extends ModeWalkTotals {
  store_id: string;
}

/**
 * The walks of every picker that ended in the last `windowSeconds`, summed per store and mode.
 * Bounded for a scrape: only the newest `recentSessions` sessions are read (backwards along the
 * primary key), with the other sessions of their batches; a walk started before them is missed.
 */
export async function recentWalksByStore(db: Executor, windowSeconds: number, recentSessions: number): Promise<StoreWalkTotals[]> {
  // A walk that ended in the window has a session closed in it: only those sessions, and the
  // batches they belong to, are grouped into walks.
  const sessions = sql`
    WITH recent AS (
      SELECT s.id, s.batch_id, s.store_id, s.status, s.started_at, s.closed_at
      FROM picking_sessions s ORDER BY s.id DESC LIMIT ${recentSessions}
    ), closing AS (
      SELECT * FROM recent WHERE closed_at > now() - make_interval(secs => ${windowSeconds})
    )
    SELECT * FROM closing WHERE batch_id IS NULL
    UNION ALL
    SELECT s.id, s.batch_id, s.store_id, s.status, s.started_at, s.closed_at
    FROM picking_sessions s
    WHERE s.batch_id IS NOT NULL AND s.batch_id IN (SELECT batch_id FROM closing WHERE batch_id IS NOT NULL)`;
  const { rows } = await sql<StoreWalkTotals>`
    SELECT w.store_id, w.mode, ${WALK_SUMS}
    FROM (${WALKS_OF(sessions)}) w
    ${PICKED_ITEMS}
    WHERE w.ended_at > now() - make_interval(secs => ${windowSeconds})
    GROUP BY w.store_id, w.mode
    ORDER BY w.store_id, w.mode`.execute(db);
  return rows;
}
