// Map settings, address search and reverse geocoding against the default geocoder (the gazetteer
// of the demo city in PostgreSQL), through the contract client.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertGazetteerEntries } from '../../db/queries/logistics.js';
import { haversineKm } from '../../domain/geo/geometry.js';
import { startTestService, type TestService } from '../support/service.js';
import { demoStore } from './fixtures.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
let configured: TestService;
beforeAll(async () => {
  [svc, configured] = await Promise.all([
    startTestService(),
    startTestService({
      env: {
        MAP_PUBLIC_TOKEN: 'pk.test-token',
        MAP_STYLE_URI: 'mapbox://styles/grocery/test',
        MAP_SEARCH_MIN_LENGTH: '3',
        MAP_SEARCH_MAX_RESULTS: '3',
        MAP_SEARCH_DEBOUNCE_MS: '250',
        REVERSE_GEOCODE_RADIUS_METERS: '30',
      },
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), configured?.close()]);
});

const TVERSKAYA = demoStore('MSK-TVERSKAYA');

const suggest = (s: TestService, query: string, near = { lon: TVERSKAYA.lon, lat: TVERSKAYA.lat }, headers: Record<string, string> = {}) =>
  s.client.call.GET('/api/logistics/map/address-suggestions', { params: { query: { lon: near.lon, lat: near.lat, query } }, headers });

type Location = NonNullable<operations['reverseGeocodeLocation']['requestBody']>['content']['application/json'];
const reverse = (s: TestService, body: Location, headers: Record<string, string> = {}) =>
  s.client.call.POST('/api/logistics/map/reverse-geocode', { body, headers });
/** Deliberately invalid: bodies the schema refuses, malformed JSON, bodies over the limit. */
const reverseInvalid = (body: unknown, headers: Record<string, string> = {}) =>
  svc.client.invalid('POST', '/api/logistics/map/reverse-geocode', { body: body as string | object, headers });

describe('getMapConfig', () => {
  it('answers the defaults without a map token: no map, search settings of the spec', async () => {
    const { data, response } = await svc.client.api.GET('/api/logistics/map/config');
    expect(response.status).toBe(200);
    expect(data).toEqual({
      enabled: false,
      map_public_token: null,
      style_uri: null,
      search_min_length: 2,
      search_max_results: 7,
      search_debounce_ms: 400,
    });
  });

  it('answers the configured map and search settings', async () => {
    const { data } = await configured.client.api.GET('/api/logistics/map/config');
    expect(data).toEqual({
      enabled: true,
      map_public_token: 'pk.test-token',
      style_uri: 'mapbox://styles/grocery/test',
      search_min_length: 3,
      search_max_results: 3,
      search_debounce_ms: 250,
    });
  });
});

describe('listAddressSuggestions', () => {
  it('finds a house by the beginnings of its words ("tver 7" -> Tverskaya St, 7)', async () => {
    const r = await suggest(svc, 'tver 7');
    expect(r.status).toBe(200);
    const titles = r.body.map((s: { title: string }) => s.title);
    expect(titles).toContain('Tverskaya St, 7');
    const house = r.body.find((s: { title: string }) => s.title === 'Tverskaya St, 7');
    expect(house).toMatchObject({ category: 'address', place_name: 'Tverskaya St, 7, Moscow' });
    // Every result has a word starting with "tver" and one starting with "7".
    for (const s of r.body) {
      const text = `${s.title} ${s.place_name}`;
      expect(text).toMatch(/\btver/i);
      expect(text).toMatch(/\b7/);
    }
  });

  it('orders by distance from the point, nearest first, and returns at most search_max_results', async () => {
    const near = { lon: 37.5537, lat: 55.7158 }; // Luzhniki
    const r = await suggest(svc, 'moscow', near);
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(7);
    const distances = r.body.map((s: { location: { lon: number; lat: number } }) => haversineKm(near, s.location));
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    // The nearest object of the whole gazetteer comes first.
    const all = await svc.deps.db.selectFrom('gazetteer_entries').select(['lon', 'lat']).execute();
    const nearest = Math.min(...all.map((e) => haversineKm(near, e)));
    expect(distances[0]).toBeCloseTo(nearest, 9);
    const limited = await suggest(configured, 'moscow', near);
    expect(limited.body).toHaveLength(3);
  });

  it('is transliteration-, case- and diacritics-tolerant', async () => {
    const titlesOf = async (q: string) => (await suggest(svc, q)).body.map((s: { title: string }) => s.title).sort();
    const expected = await titlesOf('tverskaya 7');
    expect(expected).toContain('Tverskaya St, 7');
    for (const q of ['Тверская 7', 'TVERSKAJA 7', 'tverskaia 7', 'Tverskaja  7 ']) {
      expect(await titlesOf(q), q).toEqual(expected);
    }
    // The street-type word narrows to streets of that type, in either alphabet or spelling.
    for (const q of ['тверская ул 7', 'Tverskaya ulitsa 7', 'tverskaya street 7']) {
      expect(await titlesOf(q), q).toEqual(['Tverskaya St, 7']);
    }
    for (const q of ['shchukinskaya', 'schukinskaja', 'щукинская', 'ŠČUKINSKAJA']) {
      expect(await titlesOf(q), q).toContainEqual(expect.stringMatching(/^Shchukinskaya St/));
    }
    for (const q of ['yolochnaya', 'elochnaja', 'Ёлочная', 'елочная']) {
      expect(await titlesOf(q), q).toContainEqual(expect.stringMatching(/^Yolochnaya St/));
    }
    expect(await titlesOf('hamovnicheskiy val')).toContainEqual(expect.stringMatching(/^Khamovnichesky Val St/));
  });

  it('keeps matching while a word is typed through a letter pair the search folds', async () => {
    const titlesOf = async (q: string, near?: { lon: number; lat: number }) =>
      (await suggest(svc, q, near)).body.map((s: { title: string }) => s.title);
    const kievsky = { lon: 37.5653, lat: 55.7433 };
    for (const q of ['Ки', 'Ki', 'Кие', 'Киевс']) expect(await titlesOf(q, kievsky), q).toContainEqual(expect.stringMatching(/^Kievsky/));
    for (const q of ['Kuzne', 'Kuznet', 'Kuznets']) expect(await titlesOf(q), q).toContainEqual(expect.stringMatching(/^Kuznetsky/));
    const ponds = { lon: 37.593, lat: 55.7637 };
    for (const q of ['Патриарш', 'Патриарши', 'Патриаршие'])
      expect(await titlesOf(q, ponds), q).toContainEqual(expect.stringMatching(/^Patriarch/));
  });

  it('matches word beginnings only and answers an empty list when nothing matches', async () => {
    expect((await suggest(svc, 'verskaya')).body).toEqual([]);
    expect((await suggest(svc, 'zzzz qqqq')).body).toEqual([]);
    // Nothing searchable left after folding punctuation away.
    const punct = await suggest(svc, '!!! ???');
    expect(punct.status).toBe(200);
    expect(punct.body).toEqual([]);
  });

  it('answers in Russian for Accept-Language: ru, and says so in Vary', async () => {
    const r = await suggest(svc, 'tverskaya 7', undefined, { 'Accept-Language': 'ru' });
    expect(r.body.map((s: { title: string }) => s.title)).toContain('Тверская ул., 7');
    expect(r.headers.get('vary')).toMatch(/Accept-Language/i);
  });

  it('answers 422 QUERY_TOO_SHORT when the trimmed query is shorter than search_min_length', async () => {
    const r = await suggest(svc, '  a   ');
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('QUERY_TOO_SHORT');
    const three = await suggest(configured, ' ab ');
    expect(three.status).toBe(422);
    expect(three.body.code).toBe('QUERY_TOO_SHORT');
    expect((await suggest(configured, 'tve')).status).toBe(200);
  });

  it('answers 422 VALIDATION_ERROR for bad or missing parameters (swapped lon/lat included)', async () => {
    const bad = [
      'lon=37.6&lat=55.7',
      'lon=37.6&query=tver',
      'lon=200&lat=55.7&query=tver',
      'lon=37.6&lat=-91&query=tver',
      'lon=37.6&lat=abc&query=tver',
      // A (lat, lon) pair entered the wrong way round far north: lat 155 is out of range.
      'lon=55.7&lat=155.2&query=tver',
      'lon=37.6&lat=55.7&query=a',
      `lon=37.6&lat=55.7&query=${'x'.repeat(201)}`,
    ];
    for (const q of bad) {
      const r = await svc.client.invalid('GET', `/api/logistics/map/address-suggestions?${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body.code, q).toBe('VALIDATION_ERROR');
    }
  });
});

describe('reverseGeocodeLocation', () => {
  it('answers the building at a store point (the store is in its gazetteer building)', async () => {
    const r = await reverse(svc, { lon: TVERSKAYA.lon, lat: TVERSKAYA.lat });
    expect(r.status).toBe(200);
    expect(r.body.address).toEqual({
      title: 'Tverskaya St, 8',
      category: 'address',
      location: { lon: TVERSKAYA.lon, lat: TVERSKAYA.lat },
      place_name: 'Tverskaya St, 8, Moscow',
    });
    const ru = await reverse(svc, { lon: TVERSKAYA.lon, lat: TVERSKAYA.lat }, { 'Accept-Language': 'ru' });
    expect(ru.body.address.title).toBe('Тверская ул., 8');
  });

  it('answers address null when nothing is known within the radius', async () => {
    const r = await reverse(svc, { lon: 0, lat: 0 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ address: null });
  });

  it('prefers a building inside the radius to a nearer street, and ignores what lies beyond it', async () => {
    // A street point right at the pin and a house 80 m north of it, far from the demo city.
    const at = { lon: 20, lat: 20 };
    const metresNorth = (m: number) => ({ lon: at.lon, lat: at.lat + m / 111_195 });
    const streetId = randomUUID();
    await insertGazetteerEntries(svc.deps.db, [
      { id: streetId, category: 'street', title_ru: 'Тестовая ул.', title_en: 'Test St', lon: at.lon, lat: at.lat },
      {
        category: 'address',
        street_id: streetId,
        house_number: '1',
        title_ru: 'Тестовая ул., 1',
        title_en: 'Test St, 1',
        ...metresNorth(80),
      },
    ]);
    const r = await reverse(svc, at);
    expect(r.body.address).toMatchObject({ title: 'Test St, 1', category: 'address' });
    // With a 30 m radius the house is out of reach: the street answers.
    await insertGazetteerEntries(configured.deps.db, [
      { id: streetId, category: 'street', title_ru: 'Тестовая ул.', title_en: 'Test St', lon: at.lon, lat: at.lat },
      {
        category: 'address',
        street_id: streetId,
        house_number: '1',
        title_ru: 'Тестовая ул., 1',
        title_en: 'Test St, 1',
        ...metresNorth(80),
      },
    ]);
    const narrow = await reverse(configured, { lon: at.lon, lat: at.lat + 10 / 111_195 });
    expect(narrow.body.address).toMatchObject({ title: 'Test St', category: 'street' });
    // Among equals the nearest wins.
    await insertGazetteerEntries(svc.deps.db, [
      {
        category: 'address',
        street_id: streetId,
        house_number: '2',
        title_ru: 'Тестовая ул., 2',
        title_en: 'Test St, 2',
        ...metresNorth(-50),
      },
    ]);
    expect((await reverse(svc, at)).body.address.title).toBe('Test St, 2');
  });

  it('answers 422 VALIDATION_ERROR for missing, non-numeric, out-of-range or extra fields', async () => {
    for (const body of [
      { lon: 37.6 },
      { lon: '37.6', lat: 'x' },
      { lon: 37.6, lat: 91 },
      { lon: 181, lat: 55 },
      { lon: 37.6, lat: 55.7, zoom: 3 },
      [],
    ]) {
      const r = await reverseInvalid(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 400 MALFORMED_JSON and 413 PAYLOAD_TOO_LARGE', async () => {
    const malformed = await reverseInvalid('{"lon": 37.6,', { 'content-type': 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe('MALFORMED_JSON');
    const big = await reverseInvalid(JSON.stringify({ lon: 1, lat: 1, pad: 'x'.repeat(svc.config.bodyLimitBytes) }));
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
