// Query functions of the Logistics area. The executor comes first; callers open a transaction
// when several statements must be atomic (order creation holds a slot inside its own).
import { sql, type Insertable, type RawBuilder } from 'kysely';
import { typedWordVariants } from '../../domain/geo/address-search.js';
import type { Executor } from '../executor.js';
import type { GazetteerEntriesTable, SlotKind } from '../tables/logistics.js';

const STORE_OUTPUT_COLUMNS = [
  'stores.id',
  'stores.name_ru',
  'stores.name_en',
  'stores.address_ru',
  'stores.address_en',
  'stores.lon',
  'stores.lat',
] as const;

// ------------------------------------------------------------------------------------------------
// Stores

/** Delivery terms of an active store, with its express offer (null when it has none). */
export async function findDeliveryTerms(db: Executor, storeId: string) {
  const store = await db
    .selectFrom('stores')
    .leftJoin('store_express_delivery as x', 'x.store_id', 'stores.id')
    .select([
      'stores.id',
      'stores.timezone',
      'stores.accepts_delivery',
      'stores.delivery_min_order_amount',
      'stores.delivery_cost',
      'stores.delivery_free_amount_threshold',
      'stores.delivery_slot_days',
      'x.minutes as express_minutes',
      'x.cost as express_cost',
      'x.max_items_count as express_max_items_count',
      'x.is_accepting as express_is_accepting',
    ])
    .where('stores.id', '=', storeId)
    .where('stores.is_active', '=', true)
    .executeTakeFirst();
  if (!store) return undefined;
  const schedule =
    store.express_minutes === null
      ? []
      : await db
          .selectFrom('store_express_schedule')
          .select(['weekday', 'start_time', 'end_time', 'is_active'])
          .where('store_id', '=', storeId)
          .orderBy('weekday')
          .execute();
  return { ...store, express_schedule: schedule };
}

export type DeliveryTermsRow = NonNullable<Awaited<ReturnType<typeof findDeliveryTerms>>>;

/** Active stores that offer pickup (order is the caller's: it depends on the language). */
export function listPickupStores(db: Executor) {
  return db
    .selectFrom('stores')
    .select([...STORE_OUTPUT_COLUMNS, 'stores.work_time_ru', 'stores.work_time_en', 'stores.contacts'])
    .where('is_active', '=', true)
    .where('accepts_pickup', '=', true)
    .execute();
}

export type PickupStoreRow = Awaited<ReturnType<typeof listPickupStores>>[number];

/** One active pickup store with everything its details screen shows, or undefined. */
export async function findPickupStore(db: Executor, storeId: string) {
  const store = await db
    .selectFrom('stores')
    .select([
      ...STORE_OUTPUT_COLUMNS,
      'stores.work_time_ru',
      'stores.work_time_en',
      'stores.contacts',
      'stores.phone',
      'stores.image_original',
      'stores.image_listing',
      'stores.timezone',
      'stores.pickup_min_order_amount',
      sql<Date>`now()`.as('db_now'),
    ])
    .where('id', '=', storeId)
    .where('is_active', '=', true)
    .where('accepts_pickup', '=', true)
    .executeTakeFirst();
  if (!store) return undefined;
  const [hours, closures] = await Promise.all([
    db
      .selectFrom('store_working_hours')
      .select(['weekday', 'is_closed', 'opens_at', 'closes_at'])
      .where('store_id', '=', storeId)
      .execute(),
    // Only the closures that can matter for "open now" in any time zone: around today.
    db
      .selectFrom('store_closures')
      .select('closed_on')
      .where('store_id', '=', storeId)
      .where(sql<boolean>`closed_on BETWEEN current_date - 2 AND current_date + 2`)
      .execute(),
  ]);
  return { ...store, working_hours: hours, closed_dates: closures.map((c) => c.closed_on) };
}

export type PickupStoreDetailRow = NonNullable<Awaited<ReturnType<typeof findPickupStore>>>;

/** Pickup terms of an active store. */
export function findPickupTerms(db: Executor, storeId: string) {
  return db
    .selectFrom('stores')
    .select(['id', 'accepts_pickup', 'pickup_min_order_amount'])
    .where('id', '=', storeId)
    .where('is_active', '=', true)
    .executeTakeFirst();
}

