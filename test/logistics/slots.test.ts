// Delivery and pickup slots through the contract client: the demo calendar (two weeks rolled
// from templates), cut-offs, closed and full windows, the date filter, and the X-Store-Id rule.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reserveDeliverySlot } from '../../db/queries/logistics.js';
import { localMoment } from '../../domain/time/local-time.js';
import { startTestService, type TestService } from '../support/service.js';
import { createSlot, createStore, demoStore, moscowDate } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const TVERSKAYA = demoStore('MSK-TVERSKAYA');
const KHAMOVNIKI = demoStore('MSK-KHAMOVNIKI');

const deliverySlots = (storeId: string, date?: string) =>
  svc.client.call.GET('/api/logistics/stores/delivery/slots', { params: { query: { date } }, headers: { 'X-Store-Id': storeId } });
const pickupSlots = (storeId: string) => svc.client.call.GET('/api/logistics/stores/pickup/slots', { headers: { 'X-Store-Id': storeId } });
/** Deliberately invalid: no store, a store id or date that is not one. */
const invalid = (path: string, storeId: string | null) =>
  svc.client.invalid('GET', path, { headers: storeId ? { 'X-Store-Id': storeId } : {} });

const minutes = (iso: string) => new Date(iso).getTime() / 60_000;

describe('listDeliverySlots', () => {
  it("lists the demo store's windows for today and the next 13 days, earliest first, coherent in every field", async () => {
    const r = await deliverySlots(TVERSKAYA.id);
    expect(r.status).toBe(200);
    expect(r.headers.get('vary')).toMatch(/X-Store-Id/i);
    const slots: any[] = r.body;
    const dates = [...new Set(slots.map((s) => s.date))].sort();
    expect(dates.at(-1)).toBe(moscowDate(13));
    expect(dates[0] >= moscowDate(0)).toBe(true);
    // Every day after today has all its windows (today's past ones are gone).
    expect(dates.filter((d) => d > moscowDate(0))).toHaveLength(13);
    const order = [...slots].sort((a, b) => minutes(a.starts_at) - minutes(b.starts_at) || (a.id < b.id ? -1 : 1));
    expect(slots.map((s) => s.id)).toEqual(order.map((s) => s.id));
    const now = Date.now();
    for (const s of slots) {
      expect(new Date(s.ends_at).getTime()).toBeGreaterThan(now);
      expect(s.starts_at).toBe(`${s.date}T${s.start_time}`);
      expect(s.ends_at).toBe(`${s.date}T${s.end_time}`);
      expect(s.start_time).toMatch(/^\d\d:\d\d:\d\d\+03:00$/);
      expect(minutes(s.starts_at) - minutes(s.cutoff_at)).toBe(120);
      expect(s.remaining_capacity).toBeLessThanOrEqual(s.capacity);
      expect(s.is_available).toBe(s.unavailable_reason === null);
      if (new Date(s.cutoff_at).getTime() <= now) expect(s.unavailable_reason).not.toBeNull();
    }
    // The morning windows (08:00 and 10:00) the demo store switched off the day after tomorrow;
    // a Sunday has no 08:00 window, so then only the one at 10:00.
    const closed = slots.filter((s) => s.unavailable_reason === 'closed');
    const sunday = new Date(`${moscowDate(2)}T12:00:00Z`).getUTCDay() === 0;
    expect(closed.map((s) => `${s.date} ${s.start_time}`)).toEqual(
      [...(sunday ? [] : ['08:00:00+03:00']), '10:00:00+03:00'].map((t) => `${moscowDate(2)} ${t}`),
    );
    // Tomorrow's windows are all open for orders.
    expect(slots.filter((s) => s.date === moscowDate(1)).every((s) => s.is_available)).toBe(true);
  });

  it('filters by date, and answers [] for a date before today or after the last offered day', async () => {
    const tomorrow = await deliverySlots(TVERSKAYA.id, moscowDate(1));
    expect(tomorrow.status).toBe(200);
    expect(tomorrow.body.length).toBeGreaterThan(0);
    expect(tomorrow.body.every((s: { date: string }) => s.date === moscowDate(1))).toBe(true);
    expect((await deliverySlots(TVERSKAYA.id, moscowDate(-1))).body).toEqual([]);
    expect((await deliverySlots(TVERSKAYA.id, moscowDate(14))).body).toEqual([]);
    expect((await deliverySlots(TVERSKAYA.id, moscowDate(13))).body.length).toBeGreaterThan(0);
  });

  it('offers nothing on a day the store is closed (Khamovniki stock-taking in five days)', async () => {
    expect((await deliverySlots(KHAMOVNIKI.id, moscowDate(5))).body).toEqual([]);
  });

  it('empties a day closed after its windows were made, for listing and booking alike', async () => {
    const store = await createStore(svc.deps.db);
    // Windows two days ahead, made before the store's closure for that day was entered.
    const delivery = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 2 * 24 * 60 });
    const pickup = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 2 * 24 * 60, kind: 'pickup' });
    const day = (await svc.deps.db.selectFrom('store_slots').select('slot_date').where('id', '=', delivery).executeTakeFirstOrThrow())
      .slot_date;
    expect((await deliverySlots(store)).body.map((s: { id: string }) => s.id)).toContain(delivery);
    expect((await pickupSlots(store)).body.map((s: { id: string }) => s.id)).toContain(pickup);
    await svc.deps.db.insertInto('store_closures').values({ store_id: store, closed_on: day, reason: 'stock-taking' }).execute();
    expect((await deliverySlots(store)).body.map((s: { id: string }) => s.id)).not.toContain(delivery);
    expect((await pickupSlots(store)).body.map((s: { id: string }) => s.id)).not.toContain(pickup);
    expect(await reserveDeliverySlot(svc.deps.db, { storeId: store, slotId: delivery, orderId: randomUUID() })).toEqual({
      ok: false,
      reason: 'closed',
    });
  });

  it('marks closed, cut-off and full windows with the first reason that applies, omits ended ones', async () => {
    const store = await createStore(svc.deps.db);
    const ended = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: -180, lengthMinutes: 60 });
    // Started up to half an hour ago, but today in Moscow: the list starts at today's windows,
    // so just after midnight one started yesterday would not be in it.
    const sinceMidnight = Math.floor(localMoment(new Date(), 'Europe/Moscow').secondsOfDay / 60);
    const running = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: -Math.min(30, sinceMidnight), lengthMinutes: 120 });
    const pastCutoff = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 90 });
    const closed = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 300, isClosed: true, capacity: 1, reserved: 1 });
    const filling = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 360, capacity: 2 });
    const open = await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 420, capacity: 3 });

    const before = (await deliverySlots(store)).body as any[];
    const byId = new Map(before.map((s) => [s.id, s]));
    expect(byId.has(ended)).toBe(false);
    expect(byId.get(running)).toMatchObject({ is_available: false, unavailable_reason: 'cutoff_passed' });
    expect(byId.get(pastCutoff)).toMatchObject({ is_available: false, unavailable_reason: 'cutoff_passed', remaining_capacity: 5 });
    expect(byId.get(closed)).toMatchObject({ is_available: false, unavailable_reason: 'closed', remaining_capacity: 0 });
    expect(byId.get(filling)).toMatchObject({ is_available: true, unavailable_reason: null, capacity: 2, remaining_capacity: 2 });
    expect(byId.get(open)).toMatchObject({ is_available: true, remaining_capacity: 3 });

    // Two orders take the two units: the window reads full.
    for (let i = 0; i < 2; i++) {
      const held = await svc.deps.db
        .transaction()
        .execute((trx) => reserveDeliverySlot(trx, { storeId: store, slotId: filling, orderId: randomUUID() }));
      expect(held.ok).toBe(true);
    }
    const after = ((await deliverySlots(store)).body as any[]).find((s) => s.id === filling);
    expect(after).toMatchObject({ is_available: false, unavailable_reason: 'full', remaining_capacity: 0, capacity: 2 });

    // A capacity lowered below the holds never reads negative.
    await svc.deps.db.updateTable('store_slots').set({ capacity: 1 }).where('id', '=', filling).execute();
    expect(((await deliverySlots(store)).body as any[]).find((s) => s.id === filling).remaining_capacity).toBe(0);
  });

  it('rolls the calendar forward from weekly templates, idempotently', async () => {
    const store = await createStore(svc.deps.db, { delivery_slot_days: 3 });
    await svc.deps.db
      .insertInto('slot_templates')
      .values(
        [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({
          store_id: store,
          kind: 'delivery' as const,
          weekday,
          start_time: '23:00',
          end_time: '23:59',
          capacity: 4,
        })),
      )
      .execute();
    const first = (await deliverySlots(store)).body as any[];
    // 23:00-23:59 every day: today's is still ahead unless it is already past 23:59 in Moscow.
    expect(first.length).toBeGreaterThanOrEqual(2);
    expect(first.length).toBeLessThanOrEqual(3);
    expect(first.every((s) => s.start_time === '23:00:00+03:00' && s.end_time === '23:59:00+03:00' && s.capacity === 4)).toBe(true);
    const second = (await deliverySlots(store)).body as any[];
    expect(second.map((s) => s.id)).toEqual(first.map((s) => s.id));
    const stored = await svc.deps.db.selectFrom('store_slots').select('id').where('store_id', '=', store).execute();
    expect(stored).toHaveLength(3);
  });

  it('refuses a window or opening hours ending at 24:00, which no RFC 3339 time can say', async () => {
    const store = await createStore(svc.deps.db, {});
    const template = (end_time: string) =>
      svc.deps.db
        .insertInto('slot_templates')
        .values({ store_id: store, kind: 'delivery', weekday: 1, start_time: '22:00', end_time, capacity: 4 })
        .execute();
    await expect(template('24:00')).rejects.toThrow(/slot_templates_before_midnight/);
    await template('23:59:59'); // "until midnight"
    await svc.deps.db.deleteFrom('store_working_hours').where('store_id', '=', store).where('weekday', '=', 2).execute();
    await expect(
      svc.deps.db
        .insertInto('store_working_hours')
        .values({ store_id: store, weekday: 2, opens_at: '08:00', closes_at: '24:00', is_closed: false })
        .execute(),
    ).rejects.toThrow(/store_working_hours_before_midnight/);
  });

  it('answers [] for a store that does not deliver', async () => {
    const store = await createStore(svc.deps.db, { accepts_delivery: false });
    await createSlot(svc.deps.db, { storeId: store, startsInMinutes: 600 });
    const r = await deliverySlots(store);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });

  it('answers 422 STORE_REQUIRED, STORE_NOT_FOUND and VALIDATION_ERROR', async () => {
    const missing = await invalid('/api/logistics/stores/delivery/slots', null);
    expect(missing.status).toBe(422);
    expect(missing.body.code).toBe('STORE_REQUIRED');
    const unknown = await deliverySlots(randomUUID());
    expect(unknown.status).toBe(422);
    expect(unknown.body.code).toBe('STORE_NOT_FOUND');
    const inactive = await createStore(svc.deps.db, { is_active: false });
    expect((await deliverySlots(inactive)).body.code).toBe('STORE_NOT_FOUND');
    for (const [store, query] of [
      ['not-a-uuid', ''],
      [TVERSKAYA.id, '?date=2025-02-30'],
      [TVERSKAYA.id, '?date=tomorrow'],
    ]) {
      const r = await invalid(`/api/logistics/stores/delivery/slots${query}`, store!);
      expect(r.status, `${store} ${query}`).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('listPickupSlots', () => {
  it('lists only choosable windows of today, tomorrow and the day after, typed 0, 1, 2', async () => {
    const r = await pickupSlots(TVERSKAYA.id);
    expect(r.status).toBe(200);
    expect(r.headers.get('vary')).toMatch(/X-Store-Id/i);
    const slots: any[] = r.body;
    expect(new Set(slots.map((s) => s.type))).toEqual(new Set(slots.some((s) => s.type === 0) ? [0, 1, 2] : [1, 2]));
    // Tomorrow and the day after have all six windows of the demo templates.
    expect(slots.filter((s) => s.type === 1)).toHaveLength(6);
    expect(slots.filter((s) => s.type === 2)).toHaveLength(6);
    const order = [...slots].sort((a, b) => a.type - b.type || (a.start_time < b.start_time ? -1 : a.start_time > b.start_time ? 1 : 0));
    expect(slots).toEqual(order);
    expect(slots.find((s) => s.type === 1)).toMatchObject({ start_time: '10:00:00+03:00', end_time: '12:00:00+03:00' });
  });

  it('leaves out windows past their cut-off, full or closed, and ended ones', async () => {
    const store = await createStore(svc.deps.db);
    const pastCutoff = await createSlot(svc.deps.db, { storeId: store, kind: 'pickup', startsInMinutes: 45 });
    const full = await createSlot(svc.deps.db, { storeId: store, kind: 'pickup', startsInMinutes: 240, capacity: 1, reserved: 1 });
    const closed = await createSlot(svc.deps.db, { storeId: store, kind: 'pickup', startsInMinutes: 300, isClosed: true });
    const open = await createSlot(svc.deps.db, { storeId: store, kind: 'pickup', startsInMinutes: 180 });
    // A delivery window of the same store is not a pickup window.
    await createSlot(svc.deps.db, { storeId: store, kind: 'delivery', startsInMinutes: 200 });
    const r = await pickupSlots(store);
    expect(r.body.map((s: { id: string }) => s.id)).toEqual([open]);
    const starts = new Date(Date.now() + 180 * 60_000);
    const dayOffset = Math.round(
      (Date.parse(localMoment(starts, 'Europe/Moscow').date) - Date.parse(localMoment(new Date(), 'Europe/Moscow').date)) / 86_400_000,
    );
    expect(r.body[0].type).toBe(dayOffset);
    void [pastCutoff, full, closed];
  });

  it('answers [] for a store without pickup, and the X-Store-Id errors', async () => {
    const store = await createStore(svc.deps.db, { accepts_pickup: false });
    await createSlot(svc.deps.db, { storeId: store, kind: 'pickup', startsInMinutes: 600 });
    expect((await pickupSlots(store)).body).toEqual([]);
    expect((await invalid('/api/logistics/stores/pickup/slots', null)).body.code).toBe('STORE_REQUIRED');
    expect((await pickupSlots(randomUUID())).body.code).toBe('STORE_NOT_FOUND');
    const bad = await invalid('/api/logistics/stores/pickup/slots', '123');
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('VALIDATION_ERROR');
  });
});
