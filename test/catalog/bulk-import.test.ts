// The catalog generator (`npm run catalog:generate`) and the streamed, set-based import of what
// it writes: a deterministic file the import accepts, produced and read a chunk at a time; the
// import's counts, ranks and kept category totals; and the same listing and search answers as
// the rows themselves give.
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateCatalogText } from '../../db/catalog-import/generate.js';
import { catalogFileSource, readCatalogJson } from '../../db/catalog-import/stream.js';
import { importCatalog, importCatalogFrom, type ImportProgress } from '../../db/catalog-import/write.js';
import { demoCatalogFile } from '../../db/seed/catalog.js';
import { startTestService, type TestService } from '../support/service.js';
import { STORE_A, storeHeaders } from './fixture.js';

const PRODUCTS = 3000;
let svc: TestService;
let dir: string;
let file: string;
beforeAll(async () => {
  svc = await startTestService();
  dir = mkdtempSync(path.join(os.tmpdir(), 'catalog-bulk-'));
  file = path.join(dir, 'catalog.json');
  await pipeline(Readable.from(generateCatalogText({ products: PRODUCTS })), createWriteStream(file));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await svc?.close();
});

const text = (products: number) => [...generateCatalogText({ products })].join('');

/** Per store and category: the products it sells there and in its descendants, counted from the rows. */
async function countedTotals(): Promise<Map<string, number>> {
  const { rows } = await sql<{ store_id: string; category_id: string; n: number }>`
    SELECT i.store_id, a.category_id, count(*)::int AS n
    FROM inventories i JOIN products p ON p.id = i.product_id JOIN categories c ON c.id = p.category_id
    CROSS JOIN LATERAL unnest(c.ancestor_ids || c.id) AS a(category_id)
    WHERE i.is_default GROUP BY 1, 2`.execute(svc.deps.db);
  return new Map(rows.map((r) => [`${r.store_id}/${r.category_id}`, r.n]));
}
async function keptTotals(): Promise<Map<string, number>> {
  const { rows } = await sql<{ store_id: string; category_id: string; n: number }>`
    SELECT store_id, category_id, products AS n FROM catalog_category_totals WHERE products <> 0`.execute(svc.deps.db);
  return new Map(rows.map((r) => [`${r.store_id}/${r.category_id}`, r.n]));
}

describe('the catalog generator', () => {
  it('writes the same document on every run, with the demo catalog rows', () => {
    const a = text(700);
    expect(text(700)).toBe(a);
    const parsed = JSON.parse(a) as ReturnType<typeof demoCatalogFile>;
    // The same rows as the demo catalog of that size, which the import is known to accept.
    expect(parsed).toEqual(JSON.parse(JSON.stringify(demoCatalogFile({ products: 700 }))));
    expect(parsed.products.filter((p) => p.weight_based).length).toBe(70);
    expect(new Set(parsed.products.flatMap((p) => p.inventories.map((i) => i.store))).size).toBe(3);
    expect(parsed.products.every((p) => /[а-я]/i.test(p.name.ru) && !/[а-яё]/i.test(p.name.en))).toBe(true);
  });

  it('produces its text in chunks of a few hundred rows, never the whole file at once', () => {
    const chunks = [...generateCatalogText({ products: 2000 })];
    expect(chunks.length).toBeGreaterThan(4);
    const longest = Math.max(...chunks.map((c) => c.length));
    expect(longest).toBeLessThan(chunks.join('').length / 3);
  });

  it('gives a PLU to no two products of a very large catalog', () => {
    const seen = new Set<string>();
    let rows = 0;
    for (const chunk of generateCatalogText({ products: 120_000 })) {
      if (!chunk.startsWith('{"units"')) {
        for (const m of chunk.matchAll(/"plu":"(\d+)"/g)) {
          expect(seen.has(m[1]!)).toBe(false);
          seen.add(m[1]!);
        }
      }
      rows++;
    }
    expect(rows).toBeGreaterThan(200);
  });
});

describe('the streamed reader', () => {
  it('gives the rows of the sections asked for, whatever the chunk boundaries', async () => {
    const doc = text(40);
    async function* pieces() {
      for (let i = 0; i < doc.length; i += 97) yield doc.slice(i, i + 97);
    }
    const rows: unknown[] = [];
    const sections: string[] = [];
    for await (const e of readCatalogJson(pieces(), new Set(['products']))) {
      if (e.kind === 'section') sections.push(e.name);
      if (e.kind === 'row') rows.push(e.value);
    }
    expect(sections).toEqual(['units', 'categories', 'products']);
    expect(rows).toEqual((JSON.parse(doc) as { products: unknown[] }).products);
  });

  it('refuses a document that is cut short', async () => {
    const doc = text(5).slice(0, -40);
    async function* whole() {
      yield doc;
    }
    await expect(async () => {
      for await (const _ of readCatalogJson(whole(), new Set(['products']))) void _;
    }).rejects.toThrow(/unexpected end/);
  });
});

