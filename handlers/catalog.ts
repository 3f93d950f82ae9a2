// Handlers of the Catalog tag, keyed by operationId.
import { gunzipSync } from 'node:zlib';
import {
  activeProductExists,
  addFavorite,
  availabilityFacts,
  countInStockProducts,
  favoriteIdsAmong,
  findProductDetail,
  listProductPage,
  listRecommendations,
  listUnits,
  loadCategoryTree,
  productExists,
  removeFavorite,
} from '../db/queries/catalog.js';
import { planProductSearch, type SearchPlan } from '../db/queries/catalog-search.js';
import { findCurrentVersion, findServableSnapshot, whySnapshotMissing } from '../db/queries/catalog-snapshot.js';
import type { Executor } from '../db/executor.js';
import type { Clock } from '../platform/clock.js';
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { notFound, serviceUnavailable, unauthorized, unprocessable } from '../services/errors.js';
import type { SuccessReply } from '../server/handler-types.js';
import { decideAvailability, parseRequestedQuantity, QUANTITY_PROBLEMS, quantityUnit } from '../domain/catalog/availability.js';
import { parseSearch, type SearchRequest } from '../domain/catalog/search.js';
import { acceptsGzip, ifNoneMatchMatches } from '../server/http/conditional.js';
import { hasNextPage, pageWindow } from '../server/http/paging.js';
import type { ExpiringCache } from '../platform/expiring-cache.js';
import { keptHeaders, readListingPage, readProductDetail } from '../services/products-cache.js';
import { customerIdOf, optionalCustomerIdOf } from './support/principal.js';
import { requireStore } from './support/store.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Clients retry a missing publication after this many seconds (a publication takes seconds). */
const NOT_PUBLISHED_RETRY_SECONDS = 30;
const catalogNotPublished = () =>
  serviceUnavailable(
    'CATALOG_NOT_PUBLISHED',
    'No catalog version is published for this store yet; keep the last good snapshot',
    NOT_PUBLISHED_RETRY_SECONDS,
  );

/** Path ids are plain strings in the spec; anything that is not a UUID names no category or product. */
const idOrNotFound = (raw: string, what: string): string => {
  if (!UUID.test(raw)) throw notFound(`No active ${what} has id ${raw}`);
  return raw.toLowerCase();
};

// The tag of a published snapshot never changes (a version's snapshots are written once), and a
// snapshot stays servable until its version has been replaced for the retention period. So a tag
// read once is reused until that moment, capped at SNAPSHOT_TAG_CACHE_MS: the clients'
// revalidation (the commonest catalog request) then costs no database round trip.
const SNAPSHOT_TAG_CACHE_MS = 10 * 60_000;

async function servableSnapshotTag(
  db: Executor,
  snapshotTags: ExpiringCache<string>,
  version: string,
  storeId: string,
  lang: 'ru' | 'en',
  retentionHours: number,
  clock: Clock,
): Promise<string | null> {
  const key = `${version}/${storeId}/${lang}`;
  const cached = snapshotTags.get(key, clock.nowMs());
  if (cached) return cached;
  const row = await findServableSnapshot(db, version, storeId, lang, retentionHours, 'etag');
  if (!row) return null;
  const now = clock.nowMs();
  snapshotTags.set(key, row.etag, now + Math.min(SNAPSHOT_TAG_CACHE_MS, row.servable_for_seconds * 1000), now);
  return row.etag;
}

// How search texts resolved against the vocabulary: popular searches repeat, and the vocabulary
// changes only with catalog imports, so a plan is reused for config.catalog.searchPlanCacheSeconds.

async function searchPlanOf(
  db: Executor,
  searchPlans: ExpiringCache<SearchPlan>,
  request: SearchRequest,
  ttlSeconds: number,
  clock: Clock,
): Promise<SearchPlan> {
  const key = JSON.stringify(request);
  const cached = searchPlans.get(key, clock.nowMs());
  if (cached) return cached;
  const plan = await planProductSearch(db, request);
  const now = clock.nowMs();
  searchPlans.set(key, plan, now + ttlSeconds * 1000, now);
  return plan;
}

