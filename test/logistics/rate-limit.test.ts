// The per-client request budget of the public Logistics operations: 429 RATE_LIMITED with
// Retry-After once a client has spent it, on every operation of the tag, per client address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { demoStore } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  // One proxy hop is trusted, so X-Forwarded-For lets the test speak for several clients.
  svc = await startTestService({ env: { LOGISTICS_REQUESTS_PER_MINUTE: '3', TRUST_PROXY_HOPS: '1' } });
});
afterAll(() => svc?.close());

const from = (ip: string) => ({ 'X-Forwarded-For': ip });
const TVERSKAYA = demoStore('MSK-TVERSKAYA');

describe('Logistics request budget', () => {
  it('answers 429 RATE_LIMITED with Retry-After after the budget, shared by all Logistics operations', async () => {
    const ip = '203.0.113.10';
    expect((await svc.client.call.GET('/api/logistics/map/config', { headers: from(ip) })).status).toBe(200);
    expect((await svc.client.call.GET('/api/logistics/stores/delivery/zones', { headers: from(ip) })).status).toBe(200);
    expect(
      (
        await svc.client.call.POST('/api/logistics/stores/delivery/can-use-location', {
          headers: from(ip),
          body: { lon: 37.6, lat: 55.75 },
        })
      ).status,
    ).toBe(200);
    const refused = [
      await svc.client.call.GET('/api/logistics/map/config', { headers: from(ip) }),
      await svc.client.call.GET('/api/logistics/map/address-suggestions', {
        params: { query: { lon: 37.6, lat: 55.75, query: 'tver' } },
        headers: from(ip),
      }),
      await svc.client.call.POST('/api/logistics/map/reverse-geocode', { headers: from(ip), body: { lon: 37.6, lat: 55.75 } }),
      await svc.client.call.POST('/api/logistics/stores/delivery/check-location', { headers: from(ip), body: { lon: 37.6, lat: 55.75 } }),
      await svc.client.call.POST('/api/logistics/stores/delivery/check-multiply-locations', { headers: from(ip), body: [] }),
      await svc.client.call.GET('/api/logistics/stores/delivery/order-preferences', {
        headers: { ...from(ip), 'X-Store-Id': TVERSKAYA.id },
      }),
      await svc.client.call.GET('/api/logistics/stores/delivery/slots', { headers: { ...from(ip), 'X-Store-Id': TVERSKAYA.id } }),
      await svc.client.call.GET('/api/logistics/stores/delivery/zones', { headers: from(ip) }),
      await svc.client.call.GET('/api/logistics/stores/pickup/', { headers: from(ip) }),
      await svc.client.call.GET('/api/logistics/stores/pickup/order-preferences', { headers: { ...from(ip), 'X-Store-Id': TVERSKAYA.id } }),
      await svc.client.call.GET('/api/logistics/stores/pickup/slots', { headers: { ...from(ip), 'X-Store-Id': TVERSKAYA.id } }),
      await svc.client.call.GET('/api/logistics/stores/pickup/{store_id}', {
        params: { path: { store_id: TVERSKAYA.id } },
        headers: from(ip),
      }),
      await svc.client.call.POST('/api/logistics/stores/delivery/can-use-location', { headers: from(ip), body: { lon: 37.6, lat: 55.75 } }),
    ];
    for (const r of refused) {
      expect(r.status, r.operationId).toBe(429);
      expect(r.body.code).toBe('RATE_LIMITED');
      // 3 a minute: the next request is allowed within 20 seconds.
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers.get('retry-after'))).toBeLessThanOrEqual(20);
      expect(r.headers.get('ratelimit-policy')).toBe('"logistics-ip";q=3;w=60');
      expect(r.headers.get('ratelimit')).toBe(`"logistics-ip";r=0;t=${r.headers.get('retry-after')}`);
      expect(r.body.retry_after_seconds).toBe(Number(r.headers.get('retry-after')));
    }
  });

  it('keeps clients apart', async () => {
    const other = await svc.client.call.GET('/api/logistics/map/config', { headers: from('203.0.113.11') });
    expect(other.status).toBe(200);
  });
});