describe('importing a generated file', () => {
  it('loads every row, reports its progress, and ranks and totals as the rows say', async () => {
    const progress: ImportProgress[] = [];
    const summary = await svc.deps.db
      .transaction()
      .execute((trx) => importCatalogFrom(trx, catalogFileSource(file), { batchSize: 500, onProgress: (p) => progress.push(p) }));
    const expected = demoCatalogFile({ products: PRODUCTS });
    expect(summary).toMatchObject({
      products: PRODUCTS,
      weight_based_products: PRODUCTS / 10,
      inventories: expected.products.reduce((n, p) => n + p.inventories.length, 0),
      barcodes: expected.products.reduce((n, p) => n + (p.barcodes?.length ?? 0), 0),
      categories: expected.categories.length,
    });
    const reading = progress.filter((p) => p.phase === 'reading');
    expect(reading.map((p) => p.products)).toEqual([500, 1000, 1500, 2000, 2500, 3000]);
    expect(progress.filter((p) => p.phase === 'writing').map((p) => p.step)).toContain('search postings');

    const n = async (q: ReturnType<typeof sql<{ n: number }>>) => (await q.execute(svc.deps.db)).rows[0]!.n;
    expect(await n(sql`SELECT count(*)::int AS n FROM products WHERE is_active`)).toBe(PRODUCTS);
    // Ranks: a permutation of 1..N in each language, category tree position first.
    expect(
      await n(sql`SELECT count(DISTINCT sort_rank_ru)::int AS n FROM products WHERE is_active AND sort_rank_ru BETWEEN 1 AND ${PRODUCTS}`),
    ).toBe(PRODUCTS);
    expect(
      await n(sql`SELECT count(*)::int AS n FROM products p JOIN categories c ON c.id = p.category_id
        JOIN products q ON q.sort_rank_ru = p.sort_rank_ru + 1 JOIN categories d ON d.id = q.category_id
        WHERE p.is_active AND q.is_active AND d.tree_order < c.tree_order`),
    ).toBe(0);
    // The postings equal the join the triggers keep them equal to.
    expect(
      await n(sql`SELECT count(*)::int AS n FROM (
        SELECT i.store_id, w, i.product_id, i.in_stock, i.sort_rank_ru, i.sort_rank_en
        FROM inventories i JOIN products p ON p.id = i.product_id CROSS JOIN unnest(p.search_words) w WHERE i.is_default
        EXCEPT SELECT store_id, word, product_id, in_stock, sort_rank_ru, sort_rank_en FROM catalog_search_postings) missing`),
    ).toBe(0);
    expect(
      await n(sql`SELECT count(*)::int AS n FROM catalog_search_postings x WHERE NOT EXISTS (
        SELECT 1 FROM inventories i WHERE i.product_id = x.product_id AND i.store_id = x.store_id AND i.is_default)`),
    ).toBe(0);
    expect(await keptTotals()).toEqual(await countedTotals());
  });

  it('keeps the totals right when an import moves products, withdraws others and drops a store', async () => {
    const catalog = demoCatalogFile({ products: 1200 });
    const [first, second] = [catalog.products[0]!, catalog.products[1]!];
    first.category = second.category; // moved to another leaf
    catalog.products[2]!.inventories = catalog.products[2]!.inventories.slice(0, 1); // sold in one store only
    catalog.products.splice(3, 100); // withdrawn
    await svc.deps.db.transaction().execute((trx) => importCatalog(trx, catalog));
    expect(await keptTotals()).toEqual(await countedTotals());
    // Writers outside the import (the triggers) keep them right too.
    await sql`DELETE FROM inventories WHERE product_id = (SELECT id FROM products WHERE code = ${second.code})`.execute(svc.deps.db);
    await sql`UPDATE products SET category_id = (SELECT id FROM categories WHERE code = 'cheese') WHERE code = ${first.code}`.execute(
      svc.deps.db,
    );
    expect(await keptTotals()).toEqual(await countedTotals());
  });

  it('answers listings and searches with the totals and order the rows give', async () => {
    const leaf = (
      await sql<{ id: string; from: number; to: number }>`
      SELECT id, product_rank_from AS from, product_rank_to AS to FROM categories WHERE code = 'milk'`.execute(svc.deps.db)
    ).rows[0]!;
    const counted = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM inventories i WHERE i.store_id = ${STORE_A!.id} AND i.is_default
        AND i.sort_rank_ru BETWEEN ${leaf.from} AND ${leaf.to}`.execute(svc.deps.db);
    const listing = await svc.client.call.GET('/api/catalog/products/', {
      params: { query: { category_id: leaf.id, page_size: 20 } },
      headers: storeHeaders(STORE_A!.id),
    });
    expect(listing.status).toBe(200);
    const page = listing.body as { count: number; items: { id: string; stock: string }[] };
    expect(page.count).toBe(counted.rows[0]!.n);
    expect(page.items.length).toBe(20);
    const search = await svc.client.call.GET('/api/catalog/products/', {
      params: { query: { search: 'moloko', page_size: 5 } },
      headers: storeHeaders(STORE_A!.id, 'ru'),
    });
    expect(search.status).toBe(200);
    const found = search.body as { count: number; items: { name: string }[] };
    expect(found.count).toBeGreaterThan(0);
    expect(found.items.every((i) => /молок/i.test(i.name))).toBe(true);
  });
});
