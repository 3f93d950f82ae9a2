// Catalog reads: units, the category tree per store, product cards and screens, availability
// facts, recommendations and favorites. Every query is bounded by an index or by the small
// category table; none runs per row of a result (no N+1). They return rows; the API shapes are
// services/presenters/catalog.ts's, except the two the stored snapshot is built from here
// (catalog-snapshot.ts, which db/seed publishes): the product card and the category tree's cards.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { components } from '../../generated/api.test.js';
import { normalizeDecimal } from '../../domain/money/decimal.js';
import { normalizeMoney, QUANTITY_SCALE } from '../../domain/money/money.js';
import type { Executor } from '../executor.js';
import type { DB } from '../schema.js';
import { productSearchCondition, type SearchPlan } from './catalog-search.js';

type Schemas = components['schemas'];
export type Language = 'ru' | 'en';
export type CategoryCard = Schemas['CategorySchema'];
export type ProductCard = Schemas['ProductListingSchema'];
/** The product screen (services/presenters/catalog.ts maps it; services/caches.ts names the kept ones by it). */
export type ProductDetail = Schemas['ProductDetailSchema'];

const quantity = (v: string) => normalizeDecimal(v, QUANTITY_SCALE);

// ---- units --------------------------------------------------------------------------------------

export function listUnits(db: Executor, lang: Language) {
  return db
    .selectFrom('measurement_units')
    .select(['id', 'ratio', `name_${lang} as name`, `full_name_${lang} as full_name`])
    .orderBy(`name_${lang}`)
    .orderBy('id')
    .execute();
}

export type UnitRow = Awaited<ReturnType<typeof listUnits>>[number];

// ---- categories ---------------------------------------------------------------------------------

export interface CategoryNode {
  id: string;
  parent_id: string | null;
  level: number;
  ancestor_ids: string[];
  tree_order: number;
  name: string;
  color: string;
  image_original: string | null;
  image_listing: string | null;
  is_own_production: boolean;
  show_products_count: boolean;
  main_page_position: number | null;
  main_page_layout: string | null;
  product_rank_from: number | null;
  product_rank_to: number | null;
  /** Whether the store sells an active product in it or a descendant (true without a store). */
  visible: boolean;
}

/**
 * The active category tree in pre-order, each node marked visible for `storeId` (or all visible
 * when storeId is null). Categories are few (tens to hundreds, independent of the number of
 * products): the tree is read whole, and visibility costs one index probe per category that
 * stops at the first product the store sells.
 */
export async function loadCategoryTree(db: Executor, lang: Language, storeId: string | null): Promise<CategoryTree> {
  const visible: RawBuilder<boolean> =
    storeId === null
      ? sql<boolean>`true`
      : // LATERAL ... LIMIT 1 keeps this a probe per category: written as EXISTS, the planner turns
        // it into a semi-join over every product of the store, which grows with the catalog.
        sql<boolean>`c.id IN (
        SELECT unnest(d.ancestor_ids || d.id) FROM categories d
        CROSS JOIN LATERAL (
          SELECT 1 FROM products p JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.is_default
          WHERE p.category_id = d.id AND p.is_active LIMIT 1) sold
        WHERE d.is_active)`;
  const { rows } = await sql<CategoryNode>`
    SELECT c.id, c.parent_id, c.level, c.ancestor_ids, c.tree_order, c.${sql.ref(`name_${lang}`)} AS name, c.color,
           c.image_original, c.image_listing, c.is_own_production, c.show_products_count,
           c.main_page_position, c.main_page_layout, c.product_rank_from, c.product_rank_to, ${visible} AS visible
    FROM categories c
    WHERE c.is_active
    ORDER BY c.tree_order`.execute(db);
  return new CategoryTree(rows);
}

export class CategoryTree {
  readonly byId = new Map<string, CategoryNode>();
  private readonly childrenOf = new Map<string | null, CategoryNode[]>();

  constructor(readonly nodes: CategoryNode[]) {
    for (const n of nodes) this.byId.set(n.id, n);
    for (const n of nodes) {
      // A node whose parent is inactive is unreachable from the roots: leave it out.
      if (n.parent_id !== null && !this.byId.has(n.parent_id)) continue;
      if (!this.childrenOf.has(n.parent_id)) this.childrenOf.set(n.parent_id, []);
      this.childrenOf.get(n.parent_id)!.push(n);
    }
  }

  children(id: string | null, visibleOnly: boolean): CategoryNode[] {
    const all = this.childrenOf.get(id) ?? [];
    return visibleOnly ? all.filter((n) => n.visible) : all;
  }

