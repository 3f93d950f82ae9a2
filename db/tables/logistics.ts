// Tables of the logistics migration (2026_11_22_0004): store terms, opening hours, express
// delivery, delivery zones, slots and holds, the address gazetteer.
import type { ColumnType, Generated } from 'kysely';
import type { Decimal, Json, Timestamp } from './types.js';

/** numeric with a column default: optional on insert (wrapping Decimal in Generated<> would nest ColumnTypes). */
type DecimalWithDefault = ColumnType<string, string | number | undefined, string | number>;

// The logistics migration adds columns to `stores` (created by the foundation migration); they are
// declared here, next to the migration that owns them, by augmenting the foundation's interface.
declare module './foundation.js' {
  interface StoresTable {
    accepts_delivery: Generated<boolean>;
    accepts_pickup: Generated<boolean>;
    work_time_ru: string | null;
    work_time_en: string | null;
    contacts: string[] | null;
    image_original: string | null;
    image_listing: string | null;
    delivery_min_order_amount: DecimalWithDefault;
    delivery_cost: DecimalWithDefault;
    delivery_free_amount_threshold: DecimalWithDefault;
    delivery_lead_minutes: Generated<number>;
    delivery_slot_days: Generated<number>;
    pickup_min_order_amount: DecimalWithDefault;
    pickup_lead_minutes: Generated<number>;
  }
}

/** ISO weekday, 1 = Monday ... 7 = Sunday. */
export type IsoWeekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;
export type SlotKind = 'delivery' | 'pickup';
export type GazetteerCategory = 'address' | 'street' | 'poi' | 'locality';

export interface StoreWorkingHoursTable {
  store_id: string;
  weekday: number;
  is_closed: Generated<boolean>;
  /** "HH:MM:SS", store-local. */
  opens_at: string | null;
  closes_at: string | null;
}

export interface StoreClosuresTable {
  store_id: string;
  /** Store-local date, "YYYY-MM-DD". */
  closed_on: string;
  reason: string | null;
}

export interface StoreExpressDeliveryTable {
  store_id: string;
  minutes: number;
  cost: Decimal;
  max_items_count: number | null;
  is_accepting: Generated<boolean>;
  updated_at: Timestamp;
}

export interface StoreExpressScheduleTable {
  store_id: string;
  weekday: number;
  start_time: string;
  end_time: string;
  is_active: Generated<boolean>;
}

export interface DeliveryZonesTable {
  id: Generated<string>;
  store_id: string;
  name_ru: string;
  name_en: string;
  /** GeoJSON Polygon or MultiPolygon, [lon, lat]. */
  polygon: Json<{ type: 'Polygon' | 'MultiPolygon'; coordinates: unknown[] }>;
  bbox_min_lon: ColumnType<number, never, never>;
  bbox_min_lat: ColumnType<number, never, never>;
  bbox_max_lon: ColumnType<number, never, never>;
  bbox_max_lat: ColumnType<number, never, never>;
  priority: Generated<number>;
  delivery_cost: Decimal;
  free_amount_threshold: Decimal;
  min_order_amount: DecimalWithDefault;
  is_active: Generated<boolean>;
  created_at: Timestamp;
}

export interface SlotTemplatesTable {
  id: Generated<string>;
  store_id: string;
  kind: SlotKind;
  weekday: number;
  start_time: string;
  end_time: string;
  capacity: number;
  is_active: Generated<boolean>;
}

export interface StoreSlotsTable {
  id: string;
  store_id: string;
  kind: SlotKind;
  /** Store-local date of the window, "YYYY-MM-DD". */
  slot_date: string;
  starts_at: Timestamp;
  ends_at: Timestamp;
  capacity: number;
  reserved: Generated<number>;
  is_closed: Generated<boolean>;
  created_at: Timestamp;
}

export interface SlotHoldsTable {
  order_id: string;
  slot_id: string;
  kind: SlotKind;
  created_at: Timestamp;
}

export interface GazetteerEntriesTable {
  id: Generated<string>;
  category: GazetteerCategory;
  street_id: string | null;
  house_number: string | null;
  title_ru: string;
  title_en: string;
  place_name_ru: string | null;
  place_name_en: string | null;
  search_aliases: Generated<string>;
  lon: number;
  lat: number;
  search_text: ColumnType<string, never, never>;
}

export interface LogisticsTables {
  store_working_hours: StoreWorkingHoursTable;
  store_closures: StoreClosuresTable;
  store_express_delivery: StoreExpressDeliveryTable;
  store_express_schedule: StoreExpressScheduleTable;
  delivery_zones: DeliveryZonesTable;
  slot_templates: SlotTemplatesTable;
  store_slots: StoreSlotsTable;
  slot_holds: SlotHoldsTable;
  gazetteer_entries: GazetteerEntriesTable;
}
