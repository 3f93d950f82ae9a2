// Writes a catalog file into the database (`npm run catalog:import`, and the demo data). The file
// is the whole catalog: units are added or updated; categories and products are upserted by code
// and those absent from the file are withdrawn (is_active false, inventories removed); each
// listed product's barcodes and inventories are replaced by the file's. Run it inside one
// transaction (the caller opens it): a file with any bad row changes nothing.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { planCatalogImport, type CatalogImportPlan, type ImportProblem } from './file.js';
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

/** Rows sent as one jsonb parameter and expanded by jsonb_to_recordset: one statement per table. */
const asJson = (rows: unknown[]) => sql`${JSON.stringify(rows)}::jsonb`;

export async function importCatalog(trx: Executor, file: unknown): Promise<CatalogImportSummary> {
  const stores = await trx.selectFrom('stores').select(['id', 'code']).where('is_active', '=', true).execute();
  const existingUnits = await trx.selectFrom('measurement_units').select(['id', 'code', 'kind', 'ratio']).execute();
  const result = planCatalogImport(file, {
    stores: new Map(stores.map((s) => [s.code, s.id])),
    existingUnits: new Map(existingUnits.map((u) => [u.code, { kind: u.kind, ratio: u.ratio }])),
  });
  if (!result.ok) throw new CatalogImportError(result.problems);
  const plan = result.plan;
  await assertIdsFree(trx, plan);

  // ---- units ----
  if (plan.units.length) {
    await sql`
      INSERT INTO measurement_units (code, kind, name_ru, name_en, full_name_ru, full_name_en, ratio)
      SELECT code, kind, name_ru, name_en, full_name_ru, full_name_en, ratio
      FROM jsonb_to_recordset(${asJson(plan.units)}) AS x(code text, kind text, name_ru text, name_en text, full_name_ru text, full_name_en text, ratio numeric)
      ON CONFLICT (code) DO UPDATE SET kind = excluded.kind, name_ru = excluded.name_ru, name_en = excluded.name_en,
        full_name_ru = excluded.full_name_ru, full_name_en = excluded.full_name_en, ratio = excluded.ratio`.execute(trx);
  }
  const unitIds = new Map((await trx.selectFrom('measurement_units').select(['id', 'code']).execute()).map((u) => [u.code, u.id]));

  // ---- categories (pre-order: parents first) ----
  const categoryIds = new Map((await trx.selectFrom('categories').select(['id', 'code']).execute()).map((c) => [c.code, c.id]));
  for (const c of plan.categories) if (!categoryIds.has(c.code)) categoryIds.set(c.code, c.id ?? randomUUID());
  const categoryRows = plan.categories.map((c) => ({
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
    product_rank_from: c.product_rank_from,
    product_rank_to: c.product_rank_to,
  }));
  const fileCategoryCodes = plan.categories.map((c) => c.code);
  // Withdrawn categories leave the tree first, so that no active row points at them.
  const withdrawnCategories = await sql`
    UPDATE categories SET is_active = false, main_page_position = NULL, main_page_layout = NULL, product_rank_from = NULL,
      product_rank_to = NULL, updated_at = now()
    WHERE is_active AND code NOT IN (SELECT unnest(${fileCategoryCodes}::text[]))`.execute(trx);
  if (categoryRows.length) {
    await sql`
      INSERT INTO categories (id, code, parent_id, level, ancestor_ids, tree_order, name_ru, name_en, color, image_original,
        image_listing, is_own_production, show_products_count, main_page_position, main_page_layout, product_rank_from,
        product_rank_to, is_active, updated_at)
      SELECT id, code, parent_id, level, ancestor_ids, tree_order, name_ru, name_en, color, image_original,
        image_listing, is_own_production, show_products_count, main_page_position, main_page_layout, product_rank_from,
        product_rank_to, true, now()
      FROM jsonb_to_recordset(${asJson(categoryRows)}) AS x(id uuid, code text, parent_id uuid, level smallint, ancestor_ids uuid[],
        tree_order int, name_ru text, name_en text, color text, image_original text, image_listing text, is_own_production boolean,
        show_products_count boolean, main_page_position int, main_page_layout text, product_rank_from int, product_rank_to int)
      ON CONFLICT (code) DO UPDATE SET parent_id = excluded.parent_id, level = excluded.level, ancestor_ids = excluded.ancestor_ids,
        tree_order = excluded.tree_order, name_ru = excluded.name_ru, name_en = excluded.name_en, color = excluded.color,
        image_original = excluded.image_original, image_listing = excluded.image_listing,
        is_own_production = excluded.is_own_production, show_products_count = excluded.show_products_count,
        main_page_position = excluded.main_page_position, main_page_layout = excluded.main_page_layout,
        product_rank_from = excluded.product_rank_from, product_rank_to = excluded.product_rank_to,
        is_active = true, updated_at = now()`.execute(trx);
  }

  // ---- products ----
  // The import rewrites every inventory row (withdrawn products lose theirs, listed ones are
  // replaced). Checkout, cancellation and picking lock inventory rows in id order
  // (db/queries/orders.ts); deleting them in scan order could take a row such a transaction
  // wants next while waiting for one it holds: a deadlock, and one of the two would fail. So
  // the import takes them all first, in that same order (it holds them to its end anyway).
  await sql`SELECT id FROM inventories ORDER BY id FOR UPDATE`.execute(trx);
  const productIds = new Map((await trx.selectFrom('products').select(['id', 'code']).execute()).map((p) => [p.code, p.id]));
  for (const p of plan.products) if (!productIds.has(p.code)) productIds.set(p.code, p.id ?? randomUUID());
  const fileProductCodes = plan.products.map((p) => p.code);
  const withdrawnProducts = await sql<{ id: string }>`
    UPDATE products SET is_active = false, plu = NULL, updated_at = now()
    WHERE is_active AND code NOT IN (SELECT unnest(${fileProductCodes}::text[])) -- a hashed anti-join, not a scan of the array per row
    RETURNING id`.execute(trx);
  const withdrawnIds = withdrawnProducts.rows.map((r) => r.id);
  if (withdrawnIds.length) {
    await sql`DELETE FROM inventories WHERE product_id = ANY(${withdrawnIds}::uuid[])`.execute(trx);
    await sql`DELETE FROM product_barcodes WHERE product_id = ANY(${withdrawnIds}::uuid[])`.execute(trx);
  }
  // A PLU may move between listed products; free them all first (the unique index is immediate).
  const filePlus = plan.products.flatMap((p) => (p.plu ? [p.plu] : []));
  if (filePlus.length) await sql`UPDATE products SET plu = NULL WHERE plu = ANY(${filePlus}::text[])`.execute(trx);

  const productRows = plan.products.map(({ barcodes: _b, inventories: _i, id: _id, category_code, ...p }) => ({
    ...p,
    id: productIds.get(p.code)!,
    category_id: category_code === null ? null : categoryIds.get(category_code)!,
  }));
  const productColumns = sql.raw(`id uuid, code text, category_id uuid, name_ru text, name_en text, description_ru text,
    description_en text, composition_ru text, composition_en text, made_country_ru text, made_country_en text,
    manufacturer text, brand text, weight_based boolean, weight numeric, calories numeric, protein numeric, fats numeric,
    carbohydrates numeric, image_original text, image_detail text, image_listing text, image_thumbnail text, plu text,
    is_top boolean, is_new boolean, is_fresh boolean, popularity int, sort_rank_ru int, sort_rank_en int`);
  const columns = [
    'code',
    'category_id',
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
    'sort_rank_ru',
    'sort_rank_en',
  ];
  for (let from = 0; from < productRows.length; from += 5000) {
    const chunk = productRows.slice(from, from + 5000);
    await sql`
      INSERT INTO products (id, ${sql.raw(columns.join(', '))}, is_active, updated_at)
      SELECT id, ${sql.raw(columns.join(', '))}, true, now()
      FROM jsonb_to_recordset(${asJson(chunk)}) AS x(${productColumns})
      ON CONFLICT (code) DO UPDATE SET ${sql.raw(
        columns
          .filter((c) => c !== 'code')
          .map((c) => `${c} = excluded.${c}`)
          .join(', '),
      )},
        is_active = true, updated_at = now()`.execute(trx);
  }

  // ---- barcodes and inventories of the listed products: replaced ----
  const listedIds = plan.products.map((p) => productIds.get(p.code)!);
  const barcodeRows = plan.products.flatMap((p) => p.barcodes.map((barcode) => ({ barcode, product_id: productIds.get(p.code)! })));
  await sql`DELETE FROM product_barcodes WHERE product_id = ANY(${listedIds}::uuid[])`.execute(trx);
  if (barcodeRows.length) {
    await sql`DELETE FROM product_barcodes WHERE barcode = ANY(${barcodeRows.map((b) => b.barcode)}::text[])`.execute(trx);
    await sql`INSERT INTO product_barcodes (barcode, product_id)
      SELECT barcode, product_id FROM jsonb_to_recordset(${asJson(barcodeRows)}) AS x(barcode text, product_id uuid)`.execute(trx);
  }

  // Inventory ids are kept for (product, store, unit) rows that stay, so clients holding an id
  // keep a valid reference.
  const { rows: existingInventories } = await sql<{ id: string; product_id: string; store_id: string; unit_id: string }>`
    DELETE FROM inventories WHERE product_id = ANY(${listedIds}::uuid[]) RETURNING id, product_id, store_id, unit_id`.execute(trx);
  const inventoryIds = new Map(existingInventories.map((i) => [`${i.product_id}/${i.store_id}/${i.unit_id}`, i.id]));
  const inventoryRows = plan.products.flatMap((p) =>
    p.inventories.map((inv) => {
      const productId = productIds.get(p.code)!;
      const unitId = unitIds.get(inv.unit_code)!;
      return {
        id: inventoryIds.get(`${productId}/${inv.store_id}/${unitId}`) ?? randomUUID(),
        product_id: productId,
        store_id: inv.store_id,
        unit_id: unitId,
        is_default: inv.is_default,
        stock: inv.stock,
        unit_price: inv.unit_price,
        old_price: inv.old_price,
        order_quantity_limit: inv.order_quantity_limit,
        location_aisle: inv.location_aisle,
        location_section: inv.location_section,
        location_shelf: inv.location_shelf,
        location_sequence: inv.location_sequence,
        temperature_class: inv.temperature_class,
        sort_rank_ru: p.sort_rank_ru,
        sort_rank_en: p.sort_rank_en,
      };
    }),
  );
  for (let from = 0; from < inventoryRows.length; from += 20000) {
    await sql`
      INSERT INTO inventories (id, product_id, store_id, unit_id, is_default, stock, unit_price, old_price, order_quantity_limit,
        location_aisle, location_section, location_shelf, location_sequence, temperature_class, sort_rank_ru, sort_rank_en, updated_at)
      SELECT id, product_id, store_id, unit_id, is_default, stock, unit_price, old_price, order_quantity_limit,
        location_aisle, location_section, location_shelf, location_sequence, temperature_class, sort_rank_ru, sort_rank_en, now()
      FROM jsonb_to_recordset(${asJson(inventoryRows.slice(from, from + 20000))}) AS x(id uuid, product_id uuid, store_id uuid,
        unit_id uuid, is_default boolean, stock numeric, unit_price numeric, old_price numeric, order_quantity_limit numeric,
        location_aisle text, location_section text, location_shelf text, location_sequence text, temperature_class text,
        sort_rank_ru int, sort_rank_en int)`.execute(trx);
  }

  return {
    units: plan.units.length,
    categories: plan.categories.length,
    products: plan.products.length,
    weight_based_products: plan.products.filter((p) => p.weight_based).length,
    inventories: inventoryRows.length,
    barcodes: barcodeRows.length,
    withdrawn_categories: Number(withdrawnCategories.numAffectedRows ?? 0),
    withdrawn_products: withdrawnIds.length,
  };
}

