// Products as a picker finds them in one store (PickerCatalogProductSchema): by a scanned code
// (product barcode or scale label), by inventory row, and by search (offset and keyset pages).
// Text matching reuses the catalog's search (db/queries/catalog-search.ts).
import { sql, type RawBuilder } from 'kysely';
import { parseSearch } from '../../../domain/catalog/search.js';
import type { ScannedCode } from '../../../domain/codes/scale-label.js';
import { planProductSearch } from '../catalog-search.js';
import type { Executor } from '../../executor.js';
import type { TemperatureClass } from '../../tables/picking.js';

/** One inventory row of a store with its product, as the picker screens show it. */
export interface StoreProductRow {
  inventory_id: string;
  product_id: string;
  category_id: string | null;
  name_ru: string;
  name_en: string;
  description_ru: string | null;
  description_en: string | null;
  barcode: string | null;
  plu: string | null;
  image_listing: string | null;
  weight_based: boolean;
  unit_id: string;
  unit_ru: string;
  unit_en: string;
  /** Kilograms per unit of the inventory row (1 for kg; 0.1 for 100 g); 1 for piece units. */
  unit_ratio: string;
  unit_price: string;
  stock: string | null;
  /** Where the inventory row stands in the store (all null when not located) and how it is kept. */
  location_aisle: string | null;
  location_section: string | null;
  location_shelf: string | null;
  location_sequence: string | null;
  temperature_class: TemperatureClass;
}

/** The main barcode of a product: the smallest of its barcodes (the catalog file lists it first). */
const mainBarcode = sql<string | null>`(SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id)`;

const STORE_PRODUCT_COLUMNS = sql`
  i.id AS inventory_id, p.id AS product_id, p.category_id, p.name_ru, p.name_en, p.description_ru, p.description_en,
  ${mainBarcode} AS barcode, p.plu, p.image_listing, p.weight_based, i.unit_id, u.name_ru AS unit_ru, u.name_en AS unit_en,
  CASE WHEN u.kind = 'weight' THEN u.ratio ELSE 1 END AS unit_ratio, i.unit_price, i.stock,
  i.location_aisle, i.location_section, i.location_shelf, i.location_sequence, i.temperature_class`;

/**
 * The product a scanned code names in the store (its default inventory row) and whether it was
 * found by a scale label's PLU; undefined when the store does not sell it. A product barcode wins
 * over the scale-label reading of the same code.
 */
export async function findStoreProductByCode(
  db: Executor,
  storeId: string,
  code: ScannedCode,
): Promise<{ row: StoreProductRow; byLabel: boolean } | undefined> {
  if (code.kind === 'invalid') return undefined;
  const plu = code.kind === 'scale_label' ? code.plu : null;
  // Two index lookups, not one scan: by barcode (the primary key), and by PLU, which a label
  // writes in 5 digits and the catalog in 4 or 5 (unique) - '01234' on a label is '1234' or '01234'.
  const { rows } = await sql<StoreProductRow & { by_barcode: boolean }>`
    SELECT ${STORE_PRODUCT_COLUMNS}, c.by_barcode
    FROM (
      SELECT b.product_id, true AS by_barcode FROM product_barcodes b WHERE b.barcode = ANY(${code.barcodes}::text[])
      UNION ALL
      SELECT l.id, false FROM products l
      WHERE ${plu}::text IS NOT NULL AND l.weight_based
        AND l.plu = ANY(ARRAY[${plu}::text, CASE WHEN left(${plu}::text, 1) = '0' THEN substr(${plu}::text, 2) END])
    ) c
    JOIN products p ON p.id = c.product_id
    JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.is_default
    JOIN measurement_units u ON u.id = i.unit_id
    WHERE p.is_active
    ORDER BY c.by_barcode DESC, p.id
    LIMIT 1`.execute(db);
  if (!rows[0]) return undefined;
  const { by_barcode: byBarcode, ...row } = rows[0];
  return { row, byLabel: !byBarcode };
}

/** An inventory row of the store by id (picker search results, additional items). */
export async function findStoreInventory(db: Executor, storeId: string, inventoryId: string): Promise<StoreProductRow | undefined> {
  const { rows } = await sql<StoreProductRow>`
    SELECT ${STORE_PRODUCT_COLUMNS}
    FROM inventories i
    JOIN products p ON p.id = i.product_id
    JOIN measurement_units u ON u.id = i.unit_id
    WHERE i.id = ${inventoryId} AND i.store_id = ${storeId} AND p.is_active`.execute(db);
  return rows[0];
}

/** The default inventory rows of products in the store, by product id. */
export async function findStoreProducts(db: Executor, storeId: string, productIds: string[]): Promise<Map<string, StoreProductRow>> {
  if (!productIds.length) return new Map();
  const { rows } = await sql<StoreProductRow>`
    SELECT ${STORE_PRODUCT_COLUMNS}
    FROM products p
    JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.is_default
    JOIN measurement_units u ON u.id = i.unit_id
    WHERE p.id = ANY(${productIds}::uuid[])`.execute(db);
  return new Map(rows.map((r) => [r.product_id, r]));
}

