// Writes a catalog file into the database (`npm run catalog:import`, and the demo data). The file
// is the whole catalog: units are added or updated; categories and products are upserted by code
// and those absent from the file are withdrawn (is_active false, inventories removed); each
// listed product's barcodes and inventories are replaced by the file's. Run it inside one
// transaction (the caller opens it): a file with any bad row changes nothing, and readers see
// the previous catalog until it commits.
//
// The file is read as a stream (stream.ts), each product row checked as it comes (file.ts) and
// sent in batches to staging tables of the transaction; the catalog is then written from them by a
// few set-based statements, ranked in SQL. Only the category tree, the units and the codes already
// claimed (for duplicate checks) are held in memory: the codes grow with the file, the rest not.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  checkFileSections,
  NOT_AN_OBJECT,
  planCatalogHead,
  ProductPlanner,
  type ImportContext,
  type ImportProblem,
  type PlannedCategory,
  type PlannedProduct,
} from './file.js';
import { catalogObjectSource, type CatalogSource } from './stream.js';
import type { Executor } from '../executor.js';

export class CatalogImportError extends Error {
  constructor(readonly problems: ImportProblem[]) {
    super(`the catalog file has ${problems.length} problem(s); nothing was imported`);
    this.name = 'CatalogImportError';
  }
}

export interface CatalogImportSummary {
  units: number;
  categories: number;
  products: number;
  weight_based_products: number;
  inventories: number;
  barcodes: number;
  withdrawn_categories: number;
  withdrawn_products: number;
}

export interface ImportProgress {
  /** `reading`: product rows checked and staged so far; `writing`: the catalog written from them, step by step. */
  phase: 'reading' | 'writing';
  products: number;
  /** The statement about to run (writing only). */
  step?: string;
  elapsedMs: number;
}

export interface ImportOptions {
  onProgress?: (progress: ImportProgress) => void;
  /** Product rows per staging statement. */
  batchSize?: number;
}

const STAGING_BATCH = 5000;
/** Rank of uncategorised products' "tree position": after every category. */
const NO_CATEGORY_ORDER = 2147483647;

/** Rows sent as one json parameter and expanded into a staging table's row type. */
const asJson = (rows: unknown[]) => sql`${JSON.stringify(rows)}::json`;

export function importCatalog(trx: Executor, file: unknown, options: ImportOptions = {}): Promise<CatalogImportSummary> {
  return importCatalogFrom(trx, catalogObjectSource(file), options);
}

