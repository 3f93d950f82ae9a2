// Row -> API mappers of the Logistics area, one per resource: stores (in a listing, served from a
// zone, and a pickup store's screen), delivery zones, delivery terms with the express offer,
// delivery and pickup windows. Times are the store's local ones, written with their UTC offset.
import type { components } from '../../generated/api.test.js';
import type {
  DeliverySlotRow,
  DeliveryTermsRow,
  DeliveryZoneRow,
  PickupSlotRow,
  PickupStoreDetailRow,
  PickupStoreRow,
  ServingZoneRow,
} from '../../db/queries/logistics.js';
import { cutoffOf, slotAvailability } from '../../domain/orders/slot-availability.js';
import { localDateTime, localMoment, timeWithOffset } from '../../domain/time/local-time.js';
import { fullWeek, isExpressAvailableAt, isOpenAt } from '../../domain/time/store-hours.js';

type Schemas = components['schemas'];
type Lang = 'ru' | 'en';
const byLang = (lang: Lang, ru: string, en: string) => (lang === 'ru' ? ru : en);

interface StoreFields {
  id: string;
  name_ru: string;
  name_en: string;
  address_ru: string | null;
  address_en: string | null;
  lon: number;
  lat: number;
}

const storeView = (s: StoreFields, lang: Lang) => ({
  id: s.id,
  name: byLang(lang, s.name_ru, s.name_en),
  location: { lon: s.lon, lat: s.lat },
  address: (lang === 'ru' ? s.address_ru : s.address_en) ?? null,
});

/** The store that serves a zone, from the store columns its candidate row carries. */
export const servingStoreView = (row: ServingZoneRow, lang: Lang) =>
  storeView(
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

export const pickupStoreView = (s: PickupStoreRow, lang: Lang) => ({
  ...storeView(s, lang),
  work_time: (lang === 'ru' ? s.work_time_ru : s.work_time_en) ?? null,
  contacts: s.contacts?.length ? s.contacts : null,
});

export function pickupStoreDetailView(s: PickupStoreDetailRow, lang: Lang) {
  const now = localMoment(s.db_now, s.timezone);
  const week = fullWeek(
    s.working_hours.map((h) => ({ weekday: h.weekday, isClosed: h.is_closed, opensAt: h.opens_at, closesAt: h.closes_at })),
  );
  return {
    ...pickupStoreView(s, lang),
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

export const deliveryZoneView = (z: DeliveryZoneRow, lang: Lang) => ({
  id: z.id,
  store_id: z.store_id,
  name: byLang(lang, z.name_ru, z.name_en),
  polygon: z.polygon,
  priority: z.priority,
  delivery_cost: z.delivery_cost,
  free_amount_threshold: z.free_amount_threshold,
  min_order_amount: z.min_order_amount,
});

/** The express terms of a store. */
type ExpressTerms = Pick<
  DeliveryTermsRow,
  'timezone' | 'express_minutes' | 'express_cost' | 'express_max_items_count' | 'express_is_accepting' | 'express_schedule'
>;

/**
 * The store's express offer at `now`, or null when it has none: whether it can be ordered now
 * (accepting, inside an active window of the store-local weekday) and its weekly windows. The one
 * place express availability is decided from the terms: the order preferences show it, and
 * checkout takes an express order only when `is_available`.
 */
export function expressDeliveryView(t: ExpressTerms, now: Date): Schemas['ExpressDeliveryOutput'] | null {
  if (t.express_minutes === null || t.express_cost === null) return null;
  const local = localMoment(now, t.timezone);
  const schedule = t.express_schedule.map((w) => ({
    weekday: w.weekday,
    startTime: w.start_time,
    endTime: w.end_time,
    isActive: w.is_active,
  }));
  return {
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
}

export function deliveryPreferencesView(t: DeliveryTermsRow, now: Date) {
  return {
    store_id: t.id,
    timezone: t.timezone,
    min_order_amount: t.delivery_min_order_amount,
    delivery_cost: t.delivery_cost,
    standard: { free_amount_threshold: t.delivery_free_amount_threshold },
    express: expressDeliveryView(t, now),
    slot_days: t.delivery_slot_days,
  };
}

/** Whether a window can still be chosen, and why not (by the database clock of its row). */
export const slotAvailabilityOf = (row: DeliverySlotRow | PickupSlotRow) =>
  slotAvailability(
    { isClosed: row.is_closed, cutoffAt: cutoffOf(row.starts_at, row.lead_minutes), capacity: row.capacity, reserved: row.reserved },
    row.db_now,
  );

export function deliverySlotView(row: DeliverySlotRow) {
  const availability = slotAvailabilityOf(row);
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

export function pickupSlotView(row: PickupSlotRow) {
  const start = localMoment(row.starts_at, row.timezone);
  const end = localMoment(row.ends_at, row.timezone);
  return {
    id: row.id,
    type: row.day_offset as 0 | 1 | 2,
    start_time: `${start.time}${start.offset}`,
    end_time: `${end.time}${end.offset}`,
  };
}
