// Picking sessions and their items (tables of the 0007 migration), the queue, and the effects of
// picking on the order (status, totals, stock). Query functions take the executor first; the
// handler owns the transaction.
//
// Lock order, the same on every path, so concurrent writers never deadlock: the picker row (start
// only), then the order row, then the session row. The database's cancellation trigger follows it
// too (UPDATE orders, then its sessions).
import { randomUUID } from 'node:crypto';
import { sql, type Insertable, type Selectable } from 'kysely';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import { isResolved, takenQuantity, toleranceFor, type ItemFacts } from '../../domain/picking/items.js';
import { PICKING_ITEM_COLUMNS, PICKING_SESSION_COLUMNS, qualified } from '../columns.js';
import type { Executor } from '../executor.js';
import type { OrderStatus, PickingResultState } from '../tables/orders.js';
import type { ClosureSource, PickingItemsTable, PickingSessionsTable, SessionStatus } from '../tables/picking.js';
import { lockInventoryRows } from './orders.js';

export type SessionRow = Selectable<PickingSessionsTable>;
export type ItemRow = Selectable<PickingItemsTable>;

export const OPEN_STATUSES: SessionStatus[] = ['active', 'ready_to_finish'];

const thousandths = (v: string): bigint => parseDecimal(v, 3)!;
const optionalThousandths = (v: string | null): bigint | null => (v === null ? null : thousandths(v));
export const quantityText = (v: bigint): string => formatDecimal(v, 3);

/** The state machine's view of an item row. */
export function itemFacts(r: ItemRow): ItemFacts {
  const ordered = thousandths(r.ordered_quantity);
  return {
    state: r.state,
    clarificationKind: r.clarification_kind,
    missingAction: r.missing_action,
    isWeightBased: r.is_weight_based,
    ordered,
    actual: optionalThousandths(r.actual_quantity),
    confirmed: optionalThousandths(r.confirmed_quantity),
    pickSource: r.pick_source,
    lastScannedBarcode: r.last_scanned_barcode,
    labelPlu: r.label_plu,
    hasReplacement: r.replacement_product_id !== null,
    tolerance: r.tolerance_percent === null ? null : toleranceFor(ordered, parseDecimal(r.tolerance_percent, 1)!),
  };
}

// ---------------------------------------------------------------------------------------------
// Orders as pickers see them

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
    .select(['o.id', 'o.no', 'o.store_id', 'o.status', 'o.type', 'o.payment_method', 'o.payment_status', 'o.goods_total', 'o.delivery_cost', 'o.customer_id'])
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
  const row = await db.selectFrom('orders as o').select('o.id').where('o.id', '=', orderId).where(isPickersOrder(pickerId)).executeTakeFirst();
  return row !== undefined;
}

/** Serialises the starts of one picker (at most one current session). */
export async function lockPicker(db: Executor, pickerId: number): Promise<void> {
  await db.selectFrom('pickers').select('id').where('id', '=', pickerId).forNoKeyUpdate().execute();
}

// ---------------------------------------------------------------------------------------------
// Sessions

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
      sql<Date | null>`(o.slot_date + o.slot_end + CASE WHEN o.slot_end <= o.slot_start THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE st.timezone`.as('slot_ends_at'),
    ]);
}
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

/** The caller's latest session of the order, whatever its status. */
export function findLatestSessionOfPicker(db: Executor, orderId: string, pickerId: number) {
  return sessionHeads(db).where('s.order_id', '=', orderId).where('s.picker_id', '=', pickerId).orderBy('s.id', 'desc').limit(1).forUpdate('s').executeTakeFirst();
}

export function findSessionHead(db: Executor, sessionId: number) {
  return sessionHeads(db).where('s.id', '=', sessionId).executeTakeFirst();
}


/** The picker's current session (at most one: a unique index says so). */
export function findCurrentSession(db: Executor, pickerId: number) {
  return sessionHeads(db).where('s.picker_id', '=', pickerId).where(isCurrent, '=', true).executeTakeFirst();
}