export const catalogHandlers = {
  // GET /api/catalog/version
  getCatalogVersion: async (ctx) => {
    const store = await requireStore(ctx);
    const current = await findCurrentVersion(ctx.deps.db, store.id, ctx.lang);
    // A store added after the last publication has no snapshot in it yet: nothing to offer.
    if (!current || current.etag === null) throw catalogNotPublished();
    return {
      status: 200,
      headers: { 'Cache-Control': 'no-cache' },
      body: { version: current.version, etag: current.etag, published_at: current.published_at.toISOString() },
    };
  },

  // GET /api/catalog/bootstrap/{version}
  getCatalogSnapshot: async (ctx) => {
    const store = await requireStore(ctx);
    const { db, config } = ctx.deps;
    const ttl = config.catalog.previousVersionTtlHours;
    const version = ctx.path.version.toLowerCase();
    const missing = async (): Promise<never> => {
      const why = await whySnapshotMissing(db, version, ttl);
      if (why === 'unknown_version') {
        throw notFound(`Catalog version ${version} is unknown or expired; re-read GET /api/catalog/version`, 'CATALOG_VERSION_NOT_FOUND');
      }
      throw catalogNotPublished();
    };
    const ifNoneMatch = ctx.headers['if-none-match'];
    if (ifNoneMatch) {
      // Revalidation reads the tag only, and from memory while the snapshot is known servable.
      const etag =
        (await servableSnapshotTag(db, ctx.deps.caches.snapshotTags, version, store.id, ctx.lang, ttl, ctx.deps.clock)) ??
        (await missing());
      if (ifNoneMatchMatches(ifNoneMatch, etag)) return { status: 304, headers: { ETag: etag }, body: undefined };
    }
    const gzip = acceptsGzip(ctx.transport.acceptEncoding);
    const stored = (await findServableSnapshot(db, version, store.id, ctx.lang, ttl, gzip ? 'gzip' : 'body')) ?? (await missing());
    return storedJsonReply(stored.bytes!, stored.etag, gzip);
  },

  // GET /api/catalog/features/units/
  listMeasurementUnits: async (ctx) => {
    return { status: 200, body: await listUnits(ctx.deps.db, ctx.lang) };
  },

  // GET /api/catalog/groups/categories/main-page
  listMainPageCategories: async (ctx) => {
    const store = await requireStore(ctx);
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, store.id);
    return { status: 200, body: tree.mainPageBlocks() };
  },

  // GET /api/catalog/groups/categories/menu
  listMenuCategories: async (ctx) => {
    const store = await requireStore(ctx);
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, store.id);
    return { status: 200, body: tree.menu() };
  },

  // GET /api/catalog/groups/categories/own-production
  listOwnProductionCategories: async (ctx) => {
    const store = await requireStore(ctx);
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, store.id);
    const own = tree.nodes.filter((n) => n.is_own_production && n.visible && n.ancestor_ids.every((a) => tree.byId.has(a)));
    const counts = await countInStockProducts(
      ctx.deps.db,
      store.id,
      own.filter((n) => n.show_products_count),
    );
    return {
      status: 200,
      body: own.map((n) => ({ ...tree.card(n, true), products_count: n.show_products_count ? (counts.get(n.id) ?? 0) : null })),
    };
  },

  // GET /api/catalog/groups/categories/root
  listRootCategories: async (ctx) => {
    const store = await requireStore(ctx);
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, store.id);
    return { status: 200, body: tree.children(null, true).map((n) => tree.card(n, true)) };
  },

  // GET /api/catalog/groups/categories/{category_id}
  getCategory: async (ctx) => {
    const id = idOrNotFound(ctx.path.category_id, 'category');
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, null);
    const node = tree.byId.get(id) ?? throwNotFound(`No active category has id ${id}`);
    return { status: 200, body: tree.card(node, false) };
  },

  // GET /api/catalog/groups/categories/{category_id}/children
  listCategoryChildren: async (ctx) => {
    const store = await requireStore(ctx);
    const id = idOrNotFound(ctx.path.category_id, 'category');
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, store.id);
    const node = tree.byId.get(id) ?? throwNotFound(`No active category has id ${id}`);
    const level = ctx.query.level ?? null;
    // `level` is absolute: null means the direct children, a deeper level every descendant there.
    const found =
      level === null
        ? tree.children(node.id, true)
        : level > node.level
          ? tree.nodes.filter((n) => n.visible && n.level === level && n.ancestor_ids.includes(node.id))
          : [];
    return { status: 200, body: found.map((n) => tree.card(n, true)) };
  },

  // GET /api/catalog/groups/categories/{category_id}/parents
  listCategoryParents: async (ctx) => {
    const id = idOrNotFound(ctx.path.category_id, 'category');
    const tree = await loadCategoryTree(ctx.deps.db, ctx.lang, null);
    const node = tree.byId.get(id) ?? throwNotFound(`No active category has id ${id}`);
    const level = ctx.query.level ?? null;
    const ancestors = node.ancestor_ids.map((a) => tree.byId.get(a)).filter((n) => n !== undefined);
    const found = level === null ? ancestors : ancestors.filter((n) => n.level === level);
    return { status: 200, body: found.map((n) => tree.card(n, false)) };
  },

  // GET /api/catalog/products/
  listCatalogProducts: async (ctx) => {
    const store = await requireStore(ctx);
    const customerId = optionalCustomerIdOf(ctx);
    const q = ctx.query;
    if (q.is_favorite && !customerId) throw unauthorized('is_favorite=true needs a customer access token');
    const db = ctx.deps.db;
    const window = pageWindow(q.page, q.page_size);
    const searchRequest = parseSearch(q.search);
    const filters = {
      categoryId: q.category_id?.toLowerCase() ?? null,
      isTop: q.is_top ?? false,
      isNew: q.is_new ?? false,
      isFresh: q.is_fresh ?? false,
      onlyDiscount: q.only_discount ?? false,
    };
    const sortBy = q.sort_by ?? null;
    const read = async () => {
      const search = searchRequest
        ? await searchPlanOf(db, ctx.deps.caches.searchPlans, searchRequest, ctx.deps.config.catalog.searchPlanCacheSeconds, ctx.deps.clock)
        : null;
      return listProductPage(db, {
        storeId: store.id,
        lang: ctx.lang,
        customerId,
        filters: { ...filters, favoritesOf: q.is_favorite ? customerId : null, search },
        sortBy,
        limit: window.pageSize,
        offset: window.offset,
      });
    };
    // A customer's favourites page is theirs alone: never kept (read now: Age 0, max-age 0).
    const ttl = q.is_favorite ? 0 : ctx.deps.config.catalog.productsCacheSeconds;
    const { value: page, readAt } = q.is_favorite
      ? { value: await read(), readAt: ctx.deps.clock.nowMs() }
      : await readListingPage(
          db,
          ctx.deps.caches.listingPages,
          {
            storeId: store.id,
            lang: ctx.lang,
            ...filters,
            search: searchRequest?.text ?? null,
            sortBy,
            limit: window.pageSize,
            offset: window.offset,
          },
          customerId,
          ctx.deps.config.catalog.productsCacheSeconds,
          read,
          ctx.deps.clock,
        );
    return {
      status: 200,
      headers: keptHeaders(readAt, ttl, ctx.deps.clock.nowMs()),
      body: { items: page.items, count: page.count, has_next: hasNextPage(window, page.count) },
    };
  },

  // GET /api/catalog/products/{product_id}
  getCatalogProduct: async (ctx) => {
    const store = await requireStore(ctx);
    const id = idOrNotFound(ctx.path.product_id, 'product');
    const customerId = optionalCustomerIdOf(ctx);
    const ttl = ctx.deps.config.catalog.productsCacheSeconds;
    const { value: detail, readAt } = await readProductDetail(
      ctx.deps.db,
      ctx.deps.caches.productCards,
      { storeId: store.id, lang: ctx.lang, productId: id },
      customerId,
      ttl,
      () => findProductDetail(ctx.deps.db, id, store.id, ctx.lang, customerId),
      ctx.deps.clock,
    );
    return {
      status: 200,
      headers: keptHeaders(readAt, ttl, ctx.deps.clock.nowMs()),
      body: detail ?? throwNotFound(`No active product has id ${id}`),
    };
  },

  // POST /api/catalog/products/check-availability
  checkProductsAvailability: async (ctx) => {
    const store = await requireStore(ctx);
    // Looked up lower-cased, answered with the ids as sent (the app matches its lines by them).
    const lines = ctx.body.map((l) => ({ ...l, product_id: l.product_id.toLowerCase(), unit_id: l.unit_id.toLowerCase() }));
    const facts = await availabilityFacts(ctx.deps.db, store.id, lines);
    const verdicts = ctx.body.map((sent, i) => {
      const line = lines[i];
      const fact = facts.get(`${line!.product_id}/${line!.unit_id}`);
      const quantity = parseRequestedQuantity(line!.quantity, quantityUnit(fact));
      if (!quantity.ok) {
        throw unprocessable(
          'INVALID_QUANTITY',
          `Line ${i + 1}: quantity ${JSON.stringify(line!.quantity)} ${QUANTITY_PROBLEMS[quantity.problem]}`,
        );
      }
      const inventory = fact?.has_inventory ? { stock: fact.stock, orderQuantityLimit: fact.order_quantity_limit } : null;
      return {
        product_id: sent.product_id,
        unit_id: sent.unit_id,
        ...decideAvailability(quantity.thousandths, fact?.product_exists ?? false, inventory),
      };
    });
    return { status: 200, body: verdicts };
  },

  // GET /api/catalog/products/recommendations
  listProductRecommendations: async (ctx) => {
    const store = await requireStore(ctx);
    const ids = [...new Set(ctx.query.product_ids.map((id) => id.toLowerCase()))];
    return { status: 200, body: await listRecommendations(ctx.deps.db, store.id, ctx.lang, optionalCustomerIdOf(ctx), ids) };
  },

  // POST /api/catalog/products/add-favorite/{product_id}
  addFavoriteProduct: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const productId = ctx.path.product_id.toLowerCase();
    if (!(await activeProductExists(ctx.deps.db, productId))) throw notFound(`No active product has id ${productId}`);
    const status = await addFavorite(ctx.deps.db, customerId, productId);
    if (status === null) throw unauthorized('The account of this token no longer exists');
    return { status: 200, body: { status, product_id: productId } };
  },

  // DELETE /api/catalog/products/remove-favorite/{product_id}
  removeFavoriteProduct: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const productId = ctx.path.product_id.toLowerCase();
    const removed = await removeFavorite(ctx.deps.db, customerId, productId);
    if (!removed && !(await productExists(ctx.deps.db, productId))) throw notFound(`No product has id ${productId}`);
    return { status: 204, body: undefined };
  },

  // POST /api/catalog/products/favorites/check
  checkFavoriteProducts: async (ctx) => {
    const customerId = customerIdOf(ctx);
    // Each id once (whatever its case), answered as first sent.
    const sentById = new Map<string, string>();
    for (const id of ctx.body.product_ids) if (!sentById.has(id.toLowerCase())) sentById.set(id.toLowerCase(), id);
    const favorites = await favoriteIdsAmong(ctx.deps.db, customerId, [...sentById.keys()]);
    return { status: 200, body: { product_ids: [...sentById].filter(([id]) => favorites.has(id)).map(([, sent]) => sent) } };
  },
} satisfies Partial<HandlerMap>;

