// Logistics use cases: map settings and address search (the geocoder), delivery coverage (the
// serving-store rule), delivery and pickup terms and windows, pickup stores, and the per-client
// request budget every public logistics read counts against.
import {
  findDeliveryTerms,
  findPickupStore,
  listActiveDeliveryZones,
  listDeliverySlots,
  listPickupSlots,
  listPickupStores,
  listServingZoneCandidates,
  materializeSlots,
  type ServingZoneRow,
} from '../db/queries/logistics.js';
import type { Executor } from '../db/executor.js';
import { isQueryLongEnough, normalizeAddressQuery } from '../domain/geo/address-search.js';
import { EDGE_TOLERANCE_DEG, parseArea, roundKm, type Point } from '../domain/geo/geometry.js';
import { chooseServingZone, type ServingChoice, type ZoneCandidate } from '../domain/geo/serving-store.js';
import { localMoment } from '../domain/time/local-time.js';
import type { Logger } from '../platform/logger.js';
import { GeocoderUnavailableError } from '../platform/providers/geocoder/index.js';
import type { StoreRow } from './caches.js';
import type { AppDeps } from './deps.js';
import { badGateway, notFound, tooManyRequests, unprocessable } from './errors.js';
import {
  deliveryPreferencesView,
  deliverySlotView,
  deliveryZoneView,
  pickupSlotView,
  pickupStoreDetailView,
  pickupStoreView,
  servingStoreView,
  slotAvailabilityOf,
} from './presenters/logistics.js';

type Lang = 'ru' | 'en';

// ---- the request budget ------------------------------------------------------------------------

/**
 * Counts a call of a public logistics operation against its client's per-minute budget (429 when
 * spent): the geocoder behind them is paid per request. `clientIp` honours the `trust proxy`
 * setting (TRUST_PROXY_HOPS) behind a load balancer.
 */
export function takeRequestBudget(deps: Pick<AppDeps, 'caches' | 'clock' | 'config'>, clientIp: string | undefined): void {
  const decision = deps.caches.logisticsBudget.take(clientIp ?? 'unknown', deps.clock.nowMs());
  if (!decision.allowed) {
    throw tooManyRequests('Too many requests from this client; retry later', decision.retryAfterSeconds, {
      name: 'logistics-ip',
      quota: deps.config.logistics.requestsPerMinute,
      windowSeconds: 60,
    });
  }
}

// ---- map and address search --------------------------------------------------------------------

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

export function mapConfig(deps: Pick<AppDeps, 'config'>) {
  const map = deps.config.logistics.map;
  return {
    enabled: map.enabled,
    map_public_token: map.publicToken,
    style_uri: map.styleUri,
    search_min_length: map.searchMinLength,
    search_max_results: map.searchMaxResults,
    search_debounce_ms: map.searchDebounceMs,
  };
}

export async function suggestAddresses(deps: Pick<AppDeps, 'config' | 'geocoder'>, text: string, near: Point, lang: Lang) {
  const cfg = deps.config.logistics.map;
  const query = normalizeAddressQuery(text);
  if (!isQueryLongEnough(query, cfg.searchMinLength)) {
    throw unprocessable('QUERY_TOO_SHORT', `Type at least ${cfg.searchMinLength} characters to search`);
  }
  return fromGeocoder(deps.geocoder.suggest({ query, near, limit: cfg.searchMaxResults, lang }));
}

export async function reverseGeocode(deps: Pick<AppDeps, 'config' | 'geocoder'>, point: Point, lang: Lang) {
  const address = await fromGeocoder(
    deps.geocoder.reverse({ point, radiusMeters: deps.config.logistics.geocoder.reverseRadiusMeters, lang }),
  );
  return { address };
}

// ---- delivery coverage -------------------------------------------------------------------------

type ServingZone = ZoneCandidate & { row: ServingZoneRow };

