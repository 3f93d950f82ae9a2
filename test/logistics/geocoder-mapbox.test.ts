// The HTTP geocoder adapter (Mapbox Geocoding v6), with the provider played by msw: mapping and
// ordering of answers, the radius rule of reverse geocoding, and every failure (5xx, timeout,
// network, garbage) becoming 502 GEOCODER_UNAVAILABLE within the timeout, never a 500.
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { GeocoderUnavailableError, MapboxGeocoder } from '../../platform/providers/geocoder/index.js';
import { startTestService, type TestService } from '../support/service.js';

const PROVIDER = 'https://geocoder.example.test';
const FORWARD = `${PROVIDER}/search/geocode/v6/forward`;
const REVERSE = `${PROVIDER}/search/geocode/v6/reverse`;
const TIMEOUT_MS = 300;
const provider = setupServer();
const seen: URL[] = [];

let svc: TestService;
beforeAll(async () => {
  // Requests to the service under test (127.0.0.1) pass through; anything else unhandled fails.
  provider.listen({
    onUnhandledRequest(request, print) {
      if (new URL(request.url).hostname !== '127.0.0.1') print.error();
    },
  });
  provider.events.on('request:start', ({ request }) => {
    if (request.url.startsWith(PROVIDER)) seen.push(new URL(request.url));
  });
  svc = await startTestService({
    env: {
      GEOCODER_PROVIDER: 'mapbox',
      GEOCODER_URL: `${PROVIDER}/`,
      GEOCODER_ACCESS_TOKEN: 'sk.test-token',
      GEOCODER_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
});
afterEach(() => {
  provider.resetHandlers();
  seen.length = 0;
});
afterAll(async () => {
  await svc?.close();
  provider.close();
});

const feature = (type: string, name: string, lon: number, lat: number, full: string | null = `${name}, Moscow, Russia`) => ({
  type: 'Feature',
  id: `dXJuOm1ieGFkcjo${name}`,
  geometry: { type: 'Point', coordinates: [lon, lat] },
  properties: {
    mapbox_id: `id-${name}`,
    feature_type: type,
    name,
    full_address: full,
    place_formatted: 'Moscow, Russia',
    coordinates: { longitude: lon, latitude: lat },
  },
});
const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features, attribution: 'test' });

const adapter = () =>
  new MapboxGeocoder(
    loadConfig({
      ...process.env,
      GEOCODER_PROVIDER: 'mapbox',
      GEOCODER_ACCESS_TOKEN: 'sk.unit',
      GEOCODER_URL: PROVIDER,
      GEOCODER_TIMEOUT_MS: String(TIMEOUT_MS),
    }).logistics.geocoder,
    createLogger('silent'),
  );

const NEAR = { lon: 37.6103, lat: 55.7616 };

describe('MapboxGeocoder.suggest', () => {
  it('sends the query, point, language, limit and token, and maps the answer nearest first', async () => {
    provider.use(
      http.get(FORWARD, () =>
        HttpResponse.json(
          collection(
            feature('address', 'Tverskaya Street 7', 37.6106, 55.7579),
            feature('street', 'Tverskaya Street', 37.6052, 55.7638, null),
            feature('place', 'Tver', 35.9119, 56.8587),
            feature('poi', 'Broken', Number.NaN, 55.7),
            { type: 'Feature', properties: { feature_type: 'address', name: 'No coordinates' } },
          ),
        ),
      ),
    );
    const result = await adapter().suggest({ query: 'tver 7', near: NEAR, limit: 7, lang: 'ru' });
    expect(result).toEqual([
      { title: 'Tverskaya Street', category: 'street', location: { lon: 37.6052, lat: 55.7638 }, place_name: null },
      {
        title: 'Tverskaya Street 7',
        category: 'address',
        location: { lon: 37.6106, lat: 55.7579 },
        place_name: 'Tverskaya Street 7, Moscow, Russia',
      },
      { title: 'Tver', category: 'locality', location: { lon: 35.9119, lat: 56.8587 }, place_name: 'Tver, Moscow, Russia' },
    ]);
    const url = seen[0];
    expect(url!.searchParams.get('q')).toBe('tver 7');
    expect(url!.searchParams.get('proximity')).toBe('37.6103,55.7616');
    expect(url!.searchParams.get('language')).toBe('ru');
    expect(url!.searchParams.get('limit')).toBe('7');
    expect(url!.searchParams.get('access_token')).toBe('sk.unit');
  });

  it('never asks for more than the provider allows, and cuts to the limit', async () => {
    provider.use(
      http.get(FORWARD, () =>
        HttpResponse.json(collection(...Array.from({ length: 10 }, (_, i) => feature('address', `House ${i}`, 37.61 + i / 1000, 55.76)))),
      ),
    );
    const result = await adapter().suggest({ query: 'house', near: NEAR, limit: 20, lang: 'en' });
    expect(seen[0]!.searchParams.get('limit')).toBe('10');
    expect(result).toHaveLength(10);
    const three = await adapter().suggest({ query: 'house', near: NEAR, limit: 3, lang: 'en' });
    expect(three.map((s) => s.title)).toEqual(['House 0', 'House 1', 'House 2']);
  });

  it('turns a 5xx, a 429, a 401, garbage, a wrong shape and a network error into GeocoderUnavailableError', async () => {
    const failures = [
      () => HttpResponse.json({ message: 'down' }, { status: 503 }),
      () => HttpResponse.json({ message: 'slow down' }, { status: 429 }),
      () => HttpResponse.json({ message: 'Not Authorized - Invalid Token' }, { status: 401 }),
      () => new HttpResponse('<html>oops</html>', { status: 200, headers: { 'content-type': 'text/html' } }),
      () => HttpResponse.json({ type: 'FeatureCollection' }),
      () => HttpResponse.error(),
    ];
    for (const answer of failures) {
      provider.use(http.get(FORWARD, answer));
      await expect(adapter().suggest({ query: 'tver', near: NEAR, limit: 7, lang: 'en' })).rejects.toBeInstanceOf(GeocoderUnavailableError);
      provider.resetHandlers();
    }
  });

  it('gives up at the timeout, also when the body trickles in', async () => {
    provider.use(
      http.get(FORWARD, async () => {
        await delay(5_000);
        return HttpResponse.json(collection());
      }),
    );
    const started = performance.now();
    await expect(adapter().suggest({ query: 'tver', near: NEAR, limit: 7, lang: 'en' })).rejects.toBeInstanceOf(GeocoderUnavailableError);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 500);

    provider.resetHandlers();
    provider.use(
      http.get(FORWARD, () => {
        const stream = new ReadableStream({
          async start(controller) {
            controller.enqueue(new TextEncoder().encode('{"type":"FeatureCollection","features":['));
            await delay(5_000);
            controller.enqueue(new TextEncoder().encode(']}'));
            controller.close();
          },
        });
        return new HttpResponse(stream, { headers: { 'content-type': 'application/json' } });
      }),
    );
    const again = performance.now();
    await expect(adapter().suggest({ query: 'tver', near: NEAR, limit: 7, lang: 'en' })).rejects.toBeInstanceOf(GeocoderUnavailableError);
    expect(performance.now() - again).toBeLessThan(TIMEOUT_MS + 500);
  });
});

