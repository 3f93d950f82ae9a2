// Handlers of the Logistics tag, keyed by operationId: map settings and address search, delivery
// coverage (the serving-store rule), delivery and pickup terms and slots, pickup stores.
// All public; every operation counts against the caller's per-IP request budget.
import type { OperationId } from '../generated/operations.js';
import {
  findDeliveryTerms,
  findPickupStore,
  listActiveDeliveryZones,
  listDeliverySlots,
  listPickupSlots,
  listPickupStores,
  listServingZoneCandidates,
  materializeSlots,
  type DeliverySlotRow,
  type DeliveryTermsRow,
  type DeliveryZoneRow,
  type PickupStoreDetailRow,
  type PickupStoreRow,
  type ServingZoneRow,
} from '../db/queries/logistics.js';
import type { Executor } from '../db/executor.js';
import { badGateway, notFound, tooManyRequests, unprocessable } from '../services/errors.js';
import type { HandlerMap, RequestContext, StepsMap } from '../server/handler-types.js';
import type { Logger } from '../platform/logger.js';
import { GeocoderUnavailableError } from '../platform/providers/geocoder/index.js';
import { isQueryLongEnough, normalizeAddressQuery } from '../domain/geo/address-search.js';
import { EDGE_TOLERANCE_DEG, parseArea, roundKm, type Point } from '../domain/geo/geometry.js';
import { localDateTime, localMoment, timeWithOffset } from '../domain/time/local-time.js';
import { chooseServingZone, type ServingChoice, type ZoneCandidate } from '../domain/geo/serving-store.js';
import { cutoffOf, slotAvailability } from '../domain/orders/slot-availability.js';
import { fullWeek, isExpressAvailableAt, isOpenAt } from '../domain/time/store-hours.js';
import { requireStore } from './support/store.js';

type Lang = 'ru' | 'en';
const byLang = (lang: Lang, ru: string, en: string) => (lang === 'ru' ? ru : en);

// ------------------------------------------------------------------------------------------------
// Row -> API mappers (one per resource)

interface StoreFields {
  id: string;
  name_ru: string;
  name_en: string;
  address_ru: string | null;
  address_en: string | null;
  lon: number;
  lat: number;
}

const storeOutput = (s: StoreFields, lang: Lang) => ({
  id: s.id,
  name: byLang(lang, s.name_ru, s.name_en),
  location: { lon: s.lon, lat: s.lat },
  address: (lang === 'ru' ? s.address_ru : s.address_en) ?? null,
});

const pickupStoreOutput = (s: PickupStoreRow, lang: Lang) => ({
  ...storeOutput(s, lang),
  work_time: (lang === 'ru' ? s.work_time_ru : s.work_time_en) ?? null,
  contacts: s.contacts?.length ? s.contacts : null,
});

function pickupStoreDetail(s: PickupStoreDetailRow, lang: Lang) {
  const now = localMoment(s.db_now, s.timezone);
  const week = fullWeek(
    s.working_hours.map((h) => ({ weekday: h.weekday, isClosed: h.is_closed, opensAt: h.opens_at, closesAt: h.closes_at })),
  );
  return {
    ...pickupStoreOutput(s, lang),
    phone: s.phone,
    image: s.image_original && s.image_listing ? { original: s.image_original, listing: s.image_listing } : null,
    timezone: s.timezone,
    working_hours: week.map((d) => ({
      weekday: d.weekday,
      is_closed: d.isClosed,
      opens_at: d.opensAt && timeWithOffset(d.opensAt, now.offset),
      closes_at: d.closesAt && timeWithOffset(d.closesAt, now.offset),
    })),
    is_open_now: isOpenAt(week, new Set(s.closed_dates), now),
    min_order_amount: s.pickup_min_order_amount,
  };
}

const zoneOutput = (z: DeliveryZoneRow, lang: Lang) => ({
  id: z.id,
  store_id: z.store_id,
  name: byLang(lang, z.name_ru, z.name_en),
  polygon: z.polygon,
  priority: z.priority,
  delivery_cost: z.delivery_cost,
  free_amount_threshold: z.free_amount_threshold,
  min_order_amount: z.min_order_amount,
});

function deliveryPreferences(t: DeliveryTermsRow, now: Date) {
  const local = localMoment(now, t.timezone);
  const schedule = t.express_schedule.map((w) => ({
    weekday: w.weekday,
    startTime: w.start_time,
    endTime: w.end_time,
    isActive: w.is_active,
  }));
  const express =
    t.express_minutes === null || t.express_cost === null
      ? null
      : {
          minutes: t.express_minutes,
          cost: t.express_cost,
          is_available: isExpressAvailableAt(schedule, t.express_is_accepting === true, local),
          schedule: schedule.map((w) => ({
            weekday: w.weekday,
            start_time: timeWithOffset(w.startTime, local.offset),
            end_time: timeWithOffset(w.endTime, local.offset),
            is_active: w.isActive,
          })),
          max_items_count: t.express_max_items_count,
        };
  return {
    store_id: t.id,
    timezone: t.timezone,
    min_order_amount: t.delivery_min_order_amount,
    delivery_cost: t.delivery_cost,
    standard: { free_amount_threshold: t.delivery_free_amount_threshold },
    express,
    slot_days: t.delivery_slot_days,
  };
}

