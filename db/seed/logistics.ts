// Demo logistics of one city (Moscow): the demo stores' terms, hours and express offer; delivery
// zones that overlap (so the serving-store rule has work to do), a MultiPolygon with a disjoint
// part, a hole (the Kremlin) and an inactive zone; weekly slot templates with two weeks of
// delivery windows and three days of pickup windows from today; the address gazetteer (streets,
// houses, places) that the default geocoder searches. Deterministic: fixed ids (stableUuid),
// a seeded PRNG, dates only relative to today.
import { sql, type Insertable, type Transaction } from 'kysely';
import { insertDeliveryZones, insertGazetteerEntries, materializeSlots, type NewDeliveryZone } from '../queries/logistics.js';
import type { DB } from '../schema.js';
import type { GazetteerEntriesTable } from '../tables/logistics.js';
import { stableUuid } from './ids.js';
import { DEMO_STORES } from './stores.js';

const storeId = (code: string) => {
  const store = DEMO_STORES.find((s) => s.code === code);
  if (!store) throw new Error(`no demo store ${code}`);
  return store.id;
};
const TVERSKAYA = storeId('MSK-TVERSKAYA');
const ARBAT = storeId('MSK-ARBAT');
const KHAMOVNIKI = storeId('MSK-KHAMOVNIKI');

