// Catalog use cases: the published version and its stored snapshot, the category tree of a store,
// product listing pages and the product screen (kept briefly, services/products-cache.ts),
// availability of cart lines, recommendations and favorites.
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
  type CategoryTree,
  type Language,
  type ProductSort,
} from '../db/queries/catalog.js';
import { planProductSearch, type SearchPlan } from '../db/queries/catalog-search.js';
import { findCurrentVersion, findServableSnapshot, whySnapshotMissing } from '../db/queries/catalog-snapshot.js';
import { decideAvailability, parseRequestedQuantity, QUANTITY_PROBLEMS, quantityUnit } from '../domain/catalog/availability.js';
import { parseSearch, type SearchRequest } from '../domain/catalog/search.js';
import { isUuid } from '../domain/ids.js';
import type { AppDeps } from './deps.js';
import { notFound, serviceUnavailable, unauthorized, unprocessable } from './errors.js';
import { readListingPage, readProductDetail, type Kept, type ListingPage } from './products-cache.js';
import { catalogVersionView, measurementUnit, ownProductionCard, productCard, productDetail } from './presenters/catalog.js';

type Deps = Pick<AppDeps, 'db' | 'readDb' | 'config' | 'clock' | 'caches'>;

/** Clients retry a missing publication after this many seconds (a publication takes seconds). */
const NOT_PUBLISHED_RETRY_SECONDS = 30;
const catalogNotPublished = () =>
  serviceUnavailable(
    'CATALOG_NOT_PUBLISHED',
    'No catalog version is published for this store yet; keep the last good snapshot',
    NOT_PUBLISHED_RETRY_SECONDS,
  );

// ---- the published catalog ---------------------------------------------------------------------

export async function currentCatalogVersion(deps: Pick<AppDeps, 'db'>, storeId: string, lang: Language) {
  const current = await findCurrentVersion(deps.db, storeId, lang);
  // A store added after the last publication has no snapshot in it yet: nothing to offer.
  if (!current || current.etag === null) throw catalogNotPublished();
  return catalogVersionView({ ...current, etag: current.etag });
}

// The tag of a published snapshot never changes (a version's snapshots are written once), and a
// snapshot stays servable until its version has been replaced for the retention period. So a tag
// read once is reused until that moment, capped at SNAPSHOT_TAG_CACHE_MS: the clients'
// revalidation (the commonest catalog request) then costs no database round trip.
const SNAPSHOT_TAG_CACHE_MS = 10 * 60_000;

async function servableSnapshotTag(deps: Deps, version: string, storeId: string, lang: Language): Promise<string | null> {
  const { snapshotTags } = deps.caches;
  const key = `${version}/${storeId}/${lang}`;
  const cached = snapshotTags.get(key, deps.clock.nowMs());
  if (cached) return cached;
  const row = await findServableSnapshot(deps.db, version, storeId, lang, deps.config.catalog.previousVersionTtlHours, 'etag');
  if (!row) return null;
  const now = deps.clock.nowMs();
  snapshotTags.set(key, row.etag, now + Math.min(SNAPSHOT_TAG_CACHE_MS, row.servable_for_seconds * 1000), now);
  return row.etag;
}

export interface SnapshotRequest {
  storeId: string;
  lang: Language;
  version: string;
  /** Whether the client already holds the snapshot of this tag (If-None-Match); null: it holds none. */
  holds: ((etag: string) => boolean) | null;
  gzip: boolean;
}

export type SnapshotRead = { notModified: true; etag: string } | { notModified: false; etag: string; bytes: Buffer };

