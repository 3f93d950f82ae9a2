// Frozen migration: never edit after it has landed; add a new one instead.
// Logistics: what a store offers (delivery terms, express, pickup, opening hours, contacts),
// delivery zones as GeoJSON, delivery and pickup slots with capacity and holds, and the address
// gazetteer of the demo city that the default geocoder searches.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // --- Stores: the terms and contact data logistics needs. -------------------------------------
  await db.schema
    .alterTable('stores')
    .addColumn('accepts_delivery', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('accepts_pickup', 'boolean', (c) => c.notNull().defaultTo(true))
    // Opening hours as one display line, in the store's own words; the machine-readable hours
    // are in store_working_hours.
    .addColumn('work_time_ru', 'text')
    .addColumn('work_time_en', 'text')
    .addColumn('contacts', sql`text[]`)
    .addColumn('image_original', 'text')
    .addColumn('image_listing', 'text')
    .addColumn('delivery_min_order_amount', 'numeric(12, 2)', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`delivery_min_order_amount >= 0`),
    )
    .addColumn('delivery_cost', 'numeric(12, 2)', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`delivery_cost >= 0`),
    )
    .addColumn('delivery_free_amount_threshold', 'numeric(12, 2)', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`delivery_free_amount_threshold >= 0`),
    )
    // Assembly lead time: a delivery slot closes for orders this long before it starts.
    .addColumn('delivery_lead_minutes', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(120)
        .check(sql`delivery_lead_minutes BETWEEN 0 AND 1440`),
    )
    .addColumn('delivery_slot_days', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(14)
        .check(sql`delivery_slot_days BETWEEN 1 AND 31`),
    )
    .addColumn('pickup_min_order_amount', 'numeric(12, 2)', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`pickup_min_order_amount >= 0`),
    )
    .addColumn('pickup_lead_minutes', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(60)
        .check(sql`pickup_lead_minutes BETWEEN 0 AND 1440`),
    )
    .execute();

  // Regular opening hours, one row per ISO weekday. closes_at < opens_at: closes after midnight;
  // opens_at = closes_at: open around the clock.
  await db.schema
    .createTable('store_working_hours')
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('weekday', 'smallint', (c) => c.notNull().check(sql`weekday BETWEEN 1 AND 7`))
    .addColumn('is_closed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('opens_at', 'time')
    .addColumn('closes_at', 'time')
    .addPrimaryKeyConstraint('store_working_hours_pk', ['store_id', 'weekday'])
    .addCheckConstraint(
      'store_working_hours_times',
      sql`(is_closed AND opens_at IS NULL AND closes_at IS NULL) OR (NOT is_closed AND opens_at IS NOT NULL AND closes_at IS NOT NULL)`,
    )
    .execute();

  // Whole days a store is closed although its regular hours say open (holidays, stock-taking).
  await db.schema
    .createTable('store_closures')
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('closed_on', 'date', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addPrimaryKeyConstraint('store_closures_pk', ['store_id', 'closed_on'])
    .execute();

  // Express delivery: a store without a row offers none.
  await db.schema
    .createTable('store_express_delivery')
    .addColumn('store_id', 'uuid', (c) => c.primaryKey().references('stores.id').onDelete('cascade'))
    .addColumn('minutes', 'integer', (c) => c.notNull().check(sql`minutes > 0`))
    .addColumn('cost', 'numeric(12, 2)', (c) => c.notNull().check(sql`cost >= 0`))
    .addColumn('max_items_count', 'integer', (c) => c.check(sql`max_items_count > 0`))
    // The store stops taking express orders under load without touching its schedule.
    .addColumn('is_accepting', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('store_express_schedule')
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('store_express_delivery.store_id').onDelete('cascade'))
    .addColumn('weekday', 'smallint', (c) => c.notNull().check(sql`weekday BETWEEN 1 AND 7`))
    .addColumn('start_time', 'time', (c) => c.notNull())
    .addColumn('end_time', 'time', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addPrimaryKeyConstraint('store_express_schedule_pk', ['store_id', 'weekday'])
    .addCheckConstraint('store_express_schedule_order', sql`end_time > start_time`)
    .execute();

  // --- Delivery zones ---------------------------------------------------------------------------
  // No PostGIS here: the geometry is GeoJSON (what the API sends) and containment is decided by
  // domain/geo/geometry.ts. The database guarantees the shape the rule relies on (closed
  // rings of at least 4 positions inside the coordinate ranges) and keeps a bounding box, derived
  // from the polygon so the two cannot drift, to narrow candidates before the exact test.
  await sql`
    CREATE FUNCTION geojson_area_is_valid(g jsonb) RETURNS boolean
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    DECLARE
      polygons jsonb;
      poly jsonb;
      ring jsonb;
      pos jsonb;
      n integer;
    BEGIN
      IF jsonb_typeof(g) <> 'object' THEN RETURN false; END IF;
      IF jsonb_typeof(g->'coordinates') IS DISTINCT FROM 'array' THEN RETURN false; END IF;
      IF g->>'type' = 'Polygon' THEN
        polygons := jsonb_build_array(g->'coordinates');
      ELSIF g->>'type' = 'MultiPolygon' THEN
        polygons := g->'coordinates';
      ELSE
        RETURN false;
      END IF;
      IF jsonb_array_length(polygons) = 0 THEN RETURN false; END IF;
      FOR poly IN SELECT value FROM jsonb_array_elements(polygons) LOOP
        IF jsonb_typeof(poly) <> 'array' THEN RETURN false; END IF;
        IF jsonb_array_length(poly) = 0 THEN RETURN false; END IF;
        FOR ring IN SELECT value FROM jsonb_array_elements(poly) LOOP
          IF jsonb_typeof(ring) <> 'array' THEN RETURN false; END IF;
          n := jsonb_array_length(ring);
          IF n < 4 THEN RETURN false; END IF;
          IF ring->0 IS DISTINCT FROM ring->(n - 1) THEN RETURN false; END IF;
          FOR pos IN SELECT value FROM jsonb_array_elements(ring) LOOP
            IF jsonb_typeof(pos) <> 'array' THEN RETURN false; END IF;
            IF jsonb_array_length(pos) < 2 THEN RETURN false; END IF;
            IF jsonb_typeof(pos->0) <> 'number' OR jsonb_typeof(pos->1) <> 'number' THEN RETURN false; END IF;
            IF (pos->>0)::float8 NOT BETWEEN -180 AND 180 THEN RETURN false; END IF;
            IF (pos->>1)::float8 NOT BETWEEN -90 AND 90 THEN RETURN false; END IF;
          END LOOP;
        END LOOP;
      END LOOP;
      RETURN true;
    END $$`.execute(db);
  await sql`
    CREATE FUNCTION geojson_bbox(g jsonb) RETURNS float8[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT ARRAY[min((p->>0)::float8), min((p->>1)::float8), max((p->>0)::float8), max((p->>1)::float8)]
      FROM jsonb_path_query(g, 'strict $.coordinates.**') AS p
      WHERE jsonb_typeof(p) = 'array' AND jsonb_typeof(p->0) = 'number'
    $$`.execute(db);

  await db.schema
    .createTable('delivery_zones')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('polygon', 'jsonb', (c) => c.notNull().check(sql`geojson_area_is_valid(polygon)`))
    .addColumn('bbox_min_lon', 'float8', (c) => c.generatedAlwaysAs(sql`(geojson_bbox(polygon))[1]`).stored())
    .addColumn('bbox_min_lat', 'float8', (c) => c.generatedAlwaysAs(sql`(geojson_bbox(polygon))[2]`).stored())
    .addColumn('bbox_max_lon', 'float8', (c) => c.generatedAlwaysAs(sql`(geojson_bbox(polygon))[3]`).stored())
    .addColumn('bbox_max_lat', 'float8', (c) => c.generatedAlwaysAs(sql`(geojson_bbox(polygon))[4]`).stored())
    .addColumn('priority', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`priority BETWEEN 0 AND 1000`),
    )
    .addColumn('delivery_cost', 'numeric(12, 2)', (c) => c.notNull().check(sql`delivery_cost >= 0`))
    .addColumn('free_amount_threshold', 'numeric(12, 2)', (c) => c.notNull().check(sql`free_amount_threshold >= 0`))
    .addColumn('min_order_amount', 'numeric(12, 2)', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`min_order_amount >= 0`),
    )
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX delivery_zones_store ON delivery_zones (store_id)`.execute(db);

  // --- Slots ------------------------------------------------------------------------------------
  // Weekly templates per store and kind; concrete windows (store_slots) are materialised from them
  // for a rolling horizon, so the calendar never runs out. A window's id is derived from its store,
  // kind and start, so materialising twice (or on two instances at once) yields the same rows.
  await db.schema
    .createTable('slot_templates')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('delivery', 'pickup')`))
    .addColumn('weekday', 'smallint', (c) => c.notNull().check(sql`weekday BETWEEN 1 AND 7`))
    .addColumn('start_time', 'time', (c) => c.notNull())
    .addColumn('end_time', 'time', (c) => c.notNull())
    .addColumn('capacity', 'integer', (c) => c.notNull().check(sql`capacity >= 0`))
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addCheckConstraint('slot_templates_order', sql`end_time > start_time`)
    .addUniqueConstraint('slot_templates_window', ['store_id', 'kind', 'weekday', 'start_time'])
    .execute();

  await sql`
    CREATE FUNCTION slot_uuid(store_id uuid, kind text, starts_at timestamptz) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT overlay(overlay(md5(kind || ':' || store_id::text || ':' || extract(epoch FROM starts_at)::bigint::text)
        PLACING '3' FROM 13) PLACING '8' FROM 17)::uuid
    $$`.execute(db);

  // `reserved` counts the holds (slot_holds) and is changed only together with them, in one
  // statement, so "capacity left" is one row read and taking the last unit is one conditional
  // UPDATE that concurrent transactions serialise on. It may exceed a capacity lowered later,
  // hence no reserved <= capacity check (remaining capacity is reported as never below 0).
  await db.schema
    .createTable('store_slots')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('delivery', 'pickup')`))
    .addColumn('slot_date', 'date', (c) => c.notNull())
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ends_at', 'timestamptz', (c) => c.notNull())
    .addColumn('capacity', 'integer', (c) => c.notNull().check(sql`capacity >= 0`))
    .addColumn('reserved', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(0)
        .check(sql`reserved >= 0`),
    )
    // Switched off by the store (holiday, stock-taking, no couriers).
    .addColumn('is_closed', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('store_slots_order', sql`ends_at > starts_at`)
    .addUniqueConstraint('store_slots_window', ['store_id', 'kind', 'starts_at'])
    // Lets an order reference (slot id, kind) so a pickup slot can never be booked as delivery.
    .addUniqueConstraint('store_slots_id_kind', ['id', 'kind'])
    .execute();
  await sql`CREATE INDEX store_slots_calendar ON store_slots (store_id, kind, slot_date, starts_at)`.execute(db);

  // One hold per order: the order takes it in its own transaction and gives it back on cancel.
  // There is no foreign key to orders.
  await db.schema
    .createTable('slot_holds')
    .addColumn('order_id', 'uuid', (c) => c.primaryKey())
    .addColumn('slot_id', 'uuid', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addForeignKeyConstraint('slot_holds_slot', ['slot_id', 'kind'], 'store_slots', ['id', 'kind'], (c) => c.onDelete('restrict'))
    .execute();
  await sql`CREATE INDEX slot_holds_slot ON slot_holds (slot_id)`.execute(db);

  // --- Gazetteer --------------------------------------------------------------------------------
  // Search folds text to one transliteration-tolerant Latin form: lower case, the scholarly
  // š/č/ž spelled out, no diacritics (unaccent: ё -> е), Cyrillic transliterated, then the common
  // spelling variants of Russian transliteration merged (y/j/i, kh/h, ts/c, shch/sch/sh, ...),
  // punctuation to single spaces.
  // The same function folds the stored text and the query, so "Tverskaja", "tverskaya" and
  // "Тверская" all become "tverskaia". unaccent is STABLE only because its dictionary could be
  // changed; naming the dictionary explicitly is the documented way to use it in an index.
  await sql`
    CREATE FUNCTION gazetteer_fold(input text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
      SELECT btrim(regexp_replace(
        replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
          translate(
            replace(replace(replace(replace(replace(replace(replace(replace(
              public.unaccent('public.unaccent'::regdictionary, replace(replace(replace(lower(input), 'š', 'sh'), 'č', 'ch'), 'ž', 'zh')),
              'щ', 'shch'), 'ж', 'zh'), 'х', 'kh'), 'ц', 'ts'), 'ч', 'ch'), 'ш', 'sh'), 'ю', 'yu'), 'я', 'ya'),
            'абвгдезийклмнопрстуфыэъь', 'abvgdeziiklmnoprstufye'),
          'shch', 'sh'), 'sch', 'sh'), 'kh', 'h'), 'ts', 'c'), 'tz', 'c'), 'y', 'i'), 'j', 'i'),
          'ii', 'i'), 'io', 'e'), 'ie', 'e'),
          '''', ''), '’', ''), '\`', ''),
        '[^a-z0-9]+', ' ', 'g'))
    $$`.execute(db);

  // One row per searchable object (house, street, place): denormalised, because it is a search
  // index. `search_text` is generated from the texts, so it can never be stale.
  await db.schema
    .createTable('gazetteer_entries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('category', 'text', (c) => c.notNull().check(sql`category IN ('address', 'street', 'poi', 'locality')`))
    .addColumn('street_id', 'uuid', (c) => c.references('gazetteer_entries.id').onDelete('cascade'))
    .addColumn('house_number', 'text')
    .addColumn('title_ru', 'text', (c) => c.notNull())
    .addColumn('title_en', 'text', (c) => c.notNull())
    .addColumn('place_name_ru', 'text')
    .addColumn('place_name_en', 'text')
    // Other names the object is searched by (full street-type words, former names).
    .addColumn('search_aliases', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('lon', 'float8', (c) => c.notNull().check(sql`lon BETWEEN -180 AND 180`))
    .addColumn('lat', 'float8', (c) => c.notNull().check(sql`lat BETWEEN -90 AND 90`))
    .addColumn('search_text', 'text', (c) =>
      c
        .generatedAlwaysAs(
          sql`gazetteer_fold(title_ru || ' ' || title_en || ' ' || coalesce(place_name_ru, '') || ' ' || coalesce(place_name_en, '') || ' ' || search_aliases)`,
        )
        .stored(),
    )
    .execute();
  await sql`CREATE INDEX gazetteer_entries_search ON gazetteer_entries USING gin (search_text gin_trgm_ops)`.execute(db);
  await sql`CREATE INDEX gazetteer_entries_position ON gazetteer_entries (lat, lon)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('gazetteer_entries').execute();
  await sql`DROP FUNCTION IF EXISTS gazetteer_fold(text)`.execute(db);
  await db.schema.dropTable('slot_holds').execute();
  await db.schema.dropTable('store_slots').execute();
  await sql`DROP FUNCTION IF EXISTS slot_uuid(uuid, text, timestamptz)`.execute(db);
  await db.schema.dropTable('slot_templates').execute();
  await db.schema.dropTable('delivery_zones').execute();
  await sql`DROP FUNCTION IF EXISTS geojson_bbox(jsonb)`.execute(db);
  await sql`DROP FUNCTION IF EXISTS geojson_area_is_valid(jsonb)`.execute(db);
  await db.schema.dropTable('store_express_schedule').execute();
  await db.schema.dropTable('store_express_delivery').execute();
  await db.schema.dropTable('store_closures').execute();
  await db.schema.dropTable('store_working_hours').execute();
  for (const column of [
    'accepts_delivery',
    'accepts_pickup',
    'work_time_ru',
    'work_time_en',
    'contacts',
    'image_original',
    'image_listing',
    'delivery_min_order_amount',
    'delivery_cost',
    'delivery_free_amount_threshold',
    'delivery_lead_minutes',
    'delivery_slot_days',
    'pickup_min_order_amount',
    'pickup_lead_minutes',
  ]) {
    await db.schema.alterTable('stores').dropColumn(column).execute();
  }
}