// ------------------------------------------------------------------------------------------------
// Delivery zones

export interface BoundingBox {
  minLon: number;
  minLat: number;
  maxLon: number;
  maxLat: number;
}

const ZONE_COLUMNS = [
  'z.id',
  'z.store_id',
  'z.name_ru',
  'z.name_en',
  'z.polygon',
  'z.priority',
  'z.delivery_cost',
  'z.free_amount_threshold',
  'z.min_order_amount',
] as const;

/**
 * Zones that may serve a point inside `box`: active zones of active stores that accept delivery,
 * whose bounding box meets `box` widened by `tolerance` degrees. The exact test is the caller's
 * (domain/geo/serving-store.ts). Each row carries its store, for the answer and the distance.
 * `storeId` narrows them to one store's zones (checkout with X-Store-Id).
 */
export function listServingZoneCandidates(db: Executor, box: BoundingBox, tolerance: number, storeId: string | null = null) {
  return servingZoneCandidatesQuery(db, box, tolerance, storeId).execute();
}

/** listServingZoneCandidates as a query, to run within another statement (checkout reads it with its key's claim). */
export function servingZoneCandidatesQuery(db: Executor, box: BoundingBox, tolerance: number, storeId: string | null = null) {
  return db
    .selectFrom('delivery_zones as z')
    .innerJoin('stores', 'stores.id', 'z.store_id')
    .select([
      ...ZONE_COLUMNS,
      'stores.name_ru as store_name_ru',
      'stores.name_en as store_name_en',
      'stores.address_ru as store_address_ru',
      'stores.address_en as store_address_en',
      'stores.lon as store_lon',
      'stores.lat as store_lat',
    ])
    .where('z.is_active', '=', true)
    .where('stores.is_active', '=', true)
    .where('stores.accepts_delivery', '=', true)
    .where('z.bbox_min_lon', '<=', box.maxLon + tolerance)
    .where('z.bbox_max_lon', '>=', box.minLon - tolerance)
    .where('z.bbox_min_lat', '<=', box.maxLat + tolerance)
    .where('z.bbox_max_lat', '>=', box.minLat - tolerance)
    .$if(storeId !== null, (q) => q.where('z.store_id', '=', storeId!));
}

export type ServingZoneRow = Awaited<ReturnType<typeof listServingZoneCandidates>>[number];

/** Every zone a customer can be served by, as GET .../delivery/zones lists them. */
export function listActiveDeliveryZones(db: Executor) {
  return db
    .selectFrom('delivery_zones as z')
    .innerJoin('stores', 'stores.id', 'z.store_id')
    .select(ZONE_COLUMNS)
    .where('z.is_active', '=', true)
    .where('stores.is_active', '=', true)
    .where('stores.accepts_delivery', '=', true)
    .orderBy('z.store_id')
    .orderBy('z.priority', 'desc')
    .orderBy('z.id')
    .execute();
}

export type DeliveryZoneRow = Awaited<ReturnType<typeof listActiveDeliveryZones>>[number];

export interface NewDeliveryZone {
  id?: string;
  store_id: string;
  name_ru: string;
  name_en: string;
  polygon: { type: 'Polygon' | 'MultiPolygon'; coordinates: unknown[] };
  priority?: number;
  delivery_cost: string;
  free_amount_threshold: string;
  min_order_amount?: string;
  is_active?: boolean;
}

export async function insertDeliveryZones(db: Executor, zones: readonly NewDeliveryZone[]): Promise<void> {
  if (!zones.length) return;
  await db
    .insertInto('delivery_zones')
    .values(zones.map((z) => ({ ...z, polygon: JSON.stringify(z.polygon) })))
    .execute();
}

// ------------------------------------------------------------------------------------------------
// Slots

/**
 * Materialises the store's windows of `kind` from its weekly templates for the store-local dates
 * today .. today + days - 1, except the days the store is closed (store_closures) and windows
 * whose local start does not exist that day (DST). Idempotent (ids derive from store, kind and
 * start; existing windows are kept with their holds), so it runs before every listing and the
 * calendar rolls forward by itself. Returns the number of windows created.
 */