/** The stored snapshot of a servable version, as gzip or plain bytes, or that the client's copy is current. */
export async function readCatalogSnapshot(deps: Deps, request: SnapshotRequest): Promise<SnapshotRead> {
  const { storeId, lang, gzip } = request;
  const ttl = deps.config.catalog.previousVersionTtlHours;
  const version = request.version.toLowerCase();
  const missing = async (): Promise<never> => {
    const why = await whySnapshotMissing(deps.db, version, ttl);
    if (why === 'unknown_version') {
      throw notFound(`Catalog version ${version} is unknown or expired; re-read GET /api/catalog/version`, 'CATALOG_VERSION_NOT_FOUND');
    }
    throw catalogNotPublished();
  };
  if (request.holds) {
    // Revalidation reads the tag only, and from memory while the snapshot is known servable.
    const etag = (await servableSnapshotTag(deps, version, storeId, lang)) ?? (await missing());
    if (request.holds(etag)) return { notModified: true, etag };
  }
  const stored = (await findServableSnapshot(deps.db, version, storeId, lang, ttl, gzip ? 'gzip' : 'body')) ?? (await missing());
  return { notModified: false, etag: stored.etag, bytes: stored.bytes! };
}

// ---- units and categories ----------------------------------------------------------------------

/** Units, kept by the instance until they change (services/content-cache.ts), with their ETag. */
export function measurementUnits(deps: Pick<AppDeps, 'db' | 'clock' | 'caches'>, lang: Language) {
  return deps.caches.content.get({ name: 'listMeasurementUnits', lang }, ['measurement_units'], deps.clock, async () => ({
    value: (await listUnits(deps.db, lang)).map(measurementUnit),
  }));
}

const categoryTree = (deps: Pick<AppDeps, 'readDb'>, lang: Language, storeId: string | null): Promise<CategoryTree> =>
  loadCategoryTree(deps.readDb, lang, storeId);

/** Path ids are plain strings in the spec; anything that is not a UUID names no category or product. */
function idOrNotFound(raw: string, what: 'category' | 'product'): string {
  if (!isUuid(raw)) throw notFound(`No active ${what} has id ${raw}`);
  return raw.toLowerCase();
}

function nodeOrNotFound(tree: CategoryTree, id: string) {
  const node = tree.byId.get(id);
  if (!node) throw notFound(`No active category has id ${id}`);
  return node;
}

/**
 * The main page's blocks, kept by the instance like content (services/content-cache.ts): they
 * change with the content team's layout or a catalog import, whose statements notify. Read from
 * the primary, not the replica: a read that follows a change's notification must see it.
 */
export function mainPageCategories(deps: Pick<AppDeps, 'db' | 'clock' | 'caches'>, storeId: string, lang: Language) {
  return deps.caches.content.get(
    { name: 'listMainPageCategories', lang, storeId },
    ['categories', 'products', 'inventories'],
    deps.clock,
    async () => ({ value: (await loadCategoryTree(deps.db, lang, storeId)).mainPageBlocks() }),
  );
}

export async function menuCategories(deps: Pick<AppDeps, 'readDb'>, storeId: string, lang: Language) {
  return (await categoryTree(deps, lang, storeId)).menu();
}

export async function ownProductionCategories(deps: Pick<AppDeps, 'readDb'>, storeId: string, lang: Language) {
  const tree = await categoryTree(deps, lang, storeId);
  const own = tree.nodes.filter((n) => n.is_own_production && n.visible && n.ancestor_ids.every((a) => tree.byId.has(a)));
  const counts = await countInStockProducts(
    deps.readDb,
    storeId,
    own.filter((n) => n.show_products_count),
  );
  return own.map((n) => ownProductionCard(tree, n, counts));
}

export async function rootCategories(deps: Pick<AppDeps, 'readDb'>, storeId: string, lang: Language) {
  const tree = await categoryTree(deps, lang, storeId);
  return tree.children(null, true).map((n) => tree.card(n, true));
}

/** A category of the whole catalog, whatever any store sells. */
export async function category(deps: Pick<AppDeps, 'readDb'>, rawId: string, lang: Language) {
  const id = idOrNotFound(rawId, 'category');
  const tree = await categoryTree(deps, lang, null);
  return tree.card(nodeOrNotFound(tree, id), false);
}

