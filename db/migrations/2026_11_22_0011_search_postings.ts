// Frozen migration: never edit after it has landed; add a new one instead.
// Search postings: for each store, each word of each product the store sells (its default
// inventory), one row carrying what a search page is ordered by (in stock first, catalog rank).
// A word search then reads its matches from one index, without visiting a product or an
// inventory row per match, and visits products and inventories only for the page it returns
// (db/queries/catalog.ts). Otherwise each match would cost a product page and an inventory probe,
// and a search would grow with its matches, not with its page.
//
// The price is space: about ten rows per product and store, in three indexes (several times what
// the products and inventories take), and a catalog import writes them too. This migration fills
// the table for the catalog already there, in its transaction and after creating the triggers (so
// no change slips between the two): seconds for a catalog of tens of thousands of products, during
// which writes to inventories and products wait - checkouts taking stock included - while reads
// go on. On a catalog that size, deploy it in a quiet hour.
//
// The table is derived, like the vocabulary: triggers on inventories and products keep it equal
// to their join, and nothing else writes it. It has no foreign keys (a store's or product's
// removal reaches it through the inventories trigger).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Read index-only, in the order of a search page: per store and word, in stock first, then the
  // catalog rank of the answer's language, each index carrying the product. A search for one word
  // (the usual case) reads its page from the head of the index and counts its matches there; one
  // with several candidate words reads each word's stretch. catalog_search_postings_write keeps
  // one row per store, word and product (it rewrites a product's rows in a store as a whole).
  await sql`
    CREATE TABLE catalog_search_postings (
      store_id uuid NOT NULL,
      word text COLLATE "C" NOT NULL,
      product_id uuid NOT NULL,
      in_stock boolean NOT NULL,
      sort_rank_ru integer NOT NULL,
      sort_rank_en integer NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX catalog_search_postings_ru ON catalog_search_postings (store_id, word, in_stock DESC, sort_rank_ru) INCLUDE (product_id)`.execute(
    db,
  );
  await sql`CREATE INDEX catalog_search_postings_en ON catalog_search_postings (store_id, word, in_stock DESC, sort_rank_en) INCLUDE (product_id)`.execute(
    db,
  );
  // Removing a product's postings in a store (its inventory deleted or changed).
  await sql`CREATE INDEX catalog_search_postings_product ON catalog_search_postings (product_id, store_id)`.execute(db);

  // A search's candidate words as rows (db/queries/catalog.ts). unnest() would do, but the
  // planner sizes unnest() of a known array exactly and of a prepared statement's parameter as
  // ten rows, so the reusable generic plan would always look dearer than one made for the actual
  // words and every search would be planned again (which costs more than running it). A PL/pgSQL function
  // is sized by its ROWS, the same for both, and the generic plan is kept.
  await sql`
    CREATE FUNCTION catalog_search_candidates(terms int[], words text[], scores float8[])
    RETURNS TABLE (term int, word text, score float8)
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE ROWS 4 AS $$
    BEGIN
      RETURN QUERY SELECT * FROM unnest(terms, words, scores);
    END $$`.execute(db);

  // The postings of a set of (store, product) pairs, from the default inventories and the
  // products' words as they are now. Two transactions may rewrite one product's postings in a
  // store at once (a rename while an order takes the last unit): each would delete what it saw
  // and insert its own, leaving both, or a stale stock state. So writers first lock the default
  // inventory rows (in id order, no deadlock between writers); one that waited then reads, in
  // its next statements, what the other committed. A stock change already holds its row's lock.
  // The rows themselves, added for pairs that have none (also the backfill below).
  await sql`
    CREATE FUNCTION catalog_search_postings_add(stores uuid[], products uuid[]) RETURNS void
    LANGUAGE sql AS $$
      INSERT INTO catalog_search_postings (store_id, word, product_id, in_stock, sort_rank_ru, sort_rank_en)
      SELECT DISTINCT i.store_id, w.word, i.product_id, i.in_stock, i.sort_rank_ru, i.sort_rank_en
      FROM unnest(stores, products) AS k(store_id, product_id)
      JOIN inventories i ON i.store_id = k.store_id AND i.product_id = k.product_id AND i.is_default
      JOIN products p ON p.id = i.product_id
      CROSS JOIN LATERAL unnest(p.search_words) AS w(word);
    $$`.execute(db);
  await sql`
    CREATE FUNCTION catalog_search_postings_write(stores uuid[], products uuid[]) RETURNS void
    LANGUAGE sql AS $$
      SELECT 1 FROM inventories i
      JOIN unnest(stores, products) AS k(store_id, product_id) ON i.store_id = k.store_id AND i.product_id = k.product_id
      WHERE i.is_default ORDER BY i.id FOR NO KEY UPDATE OF i;
      DELETE FROM catalog_search_postings x
      USING unnest(stores, products) AS k(store_id, product_id)
      WHERE x.store_id = k.store_id AND x.product_id = k.product_id;
      SELECT public.catalog_search_postings_add(stores, products);
    $$`.execute(db);

  // Inserted and deleted inventories: once per statement (the import writes thousands at once).
  await sql`
    CREATE FUNCTION catalog_search_postings_inventories_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- Only default rows carry postings: others come and go without changing any.
      PERFORM public.catalog_search_postings_write(array_agg(store_id), array_agg(product_id)) FROM changed WHERE is_default;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER inventories_search_postings_insert AFTER INSERT ON inventories
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_search_postings_inventories_changed()`.execute(db);
  await sql`CREATE TRIGGER inventories_search_postings_delete AFTER DELETE ON inventories
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_search_postings_inventories_changed()`.execute(db);

  // TRUNCATE fires no row or transition-table trigger: the postings go with the inventories.
  await sql`
    CREATE FUNCTION catalog_search_postings_inventories_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      TRUNCATE catalog_search_postings;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER inventories_search_postings_truncate AFTER TRUNCATE ON inventories
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_search_postings_inventories_truncated()`.execute(db);

  // Updated inventories: per row, and only when something the postings carry changed on a default
  // row. Stock moves with every order; the condition (evaluated without calling any function)
  // lets all of them through except the few that take the last unit or bring stock back.
  await sql`
    CREATE FUNCTION catalog_search_postings_inventory_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM public.catalog_search_postings_write(ARRAY[OLD.store_id, NEW.store_id], ARRAY[OLD.product_id, NEW.product_id]);
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER inventories_search_postings_update AFTER UPDATE ON inventories
    FOR EACH ROW WHEN ((OLD.is_default OR NEW.is_default) AND (
      OLD.is_default IS DISTINCT FROM NEW.is_default OR OLD.in_stock IS DISTINCT FROM NEW.in_stock
      OR OLD.sort_rank_ru IS DISTINCT FROM NEW.sort_rank_ru OR OLD.sort_rank_en IS DISTINCT FROM NEW.sort_rank_en
      OR OLD.store_id IS DISTINCT FROM NEW.store_id OR OLD.product_id IS DISTINCT FROM NEW.product_id))
    EXECUTE FUNCTION catalog_search_postings_inventory_updated()`.execute(db);

  // A product whose words changed (renamed, new brand): its postings in every store.
  await sql`
    CREATE FUNCTION catalog_search_postings_product_updated() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM public.catalog_search_postings_write(array_agg(i.store_id), array_agg(i.product_id))
      FROM inventories i WHERE i.product_id = NEW.id AND i.is_default;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER products_search_postings_update AFTER UPDATE ON products
    FOR EACH ROW WHEN (OLD.search_words IS DISTINCT FROM NEW.search_words)
    EXECUTE FUNCTION catalog_search_postings_product_updated()`.execute(db);

  // The catalog already there (no lock needed: the triggers above already hold off writers).
  await sql`SELECT catalog_search_postings_add(array_agg(store_id), array_agg(product_id)) FROM inventories WHERE is_default`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER products_search_postings_update ON products`.execute(db);
  await sql`DROP TRIGGER inventories_search_postings_update ON inventories`.execute(db);
  await sql`DROP TRIGGER inventories_search_postings_delete ON inventories`.execute(db);
  await sql`DROP TRIGGER inventories_search_postings_insert ON inventories`.execute(db);
  await sql`DROP TRIGGER inventories_search_postings_truncate ON inventories`.execute(db);
  await sql`DROP FUNCTION catalog_search_postings_inventories_truncated()`.execute(db);
  await sql`DROP FUNCTION catalog_search_postings_product_updated()`.execute(db);
  await sql`DROP FUNCTION catalog_search_postings_inventory_updated()`.execute(db);
  await sql`DROP FUNCTION catalog_search_postings_inventories_changed()`.execute(db);
  await sql`DROP FUNCTION catalog_search_postings_write(uuid[], uuid[])`.execute(db);
  await sql`DROP FUNCTION catalog_search_postings_add(uuid[], uuid[])`.execute(db);
  await sql`DROP FUNCTION catalog_search_candidates(int[], text[], float8[])`.execute(db);
  await sql`DROP TABLE catalog_search_postings`.execute(db);
}