export async function materializeSlots(db: Executor, storeId: string, kind: SlotKind, days: number): Promise<number> {
  const result = await sql`
    INSERT INTO store_slots (id, store_id, kind, slot_date, starts_at, ends_at, capacity)
    SELECT slot_uuid(st.id, t.kind, w.starts_at), st.id, t.kind, d.day, w.starts_at, w.ends_at, t.capacity
    FROM stores st
    JOIN slot_templates t ON t.store_id = st.id AND t.kind = ${kind} AND t.is_active
    CROSS JOIN LATERAL (
      SELECT g::date AS day
      FROM generate_series((now() AT TIME ZONE st.timezone)::date, (now() AT TIME ZONE st.timezone)::date + ${days}::int - 1, interval '1 day') AS g
    ) d
    CROSS JOIN LATERAL (
      SELECT (d.day + t.start_time) AT TIME ZONE st.timezone AS starts_at, (d.day + t.end_time) AT TIME ZONE st.timezone AS ends_at
    ) w
    WHERE st.id = ${storeId} AND extract(isodow FROM d.day) = t.weekday
      AND NOT EXISTS (SELECT 1 FROM store_closures c WHERE c.store_id = st.id AND c.closed_on = d.day)
      -- A start inside a DST spring-forward gap does not exist on that day (PostgreSQL would read
      -- it with the old offset, one hour off, and a window could end before it starts): skipped.
      AND (w.starts_at AT TIME ZONE st.timezone) = d.day + t.start_time
      AND w.ends_at > w.starts_at
    ON CONFLICT (store_id, kind, starts_at) DO NOTHING`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

const storeLocalToday = (timezoneColumn: string): RawBuilder<string> => sql<string>`(now() AT TIME ZONE ${sql.ref(timezoneColumn)})::date`;

/**
 * The window `s` is not on a day its store is closed. A closure entered after the windows of its
 * day were made (materializeSlots makes 14 days ahead) must still empty that day, for listing and
 * for booking alike: "A day the store is closed has no windows".
 */
export const notOnClosedDay = sql<boolean>`NOT EXISTS (SELECT 1 FROM store_closures c WHERE c.store_id = s.store_id AND c.closed_on = s.slot_date)`;

/**
 * Delivery windows of the store for the store-local dates today .. today + slot_days - 1 (or only
 * `date` among them) that have not ended yet, earliest first. `db_now` is the database clock the
 * caller judges cut-offs by, the same clock the reservation uses.
 */
export function listDeliverySlots(db: Executor, storeId: string, date: string | null) {
  let query = db
    .selectFrom('store_slots as s')
    .innerJoin('stores as st', 'st.id', 's.store_id')
    .select([
      's.id',
      's.slot_date',
      's.starts_at',
      's.ends_at',
      's.capacity',
      's.reserved',
      's.is_closed',
      'st.timezone',
      'st.delivery_lead_minutes as lead_minutes',
      sql<Date>`now()`.as('db_now'),
    ])
    .where('s.store_id', '=', storeId)
    .where('s.kind', '=', 'delivery')
    .where('s.slot_date', '>=', storeLocalToday('st.timezone'))
    .where('s.slot_date', '<=', sql<string>`${storeLocalToday('st.timezone')} + st.delivery_slot_days - 1`)
    .where('s.ends_at', '>', sql<Date>`now()`)
    .where(notOnClosedDay);
  if (date !== null) query = query.where('s.slot_date', '=', date);
  return query.orderBy('s.starts_at').orderBy('s.id').execute();
}

export type DeliverySlotRow = Awaited<ReturnType<typeof listDeliverySlots>>[number];

/** Pickup windows of the store-local today and the next two days that have not ended, with each one's day offset. */
export function listPickupSlots(db: Executor, storeId: string) {
  return db
    .selectFrom('store_slots as s')
    .innerJoin('stores as st', 'st.id', 's.store_id')
    .select([
      's.id',
      's.starts_at',
      's.ends_at',
      's.capacity',
      's.reserved',
      's.is_closed',
      'st.timezone',
      'st.pickup_lead_minutes as lead_minutes',
      sql<number>`s.slot_date - ${storeLocalToday('st.timezone')}`.as('day_offset'),
      sql<Date>`now()`.as('db_now'),
    ])
    .where('s.store_id', '=', storeId)
    .where('s.kind', '=', 'pickup')
    .where('s.slot_date', '>=', storeLocalToday('st.timezone'))
    .where('s.slot_date', '<=', sql<string>`${storeLocalToday('st.timezone')} + 2`)
    .where('s.ends_at', '>', sql<Date>`now()`)
    .where(notOnClosedDay)
    .orderBy('s.starts_at')
    .orderBy('s.id')
    .execute();
}

export type PickupSlotRow = Awaited<ReturnType<typeof listPickupSlots>>[number];

/** Why a slot could not be held. */
export type SlotHoldFailure = 'not_found' | 'closed' | 'cutoff_passed' | 'full' | 'order_holds_another_slot';

export interface HeldSlot {
  slotId: string;
  storeId: string;
  /** Store-local date of the window. */
  slotDate: string;
  startsAt: Date;
  endsAt: Date;
}

export type SlotHoldResult = { ok: true; slot: HeldSlot; alreadyHeld: boolean } | { ok: false; reason: SlotHoldFailure };

export interface SlotHoldRequest {
  /** The store of the order: a window of another store is `not_found`. */
  storeId: string;
  slotId: string;
  /** The order taking the hold; one order holds at most one window. */
  orderId: string;
}

/**
 * Holds one unit of a delivery window for an order. Call it inside the order's transaction: the
 * hold commits or rolls back with the order. Capacity is taken by one conditional UPDATE, so
 * concurrent holds on the last unit serialise on the window's row and exactly `capacity` of them
 * succeed (READ COMMITTED re-checks the condition against the committed count). Holding again
 * for the same order and window succeeds without taking a second unit.
 */
export function reserveDeliverySlot(db: Executor, request: SlotHoldRequest): Promise<SlotHoldResult> {
  return reserveSlot(db, 'delivery', request);
}

/** As reserveDeliverySlot, for a pickup window. */
export function reservePickupSlot(db: Executor, request: SlotHoldRequest): Promise<SlotHoldResult> {
  return reserveSlot(db, 'pickup', request);
}

/** Gives back the order's delivery hold, if it has one (cancel). Safe to call twice. */
export function releaseDeliverySlot(db: Executor, orderId: string): Promise<{ released: boolean; slotId: string | null }> {
  return releaseSlot(db, 'delivery', orderId);
}

/** Gives back the order's pickup hold, if it has one. Safe to call twice. */
export function releasePickupSlot(db: Executor, orderId: string): Promise<{ released: boolean; slotId: string | null }> {
  return releaseSlot(db, 'pickup', orderId);
}

const leadMinutesOf = (kind: SlotKind) => (kind === 'delivery' ? sql.ref('st.delivery_lead_minutes') : sql.ref('st.pickup_lead_minutes'));
const storeOffers = (kind: SlotKind) => (kind === 'delivery' ? sql.ref('st.accepts_delivery') : sql.ref('st.accepts_pickup'));

interface SlotRowForHold {
  id: string;
  store_id: string;
  slot_date: string;
  starts_at: Date;
  ends_at: Date;
}

const toHeldSlot = (row: SlotRowForHold): HeldSlot => ({
  slotId: row.id,
  storeId: row.store_id,
  slotDate: row.slot_date,
  startsAt: row.starts_at,
  endsAt: row.ends_at,
});

/**
 * The CTEs that hold one unit of a window for an order, to run within a statement of the
 * order's transaction (reserveSlot; checkout takes it with the stock locks): `existing` (the
 * order's hold, if any, which stops the take), `taken` (the window, when a unit was taken) and
 * `held`. Read the outcome with slotHoldOutcome. `after` is evaluated before the window's row is
 * locked (checkout: its stock rows first).
 */
export function slotTakeCtes(
  kind: SlotKind,
  { storeId, slotId, orderId }: SlotHoldRequest,
  after: RawBuilder<boolean> = sql<boolean>`true`,
) {
  return sql`existing AS (
      SELECT slot_id, kind FROM slot_holds WHERE order_id = ${orderId}
    ), taken AS (
      UPDATE store_slots s SET reserved = s.reserved + 1
      FROM stores st
      WHERE s.id = ${slotId} AND s.kind = ${kind} AND s.store_id = ${storeId}
        AND st.id = s.store_id AND st.is_active AND ${storeOffers(kind)}
        AND NOT s.is_closed AND ${notOnClosedDay}
        AND s.reserved < s.capacity
        AND now() < s.starts_at - make_interval(mins => ${leadMinutesOf(kind)})
        AND NOT EXISTS (SELECT 1 FROM existing)
        AND ${after}
      RETURNING s.id, s.store_id, s.slot_date, s.starts_at, s.ends_at
    ), held AS (
      INSERT INTO slot_holds (order_id, slot_id, kind) SELECT ${orderId}, id, ${kind} FROM taken
    )`;
}

/** The columns a statement with slotTakeCtes selects for slotHoldOutcome (from `(SELECT 1) one LEFT JOIN taken t ON true LEFT JOIN existing e ON true`). */
export const SLOT_TAKE_COLUMNS = sql`t.id AS slot_taken_id, t.store_id AS slot_store_id, t.slot_date AS slot_date, t.starts_at AS slot_starts_at, t.ends_at AS slot_ends_at,
  e.slot_id AS held_slot_id, e.kind AS held_kind`;

export interface SlotTakeRow {
  slot_taken_id: string | null;
  slot_store_id: string | null;
  slot_date: string | null;
  slot_starts_at: Date | null;
  slot_ends_at: Date | null;
  held_slot_id: string | null;
  held_kind: SlotKind | null;
}

/** What the take of slotTakeCtes came to (with a reason when nothing was taken: more reads, in the same transaction). */
export async function slotHoldOutcome(
  db: Executor,
  kind: SlotKind,
  { storeId, slotId }: SlotHoldRequest,
  r: SlotTakeRow,
): Promise<SlotHoldResult> {
  if (r.held_slot_id !== null) {
    if (r.held_slot_id !== slotId || r.held_kind !== kind) return { ok: false, reason: 'order_holds_another_slot' };
    const slot = await db
      .selectFrom('store_slots')
      .select(['id', 'store_id', 'slot_date', 'starts_at', 'ends_at'])
      .where('id', '=', slotId)
      .executeTakeFirstOrThrow();
    return { ok: true, slot: toHeldSlot(slot), alreadyHeld: true };
  }
  if (r.slot_taken_id !== null) {
    return {
      ok: true,
      slot: toHeldSlot({
        id: r.slot_taken_id,
        store_id: r.slot_store_id!,
        slot_date: r.slot_date!,
        starts_at: r.slot_starts_at!,
        ends_at: r.slot_ends_at!,
      }),
      alreadyHeld: false,
    };
  }

  // Nothing was taken: say why, judged by the same conditions in the same order as the listing.
  const slot = await db
    .selectFrom('store_slots as s')
    .innerJoin('stores as st', 'st.id', 's.store_id')
    .select([
      sql<boolean>`s.is_closed OR NOT ${notOnClosedDay}`.as('is_closed'),
      's.reserved',
      's.capacity',
      sql<boolean>`now() >= s.starts_at - make_interval(mins => ${leadMinutesOf(kind)})`.as('cutoff_passed'),
    ])
    .where('s.id', '=', slotId)
    .where('s.kind', '=', kind)
    .where('s.store_id', '=', storeId)
    .where('st.is_active', '=', true)
    .where(storeOffers(kind), '=', true)
    .executeTakeFirst();
  if (!slot) return { ok: false, reason: 'not_found' };
  if (slot.is_closed) return { ok: false, reason: 'closed' };
  if (slot.cutoff_passed) return { ok: false, reason: 'cutoff_passed' };
  return { ok: false, reason: 'full' };
}

async function reserveSlot(db: Executor, kind: SlotKind, request: SlotHoldRequest): Promise<SlotHoldResult> {
  // One statement in the common case (a new order taking a free window): the order's existing
  // hold, if any, is read by the same statement and stops the take.
  // Both sides are outer-joined: the taken window's columns are null when none was taken.
  const { rows } = await sql<SlotTakeRow>`
    WITH ${slotTakeCtes(kind, request)}
    SELECT ${SLOT_TAKE_COLUMNS}
    FROM (SELECT 1) AS one LEFT JOIN taken t ON true LEFT JOIN existing e ON true`.execute(db);
  return slotHoldOutcome(db, kind, request, rows[0]!);
}

async function releaseSlot(db: Executor, kind: SlotKind, orderId: string): Promise<{ released: boolean; slotId: string | null }> {
  const result = await sql<{ id: string }>`
    WITH released AS (
      DELETE FROM slot_holds WHERE order_id = ${orderId} AND kind = ${kind} RETURNING slot_id
    )
    UPDATE store_slots s SET reserved = s.reserved - 1 FROM released r WHERE s.id = r.slot_id
    RETURNING s.id`.execute(db);
  const slotId = result.rows[0]?.id ?? null;
  return { released: slotId !== null, slotId };
}

// ------------------------------------------------------------------------------------------------
// Gazetteer (the default geocoder's data)

/** Great-circle distance in km from (lon, lat) to the row's position, as SQL (haversine, R = 6371.0088). */
function distanceKmFrom(lon: number, lat: number): RawBuilder<number> {
  return sql<number>`(2 * 6371.0088 * asin(least(1, sqrt(
    power(sin(radians(lat - ${lat}::float8) / 2), 2)
    + cos(radians(${lat}::float8)) * cos(radians(lat)) * power(sin(radians(lon - ${lon}::float8) / 2), 2)))))`;
}

const GAZETTEER_COLUMNS = ['id', 'category', 'title_ru', 'title_en', 'place_name_ru', 'place_name_en', 'lon', 'lat'] as const;

/** The text as the gazetteer indexes it (see gazetteer_fold in the logistics migration). */
export async function foldSearchText(db: Executor, text: string): Promise<string> {
  const { rows } = await sql<{ folded: string }>`SELECT gazetteer_fold(${text}) AS folded`.execute(db);
  return rows[0]!.folded;
}

/**
 * Entries in which every word of `query` begins a word of the entry's text (after folding), the
 * nearest to `near` first, then by title in `lang`. Words are matched by a regular expression
 * that the trigram index on search_text serves.
 */
export async function searchGazetteer(
  db: Executor,
  { query, near, limit, lang }: { query: string; near: { lon: number; lat: number }; limit: number; lang: 'ru' | 'en' },
) {
  const words = [...new Set((await foldSearchText(db, query)).split(' ').filter(Boolean))];
  if (!words.length) return [];
  // Folded words are [a-z0-9]+ only, so they are literal inside the pattern. A word may be cut
  // inside a folded letter pair while it is typed: any of its completions may begin a word.
  const conditions = words.map((w) => sql<boolean>`search_text ~ ${`(^| )(${typedWordVariants(w).join('|')})`}`);
  return db
    .selectFrom('gazetteer_entries')
    .select([...GAZETTEER_COLUMNS, distanceKmFrom(near.lon, near.lat).as('distance_km')])
    .where((eb) => eb.and(conditions))
    .orderBy('distance_km')
    .orderBy(lang === 'ru' ? 'title_ru' : 'title_en')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export type GazetteerRow = Awaited<ReturnType<typeof searchGazetteer>>[number];

/**
 * The known object nearest to `point` within `radiusKm`: buildings with a house number (category
 * `address`) before anything else at any distance inside the radius; among equals the nearest.
 */
export function nearestGazetteerEntry(db: Executor, point: { lon: number; lat: number }, radiusKm: number, box: BoundingBox) {
  const distance = distanceKmFrom(point.lon, point.lat);
  return db
    .selectFrom('gazetteer_entries')
    .select([...GAZETTEER_COLUMNS, distance.as('distance_km')])
    .where('lat', '>=', box.minLat)
    .where('lat', '<=', box.maxLat)
    .where('lon', '>=', box.minLon)
    .where('lon', '<=', box.maxLon)
    .where(distance, '<=', radiusKm)
    .orderBy(sql`category = 'address'`, 'desc')
    .orderBy('distance_km')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}

export async function insertGazetteerEntries(db: Executor, rows: readonly Insertable<GazetteerEntriesTable>[]): Promise<void> {
  // Chunks keep each statement well under PostgreSQL's 65535 bind parameters.
  for (let i = 0; i < rows.length; i += 1000) {
    await db
      .insertInto('gazetteer_entries')
      .values(rows.slice(i, i + 1000))
      .execute();
  }
}
