// Listing pages and product cards kept for CATALOG_PRODUCTS_CACHE_SECONDS
// (services/products-cache.ts): a kept answer serves stock and prices up to that old, never
// mixes stores, languages, filters, sorts, pages or products, and always shows the signed-in
// customer's current favourites; a favourites page and a product not found are never kept. On the
// hand-made fixture catalog (test/catalog/fixture.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { CATEGORY, loadFixture, P, STORE_A, STORE_B } from './fixture.js';
import type { operations } from '../../generated/api.test.js';

const KEPT_SECONDS = 1;

let kept: TestService;
let unkept: TestService;
beforeAll(async () => {
  [kept, unkept] = await Promise.all([
    startTestService({ env: { CATALOG_PRODUCTS_CACHE_SECONDS: String(KEPT_SECONDS) } }),
    startTestService({ env: { CATALOG_PRODUCTS_CACHE_SECONDS: '0' } }),
  ]);
  await Promise.all([loadFixture(kept), loadFixture(unkept)]);
});
afterAll(() => Promise.all([kept?.close(), unkept?.close()]));

interface Card {
  id: string;
  name: string;
  stock: string;
  unit_price: string;
  is_favorite: boolean;
}
interface Page {
  items: Card[];
  count: number;
  has_next: boolean;
}

type ListQuery = NonNullable<operations['listCatalogProducts']['parameters']['query']>;
async function list(
  svc: TestService,
  query: ListQuery,
  opts: { store?: string; lang?: string; auth?: Record<string, string> } = {},
): Promise<Page> {
  const r = await svc.client.call.GET('/api/catalog/products/', {
    params: { query },
    headers: { 'x-store-id': opts.store ?? STORE_A!.id, 'accept-language': opts.lang ?? 'en', ...opts.auth },
  });
  expect(r.status).toBe(200);
  return r.body as Page;
}

const setStock = (svc: TestService, productId: string, stock: string) =>
  svc.deps.db
    .updateTable('inventories')
    .set({ stock })
    .where('product_id', '=', productId)
    .where('store_id', '=', STORE_A!.id)
    .where('is_default', '=', true)
    .execute();
const stockOf = (page: Page, id: string) => page.items.find((c) => c.id === id)?.stock;

