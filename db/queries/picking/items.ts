// Picking items: the state machine's view of a row, reading and writing items, the order lines a
// session starts from, and the replacement options of a line.
import { sql, type Insertable, type Selectable } from 'kysely';
import { formatDecimal, parseDecimal } from '../../../domain/money/decimal.js';
import { isResolved, toleranceFor, type ItemFacts } from '../../../domain/picking/items.js';
import { PICKING_ITEM_COLUMNS } from '../../columns.js';
import type { Executor } from '../../executor.js';
import type { ItemPreference } from '../../tables/approvals.js';
import type { PickingItemsTable } from '../../tables/picking.js';

export type ItemRow = Selectable<PickingItemsTable>;

/**
 * The columns of an item that its facts (itemFacts), the session's header (current item) and
 * the session's total need: what an item command reads of the items it does not act on.
 */
export const ITEM_FACT_COLUMNS = [
  'id',
  'position',
  'state',
  'clarification_kind',
  'missing_action',
  'is_weight_based',
  'ordered_quantity',
  'actual_quantity',
  'confirmed_quantity',
  'pick_source',
  'last_scanned_barcode',
  'label_plu',
  'replacement_product_id',
  'tolerance_percent',
  'current_line_total',
] as const satisfies readonly (keyof ItemRow)[];

/** An item as far as its facts go (a whole ItemRow is one). */
export type ItemFactsRow = Pick<ItemRow, (typeof ITEM_FACT_COLUMNS)[number]>;

const thousandths = (v: string): bigint => parseDecimal(v, 3)!;

const optionalThousandths = (v: string | null): bigint | null => (v === null ? null : thousandths(v));

export const quantityText = (v: bigint): string => formatDecimal(v, 3);

