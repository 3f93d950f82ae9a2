// Product listing pages (GET /api/catalog/products/) and product cards (GET
// /api/catalog/products/{product_id}) as this instance last read them, kept for
// config.catalog.productsCacheSeconds.
//
// Why: these are the busiest reads of the customer app, and at the busy hours the same pages and
// cards (a store's popular categories and searches, first page, default order; its popular
// products) are asked for by many customers within a second. Each read is a statement over the
// store's assortment or a product's inventories (a listing page: about 0.35 ms of PostgreSQL and
// as much again of this process); a kept one is served without either.
//
// What a kept answer may and may not show:
// - it is kept anonymous (every `is_favorite` false), and a signed-in customer's favourites are
//   laid over it from the database on every request (one index probe for its product ids), so a
//   heart tapped a moment ago always shows;
// - its stock and prices may be up to productsCacheSeconds old, as on any other instance that
//   read them then; check-availability and checkout always read them live (the spec's listing
//   and product descriptions say so);
// - a customer's favourites page (`is_favorite=true`) is never kept: it is theirs alone; nor is
//   a product that was not found (a new one is served at once).
import { favoriteIdsAmong } from '../db/queries/catalog.js';
import type { ProductCard, ProductDetail } from './presenters/catalog.js';
import type { Executor } from '../db/executor.js';
import type { Clock } from '../platform/clock.js';
import type { ExpiringCache } from '../platform/expiring-cache.js';

export interface ListingPage {
  items: ProductCard[];
  count: number;
}

/** What a listing page depends on besides the customer (each part is part of the key). */
export interface ListingPageKey {
  storeId: string;
  lang: string;
  categoryId: string | null;
  isTop: boolean;
  isNew: boolean;
  isFresh: boolean;
  onlyDiscount: boolean;
  /** The search text as parsed (blanks folded), or null. */
  search: string | null;
  sortBy: string | null;
  limit: number;
  offset: number;
}

/** How the favourites of a kept answer are read and laid over it. */
interface Favourites<T> {
  productIds(value: T): string[];
  /** `value` with `is_favorite` set from `favourites` (the same objects where nothing changes). */
  withFavourites(value: T, favourites: ReadonlySet<string>): T;
}

const NONE: ReadonlySet<string> = new Set();
const marked = <C extends { id: string; is_favorite: boolean }>(card: C, favourites: ReadonlySet<string>): C =>
  card.is_favorite === favourites.has(card.id) ? card : { ...card, is_favorite: favourites.has(card.id) };

const pageFavourites: Favourites<ListingPage> = {
  productIds: (page) => page.items.map((c) => c.id),
  withFavourites: (page, favourites) => ({ items: page.items.map((c) => marked(c, favourites)), count: page.count }),
};
const productFavourites: Favourites<ProductDetail> = {
  productIds: (product) => [product.id],
  withFavourites: (product, favourites) => marked(product, favourites),
};

/** An answer as this instance read it, and when (epoch ms): the handler's `Age` and freshness headers. */
export interface Kept<T> {
  value: T;
  readAt: number;
}

/**
 * The kept answer of `key` for `customerId` (null: anonymous) when a live one is kept, else
 * `read()` (which reads it for that customer, `is_favorite` included), keeping an anonymous copy
 * for `ttlSeconds` (0: nothing is kept). `read()` answering null (nothing found) is not kept.
 */
async function readKept<T>(
  cache: ExpiringCache<Kept<T>>,
  favouritesOf: Favourites<T>,
  db: Executor,
  key: string,
  customerId: string | null,
  ttlSeconds: number,
  read: () => Promise<T | null>,
  clock: Clock,
): Promise<Kept<T | null>> {
  if (ttlSeconds <= 0) return { value: await read(), readAt: clock.nowMs() };
  const kept = cache.get(key, clock.nowMs());
  if (kept) {
    const ids = favouritesOf.productIds(kept.value);
    if (customerId === null || ids.length === 0) return kept;
    return { value: favouritesOf.withFavourites(kept.value, await favoriteIdsAmong(db, customerId, ids)), readAt: kept.readAt };
  }
  const readAt = clock.nowMs();
  const fresh = await read();
  if (fresh !== null)
    cache.set(key, { value: favouritesOf.withFavourites(fresh, NONE), readAt }, readAt + ttlSeconds * 1000, clock.nowMs());
  return { value: fresh, readAt };
}

/** A listing page (see readKept); `read` reads it for `customerId`. */
export async function readListingPage(
  db: Executor,
  pages: ExpiringCache<Kept<ListingPage>>,
  key: ListingPageKey,
  customerId: string | null,
  ttlSeconds: number,
  read: () => Promise<ListingPage>,
  clock: Clock,
): Promise<Kept<ListingPage>> {
  const text = JSON.stringify([
    key.storeId,
    key.lang,
    key.categoryId,
    key.isTop,
    key.isNew,
    key.isFresh,
    key.onlyDiscount,
    key.search,
    key.sortBy,
    key.limit,
    key.offset,
  ]);
  return (await readKept(pages, pageFavourites, db, text, customerId, ttlSeconds, read, clock)) as Kept<ListingPage>;
}

/** A product card of a store in a language (see readKept); a null value: no active product. */
export function readProductDetail(
  db: Executor,
  products: ExpiringCache<Kept<ProductDetail>>,
  key: { storeId: string; lang: string; productId: string },
  customerId: string | null,
  ttlSeconds: number,
  read: () => Promise<ProductDetail | null>,
  clock: Clock,
): Promise<Kept<ProductDetail | null>> {
  return readKept(
    products,
    productFavourites,
    db,
    JSON.stringify([key.storeId, key.lang, key.productId]),
    customerId,
    ttlSeconds,
    read,
    clock,
  );
}
