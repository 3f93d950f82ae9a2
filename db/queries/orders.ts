// Query functions of the Orders area: the store facts checkout locks and reads, writing an order
// and its history, reading the customer's orders, stock reservations, and the rows the
// background worker claims. The executor comes first; callers open the transaction.
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import type { OrderStatus, TrackingState } from '../tables/orders.js';
import type { Insertable, Updateable } from 'kysely';
import type { DB } from '../schema.js';
import { notOnClosedDay, SLOT_TAKE_COLUMNS, slotTakeCtes, type SlotHoldRequest, type SlotTakeRow } from './logistics.js';
import type { SlotKind } from '../tables/logistics.js';
import { orderChangedInsertSql } from './order-events.js';
import { completeIdempotencyKeySql, type IdempotencyScope, type StoredAnswer } from './idempotency.js';

// ------------------------------------------------------------------------------------------------
// Checkout: the store's facts about the cart

export interface CartLineFacts {
  product_id: string;
  unit_id: string;
  product_exists: boolean;
  unit_kind: 'piece' | 'weight' | null;
  /** Kilograms (or pieces) in one unit: 0.100 for 100 g. */
  unit_ratio: string | null;
  inventory_id: string | null;
  stock: string | null;
  order_quantity_limit: string | null;
  unit_price: string | null;
  old_price: string | null;
  name_ru: string | null;
  name_en: string | null;
  unit_name_ru: string | null;
  unit_name_en: string | null;
  image: string | null;
  barcode: string | null;
  plu: string | null;
  weight_based: boolean | null;
  weight: string | null;
}

const pairs = (lines: readonly { product_id: string; unit_id: string }[]) => ({
  products: lines.map((l) => l.product_id.toLowerCase()),
  units: lines.map((l) => l.unit_id.toLowerCase()),
});

/** The catalog facts of a cart line (`p` the product, `u` the unit), as an order line copies them. */
export const FACT_COLUMNS = sql`p.name_ru, p.name_en, u.name_ru AS unit_name_ru, u.name_en AS unit_name_en,
  p.image_listing AS image, p.plu, p.weight_based, p.weight,
  (SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id) AS barcode`;

/** The window checkout holds with the cart (slotTakeCtes of db/queries/logistics.ts). */
export interface CheckoutSlot {
  kind: SlotKind;
  request: SlotHoldRequest;
}

export interface CheckoutLocks {
  /** The customer row, share-locked: false when the account is deleted or disabled. */
  customerActive: boolean;
  /** The store's facts about each line, in line order. */
  facts: CartLineFacts[];
  /** What holding the window came to (slotHoldOutcome), when the order takes one. */
  slot: SlotTakeRow | null;
}

/**
 * Checkout's first statement in its transaction: the customer row share-locked (an account
 * deleted meanwhile cannot get an order), the inventory rows of the cart locked (`FOR UPDATE`,
 * in id order, so two checkouts sharing products cannot deadlock) with the store's facts about
 * each line - the stock judged is the stock taken - and then one unit of the window taken, after
 * the stock rows as every writer of both takes them (cancellation gives back stock, then the
 * window). Lines the store does not sell (no inventory row) are read without a lock, by a second
 * statement only when there are such lines. The caller rolls back whatever it refuses.
 */