export async function importCatalogFrom(trx: Executor, source: CatalogSource, options: ImportOptions = {}): Promise<CatalogImportSummary> {
  const started = performance.now();
  const elapsedMs = () => performance.now() - started;
  const batchSize = options.batchSize ?? STAGING_BATCH;
  const stores = await trx.selectFrom('stores').select(['id', 'code']).where('is_active', '=', true).execute();
  const existingUnits = await trx.selectFrom('measurement_units').select(['id', 'code', 'kind', 'ratio']).execute();
  const ctx: ImportContext = {
    stores: new Map(stores.map((s) => [s.code, s.id])),
    existingUnits: new Map(existingUnits.map((u) => [u.code, { kind: u.kind, ratio: u.ratio }])),
  };

  // First pass: the file's sections, its units and categories. Files put them before the
  // products, so this pass stops where the products begin.
  const sections = new Map<string, unknown>();
  const unitRows: unknown[] = [];
  const categoryRows: unknown[] = [];
  for await (const e of source(new Set(['units', 'categories']))) {
    if (e.kind === 'not-an-object') throw new CatalogImportError([NOT_AN_OBJECT]);
    if (e.kind === 'section') {
      sections.set(e.name, e.isArray ? [] : e.value);
      if (e.name === 'products' && sections.has('units') && sections.has('categories')) break;
    } else (e.section === 'units' ? unitRows : categoryRows).push(e.value);
  }
  const problems: ImportProblem[] = [];
  const head = planCatalogHead(unitRows, categoryRows, ctx, problems);

  // Second pass: every product row checked and staged; once a row has a problem nothing more is
  // staged (nothing will be written), but the rest are still checked so that all are reported.
  await createStagingTables(trx);
  const planner = new ProductPlanner(head, ctx);
  const totals = { products: 0, weightBased: 0, inventories: 0, barcodes: 0 };
  let batch: PlannedProduct[] = [];
  let staging: Promise<void> = Promise.resolve();
  // Staging runs while the next batch is parsed: the two use different cores.
  const flush = async () => {
    const rows = batch;
    batch = [];
    await staging;
    staging = stageProducts(trx, rows);
    staging.catch(() => {}); // awaited at the next flush or the end
    options.onProgress?.({ phase: 'reading', products: totals.products, elapsedMs: elapsedMs() });
  };
  for await (const e of source(new Set(['products']))) {
    if (e.kind !== 'row') {
      if (e.kind === 'section' && !sections.has(e.name)) sections.set(e.name, e.isArray ? [] : e.value);
      continue;
    }
    if (e.section !== 'products') continue;
    const planned = planner.plan(e.value, e.index, problems);
    if (!planned || problems.length) continue;
    totals.products++;
    if (planned.weight_based) totals.weightBased++;
    totals.inventories += planned.inventories.length;
    totals.barcodes += planned.barcodes.length;
    batch.push(planned);
    if (batch.length >= batchSize) await flush();
  }
  if (batch.length) await flush();
  await staging;
  const sectionProblems = checkFileSections(sections);
  if (sectionProblems.length) throw new CatalogImportError(sectionProblems);
  if (problems.length) throw new CatalogImportError(problems);

  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    options.onProgress?.({ phase: 'writing', products: totals.products, step: name, elapsedMs: elapsedMs() });
    return run();
  };
  const { rows: workMem } = await sql<{ work_mem: string }>`SELECT current_setting('work_mem') AS work_mem`.execute(trx);
  const previousWorkMem = workMem[0]!.work_mem;
  await step('checking ids', async () => {
    await sql`ANALYZE catalog_import_products, catalog_import_inventories, catalog_import_barcodes`.execute(trx);
    await assertIdsFree(trx, head.categories);
  });
  // The postings and totals triggers stand aside until the end: this import writes both itself.
  // Its sorts (ranking, postings in index order) run in memory up to a bounded size.
  await sql`SELECT set_config('catalog.bulk_import', 'on', true), set_config('work_mem', '256MB', true)`.execute(trx);

  // ---- units ----
  if (head.units.length) {
    await sql`
      INSERT INTO measurement_units (code, kind, name_ru, name_en, full_name_ru, full_name_en, ratio)
      SELECT code, kind, name_ru, name_en, full_name_ru, full_name_en, ratio
      FROM json_to_recordset(${asJson(head.units)}) AS x(code text, kind text, name_ru text, name_en text, full_name_ru text, full_name_en text, ratio numeric)
      ON CONFLICT (code) DO UPDATE SET kind = excluded.kind, name_ru = excluded.name_ru, name_en = excluded.name_en,
        full_name_ru = excluded.full_name_ru, full_name_en = excluded.full_name_en, ratio = excluded.ratio`.execute(trx);
  }

  // ---- categories (pre-order: parents first); their rank ranges once the products are ranked ----
  const categoryIds = new Map((await trx.selectFrom('categories').select(['id', 'code']).execute()).map((c) => [c.code, c.id]));
  for (const c of head.categories) if (!categoryIds.has(c.code)) categoryIds.set(c.code, c.id ?? randomUUID());
  const withdrawnCategories = await step('categories', () => writeCategories(trx, head.categories, categoryIds));

  // ---- products ----
  // The import rewrites every inventory row of the catalog. Checkout, cancellation and picking
  // lock inventory rows in id order (db/queries/orders.ts); deleting or updating them in scan
  // order could take a row such a transaction wants next while waiting for one it holds: a
  // deadlock, and one of the two would fail. So the import takes them all first, in that same
  // order (it holds them to its end anyway). Plain reads - listings, cards, search - go on.
  await step('locking inventories', () =>
    sql`SELECT count(*) FROM (SELECT id FROM inventories ORDER BY id FOR UPDATE) locked`.execute(trx),
  );
  await sql`CREATE TEMP TABLE catalog_import_withdrawn (id uuid PRIMARY KEY) ON COMMIT DROP`.execute(trx);
  const withdrawnProducts = await step('withdrawing products', async () => {
    const done = await sql`
      WITH withdrawn AS (
        UPDATE products p SET is_active = false, plu = NULL, updated_at = now()
        WHERE p.is_active AND NOT EXISTS (SELECT 1 FROM catalog_import_products s WHERE s.code = p.code)
        RETURNING p.id)
      INSERT INTO catalog_import_withdrawn SELECT id FROM withdrawn`.execute(trx);
    await sql`DELETE FROM inventories WHERE product_id IN (SELECT id FROM catalog_import_withdrawn)`.execute(trx);
    await sql`DELETE FROM product_barcodes WHERE product_id IN (SELECT id FROM catalog_import_withdrawn)`.execute(trx);
    return Number(done.numAffectedRows ?? 0);
  });
  // A PLU may move between listed products; free them all first (the unique index is immediate).
  await sql`UPDATE products SET plu = NULL WHERE plu IN (SELECT plu FROM catalog_import_products WHERE plu IS NOT NULL)`.execute(trx);

  // Catalog order per language: category tree position (uncategorised last), then name by the
  // language's rules (base letters, numbers by value), then code.
  await step('ranking', async () => {
    await sql`
      CREATE TEMP TABLE catalog_import_ranks ON COMMIT DROP AS
      SELECT s.code,
             row_number() OVER (ORDER BY coalesce(o.tree_order, ${NO_CATEGORY_ORDER}), s.name_ru COLLATE catalog_rank_ru, s.code)::int AS sort_rank_ru,
             row_number() OVER (ORDER BY coalesce(o.tree_order, ${NO_CATEGORY_ORDER}), s.name_en COLLATE catalog_rank_en, s.code)::int AS sort_rank_en
      FROM catalog_import_products s
      LEFT JOIN unnest(${head.categories.map((c) => c.code)}::text[], ${head.categories.map((c) => c.tree_order)}::int[]) AS o(code, tree_order)
        ON o.code = s.category_code`.execute(trx);
  });
  const columns = sql.raw(PRODUCT_COLUMNS.join(', '));
  await step('products', () =>
    sql`
      INSERT INTO products (id, category_id, ${columns}, sort_rank_ru, sort_rank_en, is_active, updated_at)
      SELECT coalesce(s.id, gen_random_uuid()), c.id, ${sql.raw(PRODUCT_COLUMNS.map((c) => `s.${c}`).join(', '))},
             r.sort_rank_ru, r.sort_rank_en, true, now()
      FROM catalog_import_products s
      JOIN catalog_import_ranks r ON r.code = s.code
      LEFT JOIN categories c ON c.code = s.category_code
      ON CONFLICT (code) DO UPDATE SET category_id = excluded.category_id, ${sql.raw(
        PRODUCT_COLUMNS.filter((c) => c !== 'code')
          .map((c) => `${c} = excluded.${c}`)
          .join(', '),
      )}, sort_rank_ru = excluded.sort_rank_ru, sort_rank_en = excluded.sort_rank_en, is_active = true, updated_at = now()`.execute(trx),
  );
  await step('category ranges', () => writeCategoryRanges(trx, head.categories, categoryIds));
  await sql`CREATE TEMP TABLE catalog_import_listed ON COMMIT DROP AS
    SELECT p.id, p.code, p.sort_rank_ru, p.sort_rank_en FROM products p JOIN catalog_import_products s ON s.code = p.code`.execute(trx);
  await sql`ALTER TABLE catalog_import_listed ADD PRIMARY KEY (id)`.execute(trx);
  await sql`ANALYZE catalog_import_listed`.execute(trx);

  // ---- barcodes of the listed products: replaced ----
  await step('barcodes', async () => {
    await sql`DELETE FROM product_barcodes WHERE product_id IN (SELECT id FROM catalog_import_listed)`.execute(trx);
    await sql`DELETE FROM product_barcodes WHERE barcode IN (SELECT barcode FROM catalog_import_barcodes)`.execute(trx);
    await sql`INSERT INTO product_barcodes (barcode, product_id)
      SELECT b.barcode, l.id FROM catalog_import_barcodes b JOIN catalog_import_listed l ON l.code = b.product_code`.execute(trx);
  });

  // ---- inventories of the listed products: the file's ----
  // A (product, store, unit) row that stays keeps its id, so clients holding an id keep a valid
  // reference; it is rewritten only when something in it changed.
  await step('inventories', async () => {
    await sql`
      CREATE TEMP TABLE catalog_import_inventory_rows ON COMMIT DROP AS
      SELECT l.id AS product_id, x.store_id, u.id AS unit_id, x.is_default, x.stock, x.unit_price, x.old_price, x.order_quantity_limit,
             x.location_aisle, x.location_section, x.location_shelf, x.location_sequence, x.temperature_class,
             l.sort_rank_ru, l.sort_rank_en
      FROM catalog_import_inventories x
      JOIN catalog_import_listed l ON l.code = x.product_code
      JOIN measurement_units u ON u.code = x.unit_code`.execute(trx);
    await sql`ANALYZE catalog_import_inventory_rows`.execute(trx);
    await sql`
      DELETE FROM inventories i
      WHERE i.product_id IN (SELECT id FROM catalog_import_listed)
        AND NOT EXISTS (SELECT 1 FROM catalog_import_inventory_rows n
                        WHERE n.product_id = i.product_id AND n.store_id = i.store_id AND n.unit_id = i.unit_id)`.execute(trx);
    // A row that stops being its store's default first gives the place up (the unique index is immediate).
    const changed = sql`(i.is_default, i.stock, i.unit_price, i.old_price, i.order_quantity_limit, i.location_aisle, i.location_section,
        i.location_shelf, i.location_sequence, i.temperature_class, i.sort_rank_ru, i.sort_rank_en)
      IS DISTINCT FROM (n.is_default, n.stock, n.unit_price, n.old_price, n.order_quantity_limit, n.location_aisle, n.location_section,
        n.location_shelf, n.location_sequence, n.temperature_class, n.sort_rank_ru, n.sort_rank_en)`;
    const set = sql`stock = n.stock, unit_price = n.unit_price, old_price = n.old_price,
        order_quantity_limit = n.order_quantity_limit, location_aisle = n.location_aisle, location_section = n.location_section,
        location_shelf = n.location_shelf, location_sequence = n.location_sequence, temperature_class = n.temperature_class,
        sort_rank_ru = n.sort_rank_ru, sort_rank_en = n.sort_rank_en, updated_at = now()`;
    await sql`UPDATE inventories i SET is_default = false, ${set} FROM catalog_import_inventory_rows n
      WHERE n.product_id = i.product_id AND n.store_id = i.store_id AND n.unit_id = i.unit_id AND i.is_default AND NOT n.is_default`.execute(
      trx,
    );
    await sql`UPDATE inventories i SET is_default = n.is_default, ${set} FROM catalog_import_inventory_rows n
      WHERE n.product_id = i.product_id AND n.store_id = i.store_id AND n.unit_id = i.unit_id AND ${changed}`.execute(trx);
    await sql`
      INSERT INTO inventories (product_id, store_id, unit_id, is_default, stock, unit_price, old_price, order_quantity_limit,
        location_aisle, location_section, location_shelf, location_sequence, temperature_class, sort_rank_ru, sort_rank_en, updated_at)
      SELECT n.product_id, n.store_id, n.unit_id, n.is_default, n.stock, n.unit_price, n.old_price, n.order_quantity_limit,
        n.location_aisle, n.location_section, n.location_shelf, n.location_sequence, n.temperature_class, n.sort_rank_ru, n.sort_rank_en, now()
      FROM catalog_import_inventory_rows n
      WHERE NOT EXISTS (SELECT 1 FROM inventories i WHERE i.product_id = n.product_id AND i.store_id = n.store_id AND i.unit_id = n.unit_id)
      ORDER BY n.store_id, n.product_id`.execute(trx);
  });

  // ---- search postings of the listed and withdrawn products, in the order of their index ----
  await step('search postings', async () => {
    await sql`DELETE FROM catalog_search_postings WHERE product_id IN (SELECT id FROM catalog_import_listed UNION ALL SELECT id FROM catalog_import_withdrawn)`.execute(
      trx,
    );
    await sql`
      INSERT INTO catalog_search_postings (store_id, word, product_id, in_stock, sort_rank_ru, sort_rank_en)
      SELECT i.store_id, w.word, i.product_id, i.in_stock, i.sort_rank_ru, i.sort_rank_en
      FROM catalog_import_listed l
      JOIN inventories i ON i.product_id = l.id AND i.is_default
      JOIN products p ON p.id = l.id
      CROSS JOIN LATERAL unnest(p.search_words) AS w(word)
      ORDER BY i.store_id, w.word COLLATE "C", i.in_stock DESC, i.sort_rank_ru`.execute(trx);
  });

  // ---- category totals, counted again from the result ----
  await step('category totals', async () => {
    await sql`DELETE FROM catalog_category_totals`.execute(trx);
    await sql`
      INSERT INTO catalog_category_totals (store_id, category_id, products)
      SELECT per.store_id, a.category_id, sum(per.n)::int
      FROM (SELECT i.store_id, p.category_id, count(*) AS n
            FROM inventories i JOIN products p ON p.id = i.product_id
            WHERE i.is_default AND p.category_id IS NOT NULL GROUP BY 1, 2) per
      JOIN categories c ON c.id = per.category_id
      CROSS JOIN LATERAL unnest(c.ancestor_ids || c.id) AS a(category_id)
      GROUP BY 1, 2`.execute(trx);
  });
  await sql`SELECT set_config('catalog.bulk_import', 'off', true), set_config('work_mem', ${previousWorkMem}, true)`.execute(trx);

  return {
    units: head.units.length,
    categories: head.categories.length,
    products: totals.products,
    weight_based_products: totals.weightBased,
    inventories: totals.inventories,
    barcodes: totals.barcodes,
    withdrawn_categories: withdrawnCategories,
    withdrawn_products: withdrawnProducts,
  };
}

