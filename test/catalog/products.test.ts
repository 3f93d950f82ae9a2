// Product listing, product screen and recommendations on the hand-made fixture catalog: every
// expected order below is worked out by hand from fixture.ts (in stock first, then the sort).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoProductId } from '../../db/seed/catalog.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { tokensFor } from '../support/tokens.js';
import { CATEGORY, GOUDA_PLU, KEFIR_BARCODE, loadFixture, P, STORE_A, STORE_B, STORE_C, storeHeaders, unitId } from './fixture.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
  await loadFixture(svc);
});
afterAll(() => svc?.close());

type ListQuery = NonNullable<operations['listCatalogProducts']['parameters']['query']>;
const list = (query: ListQuery, headers: Record<string, string> = storeHeaders(STORE_A!.id)) =>
  svc.client.call.GET('/api/catalog/products/', { params: { query }, headers });
/** Deliberately invalid query values, sent as they are. */
const listInvalid = (query: Record<string, string | number | boolean>, headers: Record<string, string> = storeHeaders(STORE_A!.id)) => {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();
  return svc.client.invalid('GET', `/api/catalog/products/${qs ? `?${qs}` : ''}`, { headers });
};
const ids = (body: { items: { id: string }[] }) => body.items.map((i) => i.id);

describe('listCatalogProducts', () => {
  it("lists the store's products, in stock first, then in catalog order", async () => {
    const r = await list({});
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([P.M3, P.M1, P.M4, P.C1, P.B1, P.M2, P.S1]);
    expect(r.body).toMatchObject({ count: 7, has_next: false });
    expect(r.headers.get('vary')).toMatch(/X-Store-Id.*Accept-Language.*Authorization/);
  });

  it('builds each card from the default inventory of the store, in the requested language', async () => {
    const en = await list({});
    const milk = en.body.items.find((i: { id: string }) => i.id === P.M1);
    expect(milk).toEqual({
      id: P.M1,
      name: 'Milk 3.2%',
      unit_id: await unitId(svc, 'pc'),
      stock: '10.000',
      unit_price: '89.90',
      category_id: CATEGORY.milk,
      category_uuid: CATEGORY.milk,
      user_order_quantity_limit: '0.000',
      is_user_order_quantity_limit_enabled: false,
      old_price: '99.90',
      discount_percent: '10.01',
      image: null,
      is_favorite: false,
    });
    const cheese = en.body.items.find((i: { id: string }) => i.id === P.C1);
    expect(cheese).toMatchObject({
      unit_id: await unitId(svc, 'kg'),
      stock: '2.500',
      unit_price: '899.00',
      old_price: null,
      discount_percent: null,
    });
    expect(en.body.items.find((i: { id: string }) => i.id === P.S1)).toMatchObject({ stock: '0.000' }); // stock not reported
    expect(en.body.items.find((i: { id: string }) => i.id === P.M4)).toMatchObject({
      user_order_quantity_limit: '2.000',
      is_user_order_quantity_limit_enabled: true,
    });
    const ru = await list({}, storeHeaders(STORE_A!.id, 'ru'));
    expect(ru.body.items.find((i: { id: string }) => i.id === P.M1).name).toBe('Молоко 3,2%');
  });

  it('sorts by price and discount, always keeping out-of-stock products last', async () => {
    expect(ids((await list({ sort_by: 'cheap' })).body)).toEqual([P.B1, P.M3, P.M1, P.M4, P.C1, P.M2, P.S1]);
    expect(ids((await list({ sort_by: 'expensive' })).body)).toEqual([P.C1, P.M4, P.M1, P.M3, P.B1, P.S1, P.M2]);
    // 25.13% (149 of 199), 15.00% (59.50 of 70), 10.01% (89.90 of 99.90), then no discount in catalog order.
    expect(ids((await list({ sort_by: 'more_discount' })).body)).toEqual([P.M4, P.M3, P.M1, P.C1, P.B1, P.M2, P.S1]);
  });

  it('filters by category with its descendants, and by the merchandising flags', async () => {
    expect(ids((await list({ category_id: CATEGORY.dairy })).body)).toEqual([P.M3, P.M1, P.M4, P.C1, P.M2]);
    expect(ids((await list({ category_id: CATEGORY.milk })).body)).toEqual([P.M3, P.M1, P.M4, P.M2]);
    expect(ids((await list({ category_id: CATEGORY.food, is_fresh: true })).body)).toEqual([P.M3, P.M1, P.B1]);
    expect(ids((await list({ is_top: true })).body)).toEqual([P.M1, P.C1]);
    expect(ids((await list({ is_new: true })).body)).toEqual([P.B1, P.M2]);
    expect(ids((await list({ only_discount: true })).body)).toEqual([P.M3, P.M1, P.M4]);
    expect(ids((await list({ only_discount: false, is_top: false })).body)).toHaveLength(7);
    const unknown = await list({ category_id: randomUUID() });
    expect(unknown.body).toEqual({ items: [], count: 0, has_next: false });
  });

  it('pages with count and has_next, and answers an empty page past the end', async () => {
    const first = await list({ page_size: 3 });
    expect(first.body).toMatchObject({ count: 7, has_next: true });
    expect(ids(first.body)).toEqual([P.M3, P.M1, P.M4]);
    const third = await list({ page_size: 3, page: 3 });
    expect(third.body).toMatchObject({ count: 7, has_next: false });
    expect(ids(third.body)).toEqual([P.S1]);
    expect((await list({ page_size: 3, page: 4 })).body).toEqual({ items: [], count: 7, has_next: false });
    expect((await list({ page_size: 100 })).body.items).toHaveLength(7);
  });

  it('lists only what the selected store sells, at its prices', async () => {
    const b = await list({}, storeHeaders(STORE_B!.id));
    expect(ids(b.body)).toEqual([P.M1, P.B1]);
    expect(b.body.items[0]).toMatchObject({ unit_price: '92.00', stock: '4.000', old_price: null });
    expect((await list({}, storeHeaders(STORE_C!.id))).body).toEqual({ items: [], count: 0, has_next: false });
  });

  it('searches names in both languages, with typos and transliteration, and codes exactly', async () => {
    const found = async (search: string) => ids((await list({ search })).body).sort();
    const milks = [P.M1, P.M2, P.M4].sort();
    expect(await found('молоко')).toEqual(milks);
    expect(await found('малоко')).toEqual(milks); // a typo
    expect(await found('moloko')).toEqual(milks); // Russian typed in Latin
    expect(await found('milk')).toEqual(milks); // the English names
    expect(await found('MILK')).toEqual(milks);
    expect(await found('молоко овсяное')).toEqual([P.M4]); // every word must match
    expect(await found('meadow')).toEqual([P.M1]); // the brand
    expect(await found('кефр')).toEqual([P.M3]);
    expect(await found(KEFIR_BARCODE)).toEqual([P.M3]);
    expect(await found(GOUDA_PLU)).toEqual([P.C1]);
    expect(await found('шоколад')).toEqual([]);
    expect(await found('   ')).toHaveLength(7); // blank is ignored
  });

  it('ranks search results by relevance when no sort is asked, and by the sort when it is', async () => {
    // "milk" is a whole word of "Milk 3.2%", "Baked milk" and "Oat milk"; M2 is out of stock.
    expect(ids((await list({ search: 'молоко 3,2' })).body)).toEqual([P.M1]);
    expect(ids((await list({ search: 'milk', sort_by: 'expensive' })).body)).toEqual([P.M4, P.M1, P.M2]);
  });

  it("keeps the signed-in customer's favorites with is_favorite=true and marks the cards", async () => {
    const c = await signInCustomer(svc);
    await svc.client.call.POST('/api/catalog/products/add-favorite/{product_id}', {
      params: { path: { product_id: P.B1 } },
      headers: c.auth,
    });
    const r = await list({ is_favorite: true }, { ...storeHeaders(STORE_A!.id), ...c.auth });
    expect(r.status).toBe(200);
    expect(ids(r.body)).toEqual([P.B1]);
    expect(r.body.items[0].is_favorite).toBe(true);
    const all = await list({}, { ...storeHeaders(STORE_A!.id), ...c.auth });
    expect(all.body.items.filter((i: { is_favorite: boolean }) => i.is_favorite).map((i: { id: string }) => i.id)).toEqual([P.B1]);
  });

  it('answers 401 for is_favorite=true without a customer token, and for an invalid token', async () => {
    expect((await list({ is_favorite: true })).status).toBe(401);
    const picker = tokensFor(svc.config).sign('picker_access');
    const r = await list({}, { ...storeHeaders(STORE_A!.id), authorization: `Bearer ${picker}` });
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('UNAUTHORIZED');
  });

  it('answers 422 for a missing or unknown store and for bad parameters', async () => {
    const noStore = await list({}, { 'accept-language': 'en' });
    expect(noStore.status).toBe(422);
    expect(noStore.body.code).toBe('STORE_REQUIRED');
    const unknownStore = await list({}, storeHeaders(randomUUID()));
    expect(unknownStore.body.code).toBe('STORE_NOT_FOUND');
    const bad: Record<string, string | number>[] = [
      { sort_by: 'popular' },
      { page_size: 101 },
      { page: 0 },
      { category_id: 'dairy' },
      { is_top: 'maybe' },
      { search: 'x'.repeat(101) },
    ];
    for (const query of bad) {
      const r = await listInvalid(query);
      expect(r.status, JSON.stringify(query)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });
});

describe('getCatalogProduct', () => {
  const get = (id: string, headers: Record<string, string> = storeHeaders(STORE_A!.id)) =>
    svc.client.call.GET('/api/catalog/products/{product_id}', { params: { path: { product_id: id } }, headers });

  it("returns the product screen with the store's inventories, default unit first", async () => {
    const r = await get(P.C1);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: P.C1,
      name: 'Gouda cheese',
      category_id: CATEGORY.cheese,
      category_uuid: CATEGORY.cheese,
      category_name: 'Cheese',
      description: 'Semi-hard cheese.',
      composition: null,
      manufacturer: 'Kaasfabriek',
      made_country: 'Netherlands',
      brand: null,
      image: {
        original: 'https://cdn.example/c1.jpg',
        detail: 'https://cdn.example/c1-d.webp',
        listing: 'https://cdn.example/c1-l.webp',
        thumbnail: 'https://cdn.example/c1-t.webp',
      },
      is_favorite: false,
      weight_based: true,
      weight: '0.300',
      is_user_order_quantity_limit_enabled: false,
      user_order_quantity_limit: '0.000',
      calories: '356.00',
      protein: '25.00',
      fats: '27.50',
      carbohydrates: null,
      inventories: [
        {
          id: expect.any(String),
          unit_id: await unitId(svc, 'kg'),
          stock: '2.500',
          unit_price: '899.00',
          old_price: null,
          discount_percent: null,
        },
        {
          id: expect.any(String),
          unit_id: await unitId(svc, 'g100'),
          stock: '25.000',
          unit_price: '89.90',
          old_price: null,
          discount_percent: null,
        },
      ],
    });
    const ru = await get(P.C1, storeHeaders(STORE_A!.id, 'ru'));
    expect(ru.body).toMatchObject({ name: 'Сыр Гауда', category_name: 'Сыр', made_country: 'Нидерланды', description: 'Полутвёрдый сыр.' });
  });

  it('returns empty inventories in a store that does not sell the product, and the limit of the default unit', async () => {
    expect((await get(P.C1, storeHeaders(STORE_B!.id))).body.inventories).toEqual([]);
    expect((await get(P.S1)).body.inventories[0].stock).toBeNull();
    expect((await get(P.M4)).body).toMatchObject({ is_user_order_quantity_limit_enabled: true, user_order_quantity_limit: '2.000' });
  });

  it('sets is_favorite for the signed-in customer', async () => {
    const c = await signInCustomer(svc);
    await svc.client.call.POST('/api/catalog/products/add-favorite/{product_id}', {
      params: { path: { product_id: P.M3 } },
      headers: c.auth,
    });
    expect((await get(P.M3, { ...storeHeaders(STORE_A!.id), ...c.auth })).body.is_favorite).toBe(true);
    expect((await get(P.M3)).body.is_favorite).toBe(false);
  });

  it('answers 404 for an unknown id, a non-UUID id and a withdrawn product', async () => {
    // The demo products were withdrawn when the fixture replaced the catalog.
    for (const id of [randomUUID(), 'not-a-product', demoProductId('P000001')]) {
      const r = await get(id);
      expect(r.status, id).toBe(404);
      expect(r.body.code).toBe('NOT_FOUND');
    }
  });

  it('answers 401 for a token that is not a customer access token, 422 without a store', async () => {
    const refresh = tokensFor(svc.config).sign('customer_refresh');
    expect((await get(P.M1, { ...storeHeaders(STORE_A!.id), authorization: `Bearer ${refresh}` })).status).toBe(401);
    const r = await get(P.M1, {});
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('STORE_REQUIRED');
  });
});