export async function lockCheckout(
  db: Executor,
  c: { customerId: string; storeId: string; lines: readonly { product_id: string; unit_id: string }[]; slot: CheckoutSlot | null },
): Promise<CheckoutLocks> {
  const { products, units } = pairs(c.lines);
  const slotCtes = c.slot ? sql`, ${slotTakeCtes(c.slot.kind, c.slot.request, sql<boolean>`(SELECT n FROM stock_locked) >= 0`)}` : sql``;
  const { rows } = await sql<CartLineFacts & SlotTakeRow & { customer_active: boolean }>`
    WITH customer AS (
      SELECT id FROM customers WHERE id = ${c.customerId} AND deleted_at IS NULL AND NOT is_disabled FOR SHARE
    ), locked AS (
      SELECT i.product_id, i.unit_id, p.is_active AS product_exists, u.kind AS unit_kind, u.ratio AS unit_ratio,
             i.id AS inventory_id, i.stock, i.order_quantity_limit, i.unit_price, i.old_price, ${FACT_COLUMNS}
      FROM inventories i
      JOIN (SELECT DISTINCT * FROM unnest(${products}::uuid[], ${units}::uuid[])) AS l(product_id, unit_id)
        ON i.product_id = l.product_id AND i.unit_id = l.unit_id
      JOIN products p ON p.id = i.product_id
      JOIN measurement_units u ON u.id = i.unit_id
      WHERE i.store_id = ${c.storeId} AND EXISTS (SELECT 1 FROM customer)
      ORDER BY i.id
      FOR UPDATE OF i
    ), stock_locked AS (
      -- Every stock row locked before the window's row is.
      SELECT count(*) AS n FROM locked
    )${slotCtes}
    SELECT EXISTS (SELECT 1 FROM customer) AS customer_active,
           ${c.slot ? SLOT_TAKE_COLUMNS : sql`NULL::uuid AS slot_taken_id, NULL::uuid AS slot_store_id, NULL::date AS slot_date, NULL::timestamptz AS slot_starts_at, NULL::timestamptz AS slot_ends_at, NULL::uuid AS held_slot_id, NULL::text AS held_kind`},
           l.product_id, l.unit_id, l.product_exists, l.unit_kind, l.unit_ratio, l.inventory_id, l.stock, l.order_quantity_limit, l.unit_price, l.old_price,
           l.name_ru, l.name_en, l.unit_name_ru, l.unit_name_en, l.image, l.plu, l.weight_based, l.weight, l.barcode
    FROM (SELECT 1) AS one
    CROSS JOIN stock_locked
    ${c.slot ? sql`LEFT JOIN taken t ON true LEFT JOIN existing e ON true` : sql``}
    LEFT JOIN locked l ON true
    ORDER BY l.inventory_id`.execute(db);
  const first = rows[0];
  const customerActive = first!.customer_active;
  const slot: SlotTakeRow | null = c.slot
    ? {
        slot_taken_id: first!.slot_taken_id,
        slot_store_id: first!.slot_store_id,
        slot_date: first!.slot_date,
        slot_starts_at: first!.slot_starts_at,
        slot_ends_at: first!.slot_ends_at,
        held_slot_id: first!.held_slot_id,
        held_kind: first!.held_kind,
      }
    : null;
  const locked = rows.filter((r) => r.inventory_id !== null);
  const byPair = new Map(locked.filter((r) => r.product_exists).map((r) => [`${r.product_id}/${r.unit_id}`, r as CartLineFacts]));
  const missing = c.lines.filter((l) => !byPair.has(`${l.product_id.toLowerCase()}/${l.unit_id.toLowerCase()}`));
  if (missing.length) {
    const rest = pairs(missing);
    const { rows: unsold } = await sql<CartLineFacts>`
      SELECT l.product_id, l.unit_id, (p.id IS NOT NULL) AS product_exists, u.kind AS unit_kind, u.ratio AS unit_ratio,
             NULL::uuid AS inventory_id, NULL::numeric AS stock, NULL::numeric AS order_quantity_limit,
             NULL::numeric AS unit_price, NULL::numeric AS old_price, ${FACT_COLUMNS}
      FROM unnest(${rest.products}::uuid[], ${rest.units}::uuid[]) AS l(product_id, unit_id)
      LEFT JOIN products p ON p.id = l.product_id AND p.is_active
      LEFT JOIN measurement_units u ON u.id = l.unit_id`.execute(db);
    for (const r of unsold) byPair.set(`${r.product_id}/${r.unit_id}`, r);
  }
  return { customerActive, facts: c.lines.map((l) => byPair.get(`${l.product_id.toLowerCase()}/${l.unit_id.toLowerCase()}`)!), slot };
}

