// The in-process caches of platform/expiring-cache.ts: expiry and least-recently-used eviction.
import { describe, expect, it } from 'vitest';
import { expiringCache } from '../../platform/expiring-cache.js';

describe('expiringCache', () => {
  it('answers until the time given, then forgets; a time already past keeps nothing', () => {
    const now = 1_000_000;
    const cache = expiringCache<string>();
    cache.set('k', 'v', now + 500, now);
    cache.set('past', 'v', now, now);
    expect(cache.get('k', now)).toBe('v');
    expect(cache.get('past', now)).toBeUndefined();
    expect(cache.get('k', now + 499)).toBe('v');
    expect(cache.get('k', now + 500)).toBeUndefined();
  });

  it('keeps each cache apart', () => {
    const a = expiringCache<string>();
    const b = expiringCache<string>();
    const now = 1_000_000;
    a.set('k', 'a', now + 60_000, now);
    expect(b.get('k', now)).toBeUndefined();
    expect(a.get('k', now)).toBe('a');
  });

  it('drops the least recently used entry when full', () => {
    const cache = expiringCache<number>(2);
    const now = 1_000_000;
    const later = now + 60_000;
    cache.set('one', 1, later, now);
    cache.set('two', 2, later, now);
    expect(cache.get('one', now)).toBe(1); // now the most recent
    cache.set('three', 3, later, now);
    expect([cache.get('one', now), cache.get('two', now), cache.get('three', now)]).toEqual([1, undefined, 3]);
  });
});