function deliverySlotOutput(row: DeliverySlotRow) {
  const availability = slotAvailability(
    { isClosed: row.is_closed, cutoffAt: cutoffOf(row.starts_at, row.lead_minutes), capacity: row.capacity, reserved: row.reserved },
    row.db_now,
  );
  const start = localMoment(row.starts_at, row.timezone);
  const end = localMoment(row.ends_at, row.timezone);
  return {
    id: row.id,
    date: row.slot_date,
    start_time: `${start.time}${start.offset}`,
    end_time: `${end.time}${end.offset}`,
    starts_at: `${start.date}T${start.time}${start.offset}`,
    ends_at: `${end.date}T${end.time}${end.offset}`,
    cutoff_at: localDateTime(cutoffOf(row.starts_at, row.lead_minutes), row.timezone),
    capacity: row.capacity,
    remaining_capacity: availability.remainingCapacity,
    is_available: availability.isAvailable,
    unavailable_reason: availability.reason,
  };
}

// ------------------------------------------------------------------------------------------------
// The serving-store rule over the zones near the points

type ServingZone = ZoneCandidate & { row: ServingZoneRow };

async function servingChoices(db: Executor, points: readonly Point[], log: Logger) {
  if (!points.length) return [];
  const box = {
    minLon: Math.min(...points.map((p) => p.lon)),
    maxLon: Math.max(...points.map((p) => p.lon)),
    minLat: Math.min(...points.map((p) => p.lat)),
    maxLat: Math.max(...points.map((p) => p.lat)),
  };
  const zones: ServingZone[] = [];
  for (const row of await listServingZoneCandidates(db, box, EDGE_TOLERANCE_DEG)) {
    const area = parseArea(row.polygon);
    // The database refuses malformed polygons (geojson_area_is_valid); should one slip in
    // anyway, it must not take every coverage check down with it.
    if (!area) {
      log.error('delivery zone with an unusable polygon skipped', { zone_id: row.id });
      continue;
    }
    zones.push({
      zoneId: row.id,
      storeId: row.store_id,
      store: { lon: row.store_lon, lat: row.store_lat },
      priority: row.priority,
      deliveryCost: row.delivery_cost,
      area,
      row,
    });
  }
  return points.map((p) => chooseServingZone(zones, p));
}

const servingStoreOutput = ({ zone: { row } }: ServingChoice<ServingZone>, lang: Lang) =>
  storeOutput(
    {
      id: row.store_id,
      name_ru: row.store_name_ru,
      name_en: row.store_name_en,
      address_ru: row.store_address_ru,
      address_en: row.store_address_en,
      lon: row.store_lon,
      lat: row.store_lat,
    },
    lang,
  );

// ------------------------------------------------------------------------------------------------
// The slot calendar

/** How long a materialised horizon is trusted before templates are looked at again. */
const CALENDAR_RECHECK_MS = 5 * 60_000;

/**
 * Makes sure the store's windows exist for the horizon before they are listed. Materialising is
 * idempotent but costs a planned INSERT; each instance does it once per store, kind and
 * store-local day, and again every few minutes so that template changes show up.
 */
async function ensureSlotCalendar(
  ctx: RequestContext<'listDeliverySlots' | 'listPickupSlots'>,
  store: { id: string; timezone: string },
  kind: 'delivery' | 'pickup',
  days: number,
): Promise<void> {
  const checked = ctx.deps.caches.slotCalendarChecked;
  const now = ctx.deps.clock.nowMs();
  const key = `${store.id}:${kind}:${days}:${localMoment(new Date(now), store.timezone).date}`;
  if ((checked.get(key) ?? 0) > now) return;
  await materializeSlots(ctx.deps.db, store.id, kind, days);
  for (const [k, until] of checked) if (until <= now) checked.delete(k);
  checked.set(key, now + CALENDAR_RECHECK_MS);
}

// ------------------------------------------------------------------------------------------------
// Geocoder failures and the request budget

/** A geocoder that failed or timed out is the spec's 502, never a 500. */
async function fromGeocoder<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    if (err instanceof GeocoderUnavailableError)
      throw badGateway('GEOCODER_UNAVAILABLE', 'Address search is temporarily unavailable; retry later');
    throw err;
  }
}

