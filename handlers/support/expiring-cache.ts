// Small in-process caches of database facts (the store of X-Store-Id, snapshot tags, search
// plans). Kept per database, because tests run several services in one process, each on its
// own database; entries expire at a time the caller chooses, and the least recently used go
// first when a cache is full.
import type { Executor } from '../../db/executor.js';

export interface ExpiringCache<V> {
  /** The live value of `key` at `now` (epoch ms), or undefined (an expired one is dropped). */
  get(db: Executor, key: string, now: number): V | undefined;
  /** Keeps `value` until `until` (epoch ms); nothing is kept when that is not after `now`. */
  set(db: Executor, key: string, value: V, until: number, now: number): void;
}

export function expiringCache<V>(maxEntries = 10_000): ExpiringCache<V> {
  const byDatabase = new WeakMap<Executor, Map<string, { value: V; until: number }>>();
  const entriesOf = (db: Executor) => {
    let entries = byDatabase.get(db);
    if (!entries) byDatabase.set(db, (entries = new Map<string, { value: V; until: number }>()));
    return entries;
  };
  return {
    get(db, key, now) {
      const entries = entriesOf(db);
      const hit = entries.get(key);
      if (!hit) return undefined;
      entries.delete(key);
      if (hit.until <= now) return undefined;
      entries.set(key, hit); // most recently used last
      return hit.value;
    },
    set(db, key, value, until, now) {
      const entries = entriesOf(db);
      entries.delete(key);
      if (until <= now) return;
      entries.set(key, { value, until });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