/** mulberry32: a small deterministic PRNG, so "random" capacities are the same on every machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ------------------------------------------------------------------------------------------------
// Stores

type Hours = { open: string; close: string } | 'closed';
const week = (weekdays: Hours, saturday: Hours = weekdays, sunday: Hours = saturday): Hours[] => [
  weekdays,
  weekdays,
  weekdays,
  weekdays,
  weekdays,
  saturday,
  sunday,
];

const STORE_TERMS = [
  {
    id: TVERSKAYA,
    work_time_ru: 'пн–пт 08:00–23:00, сб–вс 09:00–23:00',
    work_time_en: 'Mon–Fri 08:00–23:00, Sat–Sun 09:00–23:00',
    contacts: ['+74950000001', 'tverskaya@grocery.example'],
    image_original: 'https://cdn.grocery.example/stores/msk-tverskaya/original.jpg',
    image_listing: 'https://cdn.grocery.example/stores/msk-tverskaya/listing.jpg',
    delivery_min_order_amount: '1000.00',
    delivery_cost: '199.00',
    delivery_free_amount_threshold: '3000.00',
    pickup_min_order_amount: '500.00',
    hours: week({ open: '08:00', close: '23:00' }, { open: '09:00', close: '23:00' }),
  },
  {
    id: ARBAT,
    work_time_ru: 'круглосуточно',
    work_time_en: '24/7',
    contacts: ['+74950000002'],
    image_original: 'https://cdn.grocery.example/stores/msk-arbat/original.jpg',
    image_listing: 'https://cdn.grocery.example/stores/msk-arbat/listing.jpg',
    delivery_min_order_amount: '800.00',
    delivery_cost: '149.00',
    delivery_free_amount_threshold: '2500.00',
    pickup_min_order_amount: '300.00',
    // Opening equal to closing: around the clock.
    hours: week({ open: '00:00', close: '00:00' }),
  },
  {
    id: KHAMOVNIKI,
    work_time_ru: 'пн–сб 08:00–01:00, вс — выходной',
    work_time_en: 'Mon–Sat 08:00–01:00, Sun closed',
    contacts: ['+74950000003', 'khamovniki@grocery.example'],
    image_original: null,
    image_listing: null,
    delivery_min_order_amount: '500.00',
    delivery_cost: '99.00',
    delivery_free_amount_threshold: '2000.00',
    pickup_min_order_amount: '0.00',
    // Closes after midnight; Sunday closed.
    hours: week({ open: '08:00', close: '01:00' }, { open: '08:00', close: '01:00' }, 'closed'),
  },
];

const EXPRESS = [
  {
    store_id: TVERSKAYA,
    minutes: 45,
    cost: '299.00',
    max_items_count: 30,
    schedule: week({ open: '09:00', close: '21:00' }),
    sundayActive: false,
  },
  {
    store_id: ARBAT,
    minutes: 60,
    cost: '249.00',
    max_items_count: null,
    schedule: week({ open: '08:00', close: '22:00' }),
    sundayActive: true,
  },
  // Khamovniki offers no express delivery.
];

async function seedStoreTerms(trx: Transaction<DB>): Promise<void> {
  for (const { id, hours, ...terms } of STORE_TERMS) {
    await trx.updateTable('stores').set(terms).where('id', '=', id).execute();
    await trx
      .insertInto('store_working_hours')
      .values(
        hours.map((h, i) =>
          h === 'closed'
            ? { store_id: id, weekday: i + 1, is_closed: true, opens_at: null, closes_at: null }
            : { store_id: id, weekday: i + 1, is_closed: false, opens_at: h.open, closes_at: h.close },
        ),
      )
      .execute();
  }
  // A stock-taking day five days from now: Khamovniki shows closed and offers no slots then.
  await trx
    .insertInto('store_closures')
    .values({ store_id: KHAMOVNIKI, closed_on: sql<string>`(now() AT TIME ZONE 'Europe/Moscow')::date + 5`, reason: 'stock-taking' })
    .execute();
  for (const { schedule, sundayActive, ...express } of EXPRESS) {
    await trx.insertInto('store_express_delivery').values(express).execute();
    await trx
      .insertInto('store_express_schedule')
      .values(
        schedule.map((h, i) => ({
          store_id: express.store_id,
          weekday: i + 1,
          start_time: h === 'closed' ? '00:00' : h.open,
          end_time: h === 'closed' ? '00:01' : h.close,
          is_active: h !== 'closed' && (i < 6 || sundayActive),
        })),
      )
      .execute();
  }
}

// ------------------------------------------------------------------------------------------------
// Delivery zones ([lon, lat]; rectangles are enough to show every rule)

const box = (minLon: number, minLat: number, maxLon: number, maxLat: number) => [
  [minLon, minLat],
  [maxLon, minLat],
  [maxLon, maxLat],
  [minLon, maxLat],
  [minLon, minLat],
];

const ZONES: (NewDeliveryZone & { code: string })[] = [
  {
    code: 'TVERSKAYA-CENTRE',
    store_id: TVERSKAYA,
    name_ru: 'Центр (Тверская)',
    name_en: 'Centre (Tverskaya)',
    // The Kremlin is a hole: no delivery inside its walls.
    polygon: { type: 'Polygon', coordinates: [box(37.585, 55.745, 37.65, 55.78), box(37.6125, 55.7495, 37.6215, 55.7535)] },
    priority: 10,
    delivery_cost: '199.00',
    free_amount_threshold: '3000.00',
    min_order_amount: '1000.00',
  },
  {
    code: 'TVERSKAYA-PATRIARSHIE',
    store_id: TVERSKAYA,
    name_ru: 'Патриаршие пруды',
    name_en: "Patriarch's Ponds",
    // Inside the overlap of the two centre zones; its higher priority wins although it costs more.
    polygon: { type: 'Polygon', coordinates: [box(37.588, 55.758, 37.6, 55.766)] },
    priority: 20,
    delivery_cost: '249.00',
    free_amount_threshold: '3500.00',
    min_order_amount: '1000.00',
  },
  {
    code: 'ARBAT-WEST-CENTRE',
    store_id: ARBAT,
    name_ru: 'Запад центра (Арбат)',
    name_en: 'West centre (Arbat)',
    // Overlaps Tverskaya's centre zone west of 37.605 at the same priority: cheaper, so it serves there.
    polygon: { type: 'Polygon', coordinates: [box(37.57, 55.74, 37.605, 55.765)] },
    priority: 10,
    delivery_cost: '149.00',
    free_amount_threshold: '2500.00',
    min_order_amount: '800.00',
  },
  {
    code: 'ARBAT-DOROGOMILOVO',
    store_id: ARBAT,
    name_ru: 'Дорогомилово (скоро)',
    name_en: 'Dorogomilovo (coming soon)',
    polygon: { type: 'Polygon', coordinates: [box(37.53, 55.735, 37.568, 55.752)] },
    priority: 10,
    delivery_cost: '199.00',
    free_amount_threshold: '3000.00',
    min_order_amount: '1000.00',
    is_active: false,
  },
  {
    code: 'KHAMOVNIKI',
    store_id: KHAMOVNIKI,
    name_ru: 'Хамовники и Лужники',
    name_en: 'Khamovniki and Luzhniki',
    // Two disjoint parts; the northern strip overlaps Arbat's zone, which wins by priority.
    polygon: {
      type: 'MultiPolygon',
      coordinates: [[box(37.568, 55.715, 37.6, 55.742)], [box(37.538, 55.703, 37.565, 55.7185)]],
    },
    priority: 5,
    delivery_cost: '99.00',
    free_amount_threshold: '2000.00',
    min_order_amount: '500.00',
  },
];
export const DEMO_ZONES = ZONES.map((z) => ({ ...z, id: stableUuid(`zone:${z.code}`) }));

// ------------------------------------------------------------------------------------------------
// Slots

const DELIVERY_WINDOWS = ['08:00', '10:00', '12:00', '14:00', '16:00', '18:00', '20:00'];
const PICKUP_WINDOWS = ['10:00', '12:00', '14:00', '16:00', '18:00', '20:00'];
const plusTwoHours = (t: string) => `${String(Number(t.slice(0, 2)) + 2).padStart(2, '0')}:${t.slice(3)}`;

async function seedSlots(trx: Transaction<DB>): Promise<void> {
  const random = prng(20261122);
  const templates: Insertable<DB['slot_templates']>[] = [];
  for (const store of [TVERSKAYA, ARBAT, KHAMOVNIKI]) {
    for (let weekday = 1; weekday <= 7; weekday++) {
      // Sundays start later; Khamovniki is closed on Sundays.
      if (store === KHAMOVNIKI && weekday === 7) continue;
      for (const start of DELIVERY_WINDOWS) {
        if (weekday === 7 && start === '08:00') continue;
        // Evenings are busiest: more couriers, more capacity.
        const base = start >= '18:00' ? 8 : 4;
        templates.push({
          store_id: store,
          kind: 'delivery',
          weekday,
          start_time: start,
          end_time: plusTwoHours(start),
          capacity: base + Math.floor(random() * 5),
        });
      }
      for (const start of PICKUP_WINDOWS) {
        templates.push({
          store_id: store,
          kind: 'pickup',
          weekday,
          start_time: start,
          end_time: plusTwoHours(start),
          capacity: 10 + Math.floor(random() * 11),
        });
      }
    }
  }
  await trx.insertInto('slot_templates').values(templates).execute();
  for (const store of [TVERSKAYA, ARBAT, KHAMOVNIKI]) {
    await materializeSlots(trx, store, 'delivery', 14);
    await materializeSlots(trx, store, 'pickup', 3);
  }
  // Windows switched off by the stores: stock-taking at Tverskaya the morning after tomorrow,
  // no courier for Arbat's late window in three days.
  const closeWindows = (store: string, dayOffset: number, starts: string[]) =>
    trx
      .updateTable('store_slots')
      .set({ is_closed: true })
      .where('store_id', '=', store)
      .where('kind', '=', 'delivery')
      .where('slot_date', '=', sql<string>`(now() AT TIME ZONE 'Europe/Moscow')::date + ${dayOffset}::int`)
      .where(sql<string>`to_char(starts_at AT TIME ZONE 'Europe/Moscow', 'HH24:MI')`, 'in', starts)
      .execute();
  await closeWindows(TVERSKAYA, 2, ['08:00', '10:00']);
  await closeWindows(ARBAT, 3, ['20:00']);
}

// ------------------------------------------------------------------------------------------------
// Gazetteer: real central Moscow streets, drawn as straight lines between approximate ends, with
// odd numbers on one side and even on the other. Far streets (Shchukinskaya, Yolochnaya) are
// outside every zone, so search finds addresses that are not served.

interface StreetSpec {
  code: string;
  ru: string;
  en: string;
  /** Full street-type words and other spellings the street is searched by. */
  aliases: string;
  from: [number, number];
  to: [number, number];
}

