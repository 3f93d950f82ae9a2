// Batches and totes (tables of the 2026_12_02_1801 migration): a batch groups the picking sessions
// one picker walks together; a tote holds one session's goods of one temperature class. Query
// functions take the executor first; the use case owns the transaction.
import { sql } from 'kysely';
import type { Executor } from '../../executor.js';
import type { TemperatureClass } from '../../tables/picking.js';
import { compareSequence } from '../../../domain/picking/batching.js';
import { pickDeadline } from './queue.js';
import { isOpen } from './sessions.js';

export function insertBatch(db: Executor, b: { pickerId: number; storeId: string }) {
  return db
    .insertInto('picking_batches')
    .values({ picker_id: b.pickerId, store_id: b.storeId })
    .returning(['id', 'picker_id', 'store_id', 'created_at'])
    .executeTakeFirstOrThrow();
}

/** The caller's batch. */
export function findBatchOfPicker(db: Executor, batchId: number, pickerId: number) {
  return db
    .selectFrom('picking_batches')
    .select(['id', 'picker_id', 'store_id', 'created_at'])
    .where('id', '=', batchId)
    .where('picker_id', '=', pickerId)
    .executeTakeFirst();
}

export type BatchRow = NonNullable<Awaited<ReturnType<typeof findBatchOfPicker>>>;

