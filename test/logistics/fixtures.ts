// Factories for logistics tests: stores, zones and slots with overrides, written straight into the
// test file's own database. Test stores live far from the demo city (around lon 10, lat 10 by
// default) so they never change which demo store serves a demo point.
import { randomUUID } from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import type { Executor } from '../../db/executor.js';
import { insertDeliveryZones, type NewDeliveryZone } from '../../db/queries/logistics.js';
import type { DB } from '../../db/schema.js';
import type { SlotKind } from '../../db/tables/logistics.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { localMoment } from '../../domain/time/local-time.js';

export const demoStore = (code: 'MSK-TVERSKAYA' | 'MSK-ARBAT' | 'MSK-KHAMOVNIKI') => DEMO_STORES.find((s) => s.code === code)!;

export async function createStore(db: Executor, over: Partial<Insertable<DB['stores']>> = {}): Promise<string> {
  const id = over.id ?? randomUUID();
  await db
    .insertInto('stores')
    .values({
      id,
      code: `TEST-${id}`,
      name_ru: `Тестовый ${id.slice(0, 8)}`,
      name_en: `Test ${id.slice(0, 8)}`,
      address_ru: null,
      address_en: null,
      lon: 10,
      lat: 10,
      ...over,
    })
    .execute();
  return id;
}

export const square = (minLon: number, minLat: number, maxLon: number, maxLat: number) => [
  [minLon, minLat],
  [maxLon, minLat],
  [maxLon, maxLat],
  [minLon, maxLat],
  [minLon, minLat],
];

export async function createZone(db: Executor, over: Partial<NewDeliveryZone> & Pick<NewDeliveryZone, 'store_id'>): Promise<string> {
  const id = over.id ?? randomUUID();
  await insertDeliveryZones(db, [
    {
      name_ru: 'Тестовая зона',
      name_en: 'Test zone',
      polygon: { type: 'Polygon', coordinates: [square(9.9, 9.9, 10.1, 10.1)] },
      priority: 0,
      delivery_cost: '100.00',
      free_amount_threshold: '1000.00',
      min_order_amount: '0.00',
      ...over,
      id,
    },
  ]);
  return id;
}

export interface SlotSpec {
  storeId: string;
  kind?: SlotKind;
  /** Start relative to now, in minutes (negative: already started). */
  startsInMinutes: number;
  lengthMinutes?: number;
  capacity?: number;
  reserved?: number;
  isClosed?: boolean;
}

/** A window starting `startsInMinutes` from the database's now, dated in the store's time zone. */
export async function createSlot(db: Executor, spec: SlotSpec): Promise<string> {
  const id = randomUUID();
  const { timezone } = await db.selectFrom('stores').select('timezone').where('id', '=', spec.storeId).executeTakeFirstOrThrow();
  // Whole minutes from a whole minute: windows start on the minute, as real ones do.
  const startsAt = sql<Date>`(date_trunc('minute', now()) + make_interval(mins => ${spec.startsInMinutes}))`;
  await db
    .insertInto('store_slots')
    .values({
      id,
      store_id: spec.storeId,
      kind: spec.kind ?? 'delivery',
      slot_date: sql<string>`(${startsAt} AT TIME ZONE ${timezone}::text)::date`,
      starts_at: startsAt,
      ends_at: sql<Date>`${startsAt} + make_interval(mins => ${spec.lengthMinutes ?? 120})`,
      capacity: spec.capacity ?? 5,
      reserved: spec.reserved ?? 0,
      is_closed: spec.isClosed ?? false,
    })
    .execute();
  return id;
}

/** The store-local date `days` after today in Moscow, as the API writes dates. */
export function moscowDate(days = 0): string {
  const today = localMoment(new Date(), 'Europe/Moscow').date;
  const d = new Date(`${today}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}