/** What the per-IP budget reads of any operation's context. */
type BudgetContext = Pick<RequestContext<OperationId>, 'deps' | 'clientIp'>;

function enforceRequestBudget(ctx: BudgetContext): void {
  const limiter = ctx.deps.caches.logisticsBudget;
  // The address honours the `trust proxy` setting (TRUST_PROXY_HOPS) behind a load balancer.
  const client = ctx.clientIp ?? 'unknown';
  const decision = limiter.take(client, ctx.deps.clock.nowMs());
  if (!decision.allowed) {
    throw tooManyRequests('Too many requests from this client; retry later', decision.retryAfterSeconds, {
      name: 'logistics-ip',
      quota: ctx.deps.config.logistics.requestsPerMinute,
      windowSeconds: 60,
    });
  }
}

/** Every handler of the map, with the per-IP budget checked before it runs. */
function withRequestBudget<T extends Record<string, (ctx: never) => unknown>>(handlers: T): T {
  return Object.fromEntries(
    Object.entries(handlers).map(([id, handler]) => [
      id,
      (ctx: BudgetContext) => {
        enforceRequestBudget(ctx);
        return (handler as (c: BudgetContext) => unknown)(ctx);
      },
    ]),
  ) as unknown as T;
}

// ------------------------------------------------------------------------------------------------

