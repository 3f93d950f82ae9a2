// The business clock of platform/clock.ts, and the providers AppDeps is built with
// (platform/providers/index.ts): what a test hands in is what the service uses.
import { describe, expect, it } from 'vitest';
import { systemClock, TestClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { createLogger } from '../../platform/logger.js';
import { createProviders } from '../../platform/providers/index.js';
import { RecordingPushSender } from '../../platform/providers/push/index.js';
import type { Loyalty } from '../../platform/providers/loyalty/index.js';
import type { Database } from '../../db/connection.js';
import type pg from 'pg';

describe('TestClock', () => {
  it('follows the wall clock until moved, then stays ahead by what was advanced', () => {
    const clock = new TestClock();
    expect(Math.abs(clock.nowMs() - systemClock.nowMs())).toBeLessThan(1000);
    clock.advance(60_000);
    const ahead = clock.nowMs() - Date.now();
    expect(ahead).toBeGreaterThan(59_000);
    expect(ahead).toBeLessThanOrEqual(60_000);
    // now() is the same clock as nowMs(): read between two nowMs() (a fixed slack failed under CI load).
    const before = clock.nowMs();
    const now = clock.now().getTime();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(clock.nowMs());
  });

  it('stops at a set time and moves from there; reset goes back to the wall clock', () => {
    const clock = new TestClock();
    clock.set(new Date('2026-03-01T10:00:00Z'));
    expect(clock.now().toISOString()).toBe('2026-03-01T10:00:00.000Z');
    clock.advance(90_000);
    expect(clock.now().toISOString()).toBe('2026-03-01T10:01:30.000Z');
    clock.reset();
    expect(Math.abs(clock.nowMs() - Date.now())).toBeLessThan(1000);
  });
});

describe('createProviders', () => {
  it('builds the configured providers and uses the ones given instead', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://placeholder/x',
      JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123456789',
    });
    const log = createLogger('silent');
    const push = new RecordingPushSender(log);
    const loyalty = {} as Loyalty; // never a ledger pool in a unit test
    const base = { config, db: {} as Database, pool: {} as pg.Pool, log, clock: systemClock };
    const providers = createProviders(base, { push, loyalty });
    expect(providers.push).toBe(push);
    expect(providers.loyalty).toBe(loyalty);
    expect(providers.bank.name).toBe('sandbox');
    expect(providers.courier.name).toBe('simulator');
  });
});