/** The product columns a file gives, as the staging table and products name them. */
const PRODUCT_COLUMNS = [
  'code',
  'name_ru',
  'name_en',
  'description_ru',
  'description_en',
  'composition_ru',
  'composition_en',
  'made_country_ru',
  'made_country_en',
  'manufacturer',
  'brand',
  'weight_based',
  'weight',
  'calories',
  'protein',
  'fats',
  'carbohydrates',
  'image_original',
  'image_detail',
  'image_listing',
  'image_thumbnail',
  'plu',
  'is_top',
  'is_new',
  'is_fresh',
  'popularity',
] as const;

/** Tables of the transaction holding the checked rows until the catalog is written from them. */
async function createStagingTables(trx: Executor): Promise<void> {
  // Temporary tables are written without WAL and dropped at the commit.
  await sql`DROP TABLE IF EXISTS catalog_import_products, catalog_import_barcodes, catalog_import_inventories, catalog_import_ranks,
    catalog_import_listed, catalog_import_withdrawn, catalog_import_inventory_rows`.execute(trx);
  await sql`
    CREATE TEMP TABLE catalog_import_products (
      code text COLLATE "C" NOT NULL, id uuid, category_code text, name_ru text, name_en text, description_ru text,
      description_en text, composition_ru text, composition_en text, made_country_ru text, made_country_en text,
      manufacturer text, brand text, weight_based boolean, weight numeric, calories numeric, protein numeric, fats numeric,
      carbohydrates numeric, image_original text, image_detail text, image_listing text, image_thumbnail text, plu text,
      is_top boolean, is_new boolean, is_fresh boolean, popularity int) ON COMMIT DROP`.execute(trx);
  await sql`CREATE TEMP TABLE catalog_import_barcodes (product_code text COLLATE "C" NOT NULL, barcode text NOT NULL) ON COMMIT DROP`.execute(
    trx,
  );
  await sql`
    CREATE TEMP TABLE catalog_import_inventories (
      product_code text COLLATE "C" NOT NULL, store_id uuid NOT NULL, unit_code text NOT NULL, is_default boolean NOT NULL,
      stock numeric, unit_price numeric NOT NULL, old_price numeric, order_quantity_limit numeric, location_aisle text,
      location_section text, location_shelf text, location_sequence text, temperature_class text NOT NULL) ON COMMIT DROP`.execute(trx);
}

