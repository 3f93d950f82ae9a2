// The search postings (migration 2026_11_22_0011): a word search in the default order reads its
// matches from catalog_search_postings. They must give exactly what the product-driven statement
// gives (same cards, same order, same total), and the triggers must keep the table equal to the
// join it is derived from whatever changes stock, default units, ranks, names or the assortment.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listProductPage, type ProductPageQuery } from '../../db/queries/catalog.js';
import { planProductSearch } from '../../db/queries/catalog-search.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { parseSearch } from '../../domain/catalog/search.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const STORE = DEMO_STORES[0]!.id;
/** Texts whose candidates fall in several score tiers (so relevance orders their matches). */
const ranked = new Set<string>();

/** Rows of the table that its definition does not give, and rows the definition gives that it lacks. */
async function postingsDrift(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH derived AS (
      SELECT DISTINCT i.store_id, w.word COLLATE "C" AS word, i.product_id, i.in_stock, i.sort_rank_ru, i.sort_rank_en
      FROM inventories i JOIN products p ON p.id = i.product_id CROSS JOIN LATERAL unnest(p.search_words) AS w(word)
      WHERE i.is_default),
    stored AS (SELECT store_id, word, product_id, in_stock, sort_rank_ru, sort_rank_en FROM catalog_search_postings)
    SELECT ((SELECT count(*) FROM (SELECT * FROM stored EXCEPT SELECT * FROM derived) a)
          + (SELECT count(*) FROM (SELECT * FROM derived EXCEPT SELECT * FROM stored) b))::int AS n`.execute(svc.deps.db);
  return rows[0]!.n;
}

type Filters = ProductPageQuery['filters'];

async function bothWays(
  text: string,
  options: Partial<Omit<ProductPageQuery, 'filters'>> & { categoryId?: string; filters?: Partial<Filters> } = {},
) {
  const plan = await planProductSearch(svc.deps.db, parseSearch(text)!);
  const query = (search: typeof plan): ProductPageQuery => ({
    storeId: STORE,
    lang: 'ru',
    customerId: null,
    sortBy: null,
    limit: 20,
    offset: 0,
    ...options,
    filters: {
      categoryId: options.categoryId ?? null,
      favoritesOf: null,
      isTop: false,
      isNew: false,
      isFresh: false,
      onlyDiscount: false,
      ...options.filters,
      search,
    },
  });
  expect(plan.words, text).not.toBeNull();
  if (plan.relevance) ranked.add(text);
  const fromPostings = await listProductPage(svc.deps.db, query(plan));
  const fromProducts = await listProductPage(svc.deps.db, query({ ...plan, words: null }));
  return { fromPostings, fromProducts };
}

describe('search postings', () => {
  it('start equal to the inventories and products they are derived from', async () => {
    expect(await postingsDrift()).toBe(0);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM catalog_search_postings`.execute(svc.deps.db);
    expect(rows[0]!.n).toBeGreaterThan(10_000);
  });

  it('give the same page, order and total as the product-driven search', async () => {
    // "сыр" and "хлеб" are words and begin others ("сырники", "хлебный"): two score tiers.
    const texts = [
      'сыр',
      'хлеб',
      'молоко',
      'малоко',
      'moloko',
      'хлеб ржаной',
      'сыр гауда',
      'kefir',
      'йогрут',
      'яблоки',
      'coffee',
      'шампиньоны',
      'молоко 3,2%',
      'малоко пастеризованое 2,5%',
      'хлеб ржаной нарезной',
      'нет-такого-слова',
      // Several words whose products lie far apart in the catalog (a brand across categories, a
      // short word with many candidates): each word is read within the span of ranks all of them
      // share, which must lose no match.
      'наша кухня',
      'салат наша кухня',
      'пирожок с картофелем',
      'bread rye',
      'кофе lavazza',
      'молоко 1',
    ];
    let compared = 0;
    for (const text of texts) {
      for (const lang of ['ru', 'en'] as const) {
        for (const offset of [0, 20]) {
          const { fromPostings, fromProducts } = await bothWays(text, { lang, offset });
          expect(fromPostings.count, `${text} ${lang} ${offset}`).toBe(fromProducts.count);
          expect(fromPostings.items, `${text} ${lang} ${offset}`).toEqual(fromProducts.items);
          compared += fromPostings.items.length;
        }
      }
    }
    expect(compared).toBeGreaterThan(200);
    expect([...ranked]).toEqual(expect.arrayContaining(['сыр', 'хлеб']));
    // Past the last page: no cards, the total still given (one candidate word, and several).
    for (const text of ['молоко', 'сыр', 'хлеб ржаной']) {
      const past = await bothWays(text, { offset: 10_000 });
      expect(past.fromPostings, text).toEqual({ items: [], count: past.fromProducts.count });
      expect(past.fromPostings.count, text).toBeGreaterThan(0);
    }
  });

  it('give the same answer sorted by price or discount, and with the product and inventory filters', async () => {
    const db = svc.deps.db;
    const { rows: customer } = await sql<{ id: string }>`INSERT INTO customers (phone) VALUES (NULL) RETURNING id`.execute(db);
    // Favourites: every third milk of the store.
    await sql`INSERT INTO favorite_products (customer_id, product_id)
      SELECT ${customer[0]!.id}, product_id FROM (
        SELECT i.product_id, row_number() OVER (ORDER BY i.product_id) AS n FROM inventories i JOIN products p ON p.id = i.product_id
        WHERE i.store_id = ${STORE} AND i.is_default AND 'moloko' = ANY(p.search_words)) t WHERE n % 3 = 0`.execute(db);
    const variants: { sortBy?: ProductPageQuery['sortBy']; filters?: Partial<Filters> }[] = [
      { sortBy: 'cheap' },
      { sortBy: 'expensive' },
      { sortBy: 'more_discount' },
      { filters: { onlyDiscount: true } },
      { filters: { isTop: true } },
      { filters: { isNew: true } },
      { filters: { isFresh: true } },
      { filters: { favoritesOf: customer[0]!.id } },
      { sortBy: 'cheap', filters: { onlyDiscount: true, isTop: true } },
    ];
    let nonEmpty = 0;
    for (const text of ['молоко', 'сыр', 'хлеб ржаной', 'кефир']) {
      for (const v of variants) {
        for (const offset of [0, 20]) {
          const { fromPostings, fromProducts } = await bothWays(text, { ...v, offset });
          expect(fromPostings, `${text} ${JSON.stringify(v)} ${offset}`).toEqual(fromProducts);
          if (fromPostings.items.length) nonEmpty++;
        }
      }
      // With a customer, favourites are marked on the cards.
      const marked = await bothWays(text, { customerId: customer[0]!.id, sortBy: 'cheap' });
      expect(marked.fromPostings).toEqual(marked.fromProducts);
    }
    expect(nonEmpty).toBeGreaterThan(30);
    expect((await bothWays('молоко', { filters: { favoritesOf: customer[0]!.id } })).fromPostings.count).toBeGreaterThan(3);
  });

  it('give the same answer within a category', async () => {
    const { rows } = await sql<{ id: string }>`SELECT id FROM categories WHERE code IN ('milk', 'dairy') ORDER BY code`.execute(
      svc.deps.db,
    );
    expect(rows).toHaveLength(2);
    for (const { id } of rows) {
      // Several words with matches outside the category too ("наша кухня": a brand in many).
      for (const text of ['молоко', 'молоко 3,2%', 'сыр', 'наша кухня', 'хлеб ржаной']) {
        const { fromPostings, fromProducts } = await bothWays(text, { categoryId: id });
        expect(fromPostings, text).toEqual(fromProducts);
      }
      expect((await bothWays('молоко', { categoryId: id })).fromPostings.count).toBeGreaterThan(0);
    }
  });

  it('rank every query word of a several-word text by the best candidate a product has', async () => {
    // Several words: the first (longest) anchors the match and the others are joined to it; each
    // must still add its own best score. Two products get the rare anchor word; the better-ranked
    // one has only a longer form of the second word ("хлебный", a prefix hit), the other the word
    // itself ("хлеб", an exact hit), so relevance, not the catalog rank, must put it first.
    const db = svc.deps.db;
    const { rows } = await sql<{ product_id: string }>`
      SELECT i.product_id FROM inventories i
      WHERE i.store_id = ${STORE} AND i.is_default AND i.in_stock ORDER BY i.sort_rank_ru LIMIT 2`.execute(db);
    const [better, worse] = rows.map((r) => r.product_id);
    await sql`UPDATE products SET name_ru = 'Пумперникель хлебный', name_en = 'Pumpernickel bready' WHERE id = ${better}`.execute(db);
    await sql`UPDATE products SET name_ru = 'Пумперникель хлеб', name_en = 'Pumpernickel bread' WHERE id = ${worse}`.execute(db);
    const { fromPostings, fromProducts } = await bothWays('пумперникель хлеб');
    expect(fromPostings).toEqual(fromProducts);
    expect(fromPostings.items.map((c) => c.id)).toEqual([worse, better]);
    expect(ranked).toContain('пумперникель хлеб');
  });

  it('follow stock running out and coming back, default units, ranks, renames and withdrawals', async () => {
    const db = svc.deps.db;
    const { rows: milk } = await sql<{ id: string; product_id: string }>`
      SELECT i.id, i.product_id FROM inventories i JOIN products p ON p.id = i.product_id
      WHERE i.store_id = ${STORE} AND i.is_default AND i.in_stock AND 'moloko' = ANY(p.search_words) ORDER BY i.sort_rank_ru LIMIT 3`.execute(
      db,
    );
    expect(milk).toHaveLength(3);
    const first = async () => (await bothWays('молоко')).fromPostings.items[0]!.id;
    expect(await first()).toBe(milk[0]!.product_id);

    // The first match sells out: in-stock matches come first, so it leaves the top.
    await sql`UPDATE inventories SET stock = 0 WHERE id = ${milk[0]!.id}`.execute(db);
    expect(await first()).toBe(milk[1]!.product_id);
    expect(await postingsDrift()).toBe(0);
    await sql`UPDATE inventories SET stock = 5 WHERE id = ${milk[0]!.id}`.execute(db);
    expect(await first()).toBe(milk[0]!.product_id);

    // A new rank puts the third before the others.
    await sql`UPDATE inventories SET sort_rank_ru = -1 WHERE id = ${milk[2]!.id}`.execute(db);
    expect(await first()).toBe(milk[2]!.product_id);
    expect(await postingsDrift()).toBe(0);

    // Renamed: found by its new word, no longer by its old one.
    await sql`UPDATE products SET name_ru = 'Простокваша деревенская', name_en = 'Village prostokvasha' WHERE id = ${milk[2]!.product_id}`.execute(
      db,
    );
    expect((await bothWays('молоко')).fromPostings.items.map((c) => c.id)).not.toContain(milk[2]!.product_id);
    expect((await bothWays('деревенская')).fromPostings.items.map((c) => c.id)).toContain(milk[2]!.product_id);
    expect(await postingsDrift()).toBe(0);

    // Its default unit moves to another inventory row, then the product is withdrawn.
    const { rows: unit } = await sql<{
      id: string;
    }>`SELECT id FROM measurement_units WHERE id <> (SELECT unit_id FROM inventories WHERE id = ${milk[1]!.id}) LIMIT 1`.execute(db);
    await sql`UPDATE inventories SET is_default = false WHERE id = ${milk[1]!.id}`.execute(db);
    await sql`INSERT INTO inventories (product_id, store_id, unit_id, is_default, stock, unit_price, sort_rank_ru, sort_rank_en)
      SELECT product_id, store_id, ${unit[0]!.id}, true, 3, unit_price, sort_rank_ru, sort_rank_en FROM inventories WHERE id = ${milk[1]!.id}`.execute(
      db,
    );
    expect(await postingsDrift()).toBe(0);
    expect((await bothWays('молоко')).fromPostings.items.map((c) => c.id)).toContain(milk[1]!.product_id);
    await sql`UPDATE products SET is_active = false WHERE id = ${milk[1]!.product_id}`.execute(db);
    expect((await bothWays('молоко')).fromPostings.items.map((c) => c.id)).not.toContain(milk[1]!.product_id);
    expect(await postingsDrift()).toBe(0);

    const after = await bothWays('молоко');
    expect(after.fromPostings).toEqual(after.fromProducts);
  });
});