/** The state machine's view of an item row. */
export function itemFacts(r: ItemFactsRow): ItemFacts {
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

export function loadItems(db: Executor, sessionId: number): Promise<ItemRow[]> {
  return db.selectFrom('picking_items').select(PICKING_ITEM_COLUMNS).where('session_id', '=', sessionId).orderBy('position').execute();
}

/** Items of several sessions, by session (history pages). */
export async function loadItemsOfSessions(db: Executor, sessionIds: number[]): Promise<Map<number, ItemRow[]>> {
  const out = new Map<number, ItemRow[]>(sessionIds.map((id) => [id, []]));
  if (!sessionIds.length) return out;
  const rows = await db
    .selectFrom('picking_items')
    .select(PICKING_ITEM_COLUMNS)
    .where('session_id', 'in', sessionIds)
    .orderBy('session_id')
    .orderBy('position')
    .execute();
  for (const r of rows) out.get(r.session_id)!.push(r);
  return out;
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

/** Writes an item's columns as a change computed them (itemChangeColumns, the approval's copy) and returns the row. */
export async function updateItem(db: Executor, itemId: number, columns: Record<string, unknown>): Promise<ItemRow> {
  const { rows } =
    await sql<ItemRow>`UPDATE picking_items SET ${sql.join(Object.entries(columns).map(([k, v]) => sql`${sql.ref(k)} = ${v}`))}
    WHERE id = ${itemId} RETURNING ${sql.join(PICKING_ITEM_COLUMNS.map((c) => sql.ref(c)))}`.execute(db);
  return rows[0]!;
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
            replacement_product_id: null,
            replacement_inventory_id: null,
            replacement_unit_id: null,
            replacement_name_ru: null,
            replacement_name_en: null,
            replacement_barcode: null,
            replacement_plu_code: null,
            replacement_image_url: null,
            replacement_unit_ru: null,
            replacement_unit_en: null,
            replacement_unit_price: null,
            replacement_chosen_at: null,
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

/**
 * The order's lines with what the session needs: the inventory row of the session's store (the
 * store's own row for the line's product and unit), the unit's kind and ratio, the shelf order.
 * `store_inventory_id` is null when the store does not sell the line's product any more.
 */
export function orderLinesForPicking(db: Executor, orderId: string, storeId: string) {
  return (
    db
      .selectFrom('order_items as l')
      .leftJoin('products as p', 'p.id', 'l.product_id')
      .leftJoin('categories as cat', 'cat.id', 'p.category_id')
      .leftJoin('measurement_units as u', 'u.id', 'l.unit_id')
      .leftJoin('inventories as si', (j) =>
        j.onRef('si.product_id', '=', 'l.product_id').onRef('si.unit_id', '=', 'l.unit_id').on('si.store_id', '=', storeId),
      )
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
        'si.location_aisle',
        'si.location_section',
        'si.location_shelf',
        'si.location_sequence',
        'si.temperature_class',
        'u.kind as unit_kind',
        'u.ratio as unit_ratio',
        'p.plu as product_plu',
        'p.image_listing as product_image',
        sql<string | null>`(SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = l.product_id)`.as('product_barcode'),
        // The line's preference with its named products' names, most preferred first (the
        // session keeps this copy: the line cannot change once picking has started).
        sql<ItemPreference | null>`CASE WHEN l.replacement_policy IS NULL THEN NULL ELSE jsonb_build_object(
          'policy', l.replacement_policy,
          'approval_required', l.replacement_approval,
          'products', coalesce((
            SELECT jsonb_agg(jsonb_build_object('product_id', np.id, 'name_ru', np.name_ru, 'name_en', np.name_en) ORDER BY n.ord)
            FROM unnest(l.replacement_product_ids) WITH ORDINALITY AS n(id, ord) JOIN products np ON np.id = n.id), '[]'::jsonb)) END`.as(
          'replacement_preference',
        ),
      ])
      .where('l.order_id', '=', orderId)
      // Walking order: the store's route (unlocated products last), the category, then the name.
      .orderBy(sql`si.location_sequence COLLATE "C" NULLS LAST`)
      .orderBy(sql`cat.tree_order NULLS LAST`)
      .orderBy('l.name_ru')
      .orderBy('l.line_no')
      .execute()
  );
}

export type OrderLineForPicking = Awaited<ReturnType<typeof orderLinesForPicking>>[number];

export interface ReplacementOption {
  id: string;
  name: string;
  barcode: string;
  description: string;
  price: string;
}

/**
 * Up to 5 suggestions for each item: products of the same category and kind as the ordered one,
 * in stock in the store, closest in price first (price per kg for weight items). An item whose
 * customer named its replacements (`named`) is offered those in stock alone, most preferred first.
 */
export async function replacementOptions(
  db: Executor,
  storeId: string,
  lang: 'ru' | 'en',
  items: { itemId: number; productId: string; isWeightBased: boolean; unitPrice: string; named: readonly string[] | null }[],
): Promise<Map<number, ReplacementOption[]>> {
  const out = new Map<number, ReplacementOption[]>();
  if (!items.length) return out;
  const name = sql.ref(`p.name_${lang}`);
  const description = sql.ref(`p.description_${lang}`);
  const option = sql`i.id, ${name} AS name, coalesce((SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id), '') AS barcode,
             coalesce(${description}, '') AS description, i.unit_price::text AS price`;
  const { rows } = await sql<ReplacementOption & { item_id: string }>`
    SELECT w.item_id, o.*
    FROM unnest(${items.map((i) => String(i.itemId))}::bigint[], ${items.map((i) => i.productId)}::uuid[], ${items.map((i) => i.unitPrice)}::numeric[],
                ${items.map((i) => (i.named ? JSON.stringify(i.named) : null))}::jsonb[])
      AS w(item_id, product_id, unit_price, named)
    JOIN products ordered ON ordered.id = w.product_id
    CROSS JOIN LATERAL (
      (SELECT ${option}, abs(i.unit_price / CASE WHEN u.kind = 'weight' THEN u.ratio ELSE 1 END - w.unit_price) AS sort, p.id AS tie
      FROM products p
      JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.is_default AND i.in_stock
      JOIN measurement_units u ON u.id = i.unit_id
      WHERE w.named IS NULL AND p.category_id = ordered.category_id AND p.weight_based = ordered.weight_based AND p.id <> ordered.id AND p.is_active
      ORDER BY sort, tie
      LIMIT 5)
      UNION ALL
      (SELECT ${option}, n.ord::numeric AS sort, p.id AS tie
      FROM jsonb_array_elements_text(w.named) WITH ORDINALITY AS n(id, ord)
      JOIN products p ON p.id = n.id::uuid AND p.is_active
      JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.is_default AND i.in_stock
      WHERE w.named IS NOT NULL)
    ) o
    ORDER BY w.item_id, o.sort, o.tie`.execute(db);
  for (const r of rows) {
    const id = Number(r.item_id);
    if (!out.has(id)) out.set(id, []);
    out
      .get(id)!
      .push({ id: r.id, name: r.name, barcode: r.barcode, description: r.description, price: formatDecimal(parseDecimal(r.price, 2)!, 2) });
  }
  return out;
}