/**
 * Ids never change: a file `id` must be the id the code already has, and must not belong to
 * another code.
 */
async function assertIdsFree(trx: Executor, plan: CatalogImportPlan): Promise<void> {
  const problems: ImportProblem[] = [];
  const check = async (table: 'categories' | 'products', rows: { code: string; id: string | null }[]) => {
    const wanted = rows.filter((r) => r.id !== null);
    if (!wanted.length) return;
    // Arrays as single parameters: a large file would pass the protocol's 65,535-parameter limit.
    const { rows: taken } = await sql<{ id: string; code: string }>`
      SELECT id, code FROM ${sql.table(table)}
      WHERE id = ANY(${wanted.map((r) => r.id!)}::uuid[]) OR code = ANY(${wanted.map((r) => r.code)}::text[])`.execute(trx);
    const codeOf = new Map(taken.map((t) => [t.id, t.code]));
    const idOf = new Map(taken.map((t) => [t.code, t.id]));
    wanted.forEach((r) => {
      const owner = codeOf.get(r.id!);
      const current = idOf.get(r.code);
      if (current !== undefined && current !== r.id) {
        problems.push({
          row: `${table} ${r.code}`,
          field: 'id',
          message: `is ${r.id}, but ${r.code} already has id ${current} (ids never change)`,
        });
      } else if (owner !== undefined && owner !== r.code) {
        problems.push({ row: `${table} ${r.code}`, field: 'id', message: `${r.id} already belongs to ${table} ${owner}` });
      }
    });
  };
  await check('categories', plan.categories);
  await check('products', plan.products);
  if (problems.length) throw new CatalogImportError(problems);
}