const STREETS: StreetSpec[] = [
  { code: 'tverskaya', ru: 'Тверская ул.', en: 'Tverskaya St', aliases: 'улица street', from: [37.6149, 55.7576], to: [37.5951, 55.77] },
  {
    code: 'arbat',
    ru: 'ул. Арбат',
    en: 'Arbat St',
    aliases: 'улица street Старый Арбат Old',
    from: [37.6005, 55.7521],
    to: [37.5826, 55.7467],
  },
  {
    code: 'novy-arbat',
    ru: 'ул. Новый Арбат',
    en: 'Novy Arbat St',
    aliases: 'улица street New',
    from: [37.599, 55.7525],
    to: [37.576, 55.7515],
  },
  {
    code: 'komsomolsky',
    ru: 'Комсомольский пр-т',
    en: 'Komsomolsky Ave',
    aliases: 'проспект avenue prospekt',
    from: [37.589, 55.7355],
    to: [37.562, 55.716],
  },
  {
    code: 'prechistenka',
    ru: 'ул. Пречистенка',
    en: 'Prechistenka St',
    aliases: 'улица street',
    from: [37.602, 55.7445],
    to: [37.5885, 55.738],
  },
  { code: 'ostozhenka', ru: 'ул. Остоженка', en: 'Ostozhenka St', aliases: 'улица street', from: [37.603, 55.7435], to: [37.595, 55.7355] },
  {
    code: 'bolshaya-nikitskaya',
    ru: 'Большая Никитская ул.',
    en: 'Bolshaya Nikitskaya St',
    aliases: 'улица street',
    from: [37.6115, 55.756],
    to: [37.583, 55.76],
  },
  {
    code: 'malaya-bronnaya',
    ru: 'Малая Бронная ул.',
    en: 'Malaya Bronnaya St',
    aliases: 'улица street',
    from: [37.5985, 55.763],
    to: [37.5925, 55.7575],
  },
  { code: 'petrovka', ru: 'ул. Петровка', en: 'Petrovka St', aliases: 'улица street', from: [37.6185, 55.76], to: [37.614, 55.77] },
  {
    code: 'myasnitskaya',
    ru: 'Мясницкая ул.',
    en: 'Myasnitskaya St',
    aliases: 'улица street',
    from: [37.629, 55.759],
    to: [37.6375, 55.766],
  },
  { code: 'pokrovka', ru: 'ул. Покровка', en: 'Pokrovka St', aliases: 'улица street', from: [37.639, 55.7585], to: [37.65, 55.759] },
  { code: 'maroseyka', ru: 'ул. Маросейка', en: 'Maroseyka St', aliases: 'улица street', from: [37.632, 55.757], to: [37.639, 55.7585] },
  { code: 'ilyinka', ru: 'ул. Ильинка', en: 'Ilyinka St', aliases: 'улица street', from: [37.622, 55.7545], to: [37.632, 55.756] },
  { code: 'nikolskaya', ru: 'Никольская ул.', en: 'Nikolskaya St', aliases: 'улица street', from: [37.62, 55.7565], to: [37.6265, 55.759] },
  {
    code: 'bolshaya-dmitrovka',
    ru: 'ул. Большая Дмитровка',
    en: 'Bolshaya Dmitrovka St',
    aliases: 'улица street',
    from: [37.6165, 55.759],
    to: [37.61, 55.768],
  },
  {
    code: 'kuznetsky-most',
    ru: 'ул. Кузнецкий Мост',
    en: 'Kuznetsky Most St',
    aliases: 'улица street',
    from: [37.619, 55.7615],
    to: [37.626, 55.7615],
  },
  {
    code: 'gogolevsky',
    ru: 'Гоголевский б-р',
    en: 'Gogolevsky Blvd',
    aliases: 'бульвар boulevard',
    from: [37.603, 55.745],
    to: [37.6005, 55.751],
  },
  {
    code: 'nikitsky',
    ru: 'Никитский б-р',
    en: 'Nikitsky Blvd',
    aliases: 'бульвар boulevard',
    from: [37.6005, 55.7525],
    to: [37.5975, 55.7575],
  },
  {
    code: 'tversky',
    ru: 'Тверской б-р',
    en: 'Tversky Blvd',
    aliases: 'бульвар boulevard',
    from: [37.5985, 55.7585],
    to: [37.6045, 55.765],
  },
  {
    code: 'strastnoy',
    ru: 'Страстной б-р',
    en: 'Strastnoy Blvd',
    aliases: 'бульвар boulevard',
    from: [37.6045, 55.766],
    to: [37.614, 55.7675],
  },
  {
    code: 'sadovaya-kudrinskaya',
    ru: 'Садовая-Кудринская ул.',
    en: 'Sadovaya-Kudrinskaya St',
    aliases: 'улица street',
    from: [37.583, 55.76],
    to: [37.592, 55.767],
  },
  {
    code: 'smolensky',
    ru: 'Смоленский б-р',
    en: 'Smolensky Blvd',
    aliases: 'бульвар boulevard',
    from: [37.583, 55.748],
    to: [37.588, 55.739],
  },
  {
    code: 'zubovsky',
    ru: 'Зубовский б-р',
    en: 'Zubovsky Blvd',
    aliases: 'бульвар boulevard',
    from: [37.588, 55.7375],
    to: [37.598, 55.7355],
  },
  {
    code: 'frunzenskaya',
    ru: 'Фрунзенская наб.',
    en: 'Frunzenskaya Emb',
    aliases: 'набережная embankment',
    from: [37.596, 55.732],
    to: [37.572, 55.718],
  },
  {
    code: 'lva-tolstogo',
    ru: 'ул. Льва Толстого',
    en: 'Lva Tolstogo St',
    aliases: 'улица street Leo Tolstoy',
    from: [37.59, 55.7355],
    to: [37.583, 55.731],
  },
  {
    code: 'khamovnichesky-val',
    ru: 'ул. Хамовнический Вал',
    en: 'Khamovnichesky Val St',
    aliases: 'улица street',
    from: [37.572, 55.725],
    to: [37.56, 55.72],
  },
  { code: 'usacheva', ru: 'ул. Усачёва', en: 'Usacheva St', aliases: 'улица street', from: [37.58, 55.73], to: [37.567, 55.725] },
  {
    code: 'bolshaya-pirogovskaya',
    ru: 'Большая Пироговская ул.',
    en: 'Bolshaya Pirogovskaya St',
    aliases: 'улица street',
    from: [37.585, 55.735],
    to: [37.568, 55.726],
  },
  { code: 'plyushchikha', ru: 'ул. Плющиха', en: 'Plyushchikha St', aliases: 'улица street', from: [37.585, 55.743], to: [37.577, 55.739] },
  {
    code: 'sadovnicheskaya',
    ru: 'Садовническая ул.',
    en: 'Sadovnicheskaya St',
    aliases: 'улица street',
    from: [37.624, 55.748],
    to: [37.648, 55.742],
  },
  {
    code: 'pyatnitskaya',
    ru: 'Пятницкая ул.',
    en: 'Pyatnitskaya St',
    aliases: 'улица street',
    from: [37.628, 55.746],
    to: [37.629, 55.733],
  },
  {
    code: 'bolshaya-yakimanka',
    ru: 'ул. Большая Якиманка',
    en: 'Bolshaya Yakimanka St',
    aliases: 'улица street',
    from: [37.613, 55.743],
    to: [37.609, 55.731],
  },
  {
    code: 'leninsky',
    ru: 'Ленинский пр-т',
    en: 'Leninsky Ave',
    aliases: 'проспект avenue prospekt',
    from: [37.608, 55.729],
    to: [37.585, 55.708],
  },
  {
    code: 'kutuzovsky',
    ru: 'Кутузовский пр-т',
    en: 'Kutuzovsky Ave',
    aliases: 'проспект avenue prospekt',
    from: [37.568, 55.75],
    to: [37.53, 55.74],
  },
  {
    code: 'bolshaya-gruzinskaya',
    ru: 'Большая Грузинская ул.',
    en: 'Bolshaya Gruzinskaya St',
    aliases: 'улица street',
    from: [37.58, 55.761],
    to: [37.584, 55.775],
  },
  {
    code: 'malaya-dmitrovka',
    ru: 'ул. Малая Дмитровка',
    en: 'Malaya Dmitrovka St',
    aliases: 'улица street',
    from: [37.6065, 55.766],
    to: [37.604, 55.772],
  },
  {
    code: 'bolshoy-kozikhinsky',
    ru: 'Большой Козихинский пер.',
    en: 'Bolshoy Kozikhinsky Ln',
    aliases: 'переулок lane',
    from: [37.5985, 55.763],
    to: [37.592, 55.7655],
  },
  {
    code: 'zhukovskogo',
    ru: 'ул. Жуковского',
    en: 'Zhukovskogo St',
    aliases: 'улица street',
    from: [37.641, 55.761],
    to: [37.644, 55.764],
  },
  {
    code: 'khokhlovsky',
    ru: 'Хохловский пер.',
    en: 'Khokhlovsky Ln',
    aliases: 'переулок lane',
    from: [37.64, 55.756],
    to: [37.643, 55.7575],
  },
  { code: 'tsvetnoy', ru: 'Цветной б-р', en: 'Tsvetnoy Blvd', aliases: 'бульвар boulevard', from: [37.621, 55.768], to: [37.62, 55.776] },
  {
    code: 'chistoprudny',
    ru: 'Чистопрудный б-р',
    en: 'Chistoprudny Blvd',
    aliases: 'бульвар boulevard',
    from: [37.642, 55.759],
    to: [37.648, 55.764],
  },
  {
    code: 'shchukinskaya',
    ru: 'Щукинская ул.',
    en: 'Shchukinskaya St',
    aliases: 'улица street',
    from: [37.47, 55.805],
    to: [37.465, 55.812],
  },
  {
    code: 'yolochnaya',
    ru: 'Ёлочная ул.',
    en: 'Yolochnaya St',
    aliases: 'улица street Елочная',
    from: [37.655, 55.883],
    to: [37.664, 55.886],
  },
];

