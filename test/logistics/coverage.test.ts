// Delivery coverage: zones, check-location, can-use-location and check-multiply-locations, with
// the serving-store rule exercised on the demo city (overlaps, a hole, a MultiPolygon, an
// inactive zone) and on stores made for the tie-breakers.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haversineKm, roundKm } from '../../domain/geo/geometry.js';
import { DEMO_ZONES } from '../../db/seed/logistics.js';
import { startTestService, type TestService } from '../support/service.js';
import { createStore, createZone, demoStore, square } from './fixtures.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const TVERSKAYA = demoStore('MSK-TVERSKAYA');
const ARBAT = demoStore('MSK-ARBAT');
const KHAMOVNIKI = demoStore('MSK-KHAMOVNIKI');
const zoneId = (code: string) => DEMO_ZONES.find((z) => z.code === code)!.id;

type Location = NonNullable<operations['checkDeliveryLocation']['requestBody']>['content']['application/json'];
type Located = NonNullable<operations['checkMultipleDeliveryLocations']['requestBody']>['content']['application/json'];
const checkLocation = (body: Location, headers: Record<string, string> = {}) =>
  svc.client.call.POST('/api/logistics/stores/delivery/check-location', { body, headers });
const canUse = (body: Location) => svc.client.call.POST('/api/logistics/stores/delivery/can-use-location', { body });
const checkMany = (body: Located) => svc.client.call.POST('/api/logistics/stores/delivery/check-multiply-locations', { body });
/** Deliberately invalid: bodies the schema refuses, malformed JSON, bodies over the limit. */
const invalid = (path: string, body: unknown) => svc.client.invalid('POST', path, { body: body as object });
const CHECK = '/api/logistics/stores/delivery/check-location';
const CAN_USE = '/api/logistics/stores/delivery/can-use-location';
const CHECK_MANY = '/api/logistics/stores/delivery/check-multiply-locations';

// Points of the demo city and who must serve them (null: nobody), by the rule of the spec.
const CASES: { name: string; lon: number; lat: number; store: string | null; zone: string | null }[] = [
  {
    name: 'Tverskaya store, only in the centre zone',
    lon: TVERSKAYA.lon,
    lat: TVERSKAYA.lat,
    store: TVERSKAYA.id,
    zone: 'TVERSKAYA-CENTRE',
  },
  {
    name: 'overlap of two centre zones, same priority: the cheaper (Arbat)',
    lon: 37.595,
    lat: 55.75,
    store: ARBAT.id,
    zone: 'ARBAT-WEST-CENTRE',
  },
  {
    name: "Patriarch's Ponds: the higher priority wins although it costs more",
    lon: 37.593,
    lat: 55.7637,
    store: TVERSKAYA.id,
    zone: 'TVERSKAYA-PATRIARSHIE',
  },
  {
    name: 'on the edge of the Arbat zone inside the Tverskaya zone: the edge counts',
    lon: 37.605,
    lat: 55.755,
    store: ARBAT.id,
    zone: 'ARBAT-WEST-CENTRE',
  },
  { name: 'inside the Kremlin hole: not served', lon: 37.6176, lat: 55.752, store: null, zone: null },
  { name: "on the Kremlin hole's edge: served", lon: 37.6125, lat: 55.752, store: TVERSKAYA.id, zone: 'TVERSKAYA-CENTRE' },
  { name: "on the hole's corner: served", lon: 37.6215, lat: 55.7535, store: TVERSKAYA.id, zone: 'TVERSKAYA-CENTRE' },
  {
    name: 'Khamovniki, first part of the MultiPolygon',
    lon: KHAMOVNIKI.lon,
    lat: KHAMOVNIKI.lat,
    store: KHAMOVNIKI.id,
    zone: 'KHAMOVNIKI',
  },
  { name: 'Luzhniki, the disjoint second part', lon: 37.55, lat: 55.71, store: KHAMOVNIKI.id, zone: 'KHAMOVNIKI' },
  { name: 'the gap between the two parts', lon: 37.5665, lat: 55.71, store: null, zone: null },
  {
    name: 'Arbat (priority 10) over Khamovniki (priority 5) where they overlap',
    lon: 37.58,
    lat: 55.741,
    store: ARBAT.id,
    zone: 'ARBAT-WEST-CENTRE',
  },
  { name: 'only in the inactive Dorogomilovo zone', lon: 37.55, lat: 55.745, store: null, zone: null },
  { name: 'Saint Petersburg', lon: 30.3141, lat: 59.9386, store: null, zone: null },
];