describe('MapboxGeocoder.reverse', () => {
  it('prefers a building inside the radius to a nearer street and drops what lies beyond it', async () => {
    const at = { lon: 37.6106, lat: 55.7579 };
    provider.use(
      http.get(REVERSE, () =>
        HttpResponse.json(
          collection(
            feature('street', 'Tverskaya Street', at.lon, at.lat + 0.0001),
            feature('address', 'Tverskaya Street 7', at.lon, at.lat + 0.0006), // ~67 m
            feature('address', 'Tverskaya Street 9', at.lon, at.lat + 0.002), // ~222 m
          ),
        ),
      ),
    );
    const found = await adapter().reverse({ point: at, radiusMeters: 100, lang: 'en' });
    expect(found).toMatchObject({ title: 'Tverskaya Street 7', category: 'address' });
    const url = seen[0];
    expect(url!.searchParams.get('longitude')).toBe(String(at.lon));
    expect(url!.searchParams.get('latitude')).toBe(String(at.lat));
    expect(url!.searchParams.get('types')).toBe('address,street');
    expect(await adapter().reverse({ point: at, radiusMeters: 50, lang: 'en' })).toMatchObject({
      title: 'Tverskaya Street',
      category: 'street',
    });
    expect(await adapter().reverse({ point: at, radiusMeters: 5, lang: 'en' })).toBeNull();
  });
});