  /** Whether the category is a leaf of the catalog tree (no active children at all). */
  isLeaf(id: string): boolean {
    return (this.childrenOf.get(id) ?? []).length === 0;
  }

  card(n: CategoryNode, visibleOnly: boolean): CategoryCard {
    return {
      id: n.id,
      name: n.name,
      level: n.level,
      color: n.color,
      parent_id: n.parent_id,
      children_count: this.children(n.id, visibleOnly).length,
      image: n.image_original && n.image_listing ? { original: n.image_original, listing: n.image_listing } : null,
    };
  }

  /** A card with its direct (visible) children; `children` null for a leaf of the tree. */
  cardWithChildren(n: CategoryNode): Schemas['CategoryMenuSchema'] {
    return {
      ...this.card(n, true),
      children: this.isLeaf(n.id) ? null : this.children(n.id, true).map((c) => this.card(c, true)),
    };
  }

  menu(): Schemas['CategoryMenuSchema'][] {
    return this.children(null, true).map((n) => this.cardWithChildren(n));
  }

  mainPageBlocks(): Schemas['MainPageCategoryBlockSchema'][] {
    return this.nodes
      .filter((n) => n.visible && n.main_page_position !== null && this.reachable(n))
      .sort((a, b) => a.main_page_position! - b.main_page_position! || a.tree_order - b.tree_order)
      .map((n) => ({ ...this.cardWithChildren(n), layout: n.main_page_layout! }));
  }

  private reachable(n: CategoryNode): boolean {
    return n.ancestor_ids.every((a) => this.byId.has(a));
  }
}

/**
 * In-stock product counts of categories (each with its descendants) in a store: the
 * own-production counters. Each is a count over one rank range of the store's listing index.
 */
