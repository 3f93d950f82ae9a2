import { describe, expect, it } from 'vitest';
import { TokenBucketLimiter } from '../../platform/token-bucket.js';

describe('TokenBucketLimiter', () => {
  it('allows a burst of perMinute, then refuses with the wait until the next token', () => {
    const limiter = new TokenBucketLimiter(60);
    for (let i = 0; i < 60; i++) expect(limiter.take('a', 0).allowed).toBe(true);
    expect(limiter.take('a', 0)).toEqual({ allowed: false, retryAfterSeconds: 1 });
    // One token per second comes back.
    expect(limiter.take('a', 999).allowed).toBe(false);
    expect(limiter.take('a', 1000).allowed).toBe(true);
  });

  it('keeps clients apart', () => {
    const limiter = new TokenBucketLimiter(1);
    expect(limiter.take('a', 0).allowed).toBe(true);
    expect(limiter.take('a', 0)).toEqual({ allowed: false, retryAfterSeconds: 60 });
    expect(limiter.take('b', 0).allowed).toBe(true);
  });

  it('is off at 0 and bounded in memory', () => {
    const off = new TokenBucketLimiter(0);
    for (let i = 0; i < 1000; i++) expect(off.take('a', 0).allowed).toBe(true);
    const small = new TokenBucketLimiter(10, 3);
    for (const c of ['a', 'b', 'c', 'd', 'e']) small.take(c, 0);
    expect(small.size).toBeLessThanOrEqual(3);
  });
});