/** The picker's open batch: the latest of their batches with an open session. */
export function findOpenBatchOfPicker(db: Executor, pickerId: number) {
  return db
    .selectFrom('picking_batches as b')
    .select(['b.id', 'b.picker_id', 'b.store_id', 'b.created_at'])
    .where('b.picker_id', '=', pickerId)
    .where(sql<boolean>`EXISTS (SELECT 1 FROM picking_sessions s WHERE s.batch_id = b.id AND ${isOpen})`)
    .orderBy('b.id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The sessions of a batch with what its view shows of their orders, in the batch's order. */
export function batchSessions(db: Executor, batchId: number, due: { slotLeadMinutes: number; expressMinutes: number }) {
  return db
    .selectFrom('picking_sessions as s')
    .innerJoin('orders as o', 'o.id', 's.order_id')
    .innerJoin('stores as st', 'st.id', 's.store_id')
    .select([
      's.id',
      's.order_id',
      's.status',
      's.version',
      's.closure_source',
      'o.no as order_no',
      'o.is_express',
      'o.type as fulfillment_type',
      pickDeadline(due).as('due_at'),
      sql<number>`(SELECT count(*)::int FROM picking_items i WHERE i.session_id = s.id)`.as('items_count'),
      sql<number>`(SELECT count(*)::int FROM picking_items i WHERE i.session_id = s.id AND i.is_resolved)`.as('resolved_items_count'),
    ])
    .where('s.batch_id', '=', batchId)
    .orderBy('o.is_express', 'desc')
    .orderBy('due_at')
    .orderBy('s.id')
    .execute();
}

export type BatchSessionRow = Awaited<ReturnType<typeof batchSessions>>[number];

/** The items of a batch's sessions that are walked (sessions not cancelled), with their order's number. */
export function batchWalkItems(db: Executor, batchId: number) {
  return db
    .selectFrom('picking_items as i')
    .innerJoin('picking_sessions as s', 's.id', 'i.session_id')
    .innerJoin('orders as o', 'o.id', 's.order_id')
    .leftJoin('picking_totes as t', (j) =>
      j.onRef('t.session_id', '=', 'i.session_id').onRef('t.temperature_class', '=', 'i.temperature_class'),
    )
    .select([
      'i.id',
      'i.session_id',
      's.order_id',
      's.status as session_status',
      'o.no as order_no',
      'i.position',
      'i.product_id',
      'i.name_ru',
      'i.name_en',
      'i.image_url',
      'i.barcode',
      'i.plu_code',
      'i.unit_ru',
      'i.unit_en',
      'i.is_weight_based',
      'i.ordered_quantity',
      'i.state',
      'i.clarification_kind',
      'i.is_resolved',
      'i.actual_quantity',
      'i.tote_id',
      'i.location_aisle',
      'i.location_section',
      'i.location_shelf',
      'i.location_sequence',
      'i.temperature_class',
      't.id as own_tote_id',
      't.label as own_tote_label',
    ])
    .where('s.batch_id', '=', batchId)
    .where('s.status', '<>', 'cancelled')
    .execute();
}

export type WalkItemRow = Awaited<ReturnType<typeof batchWalkItems>>[number];

const TOTE_COLUMNS = ['t.id', 't.session_id', 't.store_id', 't.temperature_class', 't.label', 't.bound_at', 't.released_at'] as const;

/** Items placed into the tote that are picked (what it holds). */
const toteItemsCount = sql<number>`(SELECT count(*)::int FROM picking_items i WHERE i.session_id = t.session_id AND i.tote_id = t.id AND i.state = 'picked')`;

/** The totes of some sessions, with their order and what they hold. */
export function totesOfSessions(db: Executor, sessionIds: readonly number[]) {
  if (!sessionIds.length) return Promise.resolve([]);
  return db
    .selectFrom('picking_totes as t')
    .innerJoin('picking_sessions as s', 's.id', 't.session_id')
    .select([...TOTE_COLUMNS, 's.order_id', toteItemsCount.as('items_count')])
    .where('t.session_id', 'in', sessionIds)
    .orderBy('t.session_id')
    .orderBy('t.id')
    .execute();
}

export type ToteRow = Awaited<ReturnType<typeof totesOfSessions>>[number];

/** Totes of a session for the temperature classes its items need (a class it has already is skipped); the new ones. */
export async function insertTotes(db: Executor, sessionId: number, storeId: string, classes: readonly TemperatureClass[]) {
  if (!classes.length) return [];
  return db
    .insertInto('picking_totes')
    .values(classes.map((c) => ({ session_id: sessionId, store_id: storeId, temperature_class: c })))
    .onConflict((oc) => oc.columns(['session_id', 'temperature_class']).doNothing())
    .returning(['id', 'temperature_class'])
    .execute();
}

/** A tote of the caller's batch with its order, read without locks (to learn which order to lock first). */
export function findToteOfBatch(db: Executor, batchId: number, toteId: number) {
  return db
    .selectFrom('picking_totes as t')
    .innerJoin('picking_sessions as s', 's.id', 't.session_id')
    .select(['t.id', 's.order_id'])
    .where('t.id', '=', toteId)
    .where('s.batch_id', '=', batchId)
    .executeTakeFirst();
}

/**
 * The tote and its session, locked after the order (the lock order of every picking path: order,
 * then session, then tote), so a bind and the session's closing run one after the other.
 */
export function lockTote(db: Executor, toteId: number) {
  return db
    .selectFrom('picking_totes as t')
    .innerJoin('picking_sessions as s', 's.id', 't.session_id')
    .select([...TOTE_COLUMNS, 's.order_id', 's.status as session_status', toteItemsCount.as('items_count')])
    .where('t.id', '=', toteId)
    .forUpdate(['s', 't'])
    .executeTakeFirst();
}

/**
 * Binds a label to a tote; false when the label is on another open tote of the store. Binds of one
 * label in one store take turns (a transaction lock on the pair), so two at once cannot both pass
 * the check and meet at the unique index.
 */
export async function bindTote(db: Executor, tote: { id: number; store_id: string }, label: string): Promise<boolean> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`tote-label:${tote.store_id}:${label}`}, 0))`.execute(db);
  const { rows } = await sql<{ id: string }>`
    UPDATE picking_totes SET label = ${label}, bound_at = now()
    WHERE id = ${tote.id} AND NOT EXISTS (
      SELECT 1 FROM picking_totes o WHERE o.store_id = ${tote.store_id} AND o.label = ${label} AND o.released_at IS NULL)
    RETURNING id`.execute(db);
  return rows.length > 0;
}

/** The open tote of the store carrying the label, with its order. */
export function findOpenToteByLabel(db: Executor, storeId: string, label: string) {
  return db
    .selectFrom('picking_totes as t')
    .innerJoin('picking_sessions as s', 's.id', 't.session_id')
    .select([...TOTE_COLUMNS, 's.order_id', toteItemsCount.as('items_count')])
    .where('t.store_id', '=', storeId)
    .where('t.label', '=', label)
    .where('t.released_at', 'is', null)
    .executeTakeFirst();
}

export async function placeItemInTote(db: Executor, itemId: number, toteId: number): Promise<void> {
  await db
    .updateTable('picking_items')
    .set({ tote_id: toteId, updated_at: sql<Date>`now()` })
    .where('id', '=', itemId)
    .execute();
}

/** The lines of orders with their shelf location in a store (what a proposal weighs). */
export function orderLocations(db: Executor, storeId: string, orderIds: readonly string[]) {
  if (!orderIds.length) return Promise.resolve([]);
  return db
    .selectFrom('order_items as l')
    .leftJoin('inventories as si', (j) =>
      j.onRef('si.product_id', '=', 'l.product_id').onRef('si.unit_id', '=', 'l.unit_id').on('si.store_id', '=', storeId),
    )
    .select(['l.id', 'l.order_id', 'l.product_id', 'si.location_sequence'])
    .where('l.order_id', 'in', orderIds)
    .execute();
}

/** The store's located positions in route order (the walk's yardstick). */
export async function storeRoute(db: Executor, storeId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('inventories')
    .select('location_sequence')
    .distinct()
    .where('store_id', '=', storeId)
    .where('location_sequence', 'is not', null)
    .execute();
  // Sorted here as the walk compares keys (code-unit order), whatever the database's collation.
  return rows.map((r) => r.location_sequence!).sort(compareSequence);
}

/** Whether a session of the batch is open and had a change within the last `idleMinutes` (the batch is walked as one). */
export async function isBatchActive(db: Executor, batchId: number, idleMinutes: number): Promise<boolean> {
  const row = await db
    .selectFrom('picking_sessions as s')
    .select('s.id')
    .where('s.batch_id', '=', batchId)
    .where(isOpen, '=', true)
    .where('s.updated_at', '>=', sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
