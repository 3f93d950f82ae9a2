// Favorites: add (idempotent, safe in parallel), remove (idempotent), check; on the fixture catalog.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProductId } from '../../db/seed/catalog.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { tokensFor } from '../support/tokens.js';
import { loadFixture, P } from './fixture.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
  await loadFixture(svc);
});
afterAll(() => svc?.close());

const add = (id: string, headers: Record<string, string>) =>
  svc.client.call.POST('/api/catalog/products/add-favorite/{product_id}', { params: { path: { product_id: id } }, headers });
const remove = (id: string, headers: Record<string, string>) =>
  svc.client.call.DELETE('/api/catalog/products/remove-favorite/{product_id}', { params: { path: { product_id: id } }, headers });
type Check = NonNullable<operations['checkFavoriteProducts']['requestBody']>['content']['application/json'];
const checkFavorites = (body: Check, headers: Record<string, string>) =>
  svc.client.call.POST('/api/catalog/products/favorites/check', { headers, body });
/** Deliberately invalid: bodies the schema refuses, too large, or no token. */
const checkInvalid = (body: unknown, headers: Record<string, string>) =>
  svc.client.invalid('POST', '/api/catalog/products/favorites/check', { headers, body: body as object });

describe('addFavoriteProduct', () => {
  it('adds a product, and says already_added the second time', async () => {
    const c = await signInCustomer(svc);
    const first = await add(P.M1, c.auth);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ status: 'added', product_id: P.M1 });
    expect((await add(P.M1.toUpperCase(), c.auth)).body).toEqual({ status: 'already_added', product_id: P.M1 });
  });

  it('adds exactly once when the same product is added in parallel', async () => {
    const c = await signInCustomer(svc);
    const results = await Promise.all(Array.from({ length: 12 }, () => add(P.C1, c.auth)));
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(results.filter((r) => r.body.status === 'added')).toHaveLength(1);
    expect((await checkFavorites({ product_ids: [P.C1] }, c.auth)).body.product_ids).toEqual([P.C1]);
  });

  it('answers 404 for an unknown or withdrawn product, 422 for a non-UUID id, 401 without a customer token', async () => {
    const c = await signInCustomer(svc);
    expect((await add(randomUUID(), c.auth)).status).toBe(404);
    expect((await add(demoProductId('P000001'), c.auth)).body.code).toBe('NOT_FOUND');
    expect((await add('milk', c.auth)).body.code).toBe('VALIDATION_ERROR');
    expect((await svc.client.invalid('POST', `/api/catalog/products/add-favorite/${P.M1}`)).status).toBe(401);
    expect((await add(P.M1, { authorization: `Bearer ${tokensFor(svc.config).sign('picker_access')}` })).status).toBe(401);
  });
});

describe('removeFavoriteProduct', () => {
  it('removes a favorite, and answers 204 again when it is no longer one', async () => {
    const c = await signInCustomer(svc);
    await add(P.M3, c.auth);
    const r = await remove(P.M3, c.auth);
    expect(r.status).toBe(204);
    expect(r.body).toBeUndefined();
    expect((await remove(P.M3, c.auth)).status).toBe(204);
    expect((await checkFavorites({ product_ids: [P.M3] }, c.auth)).body.product_ids).toEqual([]);
  });

  it('removes a favorite whose product has been withdrawn since', async () => {
    const c = await signInCustomer(svc);
    await add(P.S1, c.auth);
    await svc.deps.db.updateTable('products').set({ is_active: false }).where('id', '=', P.S1).execute();
    try {
      expect((await remove(P.S1, c.auth)).status).toBe(204);
    } finally {
      await svc.deps.db.updateTable('products').set({ is_active: true }).where('id', '=', P.S1).execute();
    }
  });

  it('answers 404 for an id that is neither a product nor a favorite, 422 for a non-UUID id, 401 without a token', async () => {
    const c = await signInCustomer(svc);
    const r = await remove(randomUUID(), c.auth);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
    expect((await svc.client.invalid('DELETE', '/api/catalog/products/remove-favorite/milk', { headers: c.auth })).status).toBe(422);
    expect((await svc.client.invalid('DELETE', `/api/catalog/products/remove-favorite/${P.M1}`)).status).toBe(401);
  });
});

describe('checkFavoriteProducts', () => {
  it("returns the favorites among the ids, in the order sent, each once; other customers' favorites do not count", async () => {
    const c = await signInCustomer(svc);
    const other = await signInCustomer(svc);
    await add(P.B1, c.auth);
    await add(P.M1, c.auth);
    await add(P.M4, other.auth);
    const r = await checkFavorites({ product_ids: [P.M1, P.M4, randomUUID(), P.B1, P.M1] }, c.auth);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ product_ids: [P.M1, P.B1] });
    expect((await checkFavorites({ product_ids: [] }, c.auth)).body).toEqual({ product_ids: [] });
    // Upper-case ids (iOS UUID strings) match, and come back as sent.
    const upper = await checkFavorites({ product_ids: [P.B1.toUpperCase(), P.M1, P.B1] }, c.auth);
    expect(upper.body).toEqual({ product_ids: [P.B1.toUpperCase(), P.M1] });
  });

  it('answers 422 for 101 ids, a non-UUID id or an unknown property; 400 for bad JSON; 401 without a token', async () => {
    const c = await signInCustomer(svc);
    const ids = Array.from({ length: 101 }, () => randomUUID());
    expect((await checkFavorites({ product_ids: ids.slice(0, 100) }, c.auth)).status).toBe(200);
    for (const body of [{ product_ids: ids }, { product_ids: ['milk'] }, { product_ids: [], extra: 1 }, {}]) {
      const r = await checkInvalid(body, c.auth);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await checkInvalid('{', c.auth)).status).toBe(400);
    const huge = await checkInvalid({ product_ids: [], pad: 'x'.repeat(svc.config.bodyLimitBytes) }, c.auth);
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');
    expect((await checkInvalid({ product_ids: [] }, {})).status).toBe(401);
  });
});