/** The serving-store rule's choice for each point (null where no zone serves it), one query for all. */
async function servingChoices(db: Executor, points: readonly Point[], log: Logger): Promise<(ServingChoice<ServingZone> | null)[]> {
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

/** The id of the store that delivers to the point, or null. */
export async function servingStoreId(deps: Pick<AppDeps, 'db'>, point: Point, log: Logger): Promise<string | null> {
  const [choice] = await servingChoices(deps.db, [point], log);
  return choice ? choice.zone.storeId : null;
}

export async function checkDeliveryLocation(deps: Pick<AppDeps, 'db'>, point: Point, lang: Lang, log: Logger) {
  const location = { lon: point.lon, lat: point.lat };
  const [choice] = await servingChoices(deps.db, [location], log);
  if (!choice) throw notFound('We do not deliver to this address yet', 'LOCATION_NOT_SERVED');
  return { store: servingStoreView(choice.zone.row, lang), location, distance_km: roundKm(choice.distanceKm) };
}

export async function checkDeliveryLocations(
  deps: Pick<AppDeps, 'db'>,
  items: readonly { uuid: string; location: Point }[],
  lang: Lang,
  log: Logger,
) {
  const seen = new Set<string>();
  for (const item of items) {
    // One UUID in two spellings (case) is still one identifier.
    const key = item.uuid.toLowerCase();
    if (seen.has(key)) throw unprocessable('DUPLICATE_LOCATION_UUID', `uuid ${item.uuid} appears more than once`);
    seen.add(key);
  }
  const choices = await servingChoices(
    deps.db,
    items.map((i) => i.location),
    log,
  );
  const results = items.map((item, i) => {
    const choice = choices[i];
    const location = { lon: item.location.lon, lat: item.location.lat };
    return choice
      ? {
          uuid: item.uuid,
          location,
          is_served: true,
          store: servingStoreView(choice.zone.row, lang),
          zone_id: choice.zone.zoneId,
          distance_km: roundKm(choice.distanceKm),
        }
      : { uuid: item.uuid, location, is_served: false, store: null, zone_id: null, distance_km: null };
  });
  return { results };
}

export async function deliveryZones(deps: Pick<AppDeps, 'db'>, lang: Lang) {
  return (await listActiveDeliveryZones(deps.db)).map((z) => deliveryZoneView(z, lang));
}

export async function deliveryPreferences(deps: Pick<AppDeps, 'db' | 'clock'>, storeId: string) {
  const terms = await findDeliveryTerms(deps.db, storeId);
  // The caller found the store active a moment ago; gone now means it was switched off meanwhile.
  if (!terms) throw unprocessable('STORE_NOT_FOUND', 'No active store has this X-Store-Id');
  return deliveryPreferencesView(terms, deps.clock.now());
}

// ---- the slot calendar -------------------------------------------------------------------------

/** How long a materialised horizon is trusted before templates are looked at again. */
const CALENDAR_RECHECK_MS = 5 * 60_000;

type SlotDeps = Pick<AppDeps, 'db' | 'clock' | 'caches'>;

/**
 * Makes sure the store's windows exist for the horizon before they are listed. Materialising is
 * idempotent but costs a planned INSERT; each instance does it once per store, kind and
 * store-local day, and again every few minutes so that template changes show up.
 */
async function ensureSlotCalendar(deps: SlotDeps, store: StoreRow, kind: 'delivery' | 'pickup', days: number): Promise<void> {
  const checked = deps.caches.slotCalendarChecked;
  const now = deps.clock.nowMs();
  const key = `${store.id}:${kind}:${days}:${localMoment(new Date(now), store.timezone).date}`;
  if ((checked.get(key) ?? 0) > now) return;
  await materializeSlots(deps.db, store.id, kind, days);
  for (const [k, until] of checked) if (until <= now) checked.delete(k);
  checked.set(key, now + CALENDAR_RECHECK_MS);
}

/** The store's delivery windows of its horizon (or of `date` only), earliest first. */
export async function deliverySlots(deps: SlotDeps, store: StoreRow, date: string | null) {
  if (!store.accepts_delivery) return [];
  // The validator's `format: date` admits year 0000, which PostgreSQL has no date for; like any
  // date before today it has no windows.
  if (date !== null && date < '0001-01-01') return [];
  await ensureSlotCalendar(deps, store, 'delivery', store.delivery_slot_days);
  return (await listDeliverySlots(deps.db, store.id, date)).map(deliverySlotView);
}

/** The pickup windows that can still be chosen, by day (`type`), then start. */
export async function pickupSlots(deps: SlotDeps, store: StoreRow) {
  if (!store.accepts_pickup) return [];
  // Today and the next two days: the three `type`s a pickup slot can have.
  await ensureSlotCalendar(deps, store, 'pickup', 3);
  const rows = await listPickupSlots(deps.db, store.id);
  return rows
    .filter((row) => slotAvailabilityOf(row).isAvailable)
    .map(pickupSlotView)
    .sort((a, b) => a.type - b.type || (a.start_time < b.start_time ? -1 : a.start_time > b.start_time ? 1 : 0) || (a.id < b.id ? -1 : 1));
}

// ---- pickup stores -----------------------------------------------------------------------------

/** The stores that offer pickup, by name in the reader's language. */
export async function pickupStores(deps: Pick<AppDeps, 'db'>, lang: Lang) {
  const collator = new Intl.Collator(lang);
  return (await listPickupStores(deps.db))
    .map((s) => pickupStoreView(s, lang))
    .sort((a, b) => collator.compare(a.name, b.name) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export async function pickupStore(deps: Pick<AppDeps, 'db'>, storeId: string, lang: Lang) {
  const store = await findPickupStore(deps.db, storeId);
  if (!store) throw notFound('No active store that offers pickup has this id', 'STORE_NOT_FOUND');
  return pickupStoreDetailView(store, lang);
}
