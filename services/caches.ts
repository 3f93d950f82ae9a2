// What an instance keeps in memory between requests. Built once with the dependencies, so every
// service in a process (tests run several, each on its own database) has its own, and no module
// holds state of its own.
import type { findActiveStore } from '../db/queries/stores.js';
import type { ProductDetail } from './presenters/catalog.js';
import type { SearchPlan } from '../db/queries/catalog-search.js';
import { expiringCache, type ExpiringCache } from '../platform/expiring-cache.js';
import { TokenBucketLimiter } from '../platform/token-bucket.js';
import type { Kept, ListingPage } from './products-cache.js';
import { ContentCache } from './content-cache.js';

export type StoreRow = NonNullable<Awaited<ReturnType<typeof findActiveStore>>>;

/** Sign-in attempts waiting on this instance for one set of subjects (services/limits.ts). */
export interface AttemptQueue {
  waiting: number;
  last: Promise<void>;
}

export interface InstanceCaches {
  /** Active stores by id: only found ones, so a new store is served at once. */
  activeStores: ExpiringCache<StoreRow>;
  /** The ETag of a published catalog snapshot by version, store and language. */
  snapshotTags: ExpiringCache<string>;
  /** Search texts resolved against the vocabulary. */
  searchPlans: ExpiringCache<SearchPlan>;
  /** Anonymous product listing pages (services/products-cache.ts). */
  listingPages: ExpiringCache<Kept<ListingPage>>;
  /** Anonymous product cards (services/products-cache.ts). */
  productCards: ExpiringCache<Kept<ProductDetail>>;
  /** Until when (epoch ms) each store, kind and local day's slot calendar is known materialised. */
  slotCalendarChecked: Map<string, number>;
  /** The per-client budget of public logistics reads (geocoder calls behind them). */
  logisticsBudget: TokenBucketLimiter;
  /** Sign-in attempts queued per set of subjects. */
  signInQueues: Map<string, AttemptQueue>;
  /** Content answers (banners, pages, units...) until their rows change (services/content-cache.ts). */
  content: ContentCache;
}

export function createInstanceCaches(logisticsRequestsPerMinute: number): InstanceCaches {
  return {
    activeStores: expiringCache(),
    snapshotTags: expiringCache(),
    searchPlans: expiringCache(1000),
    // A page of 20 cards is about 12 KB of objects, a product about 2 KB: at most about 35 MB.
    listingPages: expiringCache(2000),
    productCards: expiringCache(5000),
    slotCalendarChecked: new Map(),
    logisticsBudget: new TokenBucketLimiter(logisticsRequestsPerMinute),
    signInQueues: new Map(),
    content: new ContentCache(),
  };
}
