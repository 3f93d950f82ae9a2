// Frozen migration: never edit after it has landed; add a new one instead.
// Catalog (units, category tree, products, barcodes, per-store inventories, favorites, search
// vocabulary, published versions and their snapshots) and content (banners, stories, pages,
// main-page titles, support contacts, mobile update messages).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // ---- search normalisation -------------------------------------------------------------------
  // Edit distance (levenshtein) catches transposed letters, which trigrams score low
  // ("йогрут" for "йогурт"); it ships with PostgreSQL's contrib like pg_trgm and unaccent.
  await sql`CREATE EXTENSION IF NOT EXISTS fuzzystrmatch`.execute(db);
  // One folding for stored words and for queries, so both sides always agree: lower case, accents
  // removed (unaccent; it also folds ё to е), then Cyrillic transliterated to Latin. A Russian
  // name and its Latin spelling land on the same key ("молоко" and "moloko" -> moloko), and a
  // misspelling stays close in trigram space ("малоко" -> maloko). The dictionary is named
  // explicitly and the functions are schema-qualified, so they are immutable in fact and can feed
  // a generated column.
  await sql`
    CREATE FUNCTION catalog_fold(input text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
      SELECT translate(
        replace(replace(replace(replace(replace(replace(replace(replace(
          lower(public.unaccent('public.unaccent'::regdictionary, input)),
          'щ', 'shch'), 'ж', 'zh'), 'х', 'kh'), 'ц', 'ts'), 'ч', 'ch'), 'ш', 'sh'), 'ю', 'yu'), 'я', 'ya'),
        'абвгдезийклмнопрстуфыэъь',
        'abvgdeziyklmnoprstufye')
    $$`.execute(db);
  // The distinct folded words of some texts (names in both languages, brand), sorted.
  await sql`
    CREATE FUNCTION catalog_search_words(VARIADIC parts text[]) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT coalesce(array_agg(DISTINCT w ORDER BY w), '{}')
      FROM unnest(regexp_split_to_array(public.catalog_fold(array_to_string(parts, ' ')), '[^a-z0-9]+')) AS w
      WHERE w <> ''
    $$`.execute(db);

  // ---- units and the category tree --------------------------------------------------------------
  await db.schema
    .createTable('measurement_units')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('code', 'text', (c) => c.notNull().unique())
    // piece: quantities are whole numbers; weight: kilograms with up to 3 decimals.
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('piece', 'weight')`))
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('full_name_ru', 'text', (c) => c.notNull())
    .addColumn('full_name_en', 'text', (c) => c.notNull())
    .addColumn('ratio', sql`numeric(12,3)`, (c) => c.notNull().check(sql`ratio > 0`))
    .execute();

  await db.schema
    .createTable('categories')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('parent_id', 'uuid', (c) => c.references('categories.id'))
    .addColumn('level', 'smallint', (c) => c.notNull().check(sql`level BETWEEN 0 AND 32`))
    // Ancestors root first (empty for a root): descendants of X are the rows with X in it.
    .addColumn('ancestor_ids', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    // Pre-order position in the whole tree (siblings in menu order): "tree position" sorting.
    .addColumn('tree_order', 'integer', (c) => c.notNull())
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('color', 'text', (c) => c.notNull().check(sql`color ~ '^#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$'`))
    .addColumn('image_original', 'text')
    .addColumn('image_listing', 'text')
    .addColumn('is_own_production', 'boolean', (c) => c.notNull().defaultTo(false))
    // Own-production categories configured without a counter answer products_count null.
    .addColumn('show_products_count', 'boolean', (c) => c.notNull().defaultTo(true))
    // A main-page block (content team): position and layout, both or neither.
    .addColumn('main_page_position', 'integer')
    .addColumn('main_page_layout', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    // Products are ranked by category tree position first (products.sort_rank_*), so the
    // products of a subtree hold one contiguous range of ranks, the same in both languages:
    // "this category and its descendants" is a range scan. NULL when the subtree has no product.
    .addColumn('product_rank_from', 'integer')
    .addColumn('product_rank_to', 'integer')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('categories_image_pair', sql`(image_original IS NULL) = (image_listing IS NULL)`)
    .addCheckConstraint('categories_main_page_pair', sql`(main_page_position IS NULL) = (main_page_layout IS NULL)`)
    .addCheckConstraint('categories_root_level', sql`(parent_id IS NULL) = (level = 0)`)
    .execute();
  await sql`CREATE INDEX categories_parent ON categories (parent_id, tree_order)`.execute(db);
  await sql`CREATE INDEX categories_ancestors ON categories USING gin (ancestor_ids)`.execute(db);

  // ---- products --------------------------------------------------------------------------------
  await db.schema
    .createTable('products')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // The key of the catalog file (the chain's article number).
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('category_id', 'uuid', (c) => c.references('categories.id'))
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('description_ru', 'text')
    .addColumn('description_en', 'text')
    .addColumn('composition_ru', 'text')
    .addColumn('composition_en', 'text')
    .addColumn('manufacturer', 'text')
    .addColumn('brand', 'text')
    .addColumn('made_country_ru', 'text')
    .addColumn('made_country_en', 'text')
    .addColumn('weight_based', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('weight', sql`numeric(10,3)`, (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`weight >= 0`),
    )
    .addColumn('calories', sql`numeric(8,2)`)
    .addColumn('protein', sql`numeric(8,2)`)
    .addColumn('fats', sql`numeric(8,2)`)
    .addColumn('carbohydrates', sql`numeric(8,2)`)
    .addColumn('image_original', 'text')
    .addColumn('image_detail', 'text')
    .addColumn('image_listing', 'text')
    .addColumn('image_thumbnail', 'text')
    // Price look-up code of loose produce (scales, weighted barcodes); unique when present.
    .addColumn('plu', 'text', (c) => c.unique().check(sql`plu ~ '^[0-9]{4,5}$'`))
    .addColumn('is_top', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_new', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('is_fresh', 'boolean', (c) => c.notNull().defaultTo(false))
    // Sales rank from the catalog file (units sold recently): orders best sellers and
    // recommendations.
    .addColumn('popularity', 'integer', (c) => c.notNull().defaultTo(0))
    // Catalog order (category tree position, then name in that language), computed by the import.
    .addColumn('sort_rank_ru', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sort_rank_en', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('search_words', sql`text[]`, (c) =>
      c
        .notNull()
        .generatedAlwaysAs(sql`public.catalog_search_words(name_ru, name_en, brand)`)
        .stored(),
    )
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('products_image_set', sql`num_nulls(image_original, image_detail, image_listing, image_thumbnail) IN (0, 4)`)
    .execute();
  await sql`CREATE INDEX products_category ON products (category_id)`.execute(db);
  await sql`CREATE INDEX products_search_words ON products USING gin (search_words)`.execute(db);
  // Best sellers by sales rank (recommendations): walked in order until enough are in stock.
  await sql`CREATE INDEX products_best_sellers ON products (popularity DESC, id) WHERE is_top AND is_active`.execute(db);

  await db.schema
    .createTable('product_barcodes')
    .addColumn('barcode', 'text', (c) => c.primaryKey().check(sql`barcode ~ '^[0-9]{8,14}$'`))
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .execute();
  await sql`CREATE INDEX product_barcodes_product ON product_barcodes (product_id)`.execute(db);

  // The search vocabulary: every folded word of every product. Typo tolerance is a trigram match
  // against this small table (it grows with the language, not with the catalog); the matched words
  // then find products through the GIN index on products.search_words. Words are only ever added
  // (a word no product uses any more matches nothing), by the triggers below, so any writer of
  // products keeps it complete.
  await sql`CREATE TABLE catalog_search_vocabulary (word text COLLATE "C" PRIMARY KEY)`.execute(db);
  await sql`CREATE INDEX catalog_search_vocabulary_trgm ON catalog_search_vocabulary USING gin (word gin_trgm_ops)`.execute(db);
  await sql`
    CREATE FUNCTION catalog_search_vocabulary_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO catalog_search_vocabulary (word)
      SELECT DISTINCT unnest(search_words) FROM changed_products
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER products_vocabulary_insert AFTER INSERT ON products
    REFERENCING NEW TABLE AS changed_products FOR EACH STATEMENT EXECUTE FUNCTION catalog_search_vocabulary_add()`.execute(db);
  await sql`CREATE TRIGGER products_vocabulary_update AFTER UPDATE ON products
    REFERENCING NEW TABLE AS changed_products FOR EACH STATEMENT EXECUTE FUNCTION catalog_search_vocabulary_add()`.execute(db);

  // ---- per-store inventories -------------------------------------------------------------------
  await db.schema
    .createTable('inventories')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('unit_id', 'uuid', (c) => c.notNull().references('measurement_units.id'))
    // The unit of the product's cards in this store; exactly one per (product, store).
    .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    // NULL: the store has not reported stock yet (not available).
    .addColumn('stock', sql`numeric(12,3)`, (c) => c.check(sql`stock >= 0`))
    .addColumn('unit_price', sql`numeric(12,2)`, (c) => c.notNull().check(sql`unit_price >= 0`))
    .addColumn('old_price', sql`numeric(12,2)`)
    .addColumn('discount_percent', sql`numeric(5,2)`, (c) =>
      c
        .generatedAlwaysAs(sql`CASE WHEN old_price IS NULL THEN NULL ELSE round((old_price - unit_price) * 100 / old_price, 2) END`)
        .stored(),
    )
    // Per-order quantity limit in this unit; NULL: no limit.
    .addColumn('order_quantity_limit', sql`numeric(12,3)`, (c) => c.check(sql`order_quantity_limit > 0`))
    .addColumn('in_stock', 'boolean', (c) =>
      c
        .notNull()
        .generatedAlwaysAs(sql`coalesce(stock, 0) > 0`)
        .stored(),
    )
    // The product's catalog ranks, copied here by the import so that a store's listing (in stock
    // first, then catalog order, optionally within a category's rank range) is one ordered index
    // scan that stops at the page, whatever the size of the catalog.
    .addColumn('sort_rank_ru', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sort_rank_en', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('inventories_product_store_unit', ['product_id', 'store_id', 'unit_id'])
    .addCheckConstraint('inventories_old_price', sql`old_price IS NULL OR old_price > unit_price`)
    .execute();
  await sql`CREATE UNIQUE INDEX inventories_one_default ON inventories (store_id, product_id) WHERE is_default`.execute(db);
  await sql`CREATE INDEX inventories_store_unit ON inventories (store_id, product_id, unit_id)`.execute(db);
  await sql`CREATE INDEX inventories_listing_ru ON inventories (store_id, in_stock DESC, sort_rank_ru) WHERE is_default`.execute(db);
  await sql`CREATE INDEX inventories_listing_en ON inventories (store_id, in_stock DESC, sort_rank_en) WHERE is_default`.execute(db);
  // A withdrawn product is sold nowhere: listings read inventories without visiting products.
  await sql`
    CREATE FUNCTION products_withdraw_inventories() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM inventories WHERE product_id = NEW.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER products_withdrawn AFTER UPDATE OF is_active ON products
    FOR EACH ROW WHEN (OLD.is_active AND NOT NEW.is_active) EXECUTE FUNCTION products_withdraw_inventories()`.execute(db);

  await db.schema
    .createTable('favorite_products')
    .addColumn('customer_id', 'uuid', (c) => c.notNull().references('customers.id').onDelete('cascade'))
    .addColumn('product_id', 'uuid', (c) => c.notNull().references('products.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('favorite_products_pk', ['customer_id', 'product_id'])
    .execute();

  // ---- published versions and their snapshots --------------------------------------------------
  await db.schema
    .createTable('catalog_versions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('published_at', 'timestamptz', (c) => c.notNull())
    // Set when the next version is published; the replaced version is served 24 more hours.
    .addColumn('replaced_at', 'timestamptz')
    .execute();
  await sql`CREATE UNIQUE INDEX catalog_versions_one_current ON catalog_versions ((replaced_at IS NULL)) WHERE replaced_at IS NULL`.execute(
    db,
  );

  await db.schema
    .createTable('catalog_snapshots')
    .addColumn('version_id', 'uuid', (c) => c.notNull().references('catalog_versions.id').onDelete('cascade'))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('language', 'text', (c) => c.notNull().check(sql`language IN ('ru', 'en')`))
    .addColumn('etag', 'text', (c) => c.notNull())
    // The response body as served: JSON bytes, and the same bytes gzip-compressed.
    .addColumn('body', 'bytea', (c) => c.notNull())
    .addColumn('body_gzip', 'bytea', (c) => c.notNull())
    .addPrimaryKeyConstraint('catalog_snapshots_pk', ['version_id', 'store_id', 'language'])
    .execute();
  // Stored compressed bytes gain nothing from TOAST compression; keep them out of line as is.
  await sql`ALTER TABLE catalog_snapshots ALTER COLUMN body_gzip SET STORAGE EXTERNAL`.execute(db);

  // ---- content ---------------------------------------------------------------------------------
  const referenceKinds = sql`('product', 'category', 'collection', 'url', 'none')`;
  await db.schema
    .createTable('banners')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('image_ru', 'text', (c) => c.notNull())
    .addColumn('image_en', 'text', (c) => c.notNull())
    .addColumn('reference_type', 'text', (c) => c.notNull().check(sql`reference_type IN ${referenceKinds}`))
    .addColumn('reference_id', 'text', (c) => c.check(sql`length(reference_id) <= 2048`))
    // Higher first; among equal priorities the most recently published first.
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('starts_at', 'timestamptz')
    .addColumn('ends_at', 'timestamptz')
    .addColumn('published_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addCheckConstraint('banners_reference', sql`(reference_type = 'none') = (reference_id IS NULL)`)
    .execute();

  await db.schema
    .createTable('stories')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('cover_ru', 'text', (c) => c.notNull())
    .addColumn('cover_en', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('starts_at', 'timestamptz')
    .addColumn('ends_at', 'timestamptz')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('story_slides')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('story_id', 'uuid', (c) => c.notNull().references('stories.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('image_ru', 'text', (c) => c.notNull())
    .addColumn('image_en', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type IN ${referenceKinds}`))
    .addColumn('reference_id', 'text', (c) => c.check(sql`length(reference_id) <= 2048`))
    .addCheckConstraint('story_slides_reference', sql`(type = 'none') = (reference_id IS NULL)`)
    .addUniqueConstraint('story_slides_position', ['story_id', 'position'])
    .execute();

  await db.schema
    .createTable('content_pages')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('title_ru', 'text', (c) => c.notNull())
    .addColumn('title_en', 'text', (c) => c.notNull())
    .addColumn('content_ru', 'text', (c) => c.notNull())
    .addColumn('content_en', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('is_published', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();

  await db.schema
    .createTable('main_page_titles')
    .addColumn('language', 'text', (c) => c.primaryKey().check(sql`language IN ('ru', 'en')`))
    .addColumn('promo', 'text', (c) => c.notNull())
    .addColumn('own', 'text', (c) => c.notNull())
    .addColumn('new', 'text', (c) => c.notNull())
    .addColumn('childhood', 'text', (c) => c.notNull())
    .addColumn('fresh', 'text', (c) => c.notNull())
    .addColumn('own_category_id', 'uuid', (c) => c.references('categories.id').onDelete('set null'))
    .execute();

  // One row of support contacts (id 1); unset contacts are NULL.
  await db.schema
    .createTable('support_contacts')
    .addColumn('id', 'smallint', (c) =>
      c
        .primaryKey()
        .defaultTo(1)
        .check(sql`id = 1`),
    )
    .addColumn('chat_enabled_android', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('chat_enabled_ios', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('chat_channel_id', 'text')
    .addColumn('chat_android_app_key', 'text')
    .addColumn('chat_ios_app_key', 'text')
    .addColumn('support_phone', 'text', (c) => c.check(sql`support_phone ~ '^\\+[0-9]{6,15}$'`))
    .addColumn('email', 'text')
    .addColumn('site_ru', 'text')
    .addColumn('site_en', 'text')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Texts of the mobile update prompt per kind and language (versions are configuration).
  await db.schema
    .createTable('mobile_update_messages')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('required', 'available')`))
    .addColumn('language', 'text', (c) => c.notNull().check(sql`language IN ('ru', 'en')`))
    .addColumn('message', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('mobile_update_messages_pk', ['kind', 'language'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'mobile_update_messages',
    'support_contacts',
    'main_page_titles',
    'content_pages',
    'story_slides',
    'stories',
    'banners',
    'catalog_snapshots',
    'catalog_versions',
    'favorite_products',
    'inventories',
    'catalog_search_vocabulary',
    'product_barcodes',
    'products',
    'categories',
    'measurement_units',
  ]) {
    await db.schema.dropTable(t).execute();
  }
  await sql`DROP FUNCTION IF EXISTS catalog_search_vocabulary_add()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS products_withdraw_inventories()`.execute(db);
  await sql`DROP FUNCTION IF EXISTS catalog_search_words(text[])`.execute(db);
  await sql`DROP FUNCTION IF EXISTS catalog_fold(text)`.execute(db);
}