/** What the store knows about each line, in line order, without locking (the price estimate). */
export async function cartLineFacts(
  db: Executor,
  storeId: string,
  lines: readonly { product_id: string; unit_id: string }[],
): Promise<CartLineFacts[]> {
  const { products, units } = pairs(lines);
  const { rows } = await sql<CartLineFacts>`
    SELECT l.product_id, l.unit_id,
           (p.id IS NOT NULL) AS product_exists, u.kind AS unit_kind, u.ratio AS unit_ratio,
           i.id AS inventory_id, i.stock, i.order_quantity_limit, i.unit_price, i.old_price, ${FACT_COLUMNS}
    FROM unnest(${products}::uuid[], ${units}::uuid[]) WITH ORDINALITY AS l(product_id, unit_id, n)
    LEFT JOIN products p ON p.id = l.product_id AND p.is_active
    LEFT JOIN measurement_units u ON u.id = l.unit_id
    LEFT JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.unit_id = l.unit_id
    ORDER BY l.n`.execute(db);
  return rows;
}

/**
 * What the store knows of products named as replacements: each active product with whether the
 * store sells it (in any unit); products not listed are unknown (inactive or never existed).
 */
export async function namedProductFacts(
  db: Executor,
  storeId: string,
  productIds: readonly string[],
): Promise<Map<string, 'sold' | 'not_sold'>> {
  if (!productIds.length) return new Map();
  const { rows } = await sql<{ id: string; sold: boolean }>`
    SELECT p.id, EXISTS (SELECT 1 FROM inventories i WHERE i.product_id = p.id AND i.store_id = ${storeId}) AS sold
    FROM products p WHERE p.id = ANY(${[...productIds]}::uuid[]) AND p.is_active`.execute(db);
  return new Map(rows.map((r) => [r.id, r.sold ? 'sold' : 'not_sold']));
}

/**
 * Locks inventory rows in id order: the one order in which every writer of stock takes them
 * (checkout's lockCartLines too). Two transactions that lock some of the same rows in different
 * orders can each hold a row the other waits for, and PostgreSQL then fails one of them - a
 * checkout racing a cancellation of an order with the same two products did exactly that.
 */
export async function lockInventoryRows(db: Executor, inventoryIds: readonly string[]): Promise<void> {
  if (inventoryIds.length === 0) return;
  await sql`SELECT id FROM inventories WHERE id = ANY(${[...inventoryIds]}::uuid[]) ORDER BY id FOR UPDATE`.execute(db);
}