/** `level` is absolute: null means the direct children, a deeper level every descendant there. */
export async function categoryChildren(
  deps: Pick<AppDeps, 'readDb'>,
  storeId: string,
  rawId: string,
  level: number | null,
  lang: Language,
) {
  const id = idOrNotFound(rawId, 'category');
  const tree = await categoryTree(deps, lang, storeId);
  const node = nodeOrNotFound(tree, id);
  const found =
    level === null
      ? tree.children(node.id, true)
      : level > node.level
        ? tree.nodes.filter((n) => n.visible && n.level === level && n.ancestor_ids.includes(node.id))
        : [];
  return found.map((n) => tree.card(n, true));
}

export async function categoryParents(deps: Pick<AppDeps, 'readDb'>, rawId: string, level: number | null, lang: Language) {
  const id = idOrNotFound(rawId, 'category');
  const tree = await categoryTree(deps, lang, null);
  const node = nodeOrNotFound(tree, id);
  const ancestors = node.ancestor_ids.map((a) => tree.byId.get(a)).filter((n) => n !== undefined);
  const found = level === null ? ancestors : ancestors.filter((n) => n.level === level);
  return found.map((n) => tree.card(n, false));
}

// ---- products ----------------------------------------------------------------------------------

// How search texts resolved against the vocabulary: popular searches repeat, and the vocabulary
// changes only with catalog imports, so a plan is reused for config.catalog.searchPlanCacheSeconds.
async function searchPlanOf(deps: Deps, request: SearchRequest): Promise<SearchPlan> {
  const { searchPlans } = deps.caches;
  const key = JSON.stringify(request);
  const cached = searchPlans.get(key, deps.clock.nowMs());
  if (cached) return cached;
  const plan = await planProductSearch(deps.readDb, request);
  const now = deps.clock.nowMs();
  searchPlans.set(key, plan, now + deps.config.catalog.searchPlanCacheSeconds * 1000, now);
  return plan;
}

export interface ProductListingRequest {
  storeId: string;
  lang: Language;
  /** The signed-in customer, or null. */
  customerId: string | null;
  categoryId: string | null;
  isTop: boolean;
  isNew: boolean;
  isFresh: boolean;
  onlyDiscount: boolean;
  isFavorite: boolean;
  /** The search text as sent. */
  search: string | undefined;
  sortBy: ProductSort | null;
  limit: number;
  offset: number;
}

/** A listing page, when it was read and how long such a page is kept (seconds). */
export type ProductListing = Kept<ListingPage> & { ttlSeconds: number };

export async function listProducts(deps: Deps, q: ProductListingRequest): Promise<ProductListing> {
  const { customerId } = q;
  if (q.isFavorite && !customerId) throw unauthorized('is_favorite=true needs a customer access token');
  const searchRequest = parseSearch(q.search);
  const filters = {
    categoryId: q.categoryId?.toLowerCase() ?? null,
    isTop: q.isTop,
    isNew: q.isNew,
    isFresh: q.isFresh,
    onlyDiscount: q.onlyDiscount,
  };
  const read = async (): Promise<ListingPage> => {
    const search = searchRequest ? await searchPlanOf(deps, searchRequest) : null;
    const page = await listProductPage(deps.readDb, {
      storeId: q.storeId,
      lang: q.lang,
      customerId,
      filters: { ...filters, favoritesOf: q.isFavorite ? customerId : null, search },
      sortBy: q.sortBy,
      limit: q.limit,
      offset: q.offset,
    });
    return { items: page.items.map(productCard), count: page.count };
  };
  // A customer's favourites page is theirs alone: never kept (read now: Age 0, max-age 0).
  if (q.isFavorite) return { value: await read(), readAt: deps.clock.nowMs(), ttlSeconds: 0 };
  const ttlSeconds = deps.config.catalog.productsCacheSeconds;
  const kept = await readListingPage(
    deps.db,
    deps.caches.listingPages,
    {
      storeId: q.storeId,
      lang: q.lang,
      ...filters,
      search: searchRequest?.text ?? null,
      sortBy: q.sortBy,
      limit: q.limit,
      offset: q.offset,
    },
    customerId,
    ttlSeconds,
    read,
    deps.clock,
  );
  return { ...kept, ttlSeconds };
}