// ---------------------------------------------------------------------------------------------
// Search

export interface PickerSearch {
  storeId: string;
  lang: 'ru' | 'en';
  query: string | null;
  /** A code from the `barcode` parameter, already read; null when absent. */
  code: ScannedCode | null;
}

/** The sort key of a search row: in stock first, then relevance, then name, then inventory id. */
export interface SearchKey {
  inStock: boolean;
  /** Relevance rounded to 6 decimals, as a decimal string (exact in SQL and in the cursor). */
  relevance: string;
  name: string;
  inventoryId: string;
}

interface SearchRow extends StoreProductRow {
  in_stock: boolean;
  relevance: string;
  sort_name: string;
  total: number;
}

async function searchSource(db: Executor, s: PickerSearch): Promise<RawBuilder<unknown>> {
  const text = parseSearch(s.query ?? undefined);
  const plan = text ? await planProductSearch(db, text) : null;
  let codeCondition: RawBuilder<unknown> = sql`true`;
  if (s.code) {
    if (s.code.kind === 'invalid') codeCondition = sql`false`;
    else {
      const plu = s.code.kind === 'scale_label' ? s.code.plu : null;
      codeCondition = sql`(p.id IN (SELECT b.product_id FROM product_barcodes b WHERE b.barcode = ANY(${s.code.barcodes}::text[]))
        OR (${plu}::text IS NOT NULL AND p.weight_based AND lpad(p.plu, 5, '0') = ${plu}))`;
    }
  }
  const name = sql.ref(`p.name_${s.lang}`);
  // The plan's relevance is null when every match would rank alike: then they all score 0.
  return sql`
    SELECT ${STORE_PRODUCT_COLUMNS}, i.in_stock, round((${plan?.relevance ?? sql`0`})::numeric, 6) AS relevance, ${name} AS sort_name
    FROM products p
    JOIN inventories i ON i.product_id = p.id AND i.store_id = ${s.storeId} AND i.is_default
    JOIN measurement_units u ON u.id = i.unit_id
    WHERE p.is_active AND ${plan ? plan.condition : sql`true`} AND ${codeCondition}`;
}

const ORDER = sql`ORDER BY m.in_stock DESC, m.relevance DESC, m.sort_name, m.inventory_id`;

/** One offset page and the number of matches. */
export async function searchStoreProducts(
  db: Executor,
  s: PickerSearch,
  limit: number,
  offset: number,
): Promise<{ rows: StoreProductRow[]; total: number }> {
  const source = await searchSource(db, s);
  const { rows } = await sql<SearchRow>`
    SELECT m.*, count(*) OVER ()::int AS total FROM (${source}) m ${ORDER} LIMIT ${limit} OFFSET ${offset}`.execute(db);
  let total = rows[0]?.total ?? 0;
  // An offset past the end returns no row to carry the count: count separately.
  if (!rows.length && offset > 0) {
    const counted = await sql<{ n: number }>`SELECT count(*)::int AS n FROM (${source}) m`.execute(db);
    total = counted.rows[0]!.n;
  }
  return { rows: rows.map(stripSearchColumns), total };
}

/** One keyset page: `limit` rows after `after` (stable while rows are inserted before or after it). */
export async function searchStoreProductsAfter(
  db: Executor,
  s: PickerSearch,
  limit: number,
  after: SearchKey | null,
): Promise<{ rows: StoreProductRow[]; last: SearchKey | null; hasMore: boolean }> {
  const source = await searchSource(db, s);
  const keyset = after
    ? sql`WHERE (m.in_stock < ${after.inStock})
         OR (m.in_stock = ${after.inStock} AND m.relevance < ${after.relevance}::numeric)
         OR (m.in_stock = ${after.inStock} AND m.relevance = ${after.relevance}::numeric AND m.sort_name > ${after.name})
         OR (m.in_stock = ${after.inStock} AND m.relevance = ${after.relevance}::numeric AND m.sort_name = ${after.name} AND m.inventory_id > ${after.inventoryId}::uuid)`
    : sql``;
  const { rows } = await sql<SearchRow>`SELECT m.* FROM (${source}) m ${keyset} ${ORDER} LIMIT ${limit + 1}`.execute(db);
  const page = rows.slice(0, limit);
  const lastRow = page[page.length - 1];
  return {
    rows: page.map(stripSearchColumns),
    hasMore: rows.length > limit,
    last: lastRow
      ? { inStock: lastRow.in_stock, relevance: lastRow.relevance, name: lastRow.sort_name, inventoryId: lastRow.inventory_id }
      : null,
  };
}

function stripSearchColumns({ in_stock: _s, relevance: _r, sort_name: _n, total: _t, ...row }: SearchRow): StoreProductRow {
  return row;
}
