// Search on the demo catalog (2,000 products, Russian and English names): typos, transliteration,
// barcodes and PLU codes, ranking.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const STORE = DEMO_STORES[0]!.id;
type Card = { id: string; name: string; stock: string };
const search = async (text: string, lang: 'ru' | 'en' = 'ru', extra: { only_discount?: boolean } = {}) => {
  const r = await svc.client.call.GET('/api/catalog/products/', {
    params: { query: { search: text, page_size: 100, ...extra } },
    headers: { 'x-store-id': STORE, 'accept-language': lang },
  });
  expect(r.status).toBe(200);
  return r.body as { items: Card[]; count: number };
};
/** The store's products whose Russian name has the word, counted by PostgreSQL itself. */
const withWord = async (pattern: string) =>
  (
    await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM products p JOIN inventories i ON i.product_id = p.id AND i.store_id = ${STORE} AND i.is_default
    WHERE p.is_active AND p.name_ru ~* ${pattern}`.execute(svc.deps.db)
  ).rows[0]!.n;

describe('search', () => {
  it('finds the milk for "молоко", and for the misspelt "малоко" and the Latin "moloko" alike', async () => {
    const milk = await search('молоко');
    expect(milk.count).toBe(await withWord('(^|\\s)молоко(\\s|$)'));
    expect(milk.count).toBeGreaterThan(10);
    expect(milk.items.every((p) => /молоко/i.test(p.name))).toBe(true);
    for (const variant of ['малоко', 'moloko', 'МОЛОКО', 'Moloko']) {
      const r = await search(variant);
      expect(r.count, variant).toBe(milk.count);
      expect(r.items.map((p) => p.id).sort(), variant).toEqual(milk.items.map((p) => p.id).sort());
    }
  });

  it('finds English names, in either language of the answer', async () => {
    const en = await search('milk', 'en');
    expect(en.count).toBeGreaterThan(10);
    expect(en.items.every((p) => /milk/i.test(p.name))).toBe(true);
    const ru = await search('milk', 'ru');
    expect(ru.items.map((p) => p.id).sort()).toEqual(en.items.map((p) => p.id).sort());
  });

  it('tolerates typos and accents in longer words, and folds ё', async () => {
    expect((await search('кефр')).items.some((p) => /^Кефир/.test(p.name))).toBe(true);
    expect((await search('йогрут')).items.some((p) => /^Йогурт/.test(p.name))).toBe(true);
    expect((await search('топленое')).count).toBe((await search('топлёное')).count);
    expect((await search('cafe')).count).toBe((await search('café')).count);
  });

  it('finds a word two edits away that shares few trigrams with it', async () => {
    // "малако" (malako) has two letters of "молоко" (moloko) changed: trigram similarity 0.17.
    const milk = await search('молоко');
    const typo = await search('малако');
    expect(typo.count).toBe(milk.count);
    expect(typo.items.map((p) => p.id).sort()).toEqual(milk.items.map((p) => p.id).sort());
  });

  it('keeps the deletion variants of every vocabulary word (the edit-distance index)', async () => {
    const { rows: variants } = await sql<{ v: string }>`SELECT DISTINCT unnest(catalog_deletion_variants('abc')) AS v ORDER BY v`.execute(
      svc.deps.db,
    );
    expect(variants.map((r) => r.v)).toEqual(['a', 'ab', 'abc', 'ac', 'b', 'bc', 'c']);
    const { rows } = await sql<{ missing: number; extra: number }>`
      WITH expected AS (SELECT DISTINCT unnest(catalog_deletion_variants(word)) AS variant, word FROM catalog_search_vocabulary)
      SELECT (SELECT count(*)::int FROM (SELECT * FROM expected EXCEPT SELECT variant, word FROM catalog_search_deletions) m) AS missing,
             (SELECT count(*)::int FROM (SELECT variant, word FROM catalog_search_deletions EXCEPT SELECT * FROM expected) e) AS extra`.execute(
      svc.deps.db,
    );
    expect(rows[0]).toEqual({ missing: 0, extra: 0 });
  });

  it('puts in-stock products first, then the best matches', async () => {
    const r = await search('молоко топлёное');
    expect(r.count).toBeGreaterThan(0);
    expect(r.items.every((p) => /Молоко топлёное/.test(p.name))).toBe(true);
    const inStock = r.items.map((p) => Number(p.stock) > 0);
    expect(inStock).toEqual([...inStock].sort((a, b) => Number(b) - Number(a)));
  });

  it('finds a product by its barcode and a weight-based product by its PLU', async () => {
    const { rows } = await sql<{ barcode: string; product_id: string }>`
      SELECT b.barcode, b.product_id FROM product_barcodes b JOIN inventories i ON i.product_id = b.product_id AND i.store_id = ${STORE}
      ORDER BY b.barcode LIMIT 1`.execute(svc.deps.db);
    const byBarcode = await search(rows[0]!.barcode);
    expect(byBarcode.items[0]!.id).toBe(rows[0]!.product_id);
    const { rows: plu } = await sql<{ plu: string; id: string }>`
      SELECT p.plu, p.id FROM products p JOIN inventories i ON i.product_id = p.id AND i.store_id = ${STORE} WHERE p.plu IS NOT NULL
      ORDER BY p.plu LIMIT 1`.execute(svc.deps.db);
    expect((await search(plu[0]!.plu)).items[0]!.id).toBe(plu[0]!.id);
  });

  it('combines search with filters and pages', async () => {
    const all = await search('молоко');
    const discounted = await search('молоко', 'ru', { only_discount: true });
    expect(discounted.count).toBeLessThan(all.count);
    const page2 = await svc.client.call.GET('/api/catalog/products/', {
      params: { query: { search: 'moloko', page_size: 5, page: 2 } },
      headers: { 'x-store-id': STORE },
    });
    expect(page2.body.items).toHaveLength(5);
    expect(page2.body.has_next).toBe(all.count > 10);
  });

  it('finds nothing for a word no product has', async () => {
    expect((await search('трансформатор')).count).toBe(0);
  });
});
