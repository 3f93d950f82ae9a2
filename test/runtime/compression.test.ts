// JSON answers of 1 KB and more are gzipped for a client that accepts gzip (server/http.ts send).
// Read with node:http, which, unlike fetch, shows the bytes as they came over the wire.
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { GZIP_FROM_CHARS } from '../../server/http.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

function getOverWire(path: string, headers: Record<string, string>): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    http
      .get(`${svc.url}${path}`, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      })
      .once('error', reject);
  });
}

const LISTING = '/api/catalog/products/?page_size=20';
const catalogHeaders = { 'x-store-id': DEMO_STORES[0].id, 'accept-language': 'ru' };

describe('response compression', () => {
  it('gzips a large JSON answer for a client that accepts gzip, and the contract client reads it', async () => {
    const plain = await getOverWire(LISTING, { ...catalogHeaders, 'accept-encoding': 'identity' });
    const zipped = await getOverWire(LISTING, { ...catalogHeaders, 'accept-encoding': 'gzip, deflate, br' });
    expect(plain.status).toBe(200);
    expect(zipped.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(Number(zipped.headers['content-length'])).toBe(zipped.bytes.length);
    // A cache must keep the two representations apart.
    for (const r of [plain, zipped]) expect(r.headers.vary).toMatch(/\bAccept-Encoding\b/);
    expect(plain.bytes.length).toBeGreaterThan(GZIP_FROM_CHARS);
    expect(JSON.parse(gunzipSync(zipped.bytes).toString('utf8'))).toEqual(JSON.parse(plain.bytes.toString('utf8')));
    // 20 cards repeat their keys and addresses: gzip takes the page to under a fifth.
    expect(zipped.bytes.length).toBeLessThan(plain.bytes.length / 5);

    // fetch (the contract client) asks for gzip, inflates, and checks the body against the spec.
    const r = await svc.client.raw('GET', LISTING, { headers: catalogHeaders });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBe('gzip');
    expect(r.body.items).toHaveLength(20);
  });

  it('sends text when gzip is refused or not offered', async () => {
    for (const acceptEncoding of ['identity', 'gzip;q=0, identity', 'br', '']) {
      const r = await getOverWire(LISTING, { ...catalogHeaders, 'accept-encoding': acceptEncoding });
      expect(r.headers['content-encoding'], acceptEncoding).toBeUndefined();
      expect(JSON.parse(r.bytes.toString('utf8')).items, acceptEncoding).toHaveLength(20);
    }
  });

  it('leaves answers under 1 KB as text', async () => {
    const r = await getOverWire('/api/logistics/map/config', { 'accept-encoding': 'gzip' });
    expect(r.status).toBe(200);
    expect(r.bytes.length).toBeLessThan(GZIP_FROM_CHARS);
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(r.bytes.toString('utf8'))).toHaveProperty('search_min_length');
  });
});
