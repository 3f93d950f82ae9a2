// Query functions of a change of an order's lines before picking (POST .../items/changes) and of
// what the order's detail shows of its lines beside them: the stock rows the change locks and the
// store's facts about the lines it prices, the one statement writing the change, the queue card's
// refresh for pickers, the lines' latest approvals and the names of the products they name.
import { randomUUID } from 'node:crypto';
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Executor } from '../executor.js';
import type { DB } from '../schema.js';
import type { ItemApprovalsTable, ReplacementPolicy } from '../tables/approvals.js';
import { writeOutboxEvent, type PickerEvent } from './outbox.js';
import { FACT_COLUMNS, ITEM_COLUMNS, type CartLineFacts } from './orders.js';

/** The stock facts of an inventory row as locked (the values the change is judged on). */
export interface LockedStock {
  id: string;
  stock: string | null;
  order_quantity_limit: string | null;
  unit_price: string;
  old_price: string | null;
}

/**
 * Locks the inventory rows a change moves stock on, in id order as every writer of stock takes
 * them (checkout, cancellation, picking): the rows the order's changed lines hold, and the store's
 * rows of the product/unit pairs the change prices. Returns them as locked, by id.
 */
export async function lockChangeStock(
  db: Executor,
  storeId: string,
  pairs: readonly { productId: string; unitId: string }[],
  inventoryIds: readonly string[],
): Promise<Map<string, LockedStock>> {
  if (!pairs.length && !inventoryIds.length) return new Map();
  const { rows } = await sql<LockedStock>`
    SELECT i.id, i.stock, i.order_quantity_limit, i.unit_price, i.old_price FROM inventories i
    WHERE i.id = ANY(${[...inventoryIds]}::uuid[])
       OR (i.store_id = ${storeId} AND (i.product_id, i.unit_id) IN (
            SELECT * FROM unnest(${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.unitId)}::uuid[])))
    ORDER BY i.id
    FOR UPDATE`.execute(db);
  return new Map(rows.map((r) => [r.id, r]));
}

/** What the catalog and the store say of a product/unit pair the change prices (no stock: see lockChangeStock). */
export type ChangePairFacts = Omit<CartLineFacts, 'stock' | 'order_quantity_limit' | 'unit_price' | 'old_price'>;

/** The catalog facts of each pair, in the order given: the store's inventory row of an active product, if any. */
export async function changePairFacts(
  db: Executor,
  storeId: string,
  pairs: readonly { productId: string; unitId: string }[],
): Promise<ChangePairFacts[]> {
  if (!pairs.length) return [];
  const { rows } = await sql<ChangePairFacts>`
    SELECT l.product_id, l.unit_id, (p.id IS NOT NULL) AS product_exists, u.kind AS unit_kind, u.ratio AS unit_ratio,
           i.id AS inventory_id, ${FACT_COLUMNS}
    FROM unnest(${pairs.map((p) => p.productId)}::uuid[], ${pairs.map((p) => p.unitId)}::uuid[]) WITH ORDINALITY AS l(product_id, unit_id, n)
    LEFT JOIN products p ON p.id = l.product_id AND p.is_active
    LEFT JOIN measurement_units u ON u.id = l.unit_id
    LEFT JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.unit_id = l.unit_id
    ORDER BY l.n`.execute(db);
  return rows;
}

/** A line's replacement preference as order_items stores it. */
export interface PreferenceColumns {
  replacement_policy: ReplacementPolicy | null;
  replacement_product_ids: string[];
  replacement_approval: boolean;
}

/** A kept line as it is after the change: its quantity and price (set anew or as they were) and preference. */
export interface ChangedLineRow extends PreferenceColumns {
  id: number;
  inventory_id: string | null;
  quantity: string;
  unit_price: string;
  old_price: string | null;
  line_total: string;
}

/** An added line: every column of ITEM_COLUMNS (its preference always given: the columns are NOT NULL). */
export type AddedLineRow = Omit<Insertable<DB['order_items']>, 'order_id'> & PreferenceColumns;

export interface OrderLinesChange {
  orderId: string;
  /** Stock per inventory row: positive gives back, negative takes (only if the row still has it). */
  stock: readonly { inventoryId: string; quantity: string }[];
  removedIds: readonly number[];
  changed: readonly ChangedLineRow[];
  added: readonly AddedLineRow[];
  totals: { goods_total: string; total_price: string; items_count: number };
}

const CHANGED_COLUMNS = {
  id: 'bigint',
  inventory_id: 'uuid',
  quantity: 'numeric',
  unit_price: 'numeric',
  old_price: 'numeric',
  line_total: 'numeric',
  replacement_policy: 'text',
  replacement_product_ids: 'uuid[]',
  replacement_approval: 'boolean',
} as const;

const recordset = (columns: Record<string, string>) =>
  sql.raw(
    Object.entries(columns)
      .map(([c, t]) => `${c} ${t}`)
      .join(', '),
  );