describe('a kept listing page', () => {
  it('serves the stock it read until it is older than the setting, then reads again', async () => {
    const query = { category_id: CATEGORY.milk };
    expect(stockOf(await list(kept, query), P.M1)).toBe('10.000');
    await setStock(kept, P.M1, '6.000');
    expect(stockOf(await list(kept, query), P.M1)).toBe('10.000');
    kept.clock.advance(KEPT_SECONDS * 1000 + 100);
    expect(stockOf(await list(kept, query), P.M1)).toBe('6.000');
  });

  it('is not kept at all with the setting 0', async () => {
    const query = { category_id: CATEGORY.milk };
    expect(stockOf(await list(unkept, query), P.M1)).toBe('10.000');
    await setStock(unkept, P.M1, '6.000');
    expect(stockOf(await list(unkept, query), P.M1)).toBe('6.000');
  });

  it('never answers another store, language, filter, sort, page size, page or search', async () => {
    // Each variant is asked after the base page was kept, and must equal what a service that
    // keeps nothing answers for it.
    const base: ListQuery = { category_id: CATEGORY.dairy };
    const variants: [ListQuery, { store?: string; lang?: string }][] = [
      [base, { lang: 'ru' }],
      [base, { store: STORE_B!.id }],
      [{ ...base, only_discount: true }, {}],
      [{ ...base, is_top: true }, {}],
      [{ ...base, is_new: true }, {}],
      [{ ...base, is_fresh: true }, {}],
      [{ ...base, sort_by: 'more_discount' }, {}],
      [{ ...base, sort_by: 'expensive' }, {}],
      [{ ...base, page_size: 2 }, {}],
      [{ ...base, page_size: 2, page: 2 }, {}],
      [{ ...base, search: 'kefir' }, {}],
      [{ ...base, search: 'milk' }, {}],
      [{ category_id: CATEGORY.cheese }, {}],
      [{}, {}],
    ];
    const basePage = await list(kept, base);
    for (const [query, opts] of variants) {
      const fromKept = await list(kept, query, opts);
      const fresh = await list(unkept, query, opts);
      expect({ query, opts, page: fromKept }).toEqual({ query, opts, page: fresh });
      // Each variant's page differs from the kept base page, so serving that one would show.
      expect(JSON.stringify(fresh), `${JSON.stringify(query)} ${JSON.stringify(opts)}`).not.toBe(JSON.stringify(basePage));
    }
  });

  it("shows each customer's favourites as they are now, and none to an anonymous caller", async () => {
    const query: ListQuery = { category_id: CATEGORY.milk, sort_by: 'expensive' };
    const a = await signInCustomer(kept);
    const b = await signInCustomer(kept);
    expect((await list(kept, query, { auth: a.auth })).items.every((c) => !c.is_favorite)).toBe(true); // now kept
    expect(
      (
        await kept.client.call.POST('/api/catalog/products/add-favorite/{product_id}', {
          params: { path: { product_id: P.M3 } },
          headers: a.auth,
        })
      ).status,
    ).toBe(200);
    const ofA = await list(kept, query, { auth: a.auth });
    expect(ofA.items.filter((c) => c.is_favorite).map((c) => c.id)).toEqual([P.M3]);
    expect((await list(kept, query, { auth: b.auth })).items.some((c) => c.is_favorite)).toBe(false);
    expect((await list(kept, query)).items.some((c) => c.is_favorite)).toBe(false);
    // A page first read by a customer with a favourite is kept without it.
    const other: ListQuery = { category_id: CATEGORY.milk, sort_by: 'cheap' };
    expect((await list(kept, other, { auth: a.auth })).items.filter((c) => c.is_favorite).map((c) => c.id)).toEqual([P.M3]);
    expect((await list(kept, other)).items.some((c) => c.is_favorite)).toBe(false);
    expect((await list(kept, other, { auth: b.auth })).items.some((c) => c.is_favorite)).toBe(false);
    // Removed: gone at once, kept page or not.
    expect(
      (
        await kept.client.call.DELETE('/api/catalog/products/remove-favorite/{product_id}', {
          params: { path: { product_id: P.M3 } },
          headers: a.auth,
        })
      ).status,
    ).toBe(204);
    expect((await list(kept, query, { auth: a.auth })).items.some((c) => c.is_favorite)).toBe(false);
  });

  it("never keeps a customer's favourites page", async () => {
    const a = await signInCustomer(kept);
    expect((await list(kept, { is_favorite: true }, { auth: a.auth })).count).toBe(0);
    await kept.client.call.POST('/api/catalog/products/add-favorite/{product_id}', {
      params: { path: { product_id: P.B1 } },
      headers: a.auth,
    });
    expect((await list(kept, { is_favorite: true }, { auth: a.auth })).items.map((c) => c.id)).toEqual([P.B1]);
  });
});

interface Product {
  id: string;
  name: string;
  is_favorite: boolean;
  inventories: { id: string; stock: string | null; unit_price: string }[];
}

async function product(svc: TestService, id: string, opts: { store?: string; lang?: string; auth?: Record<string, string> } = {}) {
  return svc.client.call.GET('/api/catalog/products/{product_id}', {
    params: { path: { product_id: id } },
    headers: { 'x-store-id': opts.store ?? STORE_A!.id, 'accept-language': opts.lang ?? 'en', ...opts.auth },
  });
}
const productBody = async (svc: TestService, id: string, opts: Parameters<typeof product>[2] = {}) => {
  const r = await product(svc, id, opts);
  expect(r.status).toBe(200);
  return r.body as Product;
};

