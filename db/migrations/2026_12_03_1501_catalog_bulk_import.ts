// Frozen migration: never edit after it has landed; add a new one instead.
// A catalog of a million products. The import loads the file into staging tables and writes the
// catalog set-based (db/catalog-import/write.ts); the per-statement triggers that keep the search
// postings would otherwise rewrite them through arrays of millions of pairs (lock, delete, insert
// with a DISTINCT over tens of millions of rows). While the import's transaction sets
// `catalog.bulk_import` on, those triggers and the new totals triggers stand aside and the import
// writes both tables itself, once, in index order. Every other writer is unchanged.
//
// Category totals: a listing by category reported its total by counting the category's rank range
// of the store's listing index, a count that grows with the category (tens of thousands of entries
// in a 1M catalog). catalog_category_totals keeps, per store and category (with its descendants),
// the number of products the store sells there, so the total is one row.
//
// Ranking collations: the import orders a million names in SQL rather than in the importer's
// memory, with the ICU rules the in-memory plan uses (Intl.Collator: base sensitivity, numeric).
import { sql, type Kysely } from 'kysely';

const bulk = `current_setting('catalog.bulk_import', true) = 'on'`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE COLLATION catalog_rank_ru (provider = icu, locale = 'ru-u-kn-ks-level1', deterministic = false)`.execute(db);
  await sql`CREATE COLLATION catalog_rank_en (provider = icu, locale = 'en-u-kn-ks-level1', deterministic = false)`.execute(db);

  // The postings triggers of 2026_11_22_0011, unchanged but for the bulk import's switch.
  await sql`
    CREATE OR REPLACE FUNCTION catalog_search_postings_inventories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      PERFORM public.catalog_search_postings_write(array_agg(store_id), array_agg(product_id)) FROM changed WHERE is_default;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION catalog_search_postings_inventory_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      PERFORM public.catalog_search_postings_write(ARRAY[OLD.store_id, NEW.store_id], ARRAY[OLD.product_id, NEW.product_id]);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION catalog_search_postings_product_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      PERFORM public.catalog_search_postings_write(array_agg(i.store_id), array_agg(i.product_id))
      FROM inventories i WHERE i.product_id = NEW.id AND i.is_default;
      RETURN NULL;
    END $$`.execute(db);

  await sql`
    CREATE TABLE catalog_category_totals (
      store_id uuid NOT NULL,
      category_id uuid NOT NULL,
      products integer NOT NULL,
      PRIMARY KEY (store_id, category_id)
    )`.execute(db);
  // Adds `delta` for each (store, product) pair to the product's category and its ancestors.
  await sql`
    CREATE FUNCTION catalog_category_totals_add(stores uuid[], products uuid[], delta int) RETURNS void
    LANGUAGE sql AS $$
      INSERT INTO catalog_category_totals (store_id, category_id, products)
      SELECT k.store_id, a.category_id, count(*)::int * delta
      FROM unnest(stores, products) AS k(store_id, product_id)
      JOIN products p ON p.id = k.product_id
      JOIN categories c ON c.id = p.category_id
      CROSS JOIN LATERAL unnest(c.ancestor_ids || c.id) AS a(category_id)
      GROUP BY 1, 2
      ON CONFLICT (store_id, category_id) DO UPDATE SET products = catalog_category_totals.products + excluded.products;
    $$`.execute(db);
  // Every product a store sells: its default inventory rows, added or removed.
  await sql`
    CREATE FUNCTION catalog_category_totals_inventories_added() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      PERFORM public.catalog_category_totals_add(array_agg(store_id), array_agg(product_id), 1) FROM changed WHERE is_default;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION catalog_category_totals_inventories_removed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      PERFORM public.catalog_category_totals_add(array_agg(store_id), array_agg(product_id), -1) FROM changed WHERE is_default;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER inventories_category_totals_insert AFTER INSERT ON inventories
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_category_totals_inventories_added()`.execute(db);
  await sql`CREATE TRIGGER inventories_category_totals_delete AFTER DELETE ON inventories
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_category_totals_inventories_removed()`.execute(db);
  // Stock moves with every order and changes no total: only a row that becomes or stops being a
  // default, or moves, fires.
  await sql`
    CREATE FUNCTION catalog_category_totals_inventory_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      IF OLD.is_default THEN PERFORM public.catalog_category_totals_add(ARRAY[OLD.store_id], ARRAY[OLD.product_id], -1); END IF;
      IF NEW.is_default THEN PERFORM public.catalog_category_totals_add(ARRAY[NEW.store_id], ARRAY[NEW.product_id], 1); END IF;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER inventories_category_totals_update AFTER UPDATE ON inventories
    FOR EACH ROW WHEN (OLD.is_default IS DISTINCT FROM NEW.is_default OR OLD.store_id IS DISTINCT FROM NEW.store_id
      OR OLD.product_id IS DISTINCT FROM NEW.product_id)
    EXECUTE FUNCTION catalog_category_totals_inventory_updated()`.execute(db);
  // A product moved to another category takes its stores' counts along.
  await sql`
    CREATE FUNCTION catalog_category_totals_product_moved() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${sql.raw(bulk)} THEN RETURN NULL; END IF;
      INSERT INTO catalog_category_totals (store_id, category_id, products)
      SELECT i.store_id, a.category_id, sum(a.delta)::int
      FROM inventories i
      CROSS JOIN LATERAL (
        SELECT unnest(c.ancestor_ids || c.id), -1 FROM categories c WHERE c.id = OLD.category_id
        UNION ALL
        SELECT unnest(c.ancestor_ids || c.id), 1 FROM categories c WHERE c.id = NEW.category_id) AS a(category_id, delta)
      WHERE i.product_id = NEW.id AND i.is_default
      GROUP BY 1, 2
      ON CONFLICT (store_id, category_id) DO UPDATE SET products = catalog_category_totals.products + excluded.products;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER products_category_totals_update AFTER UPDATE OF category_id ON products
    FOR EACH ROW WHEN (OLD.category_id IS DISTINCT FROM NEW.category_id)
    EXECUTE FUNCTION catalog_category_totals_product_moved()`.execute(db);
  await sql`SELECT catalog_category_totals_add(array_agg(store_id), array_agg(product_id), 1) FROM inventories WHERE is_default`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER products_category_totals_update ON products`.execute(db);
  await sql`DROP TRIGGER inventories_category_totals_update ON inventories`.execute(db);
  await sql`DROP TRIGGER inventories_category_totals_delete ON inventories`.execute(db);
  await sql`DROP TRIGGER inventories_category_totals_insert ON inventories`.execute(db);
  await sql`DROP FUNCTION catalog_category_totals_product_moved()`.execute(db);
  await sql`DROP FUNCTION catalog_category_totals_inventory_updated()`.execute(db);
  await sql`DROP FUNCTION catalog_category_totals_inventories_removed()`.execute(db);
  await sql`DROP FUNCTION catalog_category_totals_inventories_added()`.execute(db);
  await sql`DROP FUNCTION catalog_category_totals_add(uuid[], uuid[], int)`.execute(db);
  await sql`DROP TABLE catalog_category_totals`.execute(db);
  await sql`DROP COLLATION catalog_rank_en`.execute(db);
  await sql`DROP COLLATION catalog_rank_ru`.execute(db);
}