const PLACES = [
  {
    code: 'moscow',
    category: 'locality' as const,
    ru: 'Москва',
    en: 'Moscow',
    ruPlace: 'Москва, Россия',
    enPlace: 'Moscow, Russia',
    at: [37.6173, 55.7558],
  },
  {
    code: 'red-square',
    category: 'poi' as const,
    ru: 'Красная площадь',
    en: 'Red Square',
    ruPlace: 'Красная площадь, Москва',
    enPlace: 'Red Square, Moscow',
    at: [37.6208, 55.7539],
  },
  {
    code: 'kremlin',
    category: 'poi' as const,
    ru: 'Московский Кремль',
    en: 'Moscow Kremlin',
    ruPlace: 'Московский Кремль, Москва',
    enPlace: 'Moscow Kremlin, Moscow',
    at: [37.6176, 55.752],
  },
  {
    code: 'bolshoi',
    category: 'poi' as const,
    ru: 'Большой театр',
    en: 'Bolshoi Theatre',
    ruPlace: 'Театральная пл., 1, Москва',
    enPlace: 'Teatralnaya Sq, 1, Moscow',
    at: [37.6186, 55.7601],
  },
  {
    code: 'pushkin-museum',
    category: 'poi' as const,
    ru: 'Музей им. Пушкина',
    en: 'Pushkin Museum',
    ruPlace: 'ул. Волхонка, 12, Москва',
    enPlace: 'Volkhonka St, 12, Moscow',
    at: [37.605, 55.7473],
  },
  {
    code: 'patriarch-ponds',
    category: 'poi' as const,
    ru: 'Патриаршие пруды',
    en: "Patriarch's Ponds",
    ruPlace: 'Патриаршие пруды, Москва',
    enPlace: "Patriarch's Ponds, Moscow",
    at: [37.593, 55.7637],
  },
  {
    code: 'gorky-park',
    category: 'poi' as const,
    ru: 'Парк Горького',
    en: 'Gorky Park',
    ruPlace: 'ул. Крымский Вал, 9, Москва',
    enPlace: 'Krymsky Val St, 9, Moscow',
    at: [37.601, 55.7298],
  },
  {
    code: 'luzhniki',
    category: 'poi' as const,
    ru: 'Стадион Лужники',
    en: 'Luzhniki Stadium',
    ruPlace: 'ул. Лужники, 24, Москва',
    enPlace: 'Luzhniki St, 24, Moscow',
    at: [37.5537, 55.7158],
  },
  {
    code: 'belorussky',
    category: 'poi' as const,
    ru: 'Белорусский вокзал',
    en: 'Belorussky railway station',
    ruPlace: 'пл. Тверская Застава, 7, Москва',
    enPlace: 'Tverskaya Zastava Sq, 7, Moscow',
    at: [37.581, 55.7766],
  },
  {
    code: 'kievsky',
    category: 'poi' as const,
    ru: 'Киевский вокзал',
    en: 'Kievsky railway station',
    ruPlace: 'пл. Киевского Вокзала, 1, Москва',
    enPlace: 'Kievskogo Vokzala Sq, 1, Moscow',
    at: [37.5655, 55.7434],
  },
];