describe('a kept product card', () => {
  it('serves the stock and price it read until it is older than the setting, then reads again', async () => {
    expect((await productBody(kept, P.M4)).inventories[0]).toMatchObject({ stock: '3.000', unit_price: '149.00' });
    await kept.deps.db
      .updateTable('inventories')
      .set({ stock: '1.000', unit_price: '139.00' })
      .where('product_id', '=', P.M4)
      .where('store_id', '=', STORE_A!.id)
      .execute();
    expect((await productBody(kept, P.M4)).inventories[0]).toMatchObject({ stock: '3.000', unit_price: '149.00' });
    kept.clock.advance(KEPT_SECONDS * 1000 + 100);
    expect((await productBody(kept, P.M4)).inventories[0]).toMatchObject({ stock: '1.000', unit_price: '139.00' });
  });

  it('never answers another store, language or product', async () => {
    await productBody(kept, P.M1);
    for (const [id, opts] of [
      [P.M1, { lang: 'ru' }],
      [P.M1, { store: STORE_B!.id }],
      [P.M3, {}],
    ] as const) {
      // Inventory ids are the import's own in each database; the rest must be equal.
      const comparable = (p: Product) => ({ ...p, inventories: p.inventories.map(({ id: _id, ...rest }) => rest) });
      expect({ id, opts, body: comparable(await productBody(kept, id, opts)) }).toEqual({
        id,
        opts,
        body: comparable(await productBody(unkept, id, opts)),
      });
    }
    expect((await productBody(kept, P.M1, { lang: 'ru' })).name).toBe('Молоко 3,2%');
    expect((await productBody(kept, P.M1, { store: STORE_B!.id })).inventories[0]!.unit_price).toBe('92.00');
  });

  it("shows each customer's favourite as it is now", async () => {
    const a = await signInCustomer(kept);
    const b = await signInCustomer(kept);
    expect((await productBody(kept, P.C1, { auth: a.auth })).is_favorite).toBe(false); // now kept
    await kept.client.call.POST('/api/catalog/products/add-favorite/{product_id}', {
      params: { path: { product_id: P.C1 } },
      headers: a.auth,
    });
    expect((await productBody(kept, P.C1, { auth: a.auth })).is_favorite).toBe(true);
    expect((await productBody(kept, P.C1, { auth: b.auth })).is_favorite).toBe(false);
    expect((await productBody(kept, P.C1)).is_favorite).toBe(false);
    await kept.client.call.DELETE('/api/catalog/products/remove-favorite/{product_id}', {
      params: { path: { product_id: P.C1 } },
      headers: a.auth,
    });
    expect((await productBody(kept, P.C1, { auth: a.auth })).is_favorite).toBe(false);
  });

  it('does not keep a product that was not found', async () => {
    await kept.deps.db.updateTable('products').set({ is_active: false }).where('id', '=', P.S1).execute();
    expect((await product(kept, P.S1)).status).toBe(404);
    await kept.deps.db.updateTable('products').set({ is_active: true }).where('id', '=', P.S1).execute();
    expect((await product(kept, P.S1)).status).toBe(200);
  });
});

describe('how old an answer is', () => {
  let slow: TestService;
  beforeAll(async () => {
    slow = await startTestService({ env: { CATALOG_PRODUCTS_CACHE_SECONDS: '5' } });
    await loadFixture(slow);
  });
  afterAll(() => slow?.close());
  const headers = { 'x-store-id': STORE_A!.id, 'accept-language': 'en' };

  it('says so on listings and cards: Age since the read, Cache-Control max-age the setting', async () => {
    const reads = {
      [`/api/catalog/products/?category_id=${CATEGORY.milk}`]: () =>
        slow.client.call.GET('/api/catalog/products/', { params: { query: { category_id: CATEGORY.milk } }, headers }),
      [`/api/catalog/products/${P.M4}`]: () =>
        slow.client.call.GET('/api/catalog/products/{product_id}', { params: { path: { product_id: P.M4 } }, headers }),
    };
    for (const [path, read] of Object.entries(reads)) {
      const first = await read();
      expect(first.status, path).toBe(200);
      expect(first.headers.get('cache-control'), path).toBe('private, max-age=5');
      expect(first.headers.get('age'), path).toBe('0');
      slow.clock.advance(1100);
      const again = await read();
      expect(again.headers.get('cache-control'), path).toBe('private, max-age=5');
      expect(Number(again.headers.get('age')), path).toBeGreaterThanOrEqual(1);
      expect(Number(again.headers.get('age')), path).toBeLessThanOrEqual(5);
    }
  });

  it('is read live, and says so, with the setting 0 and on a favourites page', async () => {
    const live = await unkept.client.call.GET('/api/catalog/products/{product_id}', { params: { path: { product_id: P.M4 } }, headers });
    expect([live.headers.get('cache-control'), live.headers.get('age')]).toEqual(['private, max-age=0', '0']);
    const a = await signInCustomer(slow);
    const favourites = await slow.client.call.GET('/api/catalog/products/', {
      params: { query: { is_favorite: true } },
      headers: { ...headers, ...a.auth },
    });
    expect([favourites.headers.get('cache-control'), favourites.headers.get('age')]).toEqual(['private, max-age=0', '0']);
  });
});