describe('the operations with the HTTP geocoder', () => {
  it('serve address suggestions and reverse geocoding from the provider', async () => {
    provider.use(
      http.get(FORWARD, () => HttpResponse.json(collection(feature('address', 'Tverskaya Street 7', 37.6106, 55.7579)))),
      http.get(REVERSE, () => HttpResponse.json(collection(feature('address', 'Tverskaya Street 7', 37.6106, 55.7579)))),
    );
    const s = await svc.client.call.GET('/api/logistics/map/address-suggestions', {
      params: { query: { lon: 37.61, lat: 55.76, query: 'tver 7' } },
    });
    expect(s.status).toBe(200);
    expect(s.body).toEqual([
      {
        title: 'Tverskaya Street 7',
        category: 'address',
        location: { lon: 37.6106, lat: 55.7579 },
        place_name: 'Tverskaya Street 7, Moscow, Russia',
      },
    ]);
    expect(seen[0]!.searchParams.get('access_token')).toBe('sk.test-token');
    expect(seen[0]!.searchParams.get('limit')).toBe('7');
    const r = await svc.client.call.POST('/api/logistics/map/reverse-geocode', { body: { lon: 37.6106, lat: 55.7579 } });
    expect(r.status).toBe(200);
    expect(r.body.address.title).toBe('Tverskaya Street 7');
  });

  it('answer 502 GEOCODER_UNAVAILABLE when the provider fails, within the timeout', async () => {
    provider.use(
      http.get(FORWARD, () => HttpResponse.json({ message: 'down' }, { status: 500 })),
      http.get(REVERSE, async () => {
        await delay(5_000);
        return HttpResponse.json(collection());
      }),
    );
    const s = await svc.client.call.GET('/api/logistics/map/address-suggestions', {
      params: { query: { lon: 37.61, lat: 55.76, query: 'tver' } },
    });
    expect(s.status).toBe(502);
    expect(s.body.code).toBe('GEOCODER_UNAVAILABLE');
    const started = performance.now();
    const r = await svc.client.call.POST('/api/logistics/map/reverse-geocode', { body: { lon: 37.6106, lat: 55.7579 } });
    expect(r.status).toBe(502);
    expect(r.body.code).toBe('GEOCODER_UNAVAILABLE');
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 500);
    // The token never leaves in an error body.
    expect(JSON.stringify([s.body, r.body])).not.toContain('sk.test-token');
  });

  it('still checks the query length before asking the provider', async () => {
    const r = await svc.client.call.GET('/api/logistics/map/address-suggestions', {
      params: { query: { lon: 37.61, lat: 55.76, query: ' x ' } },
    });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('QUERY_TOO_SHORT');
    expect(seen).toHaveLength(0);
  });
});

describe('configuration', () => {
  it('refuses the HTTP geocoder without a token, and a map without a public token', () => {
    expect(() => loadConfig({ GEOCODER_PROVIDER: 'mapbox', JWT_SECRET: 'x'.repeat(40) })).toThrow(/GEOCODER_ACCESS_TOKEN/);
    expect(() => loadConfig({ GEOCODER_PROVIDER: 'google', JWT_SECRET: 'x'.repeat(40) })).toThrow(/GEOCODER_PROVIDER/);
    expect(() => loadConfig({ MAP_ENABLED: 'true', JWT_SECRET: 'x'.repeat(40) })).toThrow(/MAP_PUBLIC_TOKEN/);
    expect(() => loadConfig({ MAP_SEARCH_MAX_RESULTS: '21', JWT_SECRET: 'x'.repeat(40) })).toThrow(/MAP_SEARCH_MAX_RESULTS/);
    expect(loadConfig({ MAP_PUBLIC_TOKEN: 'pk.x', MAP_ENABLED: 'false', JWT_SECRET: 'x'.repeat(40) }).logistics.map).toMatchObject({
      enabled: false,
      publicToken: null,
    });
  });
});