/** One statement for a batch of checked products: their rows, barcodes and inventories. */
async function stageProducts(trx: Executor, products: PlannedProduct[]): Promise<void> {
  const rows = products.map(({ barcodes: _b, inventories: _i, sort_rank_ru: _r, sort_rank_en: _e, ...p }) => p);
  const barcodes = products.flatMap((p) => p.barcodes.map((barcode) => ({ product_code: p.code, barcode })));
  const inventories = products.flatMap((p) => p.inventories.map((inv) => ({ product_code: p.code, ...inv })));
  await sql`
    WITH staged_products AS (
      INSERT INTO catalog_import_products SELECT * FROM json_populate_recordset(NULL::catalog_import_products, ${asJson(rows)})),
    staged_barcodes AS (
      INSERT INTO catalog_import_barcodes SELECT * FROM json_populate_recordset(NULL::catalog_import_barcodes, ${asJson(barcodes)}))
    INSERT INTO catalog_import_inventories SELECT * FROM json_populate_recordset(NULL::catalog_import_inventories, ${asJson(inventories)})`.execute(
    trx,
  );
}

/** Upserts the file's categories and withdraws the others; returns how many were withdrawn. */
async function writeCategories(trx: Executor, categories: PlannedCategory[], categoryIds: Map<string, string>): Promise<number> {
  const categoryRows = categories.map((c) => ({
    id: categoryIds.get(c.code)!,
    code: c.code,
    parent_id: c.parent_code === null ? null : categoryIds.get(c.parent_code)!,
    level: c.level,
    ancestor_ids: c.ancestor_codes.map((a) => categoryIds.get(a)!),
    tree_order: c.tree_order,
    name_ru: c.name_ru,
    name_en: c.name_en,
    color: c.color,
    image_original: c.image_original,
    image_listing: c.image_listing,
    is_own_production: c.is_own_production,
    show_products_count: c.show_products_count,
    main_page_position: c.main_page_position,
    main_page_layout: c.main_page_layout,
  }));
  // Withdrawn categories leave the tree first, so that no active row points at them.
  const withdrawn = await sql`
    UPDATE categories SET is_active = false, main_page_position = NULL, main_page_layout = NULL, product_rank_from = NULL,
      product_rank_to = NULL, updated_at = now()
    WHERE is_active AND code NOT IN (SELECT unnest(${categories.map((c) => c.code)}::text[]))`.execute(trx);
  if (categoryRows.length) {
    await sql`
      INSERT INTO categories (id, code, parent_id, level, ancestor_ids, tree_order, name_ru, name_en, color, image_original,
        image_listing, is_own_production, show_products_count, main_page_position, main_page_layout, is_active, updated_at)
      SELECT id, code, parent_id, level, ancestor_ids, tree_order, name_ru, name_en, color, image_original,
        image_listing, is_own_production, show_products_count, main_page_position, main_page_layout, true, now()
      FROM json_to_recordset(${asJson(categoryRows)}) AS x(id uuid, code text, parent_id uuid, level smallint, ancestor_ids uuid[],
        tree_order int, name_ru text, name_en text, color text, image_original text, image_listing text, is_own_production boolean,
        show_products_count boolean, main_page_position int, main_page_layout text)
      ON CONFLICT (code) DO UPDATE SET parent_id = excluded.parent_id, level = excluded.level, ancestor_ids = excluded.ancestor_ids,
        tree_order = excluded.tree_order, name_ru = excluded.name_ru, name_en = excluded.name_en, color = excluded.color,
        image_original = excluded.image_original, image_listing = excluded.image_listing,
        is_own_production = excluded.is_own_production, show_products_count = excluded.show_products_count,
        main_page_position = excluded.main_page_position, main_page_layout = excluded.main_page_layout,
        is_active = true, updated_at = now()`.execute(trx);
  }
  return Number(withdrawn.numAffectedRows ?? 0);
}

