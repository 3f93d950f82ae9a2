// The programs cache in front of the provider, on the local ledger in a real database: served
// from memory within its lifetime, re-read after it, and never covering a failure with old data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import { systemClock, TestClock } from '../../platform/clock.js';
import { LocalLoyaltyLedger, ProgramsCache } from '../../platform/providers/loyalty/index.js';
import { createTestDatabase } from '../support/db.js';

let database: OpenedDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.shutdown());

const rename = (name: string) => database.db.updateTable('loyalty_ledger_programs').set({ name }).where('is_default', '=', true).execute();

describe('ProgramsCache', () => {
  it('serves the cached programs within its lifetime and re-reads them after it', async () => {
    const ledger = new LocalLoyaltyLedger(database.db, 'https://qr.example');
    const clock = new TestClock();
    const cached = new ProgramsCache(ledger, 600, clock);
    const fresh = new ProgramsCache(ledger, 0, clock);
    await rename('Club A');
    expect((await cached.get())[0]!.name).toBe('Club A');
    await rename('Club B');
    expect((await cached.get())[0]!.name).toBe('Club A');
    expect((await fresh.get())[0]!.name).toBe('Club B');
    clock.advance(600_000);
    expect((await cached.get())[0]!.name).toBe('Club B');
  });

  it('shares one provider call between concurrent misses', async () => {
    const ledger = new LocalLoyaltyLedger(database.db, 'https://qr.example');
    let calls = 0;
    const counting = Object.assign(Object.create(ledger) as LocalLoyaltyLedger, {
      listPrograms: () => {
        calls++;
        return ledger.listPrograms();
      },
    });
    const cache = new ProgramsCache(counting, 600, systemClock);
    const answers = await Promise.all(Array.from({ length: 5 }, () => cache.get()));
    expect(calls).toBe(1);
    expect(new Set(answers).size).toBe(1);
  });

  it('does not serve stale programs when a refresh fails', async () => {
    const ledger = new LocalLoyaltyLedger(database.db, 'https://qr.example');
    let down = false;
    const flaky = Object.assign(Object.create(ledger) as LocalLoyaltyLedger, {
      listPrograms: () => (down ? Promise.reject(new Error('provider down')) : ledger.listPrograms()),
    });
    const cache = new ProgramsCache(flaky, 0, systemClock);
    expect(await cache.get()).toHaveLength(1);
    down = true;
    await expect(cache.get()).rejects.toThrow('provider down');
  });
});
