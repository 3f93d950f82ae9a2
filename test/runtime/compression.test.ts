// JSON answers of 1 KB and more are gzipped for a client that accepts gzip (server/http/responses.ts send).
// Read with node:http, which, unlike fetch, shows the bytes as they came over the wire.
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { GZIP_FROM_CHARS } from '../../services/stored-body.js';
import { createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker } from '../support/picking.js';
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
const catalogHeaders = { 'x-store-id': DEMO_STORES[0]!.id, 'accept-language': 'ru' };

describe('response compression', () => {
  it('gzips the served spec (half a megabyte of JSON) for a client that accepts gzip', async () => {
    const zipped = await getOverWire('/openapi.json', { 'accept-encoding': 'gzip' });
    expect([zipped.status, zipped.headers['content-encoding']]).toEqual([200, 'gzip']);
    const doc = JSON.parse(gunzipSync(zipped.bytes).toString('utf8'));
    expect(doc.openapi).toMatch(/^3\./);
    const plain = await getOverWire('/openapi.json', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(zipped.bytes.length * 3).toBeLessThan(plain.bytes.length);
    expect(JSON.parse(plain.bytes.toString('utf8'))).toEqual(doc);
  });

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
    const r = await svc.client.call.GET('/api/catalog/products/', { params: { query: { page_size: 20 } }, headers: catalogHeaders });
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

function postOverWire(path: string, headers: Record<string, string>): Promise<WireResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${svc.url}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe('the answer of a retry-safe command', () => {
  it('is gzipped once: the bytes sent are the bytes stored, and a replay sends them again', async () => {
    const picker = await createPicker(svc, [DEMO_STORES[0]!.id]);
    const products = await stockedProducts(svc, { weight: false, count: 12 });
    const order = await createConfirmedOrder(svc, { lines: products.map((p) => ({ inventoryId: p.inventoryId, quantity: '2' })) });
    const key = '0b7c3f1e-5d0a-4c55-9a39-6f3f6f1f2a11';
    const headers = { ...picker.auth, 'idempotency-key': key, 'accept-encoding': 'gzip' };
    const started = await postOverWire(`/api/picker/orders/${order.orderId}/start`, headers);
    expect(started.status).toBe(200);
    expect(started.headers['content-encoding']).toBe('gzip');
    const stored = await svc.deps.db
      .selectFrom('idempotency_keys')
      .select(['response_body', 'response_gzip'])
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    // A session of 12 items: kept gzipped only, and those are the bytes that went out.
    expect(stored.response_body).toBeNull();
    expect(Buffer.compare(stored.response_gzip!, started.bytes)).toBe(0);
    const session = JSON.parse(gunzipSync(started.bytes).toString('utf8'));
    expect(session.items).toHaveLength(12);

    // The same key again: the stored answer, gzipped or as text.
    const replayed = await postOverWire(`/api/picker/orders/${order.orderId}/start`, headers);
    expect([replayed.status, Buffer.compare(replayed.bytes, started.bytes)]).toEqual([200, 0]);
    const asText = await postOverWire(`/api/picker/orders/${order.orderId}/start`, { ...headers, 'accept-encoding': 'identity' });
    expect(asText.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(asText.bytes.toString('utf8'))).toEqual(session);
    // And through the contract client, checked against the spec.
    const r = await svc.client.call.POST('/api/picker/orders/{order_id}/start', {
      params: { path: { order_id: order.orderId } },
      headers: { ...picker.auth, 'idempotency-key': key },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(session);
  });
});