/** Gives the order's reserved quantities back to the store's stock (cancellation). */
export async function returnStock(db: Executor, orderId: string): Promise<number> {
  // In id order first, as lockInventoryRows takes them: the UPDATE below would lock the rows in
  // the order its join meets the lines.
  await sql`
    SELECT i.id FROM inventories i
    WHERE i.id IN (SELECT oi.inventory_id FROM order_items oi WHERE oi.order_id = ${orderId})
    ORDER BY i.id
    FOR UPDATE`.execute(db);
  const r = await sql`
    UPDATE inventories i SET stock = coalesce(i.stock, 0) + oi.quantity, updated_at = now()
    FROM order_items oi
    WHERE oi.order_id = ${orderId} AND oi.inventory_id = i.id`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

// ------------------------------------------------------------------------------------------------
// Delivery facts of a store

/** A slot of the store as the estimate checks it (nothing is held), with the database clock. */
export function findStoreSlot(db: Executor, storeId: string, slotId: string, kind: 'delivery' | 'pickup') {
  return db
    .selectFrom('store_slots as s')
    .innerJoin('stores as st', 'st.id', 's.store_id')
    .select([
      's.id',
      's.starts_at',
      's.ends_at',
      's.capacity',
      's.reserved',
      // A window of a day the store closed after it was made is closed too, as listing and holding say.
      sql<boolean>`(s.is_closed OR NOT ${notOnClosedDay})`.as('is_closed'),
      kind === 'delivery' ? 'st.delivery_lead_minutes as lead_minutes' : 'st.pickup_lead_minutes as lead_minutes',
      sql<Date>`now()`.as('db_now'),
    ])
    .where('s.id', '=', slotId)
    .where('s.store_id', '=', storeId)
    .where('s.kind', '=', kind)
    .where('st.is_active', '=', true)
    .executeTakeFirst();
}

export function findStoreForOrder(db: Executor, storeId: string) {
  return db
    .selectFrom('stores')
    .select(['id', 'lon', 'lat', 'timezone', 'name_ru', 'name_en', 'address_ru', 'address_en', 'accepts_pickup', 'pickup_min_order_amount'])
    .where('id', '=', storeId)
    .where('is_active', '=', true)
    .executeTakeFirst();
}

// ------------------------------------------------------------------------------------------------
// Writing an order

export interface NewOrder {
  order: Insertable<DB['orders']> & { id: string };
  items: Omit<Insertable<DB['order_items']>, 'order_id'>[];
  /** The statuses the order passed while being placed, in order (its roadmap starts with them). */
  statuses: OrderStatus[];
  /** Delivery orders start their courier delivery in `pending`. */
  withDelivery: boolean;
  /** When it is placed (the caller's clock): its event's `occurred_at`. */
  placedAt: Date;
  /** Online orders: minutes to pay, counted on the database clock. */
  paymentWindowMinutes: number | null;
}

/** The columns of an order line as written from JSON (jsonb_to_recordset), with their SQL types. */
export const ITEM_COLUMNS = {
  line_no: 'integer',
  product_id: 'uuid',
  unit_id: 'uuid',
  inventory_id: 'uuid',
  name_ru: 'text',
  name_en: 'text',
  unit_name_ru: 'text',
  unit_name_en: 'text',
  image: 'text',
  barcode: 'text',
  plu_code: 'text',
  weight_based: 'boolean',
  weight: 'numeric',
  quantity: 'numeric',
  unit_price: 'numeric',
  old_price: 'numeric',
  line_total: 'numeric',
  replacement_policy: 'text',
  replacement_product_ids: 'uuid[]',
  replacement_approval: 'boolean',
} as const;

/**
 * Checkout's last statement in its transaction: the stock taken (each row only if it still has
 * the quantity), and - only when every row had it - the order written - the order, its lines, its first roadmap entries and its delivery -
 * its first change recorded (order_version 2 and `order.changed`, as recordOrderChange would in a
 * statement of its own) and, when `answer` is given, the key's stored answer. `stocked` false:
 * nothing but some stock was written, and the caller rolls the transaction back.
 */
export async function insertPlacedOrder(
  db: Executor,
  n: NewOrder,
  stock: readonly { inventoryId: string; quantity: string }[],
  answer: { scope: IdempotencyScope; status: number; stored: StoredAnswer } | null,
): Promise<{ stocked: boolean }> {
  const o = { ...n.order, order_version: 2 };
  const columns = (Object.keys(o) as (keyof typeof o)[]).filter((c) => o[c] !== undefined);
  const items = Object.keys(ITEM_COLUMNS) as (keyof typeof ITEM_COLUMNS)[];
  const placed = sql<boolean>`EXISTS (SELECT 1 FROM o)`;
  const delivery = n.withDelivery
    ? sql`, d AS (INSERT INTO order_deliveries (order_id, tracking_state) SELECT ${o.id}, 'pending' WHERE ${placed}),
          t AS (INSERT INTO order_tracking_history (order_id, state) SELECT ${o.id}, 'pending' WHERE ${placed})`
    : sql``;
  const key = answer ? sql`, k AS (${completeIdempotencyKeySql(answer.scope, answer.status, answer.stored, { when: placed })})` : sql``;
  const { rows } = await sql<{ stocked: boolean }>`
    WITH st AS (
      UPDATE inventories i SET stock = i.stock - l.quantity, updated_at = now()
      FROM unnest(${stock.map((l) => l.inventoryId)}::uuid[], ${stock.map((l) => l.quantity)}::numeric[]) AS l(id, quantity)
      WHERE i.id = l.id AND i.stock >= l.quantity
      RETURNING i.id
    ), o AS (
      INSERT INTO orders (${sql.join(columns.map((c) => sql.ref(c)))}, payment_due_at)
      SELECT ${sql.join(columns.map((c) => sql`${o[c]}`))}, ${n.paymentWindowMinutes === null ? null : sql`now() + make_interval(mins => ${n.paymentWindowMinutes})`}
      WHERE (SELECT count(*) FROM st) = ${stock.length}
      RETURNING id, order_version, customer_id, store_id, status
    ), i AS (
      INSERT INTO order_items (order_id, ${sql.join(items.map((c) => sql.ref(c)))})
      SELECT ${o.id}, ${sql.join(items.map((c) => sql.ref(`x.${c}`)))}
      FROM jsonb_to_recordset(${JSON.stringify(n.items)}::jsonb) AS x(${sql.raw(items.map((c) => `${c} ${ITEM_COLUMNS[c]}`).join(', '))})
      WHERE ${placed}
    ), h AS (
      -- Entries of one transaction share now(); the roadmap orders them by id, given in this order.
      INSERT INTO order_status_history (order_id, status)
      SELECT ${o.id}, s.status FROM unnest(${n.statuses}::text[]) WITH ORDINALITY AS s(status, n) WHERE ${placed} ORDER BY s.n
    ), e AS (
      ${orderChangedInsertSql(o.id, ['status'], n.placedAt, 'o')}
    )${delivery}${key}
    SELECT ${placed} AS stocked`.execute(db);
  return { stocked: rows[0]!.stocked };
}

/** Moves the purchase status and writes the move into the roadmap history. */
export async function setOrderStatus(
  db: Executor,
  orderId: string,
  status: OrderStatus,
  note: { reason?: string | null; comment?: string | null } = {},
  extra: Updateable<DB['orders']> = {},
): Promise<void> {
  await db
    .updateTable('orders')
    .set({ ...extra, status, status_reason: note.reason ?? null, status_comment: note.comment ?? null, updated_at: sql<Date>`now()` })
    .where('id', '=', orderId)
    .execute();
  await db
    .insertInto('order_status_history')
    .values({ order_id: orderId, status, reason: note.reason ?? null, comment: note.comment ?? null })
    .execute();
}

export async function updateOrder(db: Executor, orderId: string, patch: Updateable<DB['orders']>): Promise<void> {
  await db
    .updateTable('orders')
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where('id', '=', orderId)
    .execute();
}

/** Moves the courier delivery state (or updates its comment/courier) and records state moves. */
export async function updateDelivery(
  db: Executor,
  orderId: string,
  patch: Updateable<DB['order_deliveries']>,
  recordState: { state: TrackingState; comment: string | null } | null,
): Promise<void> {
  await db
    .updateTable('order_deliveries')
    .set({ ...patch, updated_at: sql<Date>`now()` })
    .where('order_id', '=', orderId)
    .execute();
  if (recordState)
    await db
      .insertInto('order_tracking_history')
      .values({ order_id: orderId, state: recordState.state, comment: recordState.comment })
      .execute();
}

/**
 * The live marker's news within one tracking state - position, route, arrival estimate - with no
 * event and no order_version change (DeliveryInfoSchema: the app re-reads while the marker shows).
 * What the move does not carry is kept.
 */
export async function moveCourier(
  db: Executor,
  orderId: string,
  move: { location?: { lon: number; lat: number } | null; eta?: Date | null; route?: [number, number][] | null },
): Promise<void> {
  if (!move.location && !move.eta && !move.route) return;
  await db
    .updateTable('order_deliveries')
    .set({
      ...(move.location ? { courier_lon: move.location.lon, courier_lat: move.location.lat, courier_location_at: sql<Date>`now()` } : {}),
      ...(move.eta ? { eta: move.eta } : {}),
      ...(move.route ? { courier_route: JSON.stringify(move.route) } : {}),
    })
    .where('order_id', '=', orderId)
    .execute();
}

// ------------------------------------------------------------------------------------------------
// Reading orders

const ORDER_COLUMNS = [
  'o.id',
  'o.no',
  'o.customer_id',
  'o.store_id',
  'o.type',
  'o.payment_method',
  'o.status',
  'o.status_reason',
  'o.status_comment',
  'o.payment_status',
  'o.absence_action',
  'o.comment',
  'o.change_amount',
  'o.address_line',
  'o.delivery_lon',
  'o.delivery_lat',
  'o.entrance',
  'o.floor',
  'o.apartment',
  'o.intercom',
  'o.courier_comment',
  'o.delivery_zone_id',
  'o.is_express',
  'o.express_minutes',
  'o.slot_id',
  'o.slot_date',
  'o.slot_starts_at',
  'o.slot_ends_at',
  'o.payment_due_at',
  'o.goods_total',
  'o.delivery_cost',
  'o.total_price',
  'o.final_total',
  'o.items_count',
  'o.picking_result_state',
  'o.has_picking_changes',
  'o.picking_completed_at',
  'o.tote_count',
  'o.order_version',
  'o.created_at',
  'o.updated_at',
  'st.timezone as store_timezone',
  'st.lon as store_lon',
  'st.lat as store_lat',
  'st.address_ru as store_address_ru',
  'st.address_en as store_address_en',
  'd.tracking_state',
  'd.tracking_comment',
  'd.courier_name',
  'd.courier_phone',
  'd.courier_transport',
  'd.courier_lon',
  'd.courier_lat',
  'd.courier_location_at',
  'd.courier_route',
  'd.courier_request_ref',
  'd.eta as courier_eta',
  'd.updated_at as tracking_updated_at',
] as const;

function orderQuery(db: Executor) {
  return (
    db
      .selectFrom('orders as o')
      .innerJoin('stores as st', 'st.id', 'o.store_id')
      .leftJoin('order_deliveries as d', 'd.order_id', 'o.id')
      .select(ORDER_COLUMNS)
      // Whether a picker ever started it (an index probe): its lines no longer change then.
      .select(sql<boolean>`EXISTS (SELECT 1 FROM picking_sessions ps WHERE ps.order_id = o.id)`.as('picking_started'))
  );
}

export type OrderRow = NonNullable<Awaited<ReturnType<ReturnType<typeof orderQuery>['executeTakeFirst']>>>;

/** One of the customer's orders; another customer's order is simply not found. */
export function findCustomerOrder(db: Executor, orderId: string, customerId: string): Promise<OrderRow | undefined> {
  return orderQuery(db).where('o.id', '=', orderId).where('o.customer_id', '=', customerId).executeTakeFirst();
}

/**
 * Locks one of the customer's orders (and its delivery row) for a command, then reads it. Status
 * changes of the order serialize on this lock, so each sees the other's result.
 */
export async function lockCustomerOrder(db: Executor, orderId: string, customerId: string): Promise<OrderRow | undefined> {
  const locked = await db
    .selectFrom('orders')
    .select('id')
    .where('id', '=', orderId)
    .where('customer_id', '=', customerId)
    .forUpdate()
    .executeTakeFirst();
  if (!locked) return undefined;
  return orderQuery(db).where('o.id', '=', orderId).executeTakeFirst();
}

/**
 * Locks one of the customer's orders for a change of its lines, then reads it. FOR NO KEY UPDATE,
 * as a picker's start takes the row: a change and a start serialize here, so the start's session
 * is built from the lines as the change left them, or the change sees the order `picking`.
 */
export async function lockCustomerOrderForChange(db: Executor, orderId: string, customerId: string): Promise<OrderRow | undefined> {
  if (!(await lockOrderRowOfCustomer(db, orderId, customerId))) return undefined;
  return orderQuery(db).where('o.id', '=', orderId).executeTakeFirst();
}

/** Locks the customer's order row as a picker's start and commands do (FOR NO KEY UPDATE); false when it is not theirs. */
export async function lockOrderRowOfCustomer(db: Executor, orderId: string, customerId: string): Promise<boolean> {
  const locked = await db
    .selectFrom('orders')
    .select('id')
    .where('id', '=', orderId)
    .where('customer_id', '=', customerId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  return locked !== undefined;
}

/** Locks an order by id (the worker and provider events act on any customer's order). */
export async function lockOrder(db: Executor, orderId: string): Promise<OrderRow | undefined> {
  const locked = await db.selectFrom('orders').select('id').where('id', '=', orderId).forUpdate().executeTakeFirst();
  if (!locked) return undefined;
  return orderQuery(db).where('o.id', '=', orderId).executeTakeFirst();
}

export function listOrderItems(db: Executor, orderId: string) {
  return db
    .selectFrom('order_items')
    .select([
      'id',
      'line_no',
      'product_id',
      'unit_id',
      'inventory_id',
      'name_ru',
      'name_en',
      'unit_name_ru',
      'unit_name_en',
      'image',
      'weight',
      'quantity',
      'unit_price',
      'old_price',
      'line_total',
      'replacement_policy',
      'replacement_product_ids',
      'replacement_approval',
    ])
    .where('order_id', '=', orderId)
    .orderBy('line_no')
    .execute();
}

export type OrderItemRow = Awaited<ReturnType<typeof listOrderItems>>[number];

export function listStatusHistory(db: Executor, orderId: string) {
  return db
    .selectFrom('order_status_history')
    .select(['status', 'reason', 'comment', 'occurred_at'])
    .where('order_id', '=', orderId)
    .orderBy('occurred_at')
    .orderBy('id')
    .execute();
}

/** Whether the order was ever `picked` (a courier may then collect it even while cancelling). */
export async function wasEverPicked(db: Executor, orderId: string): Promise<boolean> {
  const row = await db
    .selectFrom('order_status_history')
    .select('id')
    .where('order_id', '=', orderId)
    .where('status', '=', 'picked')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

const FINISHED: OrderStatus[] = ['completed', 'cancelled'];

/** A page of the customer's orders, newest first, and how many match. */
export async function listCustomerOrders(db: Executor, customerId: string, active: boolean | null, page: number, pageSize: number) {
  let base = db.selectFrom('orders as o').innerJoin('stores as st', 'st.id', 'o.store_id').where('o.customer_id', '=', customerId);
  if (active === true) base = base.where('o.status', 'not in', FINISHED);
  if (active === false) base = base.where('o.status', 'in', FINISHED);
  const [rows, total] = await Promise.all([
    base
      .select([
        'o.id',
        'o.no',
        'o.type',
        'o.address_line',
        'o.created_at',
        'o.total_price',
        'o.final_total',
        'o.picking_result_state',
        'o.has_picking_changes',
        'st.address_ru as store_address_ru',
        'st.address_en as store_address_en',
      ])
      .orderBy('o.created_at', 'desc')
      .orderBy('o.no', 'desc')
      .limit(pageSize)
      .offset((page - 1) * pageSize)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, count: Number(total.n) };
}

export type OrderListRow = Awaited<ReturnType<typeof listCustomerOrders>>['rows'][number];

/**
 * Locks the customer's row: `share` by checkout, `update` by account deletion, so an order being
 * placed and the account being deleted never interleave (deletion then sees the new order).
 * Undefined when the account is gone or disabled.
 */
export async function lockCustomerRow(db: Executor, customerId: string, mode: 'share' | 'update'): Promise<{ id: string } | undefined> {
  const query = db
    .selectFrom('customers')
    .select('id')
    .where('id', '=', customerId)
    .where('deleted_at', 'is', null)
    .where('is_disabled', '=', false);
  return (mode === 'share' ? query.forShare() : query.forUpdate()).executeTakeFirst();
}

/** Whether the customer has an order that is neither delivered / collected nor cancelled. */
export async function customerHasUnfinishedOrder(db: Executor, customerId: string): Promise<boolean> {
  const row = await db
    .selectFrom('orders')
    .select('id')
    .where('customer_id', '=', customerId)
    .where('status', 'not in', FINISHED)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Account deletion: the customer's orders stay as accounting records, but where they were
 * delivered and how to get in is personal data and goes (DELETE /api/accounts/me/).
 */
export async function eraseOrderContactData(db: Executor, customerId: string): Promise<void> {
  await db
    .updateTable('orders')
    .set({
      address_line: '',
      delivery_lon: null,
      delivery_lat: null,
      entrance: null,
      floor: null,
      apartment: null,
      intercom: null,
      courier_comment: null,
      comment: null,
    })
    .where('customer_id', '=', customerId)
    .execute();
}

// ------------------------------------------------------------------------------------------------
// What the background worker claims (FOR UPDATE SKIP LOCKED: several instances share the work)

/** Pickup orders ready for longer than `hours` after their slot ended (never collected). */
export async function claimUncollectedPickups(db: Executor, hours: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('orders')
    .select('id')
    .where('status', '=', 'ready_for_pickup')
    .where('slot_ends_at', '<=', sql<Date>`now() - make_interval(hours => ${hours})`)
    .orderBy('slot_ends_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map((r) => r.id);
}

/** Deliveries under way at a courier service (states of order_deliveries_followed). */
const FOLLOWED_STATES = ['searching_courier', 'courier_assigned', 'courier_at_store', 'en_route', 'arrived', 'returning'] as const;

/**
 * Takes the deliveries under way at the courier service not asked about for `everySeconds`,
 * oldest question first, and marks them asked: in one short statement, rows another instance is
 * taking are skipped (SKIP LOCKED). Their orders are not locked: the service is asked with no
 * lock held, then each answer is applied under the order's lock if the delivery has not moved.
 */
export async function claimDeliveriesForStatusCheck(db: Executor, everySeconds: number, limit: number) {
  const { rows } = await sql<{ order_id: string; courier_request_ref: string; tracking_state: TrackingState }>`
    UPDATE order_deliveries d SET courier_checked_at = now()
    WHERE d.order_id IN (
      SELECT order_id FROM order_deliveries
      WHERE courier_request_ref IS NOT NULL AND tracking_state IN (${sql.join(FOLLOWED_STATES.map((s) => sql`${s}`))})
        AND (courier_checked_at IS NULL OR courier_checked_at <= now() - make_interval(secs => ${everySeconds}))
      ORDER BY courier_checked_at NULLS FIRST
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING d.order_id, d.courier_request_ref, d.tracking_state`.execute(db);
  return rows;
}

/** Online orders still unpaid after their payment window. */
export async function claimOrdersPastPaymentWindow(db: Executor, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('orders')
    .select('id')
    .where('status', 'in', ['created', 'awaiting_payment'])
    .where('payment_due_at', '<=', sql<Date>`now()`)
    // Not while a real bank's open invoice has not been asked about since the deadline: the
    // customer may have paid in the last moments, and a paid order must not be cancelled.
    .where(
      sql<boolean>`NOT EXISTS (SELECT 1 FROM bank_invoices b WHERE b.order_id = orders.id AND b.status = 'open'
        AND b.provider <> 'sandbox' AND (b.checked_at IS NULL OR b.checked_at < orders.payment_due_at))`,
    )
    .orderBy('payment_due_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Delivery orders whose courier should be requested now: express ones once picking started,
 * scheduled ones `leadMinutes` before their slot, both only once the order is confirmed. Read
 * through orders_active_slot_start (migration 2026_11_26_2301): the scheduled ones with a slot
 * starting before the lead and the express ones (no slot) under way, never the days booked ahead.
 */
export function deliveriesDueForCourierQuery(db: Executor, leadMinutes: number, limit: number) {
  return db
    .selectFrom('orders as o')
    .innerJoin('order_deliveries as d', 'd.order_id', 'o.id')
    .select('o.id')
    .where('o.status', 'in', ['confirmed', 'picking', 'picked'])
    .where('d.tracking_state', '=', 'pending')
    .where((eb) =>
      eb.or([
        eb.and([eb('o.slot_starts_at', 'is', null), eb('o.is_express', '=', true), eb('o.status', 'in', ['picking', 'picked'])]),
        eb.and([eb('o.slot_starts_at', '<=', sql<Date>`now() + make_interval(mins => ${leadMinutes})`), eb('o.is_express', '=', false)]),
      ]),
    )
    .orderBy('o.created_at')
    .limit(limit)
    .forUpdate('o')
    .skipLocked();
}

export async function claimDeliveriesDueForCourier(db: Executor, leadMinutes: number, limit: number): Promise<string[]> {
  const rows = await deliveriesDueForCourierQuery(db, leadMinutes, limit).execute();
  return rows.map((r) => r.id);
}
