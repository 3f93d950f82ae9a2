// Listing pages (GET /api/catalog/products/) as this instance last read them, kept for
// config.catalog.listingCacheSeconds.
//
// Why: the listing is the busiest read of the customer app, and at the busy hours the same pages
// (a store's popular categories and searches, first page, default order) are asked for by many
// customers within a second. Each read is a statement over the store's assortment plus the rows
// of the page (about 0.35 ms of PostgreSQL and as much again of this process); a kept page is
// served without either.
//
// What a kept page may and may not show:
// - it is kept anonymous (every `is_favorite` false), and a signed-in customer's favourites are
//   laid over it from the database on every request (one index probe for the page's ids), so a
//   heart tapped a moment ago always shows;
// - its stock and prices may be up to listingCacheSeconds old, as on any other instance that
//   read them then; check-availability and checkout always read them live (the spec's listing
//   description says so);
// - a customer's favourites page (`is_favorite=true`) is never kept: it is theirs alone.
import type { ProductCard } from '../../db/queries/catalog.js';
import { favoriteIdsAmong } from '../../db/queries/catalog.js';
import type { Executor } from '../../db/executor.js';
import { expiringCache } from './expiring-cache.js';

export interface ListingPage {
  items: ProductCard[];
  count: number;
}

/** What a page depends on besides the customer (each part is part of the key). */
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

/** A page of 20 cards is about 12 KB of objects: at most about 25 MB per instance. */
const LISTING_CACHE_ENTRIES = 2000;

const pages = expiringCache<ListingPage>(LISTING_CACHE_ENTRIES);

const keyText = (k: ListingPageKey) =>
  JSON.stringify([k.storeId, k.lang, k.categoryId, k.isTop, k.isNew, k.isFresh, k.onlyDiscount, k.search, k.sortBy, k.limit, k.offset]);

/**
 * The page of `key` for `customerId` (null: anonymous): from the cache when a live copy is kept,
 * else from `read` (which reads it for that customer, `is_favorite` included), keeping an
 * anonymous copy for `ttlSeconds` (0: nothing is kept).
 */
export async function readListingPage(
  db: Executor,
  key: ListingPageKey,
  customerId: string | null,
  ttlSeconds: number,
  read: () => Promise<ListingPage>,
): Promise<ListingPage> {
  if (ttlSeconds <= 0) return read();
  const text = keyText(key);
  const kept = pages.get(db, text);
  if (kept) {
    if (customerId === null || kept.items.length === 0) return kept;
    const favorites = await favoriteIdsAmong(db, customerId, kept.items.map((c) => c.id));
    return { items: kept.items.map((c) => (favorites.has(c.id) ? { ...c, is_favorite: true } : c)), count: kept.count };
  }
  const page = await read();
  const anonymous = customerId === null ? page.items : page.items.map((c) => (c.is_favorite ? { ...c, is_favorite: false } : c));
  pages.set(db, text, { items: anonymous, count: page.count }, Date.now() + ttlSeconds * 1000);
  return page;
}