/** The product screen of an active product (404 otherwise), with how long such a screen is kept. */
export async function productScreen(deps: Deps, storeId: string, rawId: string, lang: Language, customerId: string | null) {
  const id = idOrNotFound(rawId, 'product');
  const ttlSeconds = deps.config.catalog.productsCacheSeconds;
  const { value, readAt } = await readProductDetail(
    deps.db,
    deps.caches.productCards,
    { storeId, lang, productId: id },
    customerId,
    ttlSeconds,
    async () => {
      const row = await findProductDetail(deps.readDb, id, storeId, lang, customerId);
      return row && productDetail(row);
    },
    deps.clock,
  );
  if (!value) throw notFound(`No active product has id ${id}`);
  return { value, readAt, ttlSeconds };
}

export interface AvailabilityLine {
  product_id: string;
  unit_id: string;
  quantity: string | number;
}

/** The store's verdict on each line, in the order sent; a malformed quantity refuses them all. */
export async function checkAvailability(deps: Pick<AppDeps, 'db'>, storeId: string, sent: readonly AvailabilityLine[]) {
  // Looked up lower-cased, answered with the ids as sent (the app matches its lines by them).
  const lines = sent.map((l) => ({ ...l, product_id: l.product_id.toLowerCase(), unit_id: l.unit_id.toLowerCase() }));
  const facts = await availabilityFacts(deps.db, storeId, lines);
  return sent.map((original, i) => {
    const line = lines[i]!;
    const fact = facts.get(`${line.product_id}/${line.unit_id}`);
    const quantity = parseRequestedQuantity(line.quantity, quantityUnit(fact));
    if (!quantity.ok) {
      throw unprocessable(
        'INVALID_QUANTITY',
        `Line ${i + 1}: quantity ${JSON.stringify(line.quantity)} ${QUANTITY_PROBLEMS[quantity.problem]}`,
      );
    }
    const inventory = fact?.has_inventory ? { stock: fact.stock, orderQuantityLimit: fact.order_quantity_limit } : null;
    return {
      product_id: original.product_id,
      unit_id: original.unit_id,
      ...decideAvailability(quantity.thousandths, fact?.product_exists ?? false, inventory),
    };
  });
}

export async function recommendations(
  deps: Pick<AppDeps, 'db'>,
  storeId: string,
  lang: Language,
  customerId: string | null,
  productIds: readonly string[],
) {
  const ids = [...new Set(productIds.map((id) => id.toLowerCase()))];
  return (await listRecommendations(deps.db, storeId, lang, customerId, ids)).map(productCard);
}

// ---- favorites ---------------------------------------------------------------------------------

export async function addFavoriteProduct(deps: Pick<AppDeps, 'db'>, customerId: string, rawProductId: string) {
  const productId = rawProductId.toLowerCase();
  if (!(await activeProductExists(deps.db, productId))) throw notFound(`No active product has id ${productId}`);
  const status = await addFavorite(deps.db, customerId, productId);
  if (status === null) throw unauthorized('The account of this token no longer exists');
  return { status, product_id: productId };
}

export async function removeFavoriteProduct(deps: Pick<AppDeps, 'db'>, customerId: string, rawProductId: string): Promise<void> {
  const productId = rawProductId.toLowerCase();
  const removed = await removeFavorite(deps.db, customerId, productId);
  if (!removed && !(await productExists(deps.db, productId))) throw notFound(`No product has id ${productId}`);
}

/** Which of the ids are the customer's favorites: each id once (whatever its case), as first sent. */
export async function favoritesAmong(deps: Pick<AppDeps, 'db'>, customerId: string, productIds: readonly string[]) {
  const sentById = new Map<string, string>();
  for (const id of productIds) if (!sentById.has(id.toLowerCase())) sentById.set(id.toLowerCase(), id);
  const favorites = await favoriteIdsAmong(deps.db, customerId, [...sentById.keys()]);
  return { product_ids: [...sentById].filter(([id]) => favorites.has(id)).map(([, sent]) => sent) };
}