export async function countInStockProducts(db: Executor, storeId: string, categories: CategoryNode[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>(categories.map((c) => [c.id, 0]));
  const ranged = categories.filter((c) => c.product_rank_from !== null && c.product_rank_to !== null);
  if (ranged.length === 0) return counts;
  const { rows } = await sql<{ id: string; n: number }>`
    SELECT r.id, (SELECT count(*)::int FROM inventories i
                  WHERE i.store_id = ${storeId} AND i.is_default AND i.in_stock AND i.sort_rank_ru BETWEEN r.rank_from AND r.rank_to) AS n
    FROM unnest(${ranged.map((c) => c.id)}::uuid[], ${ranged.map((c) => c.product_rank_from)}::int[], ${ranged.map((c) => c.product_rank_to)}::int[])
      AS r(id, rank_from, rank_to)`.execute(db);
  for (const { id, n } of rows) counts.set(id, n);
  return counts;
}

// ---- product cards ------------------------------------------------------------------------------

export interface CardRow {
  id: string;
  name: string;
  unit_id: string;
  stock: string | null;
  unit_price: string;
  old_price: string | null;
  discount_percent: string | null;
  category_id: string | null;
  order_quantity_limit: string | null;
  image_original: string | null;
  image_listing: string | null;
  is_favorite: boolean;
}

/**
 * The one mapper of product cards (listing, recommendations, snapshot). It lives beside its rows
 * rather than in services/presenters/catalog.ts (which hands it out as `productCard`) because the
 * snapshot, written in this layer, is built from it.
 */
export function toProductCard(r: CardRow): ProductCard {
  return {
    id: r.id,
    name: r.name,
    unit_id: r.unit_id,
    stock: r.stock === null ? '0.000' : quantity(r.stock),
    unit_price: normalizeMoney(r.unit_price),
    category_id: r.category_id,
    category_uuid: r.category_id,
    user_order_quantity_limit: r.order_quantity_limit === null ? '0.000' : quantity(r.order_quantity_limit),
    is_user_order_quantity_limit_enabled: r.order_quantity_limit !== null,
    old_price: r.old_price === null ? null : normalizeMoney(r.old_price),
    discount_percent: r.discount_percent === null ? null : normalizeMoney(r.discount_percent),
    image: r.image_original && r.image_listing ? { original: r.image_original, listing: r.image_listing } : null,
    is_favorite: r.is_favorite,
  };
}

/** Columns of a card; `p` is products, `i` the store's default inventory. */
function cardColumns(lang: Language, customerId: string | null) {
  const favorite =
    customerId === null
      ? sql<boolean>`false`
      : sql<boolean>`EXISTS (SELECT 1 FROM favorite_products f WHERE f.customer_id = ${customerId} AND f.product_id = p.id)`;
  return sql`p.id, p.${sql.ref(`name_${lang}`)} AS name, i.unit_id, i.stock, i.unit_price, i.old_price, i.discount_percent,
    p.category_id, i.order_quantity_limit, p.image_original, p.image_listing, ${favorite} AS is_favorite`;
}

export type ProductSort = 'cheap' | 'expensive' | 'more_discount';

export interface ProductFilters {
  /** Only products of this category and its descendants (an unknown one matches nothing); null: all. */
  categoryId: string | null;
  favoritesOf: string | null;
  isTop: boolean;
  isNew: boolean;
  isFresh: boolean;
  onlyDiscount: boolean;
  search: SearchPlan | null;
}

export interface ProductPageQuery {
  storeId: string;
  lang: Language;
  customerId: string | null;
  filters: ProductFilters;
  sortBy: ProductSort | null;
  limit: number;
  offset: number;
}

/**
 * Conditions of a listing on `i` (the store's default inventories) and, when `needsProduct`
 * says so, on `p` (products). Withdrawn products have no inventories (a trigger removes them), so
 * `i` alone is the store's active assortment.
 */
function listingConditions(q: ProductPageQuery): { where: RawBuilder<unknown>; needsProduct: boolean } {
  const f = q.filters;
  const rank = sql.ref(`i.sort_rank_${q.lang}`);
  // `in_stock IN (true, false)` is always true; it lets PostgreSQL walk both stock segments of
  // inventories_listing_* in index order (in stock first, then catalog rank) and stop at the page.
  const where: RawBuilder<unknown>[] = [sql`i.store_id = ${q.storeId}`, sql`i.is_default`, sql`i.in_stock IN (true, false)`];
  // A subtree is one range of ranks (categories.product_rank_*), read once per statement; an
  // unknown, withdrawn or empty category gives NULL bounds, which match nothing.
  if (f.categoryId) where.push(categoryRankRange(rank, f.categoryId));
  if (f.onlyDiscount) where.push(sql`i.old_price IS NOT NULL`);
  if (f.favoritesOf)
    where.push(sql`EXISTS (SELECT 1 FROM favorite_products f WHERE f.customer_id = ${f.favoritesOf} AND f.product_id = i.product_id)`);
  const productWhere: RawBuilder<unknown>[] = [];
  if (f.isTop) productWhere.push(sql`p.is_top`);
  if (f.isNew) productWhere.push(sql`p.is_new`);
  if (f.isFresh) productWhere.push(sql`p.is_fresh`);
  if (f.search) productWhere.push(productSearchCondition(f.search));
  return { where: sql.join([...where, ...productWhere], sql` AND `), needsProduct: productWhere.length > 0 };
}

/**
 * LIMIT and OFFSET of a page. A prepared statement's generic plan cannot know a LIMIT or OFFSET
 * given as parameters, so PostgreSQL prices it as reading a tenth of the matches; in a large
 * category that looks dearer than a plan made for the actual values, and the statement was then
 * planned again on every execution (a quarter of a millisecond, more than running it). The first
 * page, by far the most asked for, has both written into the text: its generic plan is priced
 * right and reused. The page size is one of at most MAX_PAGE_SIZE integers (pageWindow clamps
 * it), so this adds few texts; later pages keep parameters rather than a text per offset.
 */
const pageBounds = (q: { limit: number; offset: number }): RawBuilder<unknown> =>
  q.offset === 0 ? sql`LIMIT ${sql.lit(Math.trunc(q.limit))}` : sql`LIMIT ${q.limit} OFFSET ${q.offset}`;

/** A category's subtree as a range of catalog ranks (see listingConditions). */
function categoryRankRange(rank: RawBuilder<unknown>, categoryId: string): RawBuilder<unknown> {
  const bound = (column: 'product_rank_from' | 'product_rank_to') =>
    sql`(SELECT ${sql.ref(column)} FROM categories WHERE id = ${categoryId} AND is_active)`;
  return sql`${rank} BETWEEN ${bound('product_rank_from')} AND ${bound('product_rank_to')}`;
}

/** ORDER BY terms of a sort, on the inventory columns of `alias` (unit_price, discount_percent). */
function sortKeyOf(sortBy: ProductSort | null, alias: 'i' | 'f'): RawBuilder<unknown> {
  const column = (name: 'unit_price' | 'discount_percent') => sql.ref(`${alias}.${name}`);
  switch (sortBy) {
    case 'cheap':
      return sql`${column('unit_price')} ASC,`;
    case 'expensive':
      return sql`${column('unit_price')} DESC,`;
    case 'more_discount':
      return sql`${column('discount_percent')} DESC NULLS LAST,`;
    case null:
      return sql``;
  }
}

/**
 * The span of a several-word search: the lowest and highest rank (`lo`, `hi`) a product matching
 * every query word of `candidate` can have in the store. All the postings of a product in a store
 * carry its one rank (they are written together, from its inventory), so a match lies within
 * each word's span - from the lowest to the highest rank among the postings of its candidates -
 * and within their intersection. The catalog orders products by category, then name, so the
 * products a several-word search finds are mostly neighbours ("Хлеб ржаной ..." in the bread
 * category) while a common word spreads over the catalog: at 50,000 products, "хлеб ржаной"
 * reads 500 postings of "хлеб" and of its prefix candidate "хлебный" (a brand) instead of 3,363,
 * and "bread rye" 500 of "bread" instead of 1,875.
 *
 * A word's span costs four index probes per candidate (the first and last rank in each stock
 * segment), so only the words of `terms` are looked up: those with at most SPAN_MAX_CANDIDATES
 * candidates. A word with more is a short prefix ("с", "1": 30 candidates each) whose candidates
 * spread over the catalog anyway. A word the store has no posting of bounds nothing (nothing
 * matches anyway), and with no bound at all the span is every rank.
 */
function searchSpan(storeId: string, rank: RawBuilder<unknown>, terms: number[]): RawBuilder<unknown> {
  const edge = (inStock: boolean, last: boolean) => sql`(SELECT ${rank} FROM catalog_search_postings x
    WHERE x.store_id = ${storeId} AND x.word = c.word AND x.in_stock = ${sql.lit(inStock)} ORDER BY ${rank} ${last ? sql`DESC` : sql`ASC`} LIMIT 1)`;
  return sql`SELECT coalesce(max(w.lo), -2147483648) AS lo, coalesce(min(w.hi), 2147483647) AS hi FROM (
      SELECT c.term, min(least(e.first_in, e.first_out)) AS lo, max(greatest(e.last_in, e.last_out)) AS hi
      FROM candidate c CROSS JOIN LATERAL (
        SELECT ${edge(true, false)} AS first_in, ${edge(false, false)} AS first_out, ${edge(true, true)} AS last_in, ${edge(false, true)} AS last_out) e
      WHERE c.term = ANY(${terms}::int[])
      GROUP BY c.term) w`;
}

/** Query words with at most this many candidates bound the span of a search (searchSpan). */
const SPAN_MAX_CANDIDATES = 5;

/**
 * A word search read from the search postings (migration 2026_11_22_0011): the matches come
 * from index entries alone, one per match, never from the products' rows. Same cards, order and
 * total as the product-driven statement of listProductPage, which serves code searches. The
 * matches, by the shape of the search:
 * - one query word with one candidate (the usual "молоко"): a stretch of the index, already in
 *   page order (in stock first, then catalog rank);
 * - one query word with several candidates: their postings gathered per product, its relevance
 *   the best score among the candidates it has;
 * - several query words: a product matches when it has a candidate of each query word, and its
 *   relevance is, per query word, the best score among the candidates it has, summed. The
 *   postings of all the words' candidates are gathered per product at once, read only within
 *   the span of ranks the words share (searchSpan).
 * In the default order with no filter but a category (a range of ranks, in the postings), the
 * page is taken from the matches and the total counted there; products and inventories are
 * read for the page alone. A sort by price or discount, or a filter on the product or its
 * inventory, reads each match's inventory (and product) first: still cheaper than reading
 * both for every match, but no longer independent of their number.
 */
async function searchPageFromPostings(
  db: Executor,
  q: ProductPageQuery,
  words: NonNullable<SearchPlan['words']>,
): Promise<ProductPageRows> {
  // A text without a word to look for (only signs) matches nothing.
  if (words.terms === 0) return { items: [], count: 0 };
  const f = q.filters;
  const rank = sql.ref(`x.sort_rank_${q.lang}`);
  const inCategory = f.categoryId ? sql`AND ${categoryRankRange(rank, f.categoryId)}` : sql``;
  const oneWord = words.terms === 1 && words.word.length === 1;
  const candidates = sql`catalog_search_candidates(${words.term}::int[], ${words.word}::text[], ${words.score}::float8[])`;
  // The common table expressions `matches` reads (several query words only; ends with a comma).
  let matchCtes = sql``;
  let matches: RawBuilder<unknown>;
  if (oneWord) {
    matches = sql`SELECT x.product_id, x.in_stock, ${rank} AS rank, 0 AS relevance FROM catalog_search_postings x
      WHERE x.store_id = ${q.storeId} AND x.word = ${words.word[0]} ${inCategory}`;
  } else if (words.terms === 1) {
    matches = sql`SELECT x.product_id, x.in_stock, ${rank} AS rank, max(c.score) AS relevance
      FROM ${candidates} AS c
      JOIN catalog_search_postings x ON x.store_id = ${q.storeId} AND x.word = c.word ${inCategory}
      GROUP BY 1, 2, 3`;
  } else {
    // The postings of every query word's candidates (`c`) within the span (`s`), and within the
    // category's range of ranks like every other search. `in_stock IN (true, false)` is always
    // true; it makes the rank bounds bounds of the index scan in both stock segments (PostgreSQL
    // keeps the tighter of the span's and the category's).
    const postings = sql`span s CROSS JOIN candidate c JOIN catalog_search_postings x
      ON x.store_id = ${q.storeId} AND x.word = c.word AND x.in_stock IN (true, false) AND ${rank} BETWEEN s.lo AND s.hi ${inCategory}`;
    const bounding = Array.from({ length: words.terms }, (_, t) => t).filter(
      (t) => words.term.filter((u) => u === t).length <= SPAN_MAX_CANDIDATES,
    );
    matchCtes = sql`candidate AS MATERIALIZED (SELECT * FROM ${candidates}),
      span AS MATERIALIZED (${searchSpan(q.storeId, rank, bounding)}),`;
    // Per product, each query word's best score, added up in word order: null, so no match, when
    // the product lacks a candidate of some word. One aggregate and no join: the generic plan
    // prices a range of ranks at a few rows, and at such sizes it joined one word's products to
    // another's by nested loop (4 to 6 ms instead of 0.9 for the 360 matches of "наша кухня" at
    // 2,000 products).
    const best = sql.join(
      Array.from({ length: words.terms }, (_, t) => sql`max(c.score) FILTER (WHERE c.term = ${sql.lit(t)})`),
      sql` + `,
    );
    matches = sql`SELECT w.product_id, w.in_stock, w.rank, w.relevance FROM (
        SELECT x.product_id, x.in_stock, ${rank} AS rank, ${best} AS relevance FROM ${postings} GROUP BY 1, 2, 3) w
      WHERE w.relevance IS NOT NULL`;
  }

  const productFilters: RawBuilder<unknown>[] = [];
  if (f.isTop) productFilters.push(sql`p.is_top`);
  if (f.isNew) productFilters.push(sql`p.is_new`);
  if (f.isFresh) productFilters.push(sql`p.is_fresh`);
  const inventoryFilters: RawBuilder<unknown>[] = [];
  if (f.onlyDiscount) inventoryFilters.push(sql`i.old_price IS NOT NULL`);
  if (f.favoritesOf)
    inventoryFilters.push(
      sql`EXISTS (SELECT 1 FROM favorite_products fav WHERE fav.customer_id = ${f.favoritesOf} AND fav.product_id = m.product_id)`,
    );
  const readsRows = q.sortBy !== null || productFilters.length > 0 || inventoryFilters.length > 0;
  // `found`: the matches the page and total are taken from, with what their order needs. One
  // word in the default order: the index stretch itself, read twice (page and count) rather
  // than gathered; otherwise gathered once and read twice.
  const found = readsRows
    ? sql`found AS MATERIALIZED (
        SELECT m.*, i.unit_price, i.discount_percent
        FROM (${matches}) m
        -- LATERAL ... LIMIT 1: a probe per match; as plain joins the generic plan hashes the
        -- store's whole assortment (or every product) instead.
        CROSS JOIN LATERAL (SELECT i0.unit_price, i0.discount_percent, i0.old_price FROM inventories i0
          WHERE i0.store_id = ${q.storeId} AND i0.product_id = m.product_id AND i0.is_default LIMIT 1) i
        ${productFilters.length ? sql`CROSS JOIN LATERAL (SELECT p0.is_top, p0.is_new, p0.is_fresh FROM products p0 WHERE p0.id = m.product_id LIMIT 1) p` : sql``}
        WHERE ${sql.join([sql`true`, ...productFilters, ...inventoryFilters], sql` AND `)})`
    : sql`found AS ${oneWord ? sql`NOT MATERIALIZED` : sql`MATERIALIZED`} (${matches})`;
  const order = sql`f.in_stock DESC, ${sortKeyOf(q.sortBy, 'f')} f.relevance DESC, f.rank`;
  const { rows } = await sql<CardRow & { total: number }>`
    WITH ${matchCtes} ${found}
    SELECT ${cardColumns(q.lang, q.customerId)}, (SELECT count(*)::int FROM found) AS total
    FROM (SELECT * FROM found f ORDER BY ${order} ${pageBounds(q)}) f
    JOIN products p ON p.id = f.product_id
    JOIN inventories i ON i.store_id = ${q.storeId} AND i.product_id = f.product_id AND i.is_default
    ORDER BY ${order}`.execute(db);
  if (rows.length > 0) return { items: rows, count: rows[0]!.total };
  if (q.offset === 0) return { items: [], count: 0 };
  const { rows: counted } = await sql<{ total: number }>`WITH ${matchCtes} ${found} SELECT count(*)::int AS total FROM found`.execute(db);
  return { items: [], count: counted[0]!.total };
}

/** The card rows of a page and the total (each row carries it too). */
export interface ProductPageRows {
  items: CardRow[];
  count: number;
}

/** One page of card rows and the total, in the spec's order (in stock first, then the sort). */
export async function listProductPage(db: Executor, q: ProductPageQuery): Promise<ProductPageRows> {
  // Word searches read their matches from the search postings; a text that is also a barcode
  // or PLU (whose exact hits only the products know) takes the statement below.
  if (q.filters.search?.words) return searchPageFromPostings(db, q, q.filters.search.words);
  const { where, needsProduct } = listingConditions(q);
  const rank = sql.ref(`i.sort_rank_${q.lang}`);
  const relevance = q.filters.search?.relevance ? sql`${q.filters.search.relevance} DESC,` : sql``;
  const sortKey = sortKeyOf(q.sortBy, 'i');
  // Which side drives the query. A search starts from its matches (GIN on products) and probes
  // the store's inventory of each (LATERAL ... LIMIT 1 keeps that a per-match index probe; as a
  // plain join the planner may scan the whole assortment of the store instead). Everything else
  // walks the store's listing index (in stock first, then catalog rank, within a category's
  // rank range) and stops at the page.
  const from = q.filters.search
    ? sql`products p CROSS JOIN LATERAL (
        SELECT * FROM inventories i0 WHERE i0.product_id = p.id AND i0.store_id = ${q.storeId} AND i0.is_default LIMIT 1) i`
    : sql`inventories i JOIN products p ON p.id = i.product_id`;
  // The total rides on the page, so a page is one round trip. A search reads and ranks all its
  // matches anyway, so a window count costs nothing more; elsewhere a window count would make the
  // page read every match instead of stopping at the page, so an uncorrelated subquery (computed
  // once) counts instead.
  // A category with no other filter has its total kept (catalog_category_totals: the products the
  // store sells in it and its descendants), one row instead of a count that grows with the category.
  const f = q.filters;
  const keptTotal = f.categoryId !== null && !needsProduct && !f.onlyDiscount && !f.favoritesOf;
  const count = q.filters.search
    ? sql`count(*) OVER ()::int`
    : keptTotal
      ? sql`coalesce((SELECT t.products FROM catalog_category_totals t JOIN categories c ON c.id = t.category_id AND c.is_active
          WHERE t.store_id = ${q.storeId} AND t.category_id = ${f.categoryId}), 0)`
      : needsProduct
        ? sql`(SELECT count(*)::int FROM ${from} WHERE ${where})`
        : sql`(SELECT count(*)::int FROM inventories i WHERE ${where})`;
  const { rows } = await sql<CardRow & { total: number }>`
    SELECT ${cardColumns(q.lang, q.customerId)}, ${count} AS total
    FROM ${from}
    WHERE ${where}
    ORDER BY i.in_stock DESC, ${sortKey} ${relevance} ${rank}
    ${pageBounds(q)}`.execute(db);
  if (rows.length > 0) return { items: rows, count: rows[0]!.total };
  if (q.offset === 0) return { items: [], count: 0 };
  // Past the last page there is no row to carry the total.
  const { rows: counted } = await sql<{ total: number }>`SELECT count(*)::int AS total FROM ${from} WHERE ${where}`.execute(db);
  return { items: [], count: counted[0]!.total };
}

/** Every card of the store in catalog order (the snapshot's `products`), anonymous. */
export async function listAllStoreCards(
  db: Executor,
  storeId: string,
  lang: Language,
): Promise<(ProductCard & { flags: { top: boolean; new: boolean; fresh: boolean; popularity: number } })[]> {
  const { rows } = await sql<CardRow & { is_top: boolean; is_new: boolean; is_fresh: boolean; popularity: number }>`
    SELECT ${cardColumns(lang, null)}, p.is_top, p.is_new, p.is_fresh, p.popularity
    FROM inventories i JOIN products p ON p.id = i.product_id
    WHERE i.store_id = ${storeId} AND i.is_default AND p.is_active
    ORDER BY i.${sql.ref(`sort_rank_${lang}`)}, p.id`.execute(db);
  return rows.map((r) => ({ ...toProductCard(r), flags: { top: r.is_top, new: r.is_new, fresh: r.is_fresh, popularity: r.popularity } }));
}

// ---- product screen -----------------------------------------------------------------------------

/** The product columns the detail reads as they are, and those it renames per language. */
export interface ProductDetailRow extends Pick<
  Selectable<DB['products']>,
  | 'id'
  | 'category_id'
  | 'manufacturer'
  | 'brand'
  | 'image_original'
  | 'image_detail'
  | 'image_listing'
  | 'image_thumbnail'
  | 'weight_based'
  | 'weight'
  | 'calories'
  | 'protein'
  | 'fats'
  | 'carbohydrates'
> {
  name: string;
  category_name: string | null;
  description: string | null;
  composition: string | null;
  made_country: string | null;
  is_favorite: boolean;
  inventories: InventoryJson[];
}

export interface InventoryJson {
  id: string;
  unit_id: string;
  stock: string | null;
  unit_price: string;
  old_price: string | null;
  discount_percent: string | null;
  is_default: boolean;
  order_quantity_limit: string | null;
}

export async function findProductDetail(
  db: Executor,
  productId: string,
  storeId: string,
  lang: Language,
  customerId: string | null,
): Promise<ProductDetailRow | null> {
  const favorite =
    customerId === null
      ? sql<boolean>`false`
      : sql<boolean>`EXISTS (SELECT 1 FROM favorite_products f WHERE f.customer_id = ${customerId} AND f.product_id = p.id)`;
  // One round trip: the store's inventories ride along as JSON, their numerics cast to text so
  // that they stay exact decimals (a JSON number would come back as a float).
  const inventoriesJson = sql<InventoryJson[]>`coalesce((
    SELECT json_agg(json_build_object('id', i.id, 'unit_id', i.unit_id, 'stock', i.stock::text, 'unit_price', i.unit_price::text,
      'old_price', i.old_price::text, 'discount_percent', i.discount_percent::text, 'is_default', i.is_default,
      'order_quantity_limit', i.order_quantity_limit::text) ORDER BY i.is_default DESC, u.ratio, i.id)
    FROM inventories i JOIN measurement_units u ON u.id = i.unit_id
    WHERE i.product_id = p.id AND i.store_id = ${storeId}), '[]'::json)`;
  // Written as one template rather than with the query builder: this is among the hottest
  // reads, and building ~20 aliased columns through the builder on every request cost more of
  // the service's time than the database spent on the query.
  const l = (column: string) => sql.ref(`${column}_${lang}`);
  const { rows } = await sql<ProductDetailRow>`
    SELECT p.id, ${l('p.name')} AS name, p.category_id, ${l('c.name')} AS category_name, ${l('p.description')} AS description,
           ${l('p.composition')} AS composition, p.manufacturer, ${l('p.made_country')} AS made_country, p.brand,
           p.image_original, p.image_detail, p.image_listing, p.image_thumbnail, p.weight_based, p.weight,
           p.calories, p.protein, p.fats, p.carbohydrates, ${favorite} AS is_favorite, ${inventoriesJson} AS inventories
    FROM products p LEFT JOIN categories c ON c.id = p.category_id
    WHERE p.id = ${productId} AND p.is_active`.execute(db);
  return rows[0] ?? null;
}

// ---- availability -------------------------------------------------------------------------------

export interface AvailabilityRow {
  product_id: string;
  unit_id: string;
  product_exists: boolean;
  unit_kind: 'piece' | 'weight' | null;
  /** Kilograms (or pieces) in one unit: 0.100 for 100 g. */
  unit_ratio: string | null;
  has_inventory: boolean;
  stock: string | null;
  order_quantity_limit: string | null;
}

/** What the store knows about each (product, unit) pair, in one query for all lines. */
export async function availabilityFacts(
  db: Executor,
  storeId: string,
  lines: { product_id: string; unit_id: string }[],
): Promise<Map<string, AvailabilityRow>> {
  if (lines.length === 0) return new Map();
  const { rows } = await sql<AvailabilityRow>`
    SELECT l.product_id, l.unit_id,
           (p.id IS NOT NULL) AS product_exists, u.kind AS unit_kind, u.ratio AS unit_ratio, (i.id IS NOT NULL) AS has_inventory,
           i.stock, i.order_quantity_limit
    FROM unnest(${lines.map((l) => l.product_id)}::uuid[], ${lines.map((l) => l.unit_id)}::uuid[]) AS l(product_id, unit_id)
    LEFT JOIN products p ON p.id = l.product_id AND p.is_active
    LEFT JOIN measurement_units u ON u.id = l.unit_id
    LEFT JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.unit_id = l.unit_id`.execute(db);
  return new Map(rows.map((r) => [`${r.product_id}/${r.unit_id}`, r]));
}

// ---- recommendations ----------------------------------------------------------------------------

export const RECOMMENDATIONS_LIMIT = 20;

/**
 * Best sellers (`is_top`) the store has in stock, other than the given products: those of the
 * given products' categories first, then the rest of the store, each by sales rank. Each group is
 * read in sales-rank order (products_best_sellers) with a per-product stock probe and stops at
 * 20, so the cost does not grow with the catalog.
 */
export async function listRecommendations(
  db: Executor,
  storeId: string,
  lang: Language,
  customerId: string | null,
  productIds: string[],
): Promise<CardRow[]> {
  const inStock = sql`CROSS JOIN LATERAL (
    SELECT * FROM inventories i0 WHERE i0.product_id = p.id AND i0.store_id = ${storeId} AND i0.is_default AND i0.in_stock LIMIT 1) i`;
  const { rows } = await sql<CardRow>`
    WITH given AS (
      SELECT DISTINCT category_id FROM products WHERE id = ANY(${productIds}::uuid[]) AND category_id IS NOT NULL
    )
    SELECT * FROM (
      (SELECT ${cardColumns(lang, customerId)}, 0 AS tier, p.popularity
       FROM products p ${inStock}
       WHERE p.is_top AND p.is_active AND p.category_id IN (SELECT category_id FROM given) AND p.id <> ALL(${productIds}::uuid[])
       ORDER BY p.popularity DESC, p.id LIMIT ${RECOMMENDATIONS_LIMIT})
      UNION ALL
      (SELECT ${cardColumns(lang, customerId)}, 1 AS tier, p.popularity
       FROM products p ${inStock}
       WHERE p.is_top AND p.is_active AND NOT EXISTS (SELECT 1 FROM given g WHERE g.category_id = p.category_id)
         AND p.id <> ALL(${productIds}::uuid[])
       ORDER BY p.popularity DESC, p.id LIMIT ${RECOMMENDATIONS_LIMIT})
    ) ranked
    ORDER BY tier, popularity DESC, id
    LIMIT ${RECOMMENDATIONS_LIMIT}`.execute(db);
  return rows;
}

// ---- favorites ----------------------------------------------------------------------------------

export async function activeProductExists(db: Executor, productId: string): Promise<boolean> {
  const row = await db.selectFrom('products').select('id').where('id', '=', productId).where('is_active', '=', true).executeTakeFirst();
  return row !== undefined;
}

export async function productExists(db: Executor, productId: string): Promise<boolean> {
  const row = await db.selectFrom('products').select('id').where('id', '=', productId).executeTakeFirst();
  return row !== undefined;
}

/**
 * Adds a favorite unless it exists (parallel calls are safe: the primary key decides). Null when
 * the customer no longer exists (a deleted account whose token has not expired yet).
 */
export async function addFavorite(db: Executor, customerId: string, productId: string): Promise<'added' | 'already_added' | null> {
  const inserted = await sql<{ product_id: string }>`
    INSERT INTO favorite_products (customer_id, product_id)
    SELECT c.id, ${productId}::uuid FROM customers c WHERE c.id = ${customerId} AND c.deleted_at IS NULL
    ON CONFLICT DO NOTHING
    RETURNING product_id`.execute(db);
  if (inserted.rows.length) return 'added';
  const existing = await db
    .selectFrom('favorite_products')
    .select('product_id')
    .where('customer_id', '=', customerId)
    .where('product_id', '=', productId)
    .executeTakeFirst();
  return existing ? 'already_added' : null;
}

export async function removeFavorite(db: Executor, customerId: string, productId: string): Promise<boolean> {
  const r = await db
    .deleteFrom('favorite_products')
    .where('customer_id', '=', customerId)
    .where('product_id', '=', productId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function favoriteIdsAmong(db: Executor, customerId: string, productIds: string[]): Promise<Set<string>> {
  if (productIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('favorite_products')
    .select('product_id')
    .where('customer_id', '=', customerId)
    .where('product_id', 'in', productIds)
    .execute();
  return new Set(rows.map((r) => r.product_id));
}
