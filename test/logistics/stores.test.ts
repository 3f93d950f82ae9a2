// Store terms and pickup stores through the contract client: delivery and pickup preferences,
// the pickup store list and one store's details (opening hours, open now).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localMoment } from '../../domain/time/local-time.js';
import { startTestService, type TestService } from '../support/service.js';
import { createStore, demoStore } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const TVERSKAYA = demoStore('MSK-TVERSKAYA');
const ARBAT = demoStore('MSK-ARBAT');
const KHAMOVNIKI = demoStore('MSK-KHAMOVNIKI');

type StorePath =
  '/api/logistics/stores/delivery/order-preferences' | '/api/logistics/stores/pickup/order-preferences' | '/api/logistics/stores/pickup/';
const get = (path: StorePath, headers: Record<string, string> = {}) => svc.client.call.GET(path, { headers });
const pickupStore = (storeId: string, headers: Record<string, string> = {}) =>
  svc.client.call.GET('/api/logistics/stores/pickup/{store_id}', { params: { path: { store_id: storeId } }, headers });
/** Deliberately invalid: no store, or a store id that is not a UUID. */
const invalid = (path: string, headers: Record<string, string> = {}) => svc.client.invalid('GET', path, { headers });
const withStore = (storeId: string) => ({ 'X-Store-Id': storeId });

async function expressStore(isAccepting: boolean): Promise<string> {
  const store = await createStore(svc.deps.db);
  await svc.deps.db
    .insertInto('store_express_delivery')
    .values({ store_id: store, minutes: 30, cost: '150.00', max_items_count: null, is_accepting: isAccepting })
    .execute();
  await svc.deps.db
    .insertInto('store_express_schedule')
    .values(
      [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ store_id: store, weekday, start_time: '00:00:00', end_time: '23:59:59', is_active: true })),
    )
    .execute();
  return store;
}