/**
 * Writes a change of the order's lines in one statement: the stock moved (a row gives only what
 * it still has; what goes back to a row since deleted is dropped), removed lines deleted, changed lines updated, added lines inserted and the
 * order's totals. `stocked` false: a row did not have what was to be taken, and the caller rolls
 * the transaction back (the rows were locked and judged, so it does not happen but is checked).
 */
export async function writeOrderLinesChange(db: Executor, c: OrderLinesChange): Promise<{ stocked: boolean }> {
  const added = Object.keys(ITEM_COLUMNS) as (keyof typeof ITEM_COLUMNS)[];
  const changed = Object.keys(CHANGED_COLUMNS) as (keyof typeof CHANGED_COLUMNS)[];
  const { rows } = await sql<{ taken: string }>`
    WITH st AS (
      UPDATE inventories i SET stock = coalesce(i.stock, 0) + l.quantity, updated_at = now()
      FROM unnest(${c.stock.map((s) => s.inventoryId)}::uuid[], ${c.stock.map((s) => s.quantity)}::numeric[]) AS l(id, quantity)
      WHERE i.id = l.id AND (l.quantity > 0 OR i.stock >= -l.quantity)
      RETURNING l.quantity < 0 AS took
    ), d AS (
      DELETE FROM order_items WHERE order_id = ${c.orderId} AND id = ANY(${[...c.removedIds]}::bigint[])
    ), u AS (
      UPDATE order_items oi SET ${sql.join(changed.filter((col) => col !== 'id').map((col) => sql`${sql.ref(col)} = ${sql.ref(`x.${col}`)}`))}
      FROM jsonb_to_recordset(${JSON.stringify(c.changed)}::jsonb) AS x(${recordset(CHANGED_COLUMNS)})
      WHERE oi.order_id = ${c.orderId} AND oi.id = x.id
    ), a AS (
      INSERT INTO order_items (order_id, ${sql.join(added.map((col) => sql.ref(col)))})
      SELECT ${c.orderId}, ${sql.join(added.map((col) => sql.ref(`x.${col}`)))}
      FROM jsonb_to_recordset(${JSON.stringify(c.added)}::jsonb) AS x(${recordset(ITEM_COLUMNS)})
    ), o AS (
      UPDATE orders SET goods_total = ${c.totals.goods_total}, total_price = ${c.totals.total_price},
        items_count = ${c.totals.items_count}, updated_at = now()
      WHERE id = ${c.orderId}
    )
    SELECT count(*) FILTER (WHERE took) AS taken FROM st`.execute(db);
  // What goes back to a row no longer there (its product withdrawn) goes nowhere, as at cancellation.
  return { stocked: Number(rows[0]!.taken) === c.stock.filter((s) => s.quantity.startsWith('-')).length };
}

/**
 * The pickers of the store see the order's queue card changed (`queue.changed`, `order_updated`):
 * its lines changed while it waits for picking.
 */
export async function recordQueueCardUpdated(db: Executor, o: { orderId: string; storeId: string; now: Date }): Promise<void> {
  const event: PickerEvent<'queue.changed'> = {
    event_id: randomUUID(),
    kind: 'queue.changed',
    occurred_at: o.now.toISOString(),
    store_id: o.storeId,
    order_id: o.orderId,
    reason: 'order_updated',
  };
  await writeOutboxEvent(
    db,
    'picker.queue.changed',
    { audience: { store_id: o.storeId }, event },
    { store_id: o.storeId, order_id: o.orderId },
  );
}

export type ItemApprovalRow = Selectable<ItemApprovalsTable>;

/** The latest approval of each line of the order (by id), one index range of item_approvals_order. */
export function latestItemApprovals(db: Executor, orderId: string): Promise<ItemApprovalRow[]> {
  return db
    .selectFrom('item_approvals')
    .selectAll()
    .distinctOn('order_item_id')
    .where('order_id', '=', orderId)
    .orderBy('order_item_id')
    .orderBy('id', 'desc')
    .execute();
}

/** The names of the products given that are still in the catalog (active), by id. */
export async function productNames(
  db: Executor,
  productIds: readonly string[],
): Promise<Map<string, { name_ru: string; name_en: string }>> {
  if (!productIds.length) return new Map();
  const rows = await db
    .selectFrom('products')
    .select(['id', 'name_ru', 'name_en'])
    .where('id', 'in', [...productIds])
    .where('is_active', '=', true)
    .execute();
  return new Map(rows.map((r) => [r.id, { name_ru: r.name_ru, name_en: r.name_en }]));
}

/** The terms of the order's delivery zone (its minimum), or undefined when the zone is gone. */
export function findZoneTerms(db: Executor, zoneId: string) {
  return db
    .selectFrom('delivery_zones')
    .select(['delivery_cost', 'free_amount_threshold', 'min_order_amount'])
    .where('id', '=', zoneId)
    .executeTakeFirst();
}
