// Small in-process caches of database facts (the store of X-Store-Id, snapshot tags, search
// plans). Entries expire at a time the caller chooses, and the least recently used go first when
// a cache is full.

export interface ExpiringCache<V> {
  /** The live value of `key` at `now` (epoch ms), or undefined (an expired one is dropped). */
  get(key: string, now: number): V | undefined;
  /** Keeps `value` until `until` (epoch ms); nothing is kept when that is not after `now`. */
  set(key: string, value: V, until: number, now: number): void;
}

export function expiringCache<V>(maxEntries = 10_000): ExpiringCache<V> {
  const entries = new Map<string, { value: V; until: number }>();
  return {
    get(key, now) {
      const hit = entries.get(key);
      if (!hit) return undefined;
      entries.delete(key);
      if (hit.until <= now) return undefined;
      entries.set(key, hit); // most recently used last
      return hit.value;
    },
    set(key, value, until, now) {
      entries.delete(key);
      if (until <= now) return;
      entries.set(key, { value, until });
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    },
  };
}