export function findCurrentSessionRef(db: Executor, pickerId: number) {
  return db
    .selectFrom('picking_sessions as s')
    .select(['s.id', 's.order_id', 's.store_id'])
    .where('s.picker_id', '=', pickerId)
    .where(isCurrent, '=', true)
    .executeTakeFirst();
}

export function loadItems(db: Executor, sessionId: number): Promise<ItemRow[]> {
  return db.selectFrom('picking_items').select(PICKING_ITEM_COLUMNS).where('session_id', '=', sessionId).orderBy('position').execute();
}

/** Items of several sessions, by session (history pages). */
export async function loadItemsOfSessions(db: Executor, sessionIds: number[]): Promise<Map<number, ItemRow[]>> {
  const out = new Map<number, ItemRow[]>(sessionIds.map((id) => [id, []]));
  if (!sessionIds.length) return out;
  const rows = await db.selectFrom('picking_items').select(PICKING_ITEM_COLUMNS).where('session_id', 'in', sessionIds).orderBy('session_id').orderBy('position').execute();
  for (const r of rows) out.get(r.session_id)!.push(r);
  return out;
}

export interface NewSession {
  orderId: string;
  pickerId: number;
  storeId: string;
  status: 'active' | 'ready_to_finish';
  maxAddedItems: number;
  originalTotal: string;
  currentTotal: string;
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
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export type NewItem = Omit<Insertable<PickingItemsTable>, 'session_id'>;

export async function insertItems(db: Executor, sessionId: number, items: NewItem[]): Promise<ItemRow[]> {
  if (!items.length) return [];
  return db
    .insertInto('picking_items')
    .values(items.map((i) => ({ ...i, session_id: sessionId })))
    .returning(PICKING_ITEM_COLUMNS)
    .execute();
}

export function nextItemPosition(items: readonly ItemRow[]): number {
  return items.reduce((max, i) => Math.max(max, i.position), 0) + 1;
}

/** The replacement product written with an item, or null to clear it. */
export interface ReplacementData {
  product_id: string;
  inventory_id: string;
  unit_id: string;
  name_ru: string;
  name_en: string;
  barcode: string | null;
  plu_code: string | null;
  image_url: string | null;
  unit_ru: string;
  unit_en: string;
  unit_price: string;
}

/** The item columns a state-machine transition writes. */
export function itemChangeColumns(facts: ItemFacts, currentLineTotal: string, replacement: { set: ReplacementData } | 'clear' | 'keep') {
  const replacementColumns =
    replacement === 'keep'
      ? {}
      : replacement === 'clear'
        ? {
            replacement_product_id: null, replacement_inventory_id: null, replacement_unit_id: null, replacement_name_ru: null, replacement_name_en: null,
            replacement_barcode: null, replacement_plu_code: null, replacement_image_url: null, replacement_unit_ru: null,
            replacement_unit_en: null, replacement_unit_price: null, replacement_chosen_at: null,
          }
        : {
            replacement_product_id: replacement.set.product_id,
            replacement_inventory_id: replacement.set.inventory_id,
            replacement_unit_id: replacement.set.unit_id,
            replacement_name_ru: replacement.set.name_ru,
            replacement_name_en: replacement.set.name_en,
            replacement_barcode: replacement.set.barcode,
            replacement_plu_code: replacement.set.plu_code,
            replacement_image_url: replacement.set.image_url,
            replacement_unit_ru: replacement.set.unit_ru,
            replacement_unit_en: replacement.set.unit_en,
            replacement_unit_price: replacement.set.unit_price,
            replacement_chosen_at: sql<Date>`now()`,
          };
  return {
    state: facts.state,
    clarification_kind: facts.clarificationKind,
    missing_action: facts.missingAction,
    is_resolved: isResolved(facts),
    actual_quantity: facts.actual === null ? null : quantityText(facts.actual),
    confirmed_quantity: facts.confirmed === null ? null : quantityText(facts.confirmed),
    pick_source: facts.pickSource,
    last_scanned_barcode: facts.lastScannedBarcode,
    label_plu: facts.labelPlu,
    current_line_total: currentLineTotal,
    updated_at: sql<Date>`now()`,
    ...replacementColumns,
  };
}

/** One applied change: version + 1, the derived status and totals. Returns the new version and time. */
export function bumpSession(
  db: Executor,
  sessionId: number,
  change: { status: SessionStatus; currentTotal: string; addedItems?: number },
) {
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
export async function setReconciliationStatus(db: Executor, sessionId: number, status: 'completed' | 'failed' | 'not_required'): Promise<void> {
  await db
    .updateTable('picking_sessions')
    .set({ reconciliation_status: status, updated_at: sql<Date>`now()` })
    .where('id', '=', sessionId)
    .where('reconciliation_status', '=', 'pending')
    .execute();
}

/**
 * Settles the pending difference of the order's completed session that the customer was to pay
 * (finishSession): `completed` once paid, `not_required` when the order was cancelled instead.
 */
export async function settleCollectedDifference(db: Executor, orderId: string, status: 'completed' | 'not_required'): Promise<void> {
  await db
    .updateTable('picking_sessions')
    .set({ reconciliation_status: status, updated_at: sql<Date>`now()` })
    .where('order_id', '=', orderId)
    .where('status', '=', 'completed')
    .where('reconciliation_status', '=', 'pending')
    .execute();
}

/**
 * Gives back what the order's completed session took off the shelves (each picked item's
 * quantity, of its replacement when it has one; added items too): the stock of a picked order
 * that is cancelled. Its ordered lines no longer hold stock once the session completed
 * (finishSession returned what was not taken). Rows are locked in id order first.
 */
export async function returnPickedStock(db: Executor, orderId: string): Promise<void> {
  const session = await db.selectFrom('picking_sessions').select('id').where('order_id', '=', orderId).where('status', '=', 'completed').executeTakeFirst();
  if (!session) return;
  const taken = (await loadItems(db, session.id))
    .map((item) => ({ inventoryId: item.replacement_inventory_id ?? item.inventory_id, quantity: takenQuantity(itemFacts(item)) }))
    .filter((t) => t.quantity > 0n);
  await lockInventoryRows(db, taken.map((t) => t.inventoryId));
  for (const t of taken) await adjustStock(db, t.inventoryId, formatDecimal(t.quantity, 3));
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

/** Open sessions without an applied change for `idleMinutes` (expiry candidates). */
export function findIdleSessions(db: Executor, idleMinutes: number, limit = 100) {
  return db
    .selectFrom('picking_sessions')
    .select(['id', 'order_id', 'picker_id', 'updated_at'])
    .where('status', 'in', OPEN_STATUSES)
    .where('updated_at', '<', sql<Date>`now() - make_interval(mins => ${idleMinutes})`)
    .orderBy('updated_at')
    .limit(limit)
    .execute();
}

/** The picker's own-session event (`session.changed`), through the outbox like every event. */
export async function recordSessionChanged(
  db: Executor,
  s: { sessionId: number; orderId: string; storeId: string; pickerId: number; version: number; status: SessionStatus },
): Promise<void> {
  const eventId = randomUUID();
  const event = {
    event_id: eventId,
    kind: 'session.changed',
    occurred_at: new Date().toISOString(),
    store_id: s.storeId,
    session_id: s.sessionId,
    order_id: s.orderId,
    picker_id: s.pickerId,
    version: s.version,
    session_status: s.status,
  };
  await db
    .insertInto('outbox_events')
    .values({
      event_id: eventId,
      type: 'picker.session.changed',
      store_id: s.storeId,
      order_id: s.orderId,
      payload: JSON.stringify({ audience: { picker_id: s.pickerId }, event }),
    })
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Starting: the order lines to pick

/**
 * The order's lines with what the session needs: the inventory row of the session's store (the
 * store's own row for the line's product and unit), the unit's kind and ratio, the shelf order.
 * `store_inventory_id` is null when the store does not sell the line's product any more.
 */
export function orderLinesForPicking(db: Executor, orderId: string, storeId: string) {
  return db
    .selectFrom('order_items as l')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .leftJoin('categories as cat', 'cat.id', 'p.category_id')
    .leftJoin('measurement_units as u', 'u.id', 'l.unit_id')
    .leftJoin('inventories as si', (j) => j.onRef('si.product_id', '=', 'l.product_id').onRef('si.unit_id', '=', 'l.unit_id').on('si.store_id', '=', storeId))
    .select([
      'l.id',
      'l.line_no',
      'l.product_id',
      'l.unit_id',
      'l.inventory_id',
      'l.name_ru',
      'l.name_en',
      'l.unit_name_ru',
      'l.unit_name_en',
      'l.image',
      'l.barcode',
      'l.plu_code',
      'l.weight_based',
      'l.quantity',
      'l.unit_price',
      'si.id as store_inventory_id',
      'u.kind as unit_kind',
      'u.ratio as unit_ratio',
      'p.plu as product_plu',
      'p.image_listing as product_image',
      sql<string | null>`(SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = l.product_id)`.as('product_barcode'),
    ])
    .where('l.order_id', '=', orderId)
    // Walking order: the shelf (category tree position), then the name.
    .orderBy(sql`cat.tree_order NULLS LAST`)
    .orderBy('l.name_ru')
    .orderBy('l.line_no')
    .execute();
}
export type OrderLineForPicking = Awaited<ReturnType<typeof orderLinesForPicking>>[number];

// ---------------------------------------------------------------------------------------------
// Replacement options

export interface ReplacementOption {
  id: string;
  name: string;
  barcode: string;
  description: string;
  price: string;
}

/**
 * Up to 5 suggestions for each item: products of the same category and kind as the ordered one,
 * in stock in the store, closest in price first (price per kg for weight items).
 */
export async function replacementOptions(
  db: Executor,
  storeId: string,
  lang: 'ru' | 'en',
  items: { itemId: number; productId: string; isWeightBased: boolean; unitPrice: string }[],
): Promise<Map<number, ReplacementOption[]>> {
  const out = new Map<number, ReplacementOption[]>();
  if (!items.length) return out;
  const name = sql.ref(`p.name_${lang}`);
  const description = sql.ref(`p.description_${lang}`);
  const { rows } = await sql<ReplacementOption & { item_id: string }>`
    SELECT w.item_id, o.*
    FROM unnest(${items.map((i) => String(i.itemId))}::bigint[], ${items.map((i) => i.productId)}::uuid[], ${items.map((i) => i.unitPrice)}::numeric[])
      AS w(item_id, product_id, unit_price)
    JOIN products ordered ON ordered.id = w.product_id
    CROSS JOIN LATERAL (
      SELECT i.id, ${name} AS name, coalesce((SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id), '') AS barcode,
             coalesce(${description}, '') AS description, i.unit_price::text AS price
      FROM products p
      JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.is_default AND i.in_stock
      JOIN measurement_units u ON u.id = i.unit_id
      WHERE p.category_id = ordered.category_id AND p.weight_based = ordered.weight_based AND p.id <> ordered.id AND p.is_active
      ORDER BY abs(i.unit_price / CASE WHEN u.kind = 'weight' THEN u.ratio ELSE 1 END - w.unit_price), p.id
      LIMIT 5
    ) o`.execute(db);
  for (const r of rows) {
    const id = Number(r.item_id);
    if (!out.has(id)) out.set(id, []);
    out.get(id)!.push({ id: r.id, name: r.name, barcode: r.barcode, description: r.description, price: formatDecimal(parseDecimal(r.price, 2)!, 2) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Effects on the order

/** Moves the order's status (and picking fields) and records the move in its history. */
export async function setOrderPickingStatus(
  db: Executor,
  orderId: string,
  change: {
    status: OrderStatus;
    pickingResultState: PickingResultState;
    /** Reason code of the move (rendered per language by the orders area) and a free-text fallback. */
    reason?: string | null;
    comment?: string | null;
    finalTotal?: string | null;
    hasPickingChanges?: boolean;
    pickingCompleted?: boolean;
    cancellationReason?: string;
  },
): Promise<void> {
  await db
    .updateTable('orders')
    .set({
      status: change.status,
      status_reason: change.reason ?? null,
      status_comment: change.comment ?? null,
      picking_result_state: change.pickingResultState,
      ...(change.finalTotal !== undefined ? { final_total: change.finalTotal } : {}),
      ...(change.hasPickingChanges !== undefined ? { has_picking_changes: change.hasPickingChanges } : {}),
      ...(change.pickingCompleted ? { picking_completed_at: sql<Date>`now()` } : {}),
      ...(change.status === 'cancelled' ? { cancelled_at: sql<Date>`now()`, cancellation_reason: change.cancellationReason ?? null } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', orderId)
    .execute();
  await db.insertInto('order_status_history').values({ order_id: orderId, status: change.status, reason: change.reason ?? null, comment: change.comment ?? null }).execute();
}

/**
 * Changes an inventory row's stock by `delta` - pieces, or kilograms for a weight row, which is
 * converted to the row's unit (a 100 g row counts tenths of a kg). Positive gives stock back.
 * Stock never goes below zero (the goods were on the shelf; the count was short) and a row whose
 * stock was never reported stays unreported.
 */
export async function adjustStock(db: Executor, inventoryId: string, delta: string): Promise<void> {
  await sql`
    UPDATE inventories i
    SET stock = greatest(i.stock + round(${delta}::numeric / CASE WHEN u.kind = 'weight' THEN u.ratio ELSE 1 END, 3), 0), updated_at = now()
    FROM measurement_units u
    WHERE u.id = i.unit_id AND i.id = ${inventoryId} AND i.stock IS NOT NULL`.execute(db);
}

// ---------------------------------------------------------------------------------------------
// The queue

export interface QueueOptions {
  storeId: string;
  horizonHours: number;
  slotLeadMinutes: number;
  expressMinutes: number;
  limit: number;
}

/**
 * The store's picking queue: orders waiting for picking (`confirmed`) or being picked
 * (`picking`), express ones and slot orders due within the horizon, express first, then by
 * deadline, then by creation.
 */
export function listQueue(db: Executor, q: QueueOptions) {
  const slotStart = sql<Date | null>`(o.slot_date + o.slot_start) AT TIME ZONE st.timezone`;
  const deadline = sql<Date>`CASE WHEN o.is_express OR o.slot_date IS NULL
      THEN o.created_at + make_interval(mins => ${q.expressMinutes})
      ELSE ${slotStart} - make_interval(mins => ${q.slotLeadMinutes}) END`;
  return db
    .selectFrom('orders as o')
    .innerJoin('stores as st', 'st.id', 'o.store_id')
    .leftJoin('picking_sessions as s', (j) => j.onRef('s.order_id', '=', 'o.id').on('s.status', 'in', OPEN_STATUSES))
    .leftJoin('pickers as p', 'p.id', 's.picker_id')
    .select([
      'o.id as order_id',
      'o.no',
      'o.created_at',
      'o.is_express',
      'o.type',
      'o.slot_id',
      'o.slot_date',
      'o.slot_start',
      'o.slot_end',
      'o.items_count',
      'o.goods_total',
      'o.comment',
      'o.absence_action',
      'st.id as store_id',
      'st.name_ru as store_name_ru',
      'st.name_en as store_name_en',
      'st.address_ru as store_address_ru',
      'st.address_en as store_address_en',
      'st.timezone as store_timezone',
      's.id as session_id',
      's.picker_id',
      'p.display_name as picker_display_name',
      slotStart.as('slot_starts_at'),
      sql<Date | null>`(o.slot_date + o.slot_end + CASE WHEN o.slot_end <= o.slot_start THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE st.timezone`.as('slot_ends_at'),
      deadline.as('pick_deadline'),
      sql<boolean>`EXISTS (SELECT 1 FROM order_items l WHERE l.order_id = o.id AND l.weight_based)`.as('has_weight_items'),
    ])
    .where('o.store_id', '=', q.storeId)
    .where('o.status', 'in', ['confirmed', 'picking'])
    .where((eb) =>
      eb.or([
        eb('o.is_express', '=', true),
        eb('o.slot_date', 'is', null),
        eb(slotStart, '<=', sql<Date>`now() + make_interval(hours => ${q.horizonHours})`),
      ]),
    )
    .orderBy('o.is_express', 'desc')
    .orderBy(deadline)
    .orderBy('o.created_at')
    .orderBy('o.id')
    .limit(q.limit)
    .execute();
}
export type QueueRow = Awaited<ReturnType<typeof listQueue>>[number];

/**
 * Announces the slot orders that entered the picker queue since the last sweep: those still
 * `confirmed` whose slot start crossed `now + horizonHours` (the queue's horizon) get the
 * `queue.changed` / `order_added` event the status trigger sends at confirmation, which for them
 * came while their card was not shown yet. One instance sweeps at a time (the watermark row is
 * locked, SKIP LOCKED); the first sweep only sets the watermark. Run inside a transaction.
 * Returns how many were announced.
 */
export async function announceOrdersEnteringQueue(trx: Executor, horizonHours: number): Promise<number> {
  const { rows } = await sql<{ swept_until: Date; horizon_end: Date }>`
    SELECT swept_until, now() + make_interval(hours => ${horizonHours}) AS horizon_end
    FROM picker_queue_horizon WHERE id = 1 FOR UPDATE SKIP LOCKED`.execute(trx);
  if (!rows.length) {
    await sql`INSERT INTO picker_queue_horizon (id, swept_until) VALUES (1, now() + make_interval(hours => ${horizonHours}))
      ON CONFLICT (id) DO NOTHING`.execute(trx);
    return 0;
  }
  const { swept_until: from, horizon_end: to } = rows[0];
  if (to <= from) return 0;
  const announced = await sql<{ count: string }>`
    WITH entering AS (
      SELECT gen_random_uuid() AS event_id, o.id, o.store_id FROM orders o
      WHERE o.status = 'confirmed' AND NOT o.is_express AND o.slot_starts_at > ${from} AND o.slot_starts_at <= ${to}
        -- Confirmed with its slot already within the horizon: the trigger announced it then.
        AND NOT EXISTS (SELECT 1 FROM order_status_history h WHERE h.order_id = o.id AND h.status = 'confirmed'
          AND h.occurred_at > o.slot_starts_at - make_interval(hours => ${horizonHours}))
    ), inserted AS (
      INSERT INTO outbox_events (event_id, type, store_id, order_id, payload)
      SELECT e.event_id, 'picker.queue.changed', e.store_id, e.id, jsonb_build_object(
        'audience', jsonb_build_object('store_id', e.store_id),
        'event', jsonb_build_object('event_id', e.event_id, 'kind', 'queue.changed', 'occurred_at', now(),
          'store_id', e.store_id, 'order_id', e.id, 'reason', 'order_added'))
      FROM entering e
      RETURNING 1
    )
    SELECT count(*) FROM inserted`.execute(trx);
  await trx.updateTable('picker_queue_horizon').set({ swept_until: to }).where('id', '=', 1).execute();
  return Number(announced.rows[0].count);
}