describe('search postings under concurrent writers', () => {
  it('stay equal to their definition when a rename races an order taking the last unit', async () => {
    const { rows } = await sql<{ id: string; product_id: string }>`
      SELECT i.id, i.product_id FROM inventories i JOIN products p ON p.id = i.product_id
      WHERE i.store_id = ${STORE} AND i.is_default AND i.in_stock AND 'kefir' = ANY(p.search_words) LIMIT 1`.execute(svc.deps.db);
    expect(rows).toHaveLength(1);
    const [order, admin] = [await svc.deps.pool.connect(), await svc.deps.pool.connect()];
    try {
      await order.query('BEGIN');
      await order.query('UPDATE inventories SET stock = 0 WHERE id = $1', [rows[0]!.id]);
      await admin.query('BEGIN');
      // The rename's trigger must wait for the order's lock on the inventory row.
      const renamed = admin.query(`UPDATE products SET name_ru = 'Ряженка топлёная', name_en = 'Baked milk ryazhenka' WHERE id = $1`, [
        rows[0]!.product_id,
      ]);
      await new Promise((r) => setTimeout(r, 200));
      await order.query('COMMIT');
      await renamed;
      await admin.query('COMMIT');
    } finally {
      order.release();
      admin.release();
    }
    expect(await postingsDrift()).toBe(0);
    const found = (await bothWays('ряженка')).fromPostings;
    expect(found.items.map((c) => c.id)).toContain(rows[0]!.product_id);
    expect(found.items.find((c) => c.id === rows[0]!.product_id)!.stock).toBe('0.000');
    expect((await bothWays('kefir')).fromPostings.items.map((c) => c.id)).not.toContain(rows[0]!.product_id);
  });
});

// Last in the file: it empties the catalog of this file's database.
describe('search postings and TRUNCATE', () => {
  it('go with the inventories when those are truncated', async () => {
    await sql`TRUNCATE inventories CASCADE`.execute(svc.deps.db);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM catalog_search_postings`.execute(svc.deps.db);
    expect(rows[0]!.n).toBe(0);
  });
});
