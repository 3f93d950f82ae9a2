// A token bucket per client: `perMinute` requests a minute on average, bursts up to `perMinute`.
// Kept in memory: it protects one instance's CPU and the geocoder from a client hammering public
// read operations; it is not a quota (those live in PostgreSQL, see services/limits.ts).

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until the next request would be allowed (0 when allowed). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class TokenBucketLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly refillPerMs: number;

  /** `perMinute` 0 disables the limiter. `maxClients` bounds memory under a flood of addresses. */
  constructor(
    private readonly perMinute: number,
    private readonly maxClients = 100_000,
  ) {
    this.refillPerMs = perMinute / 60_000;
  }

  take(client: string, nowMs: number): RateDecision {
    if (this.perMinute <= 0) return { allowed: true, retryAfterSeconds: 0 };
    let bucket = this.buckets.get(client);
    if (bucket) {
      bucket.tokens = Math.min(this.perMinute, bucket.tokens + Math.max(0, nowMs - bucket.updatedMs) * this.refillPerMs);
      bucket.updatedMs = nowMs;
      // Re-insert so the Map's order is least recently used first (eviction below).
      this.buckets.delete(client);
      this.buckets.set(client, bucket);
    } else {
      if (this.buckets.size >= this.maxClients) this.evict(nowMs);
      bucket = { tokens: this.perMinute, updatedMs: nowMs };
      this.buckets.set(client, bucket);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillPerMs / 1000)) };
  }

  /** Clients tracked now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  private evict(nowMs: number): void {
    // Drop every bucket that has refilled completely (it carries no state), else the least recently used.
    for (const [client, bucket] of this.buckets) {
      if (bucket.tokens + (nowMs - bucket.updatedMs) * this.refillPerMs >= this.perMinute) this.buckets.delete(client);
    }
    if (this.buckets.size >= this.maxClients) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
  }
}