describe('checkDeliveryLocation', () => {
  for (const c of CASES) {
    it(`${c.name}`, async () => {
      const r = await checkLocation({ lon: c.lon, lat: c.lat });
      if (c.store === null) {
        expect(r.status).toBe(404);
        expect(r.body.code).toBe('LOCATION_NOT_SERVED');
        return;
      }
      expect(r.status).toBe(200);
      const store = [TVERSKAYA, ARBAT, KHAMOVNIKI].find((s) => s.id === c.store)!;
      expect(r.body).toEqual({
        store: { id: store.id, name: store.name_en, location: { lon: store.lon, lat: store.lat }, address: store.address_en },
        location: { lon: c.lon, lat: c.lat },
        distance_km: roundKm(haversineKm(store, c)),
      });
    });
  }

  it('answers the store in Russian for Accept-Language: ru', async () => {
    const r = await checkLocation({ lon: TVERSKAYA.lon, lat: TVERSKAYA.lat }, { 'Accept-Language': 'ru' });
    expect(r.body.store).toMatchObject({ name: 'Тверская', address: 'Москва, Тверская ул., 8' });
    expect(r.body.distance_km).toBe(0);
  });

  it('answers 422 VALIDATION_ERROR for bad coordinates (a swapped pair included), 400 and 413', async () => {
    for (const body of [
      { lon: 37.6 },
      { lon: 37.6, lat: '55.7' },
      { lon: 55.75, lat: 137.6 },
      { lon: -180.5, lat: 0 },
      { lon: 1, lat: 1, extra: true },
    ]) {
      const r = await invalid(CHECK, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    const malformed = await svc.client.invalid('POST', CHECK, { body: '{lon: 1}', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const big = await invalid(CHECK, { lon: 1, lat: 1, pad: 'x'.repeat(svc.config.bodyLimitBytes) });
    expect(big.status).toBe(413);
  });
});

describe('checkCanUseLocation', () => {
  it('answers the serving store id, the same as check-location', async () => {
    for (const c of CASES) {
      const r = await canUse({ lon: c.lon, lat: c.lat });
      expect(r.status, c.name).toBe(200);
      expect(r.body, c.name).toBe(c.store);
    }
  });

  it('answers 422 for bad coordinates, 400 for malformed JSON, 413 for a huge body', async () => {
    expect((await invalid(CAN_USE, { lon: 37.6, lat: 95 })).status).toBe(422);
    expect((await invalid(CAN_USE, { lat: 55 })).body.code).toBe('VALIDATION_ERROR');
    const malformed = await svc.client.invalid('POST', CAN_USE, { body: 'null,', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect((await invalid(CAN_USE, { lon: 1, lat: 1, pad: 'x'.repeat(svc.config.bodyLimitBytes) })).status).toBe(413);
  });
});

describe('checkMultipleDeliveryLocations', () => {
  it('answers one result per point in request order, echoing uuid and point', async () => {
    const items = CASES.map((c) => ({ uuid: randomUUID(), location: { lon: c.lon, lat: c.lat } }));
    const r = await checkMany(items);
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(CASES.length);
    r.body.results.forEach((res: any, i: number) => {
      const c = CASES[i];
      expect(res.uuid).toBe(items[i]!.uuid);
      expect(res.location).toEqual(items[i]!.location);
      expect(res.is_served).toBe(c!.store !== null);
      if (c!.store === null) {
        expect(res).toMatchObject({ store: null, zone_id: null, distance_km: null });
      } else {
        expect(res.store.id).toBe(c!.store);
        expect(res.zone_id).toBe(zoneId(c!.zone!));
        expect(res.distance_km).toBe(roundKm(haversineKm(res.store.location, c!)));
      }
    });
  });

  it('answers results: [] for an empty array', async () => {
    const r = await checkMany([]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ results: [] });
  });

  it('answers 422 DUPLICATE_LOCATION_UUID when two items share a uuid (in any letter case)', async () => {
    const uuid = randomUUID();
    const r = await checkMany([
      { uuid, location: { lon: 37.6, lat: 55.75 } },
      { uuid: uuid.toUpperCase(), location: { lon: 37.5, lat: 55.7 } },
    ]);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('DUPLICATE_LOCATION_UUID');
  });

  it('answers 422 VALIDATION_ERROR for more than 50 items, a non-array, a bad item', async () => {
    const many = Array.from({ length: 51 }, () => ({ uuid: randomUUID(), location: { lon: 37.6, lat: 55.75 } }));
    for (const body of [
      many,
      { uuid: randomUUID(), location: { lon: 1, lat: 1 } },
      [{ uuid: 'x', location: { lon: 1, lat: 1 } }],
      [{ uuid: randomUUID(), location: { lon: 1, lat: 99 } }],
      [{ uuid: randomUUID(), location: { lon: 1, lat: 1 }, note: 'x' }],
    ]) {
      const r = await invalid(CHECK_MANY, body);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    const fifty = await checkMany(many.slice(0, 50));
    expect(fifty.status).toBe(200);
    expect(fifty.body.results).toHaveLength(50);
  });

  it('answers 400 for malformed JSON and 413 for a huge body', async () => {
    const malformed = await svc.client.invalid('POST', CHECK_MANY, { body: '[{', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    const big = await invalid(CHECK_MANY, [
      { uuid: randomUUID(), location: { lon: 1, lat: 1 }, pad: 'x'.repeat(svc.config.bodyLimitBytes) },
    ]);
    expect(big.status).toBe(413);
  });
});

describe('serving-store tie-breakers on stores made for them', () => {
  // Far from the demo city: zones around (50, 50) covering the point P.
  const P = { lon: 50, lat: 50 };
  const around = (d = 0.05) => ({ type: 'Polygon' as const, coordinates: [square(P.lon - d, P.lat - d, P.lon + d, P.lat + d)] });

  it('prefers the nearest store when priority and cost are equal, then the smallest store id, then the smallest zone id', async () => {
    const near = await createStore(svc.deps.db, { id: 'ffffffff-0000-4000-8000-000000000001', lon: P.lon + 0.01, lat: P.lat });
    const far = await createStore(svc.deps.db, { id: '00000000-0000-4000-8000-000000000001', lon: P.lon + 0.02, lat: P.lat });
    await createZone(svc.deps.db, { store_id: near, polygon: around(), delivery_cost: '150.00', priority: 3 });
    await createZone(svc.deps.db, { store_id: far, polygon: around(), delivery_cost: '150.0', priority: 3 });
    expect((await canUse(P)).body).toBe(near);

    // A second store at exactly the same spot as `near`, with a smaller id, takes over.
    const twin = await createStore(svc.deps.db, { id: 'aaaaaaaa-0000-4000-8000-000000000001', lon: P.lon + 0.01, lat: P.lat });
    await createZone(svc.deps.db, {
      store_id: twin,
      polygon: around(),
      delivery_cost: '150.00',
      priority: 3,
      id: 'ffffffff-1111-4111-8111-000000000001',
    });
    expect((await canUse(P)).body).toBe(twin);

    // Another zone of the same store with a smaller id: that zone is the one matched.
    const smallerZone = await createZone(svc.deps.db, {
      store_id: twin,
      polygon: around(0.04),
      delivery_cost: '150.00',
      priority: 3,
      id: '11111111-1111-4111-8111-000000000001',
    });
    const many = await checkMany([{ uuid: randomUUID(), location: P }]);
    expect(many.body.results[0]).toMatchObject({ zone_id: smallerZone, store: { id: twin } });
  });

  it('ignores zones of stores that are inactive or do not deliver, and inactive zones', async () => {
    const Q = { lon: 60, lat: 60 };
    const box = { type: 'Polygon' as const, coordinates: [square(59.9, 59.9, 60.1, 60.1)] };
    const inactive = await createStore(svc.deps.db, { lon: 60, lat: 60, is_active: false });
    const pickupOnly = await createStore(svc.deps.db, { lon: 60, lat: 60, accepts_delivery: false });
    const open = await createStore(svc.deps.db, { lon: 60, lat: 60 });
    await createZone(svc.deps.db, { store_id: inactive, polygon: box, priority: 100 });
    await createZone(svc.deps.db, { store_id: pickupOnly, polygon: box, priority: 100 });
    await createZone(svc.deps.db, { store_id: open, polygon: box, priority: 100, is_active: false });
    expect((await canUse(Q)).body).toBeNull();
    const zones = await svc.client.call.GET('/api/logistics/stores/delivery/zones');
    expect(zones.body.map((z: { store_id: string }) => z.store_id)).not.toEqual(expect.arrayContaining([inactive]));
    expect(zones.body.some((z: { store_id: string }) => [inactive, pickupOnly, open].includes(z.store_id))).toBe(false);
    const served = await createZone(svc.deps.db, { store_id: open, polygon: box, priority: 0 });
    expect((await canUse(Q)).body).toBe(open);
    expect((await checkMany([{ uuid: randomUUID(), location: Q }])).body.results[0].zone_id).toBe(served);
  });
});

describe('listDeliveryZones', () => {
  it('lists the active zones of delivering stores, by store, priority descending, id', async () => {
    const { data, response } = await svc.client.api.GET('/api/logistics/stores/delivery/zones');
    expect(response.status).toBe(200);
    const demo = data!.filter((z) => [TVERSKAYA.id, ARBAT.id, KHAMOVNIKI.id].includes(z.store_id));
    expect(demo.map((z) => z.id).sort()).toEqual(
      DEMO_ZONES.filter((z) => z.is_active !== false)
        .map((z) => z.id)
        .sort(),
    );
    const order = [...data!].sort((a, b) =>
      a.store_id < b.store_id ? -1 : a.store_id > b.store_id ? 1 : b.priority - a.priority || (a.id < b.id ? -1 : 1),
    );
    expect(data!.map((z) => z.id)).toEqual(order.map((z) => z.id));
    const khamovniki = data!.find((z) => z.id === zoneId('KHAMOVNIKI'))!;
    expect(khamovniki).toMatchObject({
      store_id: KHAMOVNIKI.id,
      name: 'Khamovniki and Luzhniki',
      priority: 5,
      delivery_cost: '99.00',
      free_amount_threshold: '2000.00',
      min_order_amount: '500.00',
    });
    expect(khamovniki.polygon.type).toBe('MultiPolygon');
    expect(khamovniki.polygon.coordinates).toHaveLength(2);
    const centre = data!.find((z) => z.id === zoneId('TVERSKAYA-CENTRE'))!;
    expect(centre.polygon.coordinates).toHaveLength(2); // outer ring and the Kremlin hole
  });

  it('names zones in Russian for Accept-Language: ru', async () => {
    const r = await svc.client.call.GET('/api/logistics/stores/delivery/zones', { headers: { 'Accept-Language': 'ru' } });
    expect(r.body.find((z: { id: string }) => z.id === zoneId('KHAMOVNIKI')).name).toBe('Хамовники и Лужники');
  });
});

describe('the database refuses unusable zone polygons', () => {
  it('rejects open rings, too few positions and wrong types', async () => {
    const store = await createStore(svc.deps.db);
    for (const polygon of [
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 1],
          ],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      },
      { type: 'Point', coordinates: [0, 0] },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 95],
            [0, 0],
          ],
        ],
      },
    ]) {
      await expect(createZone(svc.deps.db, { store_id: store, polygon: polygon as any })).rejects.toThrow(
        /geojson_area_is_valid|check constraint/,
      );
    }
  });
});
