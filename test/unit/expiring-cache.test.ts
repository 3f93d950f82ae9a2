// The per-database caches of handlers/support/expiring-cache.ts: expiry, least-recently-used
// eviction, and one database's entries never answering for another's.
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../db/executor.js';
import { expiringCache } from '../../handlers/support/expiring-cache.js';

const dbA = {} as Executor;
const dbB = {} as Executor;

describe('expiringCache', () => {
  it('answers until the time given, then forgets; a time already past keeps nothing', () => {
    const now = 1_000_000;
    const cache = expiringCache<string>();
    cache.set(dbA, 'k', 'v', now + 500, now);
    cache.set(dbA, 'past', 'v', now, now);
    expect(cache.get(dbA, 'k', now)).toBe('v');
    expect(cache.get(dbA, 'past', now)).toBeUndefined();
    expect(cache.get(dbA, 'k', now + 500)).toBeUndefined();
  });

  it('keeps each database apart', () => {
    const cache = expiringCache<string>();
    const now = 1_000_000;
    cache.set(dbA, 'k', 'a', now + 60_000, now);
    expect(cache.get(dbB, 'k', now)).toBeUndefined();
    expect(cache.get(dbA, 'k', now)).toBe('a');
  });

  it('drops the least recently used entry when full', () => {
    const cache = expiringCache<number>(2);
    const now = 1_000_000;
    const later = now + 60_000;
    cache.set(dbA, 'one', 1, later, now);
    cache.set(dbA, 'two', 2, later, now);
    expect(cache.get(dbA, 'one', now)).toBe(1); // now the most recent
    cache.set(dbA, 'three', 3, later, now);
    expect([cache.get(dbA, 'one', now), cache.get(dbA, 'two', now), cache.get(dbA, 'three', now)]).toEqual([1, undefined, 3]);
  });
});