const handlers = {
  // GET /api/logistics/map/address-suggestions
  listAddressSuggestions: async (ctx) => {
    const cfg = ctx.deps.config.logistics.map;
    const query = normalizeAddressQuery(ctx.query.query);
    if (!isQueryLongEnough(query, cfg.searchMinLength)) {
      throw unprocessable('QUERY_TOO_SHORT', `Type at least ${cfg.searchMinLength} characters to search`);
    }
    const suggestions = await fromGeocoder(
      ctx.deps.geocoder.suggest({ query, near: { lon: ctx.query.lon, lat: ctx.query.lat }, limit: cfg.searchMaxResults, lang: ctx.lang }),
    );
    return { status: 200, body: suggestions };
  },

  // GET /api/logistics/map/config
  getMapConfig: async (ctx) => {
    const map = ctx.deps.config.logistics.map;
    return {
      status: 200,
      body: {
        enabled: map.enabled,
        map_public_token: map.publicToken,
        style_uri: map.styleUri,
        search_min_length: map.searchMinLength,
        search_max_results: map.searchMaxResults,
        search_debounce_ms: map.searchDebounceMs,
      },
    };
  },

  // POST /api/logistics/map/reverse-geocode
  reverseGeocodeLocation: async (ctx) => {
    const address = await fromGeocoder(
      ctx.deps.geocoder.reverse({
        point: { lon: ctx.body.lon, lat: ctx.body.lat },
        radiusMeters: ctx.deps.config.logistics.geocoder.reverseRadiusMeters,
        lang: ctx.lang,
      }),
    );
    return { status: 200, body: { address } };
  },

  // POST /api/logistics/stores/delivery/can-use-location
  checkCanUseLocation: async (ctx) => {
    const [choice] = await servingChoices(ctx.deps.db, [ctx.body], ctx.log);
    return { status: 200, body: choice ? choice.zone.storeId : null };
  },

  // POST /api/logistics/stores/delivery/check-location
  checkDeliveryLocation: async (ctx) => {
    const point = { lon: ctx.body.lon, lat: ctx.body.lat };
    const [choice] = await servingChoices(ctx.deps.db, [point], ctx.log);
    if (!choice) throw notFound('We do not deliver to this address yet', 'LOCATION_NOT_SERVED');
    return { status: 200, body: { store: servingStoreOutput(choice, ctx.lang), location: point, distance_km: roundKm(choice.distanceKm) } };
  },

  // POST /api/logistics/stores/delivery/check-multiply-locations
  checkMultipleDeliveryLocations: async (ctx) => {
    const items = ctx.body;
    const seen = new Set<string>();
    for (const item of items) {
      // One UUID in two spellings (case) is still one identifier.
      const key = item.uuid.toLowerCase();
      if (seen.has(key)) throw unprocessable('DUPLICATE_LOCATION_UUID', `uuid ${item.uuid} appears more than once`);
      seen.add(key);
    }
    const choices = await servingChoices(
      ctx.deps.db,
      items.map((i) => i.location),
      ctx.log,
    );
    const results = items.map((item, i) => {
      const choice = choices[i];
      const location = { lon: item.location.lon, lat: item.location.lat };
      return choice
        ? {
            uuid: item.uuid,
            location,
            is_served: true,
            store: servingStoreOutput(choice, ctx.lang),
            zone_id: choice.zone.zoneId,
            distance_km: roundKm(choice.distanceKm),
          }
        : { uuid: item.uuid, location, is_served: false, store: null, zone_id: null, distance_km: null };
    });
    return { status: 200, body: { results } };
  },

  // GET /api/logistics/stores/delivery/order-preferences
  getDeliveryOrderPreferences: async (ctx) => {
    const store = await requireStore(ctx);
    const terms = await findDeliveryTerms(ctx.deps.db, store.id);
    // requireStore found it active a moment ago; gone now means it was switched off meanwhile.
    if (!terms) throw unprocessable('STORE_NOT_FOUND', 'No active store has this X-Store-Id');
    return { status: 200, body: deliveryPreferences(terms, ctx.deps.clock.now()) };
  },

  // GET /api/logistics/stores/delivery/slots
  listDeliverySlots: async (ctx) => {
    const store = await requireStore(ctx);
    if (!store.accepts_delivery) return { status: 200, body: [] };
    // The validator's `format: date` admits year 0000, which PostgreSQL has no date for; like any
    // date before today it has no windows.
    const date = ctx.query.date ?? null;
    if (date !== null && date < '0001-01-01') return { status: 200, body: [] };
    await ensureSlotCalendar(ctx, store, 'delivery', store.delivery_slot_days);
    const rows = await listDeliverySlots(ctx.deps.db, store.id, date);
    return { status: 200, body: rows.map(deliverySlotOutput) };
  },

  // GET /api/logistics/stores/delivery/zones
  listDeliveryZones: async (ctx) => {
    const zones = await listActiveDeliveryZones(ctx.deps.db);
    return { status: 200, body: zones.map((z) => zoneOutput(z, ctx.lang)) };
  },

  // GET /api/logistics/stores/pickup/
  listPickupStores: async (ctx) => {
    const collator = new Intl.Collator(ctx.lang);
    const stores = (await listPickupStores(ctx.deps.db))
      .map((s) => pickupStoreOutput(s, ctx.lang))
      .sort((a, b) => collator.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { status: 200, body: stores };
  },

  // GET /api/logistics/stores/pickup/order-preferences
  getPickupOrderPreferences: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: { min_order_amount: store.pickup_min_order_amount } };
  },

  // GET /api/logistics/stores/pickup/slots
  listPickupSlots: async (ctx) => {
    const store = await requireStore(ctx);
    if (!store.accepts_pickup) return { status: 200, body: [] };
    // Today and the next two days: the three `type`s a pickup slot can have.
    await ensureSlotCalendar(ctx, store, 'pickup', 3);
    const rows = await listPickupSlots(ctx.deps.db, store.id);
    const choosable = rows.filter(
      (row) =>
        slotAvailability(
          { isClosed: row.is_closed, cutoffAt: cutoffOf(row.starts_at, row.lead_minutes), capacity: row.capacity, reserved: row.reserved },
          row.db_now,
        ).isAvailable,
    );
    const body = choosable
      .map((row) => {
        const start = localMoment(row.starts_at, row.timezone);
        const end = localMoment(row.ends_at, row.timezone);
        return {
          id: row.id,
          type: row.day_offset as 0 | 1 | 2,
          start_time: `${start.time}${start.offset}`,
          end_time: `${end.time}${end.offset}`,
        };
      })
      .sort(
        (a, b) => a.type - b.type || (a.start_time < b.start_time ? -1 : a.start_time > b.start_time ? 1 : 0) || (a.id < b.id ? -1 : 1),
      );
    return { status: 200, body };
  },

  // GET /api/logistics/stores/pickup/{store_id}
  getPickupStore: async (ctx) => {
    const store = await findPickupStore(ctx.deps.db, ctx.path.store_id);
    if (!store) throw notFound('No active store that offers pickup has this id', 'STORE_NOT_FOUND');
    return { status: 200, body: pickupStoreDetail(store, ctx.lang) };
  },
} satisfies Partial<HandlerMap>;

export const logisticsHandlers = withRequestBudget(handlers);

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const logisticsSteps: StepsMap = {
  listAddressSuggestions: { varyBy: ['Accept-Language'] },
  reverseGeocodeLocation: { varyBy: ['Accept-Language'] },
  checkDeliveryLocation: { varyBy: ['Accept-Language'] },
  checkMultipleDeliveryLocations: { varyBy: ['Accept-Language'] },
  listDeliveryZones: { varyBy: ['Accept-Language'] },
  listPickupStores: { varyBy: ['Accept-Language'] },
  getPickupStore: { varyBy: ['Accept-Language'] },
  getDeliveryOrderPreferences: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listDeliverySlots: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  getPickupOrderPreferences: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listPickupSlots: { varyBy: ['X-Store-Id', 'Accept-Language'] },
};