/**
 * Each category's range of ranks. Ranks start with the category's tree position and a subtree is
 * contiguous in pre-order, so each subtree's products hold one range - the same in both languages.
 */
async function writeCategoryRanges(trx: Executor, categories: PlannedCategory[], categoryIds: Map<string, string>): Promise<void> {
  const { rows } = await sql<{ category_code: string; rank_from: number; rank_to: number }>`
    SELECT s.category_code, min(r.sort_rank_ru) AS rank_from, max(r.sort_rank_ru) AS rank_to
    FROM catalog_import_products s JOIN catalog_import_ranks r ON r.code = s.code
    WHERE s.category_code IS NOT NULL GROUP BY 1`.execute(trx);
  const byCode = new Map(categories.map((c) => [c.code, c]));
  for (const c of categories) {
    c.product_rank_from = null;
    c.product_rank_to = null;
  }
  for (const r of rows) {
    const own = byCode.get(r.category_code)!;
    for (const c of [own, ...own.ancestor_codes.map((a) => byCode.get(a)!)]) {
      c.product_rank_from = Math.min(c.product_rank_from ?? r.rank_from, r.rank_from);
      c.product_rank_to = Math.max(c.product_rank_to ?? r.rank_to, r.rank_to);
    }
  }
  if (!categories.length) return;
  await sql`
    UPDATE categories c SET product_rank_from = x.rank_from, product_rank_to = x.rank_to
    FROM unnest(${categories.map((c) => categoryIds.get(c.code)!)}::uuid[], ${categories.map((c) => c.product_rank_from)}::int[],
      ${categories.map((c) => c.product_rank_to)}::int[]) AS x(id, rank_from, rank_to)
    WHERE c.id = x.id`.execute(trx);
}