function throwNotFound(detail: string): never {
  throw notFound(detail);
}

/**
 * Stored JSON bytes, sent as they are (the snapshot is never re-serialised). The reply's body is
 * parsed only when someone reads it - the TEST environment's check of responses against the
 * contract - so serving costs one copy of the bytes.
 */
function storedJsonReply(bytes: Buffer, etag: string, gzip: boolean) {
  return {
    status: 200 as const,
    headers: { ETag: etag },
    storedJson: { bytes, gzip },
    get body() {
      return JSON.parse((gzip ? gunzipSync(bytes) : bytes).toString('utf8')) as Extract<
        SuccessReply<'getCatalogSnapshot'>,
        { status: 200 }
      >['body'];
    },
  };
}

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const catalogSteps: StepsMap = {
  getCatalogVersion: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  getCatalogSnapshot: { varyBy: ['X-Store-Id', 'Accept-Language', 'Accept-Encoding'] },
  listMeasurementUnits: { varyBy: ['Accept-Language'] },
  listMainPageCategories: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listMenuCategories: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listOwnProductionCategories: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listRootCategories: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  getCategory: { varyBy: ['Accept-Language'] },
  listCategoryChildren: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listCategoryParents: { varyBy: ['Accept-Language'] },
  listCatalogProducts: { varyBy: ['X-Store-Id', 'Accept-Language', 'Authorization'] },
  getCatalogProduct: { varyBy: ['X-Store-Id', 'Accept-Language', 'Authorization'] },
  checkProductsAvailability: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listProductRecommendations: { varyBy: ['X-Store-Id', 'Accept-Language', 'Authorization'] },
};
