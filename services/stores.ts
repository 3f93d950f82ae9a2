// The store a request names, as this instance last read it.
import { findActiveStore } from '../db/queries/stores.js';
import { isUuid } from '../domain/ids.js';
import type { StoreRow } from './caches.js';
import type { AppDeps } from './deps.js';

/**
 * The active store with this id (a UUID, any case), from the short-lived cache or the database.
 * Only found stores are kept: an unknown id is asked again, so a new store is served at once; a
 * deactivated or edited one is seen within config.storeCacheSeconds.
 */
export async function findActiveStoreCached(
  deps: Pick<AppDeps, 'db' | 'config' | 'clock' | 'caches'>,
  id: string,
): Promise<StoreRow | undefined> {
  if (!isUuid(id)) return undefined;
  const key = id.toLowerCase();
  const { activeStores } = deps.caches;
  const cached = activeStores.get(key, deps.clock.nowMs());
  if (cached) return cached;
  const row = await findActiveStore(deps.db, key);
  if (row) {
    const now = deps.clock.nowMs();
    activeStores.set(key, row, now + deps.config.storeCacheSeconds * 1000, now);
  }
  return row;
}
