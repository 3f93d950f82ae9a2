// A search text's resolution against the vocabulary (its candidate words) is reused for
// CATALOG_SEARCH_CACHE_SECONDS (handlers/catalog.ts): a word that a catalog change adds is matched
// once that time has passed; stock and prices are always read fresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  // Listing pages are not kept here: this file watches the search plans alone.
  svc = await startTestService({ env: { CATALOG_SEARCH_CACHE_SECONDS: '1', CATALOG_PRODUCTS_CACHE_SECONDS: '0' } });
});
afterAll(() => svc?.close());

const STORE = DEMO_STORES[0]!.id;
const search = async (text: string) => {
  const r = await svc.client.call.GET('/api/catalog/products/', {
    params: { query: { search: text } },
    headers: { 'x-store-id': STORE, 'accept-language': 'en' },
  });
  expect(r.status).toBe(200);
  return r.body as { items: { id: string; stock: string }[]; count: number };
};

describe('search plans', () => {
  it('match a newly added word once the cache time has passed', async () => {
    expect((await search('zyxwvut')).count).toBe(0);
    const product = await svc.deps.db
      .selectFrom('inventories as i')
      .innerJoin('products as p', 'p.id', 'i.product_id')
      .select('p.id')
      .where('i.store_id', '=', STORE)
      .where('i.is_default', '=', true)
      .where('p.is_active', '=', true)
      .orderBy('p.code')
      .executeTakeFirstOrThrow();
    await svc.deps.db.updateTable('products').set({ name_en: 'Zyxwvut crispbread' }).where('id', '=', product.id).execute();
    expect((await search('zyxwvut')).count).toBe(0); // the plan of a moment ago: no such word
    svc.clock.advance(1100);
    expect((await search('zyxwvut')).items.map((p) => p.id)).toEqual([product.id]);
  });

  it('leave stock to the page query: a reused plan still shows the current stock', async () => {
    const first = await search('milk');
    expect(first.count).toBeGreaterThan(0);
    const id = first.items[0]!.id;
    await svc.deps.db
      .updateTable('inventories')
      .set({ stock: '7.000' })
      .where('product_id', '=', id)
      .where('store_id', '=', STORE)
      .where('is_default', '=', true)
      .execute();
    expect((await search('milk')).items.find((p) => p.id === id)?.stock).toBe('7.000');
  });
});