describe('listProductRecommendations', () => {
  const recommend = (productIds: string[], headers: Record<string, string> = storeHeaders(STORE_A!.id)) =>
    svc.client.call.GET('/api/catalog/products/recommendations', { params: { query: { product_ids: productIds } }, headers });
  /** Deliberately invalid ids (too many, not UUIDs), sent as they are. */
  const recommendInvalid = (productIds: string[]) =>
    svc.client.invalid('GET', `/api/catalog/products/recommendations?${productIds.map((id) => `product_ids=${id}`).join('&')}`, {
      headers: storeHeaders(STORE_A!.id),
    });

  it("recommends in-stock best sellers, those of the given products' categories first", async () => {
    // Best sellers of store A in stock: M1 (milk, popularity 50) and C1 (cheese, 40).
    expect(ids({ items: (await recommend([P.M2])).body })).toEqual([P.M1, P.C1]);
    expect(ids({ items: (await recommend([P.C1])).body })).toEqual([P.M1]);
    expect(ids({ items: (await recommend([P.B1])).body })).toEqual([P.M1, P.C1]);
    expect(ids({ items: (await recommend([P.B1, randomUUID()])).body })).toEqual([P.M1, P.C1]); // unknown ids are ignored
    expect((await recommend([P.M1, P.C1])).body).toEqual([]);
    // Store B has M1 in stock but no other best seller.
    expect(ids({ items: (await recommend([P.B1], storeHeaders(STORE_B!.id))).body })).toEqual([P.M1]);
  });

  it('answers 422 without ids, with more than 50 or with a non-UUID id, and without a store', async () => {
    expect((await svc.client.invalid('GET', '/api/catalog/products/recommendations', { headers: storeHeaders(STORE_A!.id) })).status).toBe(
      422,
    );
    expect((await recommendInvalid(Array.from({ length: 51 }, () => randomUUID()))).status).toBe(422);
    expect((await recommendInvalid(['milk'])).status).toBe(422);
    expect((await recommend([P.M1], {})).body.code).toBe('STORE_REQUIRED');
  });

  it('answers 401 for an invalid token', async () => {
    expect((await recommend([P.M1], { ...storeHeaders(STORE_A!.id), authorization: 'Bearer nope' })).status).toBe(401);
  });
});
