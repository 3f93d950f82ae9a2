// The per-database caches of handlers/support/expiring-cache.ts: expiry, least-recently-used
// eviction, and one database's entries never answering for another's.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Executor } from '../../db/executor.js';
import { expiringCache } from '../../handlers/support/expiring-cache.js';

const dbA = {} as Executor;
const dbB = {} as Executor;
afterEach(() => vi.useRealTimers());

describe('expiringCache', () => {
  it('answers until the time given, then forgets; a time already past keeps nothing', () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const cache = expiringCache<string>();
    cache.set(dbA, 'k', 'v', Date.now() + 500);
    cache.set(dbA, 'past', 'v', Date.now());
    expect(cache.get(dbA, 'k')).toBe('v');
    expect(cache.get(dbA, 'past')).toBeUndefined();
    vi.advanceTimersByTime(500);
    expect(cache.get(dbA, 'k')).toBeUndefined();
  });

  it('keeps each database apart', () => {
    const cache = expiringCache<string>();
    cache.set(dbA, 'k', 'a', Date.now() + 60_000);
    expect(cache.get(dbB, 'k')).toBeUndefined();
    expect(cache.get(dbA, 'k')).toBe('a');
  });

  it('drops the least recently used entry when full', () => {
    const cache = expiringCache<number>(2);
    const later = Date.now() + 60_000;
    cache.set(dbA, 'one', 1, later);
    cache.set(dbA, 'two', 2, later);
    expect(cache.get(dbA, 'one')).toBe(1); // now the most recent
    cache.set(dbA, 'three', 3, later);
    expect([cache.get(dbA, 'one'), cache.get(dbA, 'two'), cache.get(dbA, 'three')]).toEqual([1, undefined, 3]);
  });
});
