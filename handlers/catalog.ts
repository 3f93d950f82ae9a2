// Handlers of the Catalog tag, keyed by operationId: each reads its typed input and calls one use
// case of services/catalog.ts.
import { gunzipSync } from 'node:zlib';
import type { HandlerMap, StepsMap, SuccessReply } from '../server/handler-types.js';
import { acceptsGzip, ifNoneMatchMatches } from '../server/http/conditional.js';
import { hasNextPage, pageWindow } from '../server/http/paging.js';
import {
  addFavoriteProduct,
  category,
  categoryChildren,
  categoryParents,
  checkAvailability,
  currentCatalogVersion,
  favoritesAmong,
  listProducts,
  mainPageCategories,
  measurementUnits,
  menuCategories,
  ownProductionCategories,
  productScreen,
  readCatalogSnapshot,
  recommendations,
  removeFavoriteProduct,
  rootCategories,
} from '../services/catalog.js';
import { keptReply } from './content.js';
import { customerIdOf, optionalCustomerIdOf } from './support/principal.js';
import { requireStore } from './support/store.js';

export const catalogHandlers = {
  // GET /api/catalog/version
  getCatalogVersion: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, headers: { 'Cache-Control': 'no-cache' }, body: await currentCatalogVersion(ctx.deps, store.id, ctx.lang) };
  },

  // GET /api/catalog/bootstrap/{version}
  getCatalogSnapshot: async (ctx) => {
    const store = await requireStore(ctx);
    const ifNoneMatch = ctx.headers['if-none-match'];
    const gzip = acceptsGzip(ctx.transport.acceptEncoding);
    const snapshot = await readCatalogSnapshot(ctx.deps, {
      storeId: store.id,
      lang: ctx.lang,
      version: ctx.path.version,
      holds: ifNoneMatch ? (etag) => ifNoneMatchMatches(ifNoneMatch, etag) : null,
      gzip,
    });
    if (snapshot.notModified) return { status: 304, headers: { ETag: snapshot.etag }, body: undefined };
    return storedJsonReply(snapshot.bytes, snapshot.etag, gzip);
  },

  // GET /api/catalog/features/units/
  listMeasurementUnits: async (ctx) => {
    return keptReply(await measurementUnits(ctx.deps, ctx.lang), ctx.headers['if-none-match']);
  },

  // GET /api/catalog/groups/categories/main-page
  listMainPageCategories: async (ctx) => {
    const store = await requireStore(ctx);
    return keptReply(await mainPageCategories(ctx.deps, store.id, ctx.lang), ctx.headers['if-none-match']);
  },

  // GET /api/catalog/groups/categories/menu
  listMenuCategories: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await menuCategories(ctx.deps, store.id, ctx.lang) };
  },

  // GET /api/catalog/groups/categories/own-production
  listOwnProductionCategories: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await ownProductionCategories(ctx.deps, store.id, ctx.lang) };
  },

  // GET /api/catalog/groups/categories/root
  listRootCategories: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await rootCategories(ctx.deps, store.id, ctx.lang) };
  },

  // GET /api/catalog/groups/categories/{category_id}
  getCategory: async (ctx) => {
    return { status: 200, body: await category(ctx.deps, ctx.path.category_id, ctx.lang) };
  },

  // GET /api/catalog/groups/categories/{category_id}/children
  listCategoryChildren: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await categoryChildren(ctx.deps, store.id, ctx.path.category_id, ctx.query.level ?? null, ctx.lang) };
  },

  // GET /api/catalog/groups/categories/{category_id}/parents
  listCategoryParents: async (ctx) => {
    return { status: 200, body: await categoryParents(ctx.deps, ctx.path.category_id, ctx.query.level ?? null, ctx.lang) };
  },

  // GET /api/catalog/products/
  listCatalogProducts: async (ctx) => {
    const store = await requireStore(ctx);
    const q = ctx.query;
    const window = pageWindow(q.page, q.page_size);
    const listing = await listProducts(ctx.deps, {
      storeId: store.id,
      lang: ctx.lang,
      customerId: optionalCustomerIdOf(ctx),
      categoryId: q.category_id ?? null,
      isTop: q.is_top ?? false,
      isNew: q.is_new ?? false,
      isFresh: q.is_fresh ?? false,
      onlyDiscount: q.only_discount ?? false,
      isFavorite: q.is_favorite ?? false,
      search: q.search,
      sortBy: q.sort_by ?? null,
      limit: window.pageSize,
      offset: window.offset,
    });
    const { items, count } = listing.value;
    return {
      status: 200,
      headers: keptHeaders(listing.readAt, listing.ttlSeconds, ctx.deps.clock.nowMs()),
      body: { items, count, has_next: hasNextPage(window, count) },
    };
  },

  // GET /api/catalog/products/{product_id}
  getCatalogProduct: async (ctx) => {
    const store = await requireStore(ctx);
    const product = await productScreen(ctx.deps, store.id, ctx.path.product_id, ctx.lang, optionalCustomerIdOf(ctx));
    return { status: 200, headers: keptHeaders(product.readAt, product.ttlSeconds, ctx.deps.clock.nowMs()), body: product.value };
  },

  // POST /api/catalog/products/check-availability
  checkProductsAvailability: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await checkAvailability(ctx.deps, store.id, ctx.body) };
  },

  // GET /api/catalog/products/recommendations
  listProductRecommendations: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await recommendations(ctx.deps, store.id, ctx.lang, optionalCustomerIdOf(ctx), ctx.query.product_ids) };
  },

  // POST /api/catalog/products/add-favorite/{product_id}
  addFavoriteProduct: async (ctx) => {
    return { status: 200, body: await addFavoriteProduct(ctx.deps, customerIdOf(ctx), ctx.path.product_id) };
  },

  // DELETE /api/catalog/products/remove-favorite/{product_id}
  removeFavoriteProduct: async (ctx) => {
    await removeFavoriteProduct(ctx.deps, customerIdOf(ctx), ctx.path.product_id);
    return { status: 204, body: undefined };
  },

  // POST /api/catalog/products/favorites/check
  checkFavoriteProducts: async (ctx) => {
    return { status: 200, body: await favoritesAmong(ctx.deps, customerIdOf(ctx), ctx.body.product_ids) };
  },
} satisfies Partial<HandlerMap>;

/**
 * The caching headers of a listing page or product card read at `readAt`: `Age`, how many seconds
 * ago this instance read its stock and prices, and `Cache-Control: private, max-age=<ttl>`, how
 * long such an answer is kept (and may be reused by the app's own HTTP cache): an app can tell
 * why it saw old stock. `private`: a signed-in customer's answer carries their favourites.
 */
function keptHeaders(readAt: number, ttlSeconds: number, now: number): Record<string, string> {
  return {
    'Cache-Control': `private, max-age=${Math.max(0, ttlSeconds)}`,
    Age: String(Math.max(0, Math.floor((now - readAt) / 1000))),
  };
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