describe('getDeliveryOrderPreferences', () => {
  it("answers the store's delivery terms with its express offer", async () => {
    const r = await get('/api/logistics/stores/delivery/order-preferences', withStore(TVERSKAYA.id));
    expect(r.status).toBe(200);
    expect(r.headers.get('vary')).toMatch(/X-Store-Id/i);
    const { express, ...terms } = r.body;
    expect(terms).toEqual({
      store_id: TVERSKAYA.id,
      timezone: 'Europe/Moscow',
      min_order_amount: '1000.00',
      delivery_cost: '199.00',
      standard: { free_amount_threshold: '3000.00' },
      slot_days: 14,
    });
    expect(express).toMatchObject({ minutes: 45, cost: '299.00', max_items_count: 30 });
    expect(express.schedule).toHaveLength(7);
    expect(express.schedule[0]).toEqual({ weekday: 1, start_time: '09:00:00+03:00', end_time: '21:00:00+03:00', is_active: true });
    expect(express.schedule[6]).toMatchObject({ weekday: 7, is_active: false });
    // Available exactly when now (Moscow) is inside today's active window.
    const now = localMoment(new Date(), 'Europe/Moscow');
    const today = express.schedule.find((w: { weekday: number }) => w.weekday === now.isoWeekday);
    const inside = today.is_active && now.time >= '09:00:00' && now.time < '21:00:00';
    expect(express.is_available).toBe(inside);
  });

  it('answers express null for a store without express delivery', async () => {
    const r = await get('/api/logistics/stores/delivery/order-preferences', withStore(KHAMOVNIKI.id));
    expect(r.body).toMatchObject({ store_id: KHAMOVNIKI.id, min_order_amount: '500.00', delivery_cost: '99.00', express: null });
  });

  it('says express is available inside its hours and unavailable when the store stopped taking express orders', async () => {
    const open = await expressStore(true);
    const stopped = await expressStore(false);
    const a = await get('/api/logistics/stores/delivery/order-preferences', withStore(open));
    const b = await get('/api/logistics/stores/delivery/order-preferences', withStore(stopped));
    // The window is 00:00:00-23:59:59 every day: only the day's last second is outside it.
    if (localMoment(new Date(), 'Europe/Moscow').time < '23:59:59') expect(a.body.express.is_available).toBe(true);
    expect(b.body.express.is_available).toBe(false);
    expect(a.body).toMatchObject({
      min_order_amount: '0.00',
      delivery_cost: '0.00',
      slot_days: 14,
      express: { minutes: 30, cost: '150.00', max_items_count: null },
    });
  });

  it('answers 422 STORE_REQUIRED, STORE_NOT_FOUND and VALIDATION_ERROR', async () => {
    expect((await invalid('/api/logistics/stores/delivery/order-preferences')).body.code).toBe('STORE_REQUIRED');
    expect((await get('/api/logistics/stores/delivery/order-preferences', withStore(randomUUID()))).body.code).toBe('STORE_NOT_FOUND');
    const bad = await invalid('/api/logistics/stores/delivery/order-preferences', withStore('store-1'));
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('getPickupOrderPreferences', () => {
  it("answers the store's pickup minimum", async () => {
    const r = await get('/api/logistics/stores/pickup/order-preferences', withStore(TVERSKAYA.id));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ min_order_amount: '500.00' });
    expect(r.headers.get('vary')).toMatch(/X-Store-Id/i);
    expect((await get('/api/logistics/stores/pickup/order-preferences', withStore(KHAMOVNIKI.id))).body).toEqual({
      min_order_amount: '0.00',
    });
  });

  it('answers 422 STORE_REQUIRED, STORE_NOT_FOUND and VALIDATION_ERROR', async () => {
    const missing = await invalid('/api/logistics/stores/pickup/order-preferences');
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe('STORE_REQUIRED');
    expect((await get('/api/logistics/stores/pickup/order-preferences', withStore(randomUUID()))).body.code).toBe('STORE_NOT_FOUND');
    expect((await invalid('/api/logistics/stores/pickup/order-preferences', withStore('x'))).body.code).toBe('VALIDATION_ERROR');
  });
});

describe('listPickupStores', () => {
  it('lists the active pickup stores sorted by name in the language asked for', async () => {
    const hidden = await createStore(svc.deps.db, { accepts_pickup: false, name_en: 'Aaa hidden', name_ru: 'Ааа скрытый' });
    const closedDown = await createStore(svc.deps.db, { is_active: false, name_en: 'Aaa closed', name_ru: 'Ааа закрыт' });
    const en = await get('/api/logistics/stores/pickup/');
    expect(en.status).toBe(200);
    const ids = en.body.map((s: { id: string }) => s.id);
    expect(ids).not.toContain(hidden);
    expect(ids).not.toContain(closedDown);
    const demo = en.body.filter((s: { id: string }) => [TVERSKAYA.id, ARBAT.id, KHAMOVNIKI.id].includes(s.id));
    expect(demo.map((s: { name: string }) => s.name)).toEqual(['Arbat', 'Khamovniki', 'Tverskaya']);
    expect(demo[0]).toEqual({
      id: ARBAT.id,
      name: 'Arbat',
      location: { lon: ARBAT.lon, lat: ARBAT.lat },
      address: 'Moscow, Arbat St, 24',
      work_time: '24/7',
      contacts: ['+74950000002'],
    });
    const ru = await get('/api/logistics/stores/pickup/', { 'Accept-Language': 'ru' });
    const ruDemo = ru.body.filter((s: { id: string }) => [TVERSKAYA.id, ARBAT.id, KHAMOVNIKI.id].includes(s.id));
    // Russian alphabetical order differs: Т before Х.
    expect(ruDemo.map((s: { name: string }) => s.name)).toEqual(['Арбат', 'Тверская', 'Хамовники']);
    expect(ruDemo[1].work_time).toBe('пн–пт 08:00–23:00, сб–вс 09:00–23:00');
  });

  it('answers contacts and work_time null when the store has none', async () => {
    const bare = await createStore(svc.deps.db, { contacts: [] });
    const r = await get('/api/logistics/stores/pickup/');
    expect(r.body.find((s: { id: string }) => s.id === bare)).toMatchObject({ work_time: null, contacts: null, address: null });
  });
});

describe('getPickupStore', () => {
  it('answers the details of a 24/7 store: hours of every weekday, open now, pickup minimum', async () => {
    const r = await pickupStore(ARBAT.id);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: ARBAT.id,
      name: 'Arbat',
      location: { lon: ARBAT.lon, lat: ARBAT.lat },
      address: 'Moscow, Arbat St, 24',
      work_time: '24/7',
      contacts: ['+74950000002'],
      phone: '+74950000002',
      image: {
        original: 'https://cdn.grocery.example/stores/msk-arbat/original.jpg',
        listing: 'https://cdn.grocery.example/stores/msk-arbat/listing.jpg',
      },
      timezone: 'Europe/Moscow',
      working_hours: [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({
        weekday,
        is_closed: false,
        opens_at: '00:00:00+03:00',
        closes_at: '00:00:00+03:00',
      })),
      is_open_now: true,
      min_order_amount: '300.00',
    });
  });

  it('shows a closed weekday and an after-midnight closing, and whether the store is open right now', async () => {
    const r = await pickupStore(KHAMOVNIKI.id, { 'Accept-Language': 'ru' });
    expect(r.body.name).toBe('Хамовники');
    expect(r.body.image).toBeNull();
    expect(r.body.working_hours[0]).toEqual({ weekday: 1, is_closed: false, opens_at: '08:00:00+03:00', closes_at: '01:00:00+03:00' });
    expect(r.body.working_hours[6]).toEqual({ weekday: 7, is_closed: true, opens_at: null, closes_at: null });
    // Mon-Sat 08:00-01:00, Sunday closed (its 00:00-01:00 is Saturday's shift).
    const now = localMoment(new Date(), 'Europe/Moscow');
    const t = now.time;
    const open = (now.isoWeekday <= 6 && t >= '08:00:00') || (now.isoWeekday >= 2 && now.isoWeekday <= 7 && t < '01:00:00');
    expect(r.body.is_open_now).toBe(open);
  });

  it('says closed for a store without hours (every weekday closed)', async () => {
    const store = await createStore(svc.deps.db);
    const r = await pickupStore(store);
    expect(r.body.is_open_now).toBe(false);
    expect(r.body.working_hours.every((d: { is_closed: boolean }) => d.is_closed)).toBe(true);
  });

  it('says closed on a closure day although the regular hours say open', async () => {
    const store = await createStore(svc.deps.db);
    await svc.deps.db
      .insertInto('store_working_hours')
      .values(
        [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ store_id: store, weekday, is_closed: false, opens_at: '00:00', closes_at: '00:00' })),
      )
      .execute();
    expect((await pickupStore(store)).body.is_open_now).toBe(true);
    await svc.deps.db
      .insertInto('store_closures')
      .values({ store_id: store, closed_on: localMoment(new Date(), 'Europe/Moscow').date, reason: 'test' })
      .execute();
    expect((await pickupStore(store)).body.is_open_now).toBe(false);
  });

  it('answers 404 STORE_NOT_FOUND for an unknown store and for one without pickup, 422 for a bad id', async () => {
    const unknown = await pickupStore(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('STORE_NOT_FOUND');
    const noPickup = await createStore(svc.deps.db, { accepts_pickup: false });
    expect((await pickupStore(noPickup)).status).toBe(404);
    const bad = await invalid('/api/logistics/stores/pickup/not-a-uuid');
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });
});