/**
 * Ids never change: a file `id` must be the id the code already has, and must not belong to
 * another code. Categories are checked here, products against the staging table.
 */
async function assertIdsFree(trx: Executor, categories: PlannedCategory[]): Promise<void> {
  const problems: ImportProblem[] = [];
  const report = (table: string, r: { code: string; id: string; current_id: string | null; owner_code: string | null }) => {
    if (r.current_id !== null && r.current_id !== r.id) {
      problems.push({
        row: `${table} ${r.code}`,
        field: 'id',
        message: `is ${r.id}, but ${r.code} already has id ${r.current_id} (ids never change)`,
      });
    } else if (r.owner_code !== null && r.owner_code !== r.code) {
      problems.push({ row: `${table} ${r.code}`, field: 'id', message: `${r.id} already belongs to ${table} ${r.owner_code}` });
    }
  };
  const wanted = categories.filter((c) => c.id !== null);
  if (wanted.length) {
    const { rows: taken } = await sql<{ id: string; code: string }>`
      SELECT id, code FROM categories
      WHERE id = ANY(${wanted.map((r) => r.id!)}::uuid[]) OR code = ANY(${wanted.map((r) => r.code)}::text[])`.execute(trx);
    const codeOf = new Map(taken.map((t) => [t.id, t.code]));
    const idOf = new Map(taken.map((t) => [t.code, t.id]));
    for (const c of wanted)
      report('categories', { code: c.code, id: c.id!, current_id: idOf.get(c.code) ?? null, owner_code: codeOf.get(c.id!) ?? null });
  }
  const { rows: products } = await sql<{ code: string; id: string; current_id: string | null; owner_code: string | null }>`
    SELECT s.code, s.id, cur.id AS current_id, owner.code AS owner_code
    FROM catalog_import_products s
    LEFT JOIN products cur ON cur.code = s.code
    LEFT JOIN products owner ON owner.id = s.id
    WHERE s.id IS NOT NULL AND (cur.id <> s.id OR owner.code <> s.code)
    LIMIT 1000`.execute(trx);
  for (const r of products) report('products', r);
  if (problems.length) throw new CatalogImportError(problems);
}
