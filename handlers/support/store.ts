// The `X-Store-Id` rule shared by every store-dependent operation: the spec leaves the header
// optional, so the operation checks it (422 STORE_REQUIRED / STORE_NOT_FOUND, never a 500).
import { findActiveStore } from '../../db/queries/stores.js';
import type { AppDeps } from '../../server/deps.js';
import { unprocessable } from '../../server/errors.js';
import { declaredHeader, type OperationsWithHeader, type RequestContext } from '../../server/handler-types.js';
import { expiringCache } from './expiring-cache.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type StoreRow = NonNullable<Awaited<ReturnType<typeof findActiveStore>>>;

// Active stores as this process last read them. Only found stores are kept: an unknown id is
// asked again, so a new store is served at once; a deactivated or edited one is seen within
// config.storeCacheSeconds.
const activeStores = expiringCache<StoreRow>();

/** The active store with this id (a UUID, any case), from the short-lived cache or the database. */
export async function findActiveStoreCached(deps: Pick<AppDeps, 'db' | 'config' | 'clock'>, id: string): Promise<StoreRow | undefined> {
  if (!UUID.test(id)) return undefined;
  const key = id.toLowerCase();
  const cached = activeStores.get(deps.db, key, deps.clock.nowMs());
  if (cached) return cached;
  const row = await findActiveStore(deps.db, key);
  if (row) {
    const now = deps.clock.nowMs();
    activeStores.set(deps.db, key, row, now + deps.config.storeCacheSeconds * 1000, now);
  }
  return row;
}

export async function requireStore<K extends OperationsWithHeader<'x-store-id'>>(ctx: RequestContext<K>) {
  const id = declaredHeader(ctx, 'x-store-id')?.trim();
  if (!id) throw unprocessable('STORE_REQUIRED', 'The X-Store-Id header is required for this operation');
  const store = await findActiveStoreCached(ctx.deps, id);
  if (!store) throw unprocessable('STORE_NOT_FOUND', 'No active store has this X-Store-Id');
  // Responses that depend on the store (and language) must not be mixed by caches.
  ctx.res.vary('X-Store-Id');
  ctx.res.vary('Accept-Language');
  return store;
}