// Where the demo stores' own buildings are: their address entries sit at the store's point.
const STORE_BUILDINGS: Record<string, { street: string; number: string; storeCode: string }> = {
  'MSK-TVERSKAYA': { street: 'tverskaya', number: '8', storeCode: 'MSK-TVERSKAYA' },
  'MSK-ARBAT': { street: 'arbat', number: '24', storeCode: 'MSK-ARBAT' },
  'MSK-KHAMOVNIKI': { street: 'komsomolsky', number: '28', storeCode: 'MSK-KHAMOVNIKI' },
};

const METRES_PER_DEGREE_LAT = 111_320;
/** A house every ~50 m per side, at most this many per side. */
const HOUSE_SPACING_M = 50;
const MAX_HOUSES_PER_SIDE = 30;
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

export function gazetteerRows(): Insertable<GazetteerEntriesTable>[] {
  const rows: Insertable<GazetteerEntriesTable>[] = [];
  const buildings = new Map(
    Object.values(STORE_BUILDINGS).map((b) => {
      const store = DEMO_STORES.find((s) => s.code === b.storeCode)!;
      return [`${b.street}:${b.number}`, { lon: store.lon, lat: store.lat }];
    }),
  );
  for (const street of STREETS) {
    const streetId = stableUuid(`gazetteer:street:${street.code}`);
    const [lon0, lat0] = street.from;
    const [lon1, lat1] = street.to;
    const metresPerDegreeLon = METRES_PER_DEGREE_LAT * Math.cos((((lat0 + lat1) / 2) * Math.PI) / 180);
    const dx = (lon1 - lon0) * metresPerDegreeLon;
    const dy = (lat1 - lat0) * METRES_PER_DEGREE_LAT;
    const length = Math.hypot(dx, dy);
    rows.push({
      id: streetId,
      category: 'street',
      title_ru: street.ru,
      title_en: street.en,
      place_name_ru: `${street.ru}, Москва`,
      place_name_en: `${street.en}, Moscow`,
      search_aliases: street.aliases,
      lon: round6((lon0 + lon1) / 2),
      lat: round6((lat0 + lat1) / 2),
    });
    const perSide = Math.max(2, Math.min(MAX_HOUSES_PER_SIDE, Math.floor(length / HOUSE_SPACING_M)));
    // Unit normal to the street, in metres: odd numbers on the left, even on the right, 20 m off the axis.
    const nx = -dy / length;
    const ny = dx / length;
    for (let k = 0; k < perSide; k++) {
      const t = (k + 0.5) / perSide;
      for (const side of [1, -1]) {
        const number = String(side === 1 ? 2 * k + 1 : 2 * k + 2);
        const fixed = buildings.get(`${street.code}:${number}`);
        const lon = fixed?.lon ?? lon0 + (lon1 - lon0) * t + (side * 20 * nx) / metresPerDegreeLon;
        const lat = fixed?.lat ?? lat0 + (lat1 - lat0) * t + (side * 20 * ny) / METRES_PER_DEGREE_LAT;
        rows.push({
          id: stableUuid(`gazetteer:house:${street.code}:${number}`),
          category: 'address',
          street_id: streetId,
          house_number: number,
          title_ru: `${street.ru}, ${number}`,
          title_en: `${street.en}, ${number}`,
          place_name_ru: `${street.ru}, ${number}, Москва`,
          place_name_en: `${street.en}, ${number}, Moscow`,
          search_aliases: street.aliases,
          lon: round6(lon),
          lat: round6(lat),
        });
      }
    }
  }
  for (const p of PLACES) {
    rows.push({
      id: stableUuid(`gazetteer:place:${p.code}`),
      category: p.category,
      title_ru: p.ru,
      title_en: p.en,
      place_name_ru: p.ruPlace,
      place_name_en: p.enPlace,
      lon: p.at[0]!,
      lat: p.at[1]!,
    });
  }
  return rows;
}

export async function seedLogistics(trx: Transaction<DB>): Promise<void> {
  await seedStoreTerms(trx);
  await insertDeliveryZones(
    trx,
    DEMO_ZONES.map(({ code: _code, ...zone }) => zone),
  );
  await seedSlots(trx);
  await insertGazetteerEntries(trx, gazetteerRows());
}
