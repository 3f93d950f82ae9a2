// The loyalty worker as the runtime runs it: started with the service, several workers on one
// database (as several instances are) never doing one job or one accrual twice, crashed workers'
// jobs taken over after their lease, re-syncs collapsing, and a clean stop.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLoyaltyWorkerOnce, startLoyaltyWorker } from '../../server/jobs/loyalty-worker.js';
import type { AppDeps } from '../../services/deps.js';
import { createLoyalty } from '../../platform/providers/loyalty/index.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { bearer, completeOrder, createOrder, readyWallet, storeLines } from './helpers.js';

let svc: TestService;
/** A service whose worker the test drives, for what must not race with a background pass. */
let manual: TestService;
beforeAll(async () => {
  [svc, manual] = await Promise.all([
    startTestService({ env: { LOYALTY_WORKER_INTERVAL_MS: '100' } }),
    startTestService({ env: { LOYALTY_WORKER_ENABLED: 'false' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), manual?.close()]);
});

const wallet = async (c: { access: string }) => (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
async function eventually<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}
/** Other instances of the service on the same database: their own providers and caches. */
const instances: AppDeps[] = [];
const anotherInstance = (): AppDeps => {
  const deps = { ...svc.deps, loyalty: createLoyalty(svc.deps) };
  instances.push(deps);
  return deps;
};
afterAll(async () => {
  await Promise.all(instances.map((d) => d.loyalty.provider.close()));
});

describe('the worker started by the runtime', () => {
  it('turns a new wallet ready in the background, without being asked', async () => {
    const c = await signInCustomer(svc);
    const created = await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    expect(created.body.wallet.status).toBe('pending');
    const w = await eventually(
      () => wallet(c),
      (x) => x.status === 'ready',
    );
    expect(w).toMatchObject({ status: 'ready', is_linked: true });
  });
});

describe('several workers on one database', () => {
  it('credit each of many completed orders exactly once and run each job once', async () => {
    const line = (await storeLines(svc, 'piece', 1))[0]!;
    const customers = await Promise.all(Array.from({ length: 4 }, () => signInCustomer(svc)));
    for (const c of customers) {
      await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
      expect(
        (
          await eventually(
            () => wallet(c),
            (x) => x.status === 'ready',
          )
        ).status,
      ).toBe('ready');
    }
    const orders = [];
    for (let i = 0; i < 12; i++) {
      const c = customers[i % customers.length];
      const o = await createOrder(svc, {
        customerId: c!.customerId,
        lines: [{ line, quantity: String(5 + i) }],
        finalTotal: null,
        status: 'picking',
      });
      await completeOrder(svc, o.id, o.totalPrice);
      orders.push(o);
    }
    await Promise.all(Array.from({ length: 4 }, () => runLoyaltyWorkerOnce(anotherInstance())));
    await runLoyaltyWorkerOnce(svc.deps);
    const ids = orders.map((o) => o.id);
    // svc's own background worker is a sixth instance: a job it holds right now finishes first.
    const jobs = await eventually(
      () =>
        sql<{ attempts: number; state: string }>`
        SELECT attempts, state FROM loyalty_jobs WHERE kind = 'accrual' AND payload->>'order_id' = ANY(${ids}::text[])`.execute(
          svc.deps.db,
        ),
      (r) => r.rows.length === 12 && r.rows.every((j) => j.state !== 'queued'),
    );
    const accruals = await svc.deps.db
      .selectFrom('loyalty_accruals')
      .select(['order_id', 'posted_at'])
      .where('order_id', 'in', ids)
      .execute();
    expect(accruals).toHaveLength(12);
    expect(accruals.every((a) => a.posted_at !== null)).toBe(true);
    const ops = await svc.deps.db.selectFrom('loyalty_ledger_operations').select('order_id').where('order_id', 'in', ids).execute();
    expect(ops).toHaveLength(12);
    expect(jobs.rows).toHaveLength(12);
    // A job run twice would have been claimed twice.
    expect(jobs.rows.every((j) => j.state === 'done' && j.attempts === 1)).toBe(true);
  });

  it('takes over a job whose worker died, once its lease ended', async () => {
    const c = await signInCustomer(svc);
    const created = await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    // A worker claimed the job and died: the lease still runs, nobody may take it.
    await svc.deps.db
      .updateTable('loyalty_jobs')
      .set({ attempts: 1, lease_until: new Date(Date.now() + 3600_000) })
      .where('wallet_id', '=', created.body.wallet.id)
      .execute();
    await runLoyaltyWorkerOnce(anotherInstance());
    expect((await wallet(c)).status).toBe('pending');
    // The lease ran out: the next pass takes the job over.
    await svc.deps.db
      .updateTable('loyalty_jobs')
      .set({ lease_until: new Date(Date.now() - 1000) })
      .where('wallet_id', '=', created.body.wallet.id)
      .execute();
    const w = await eventually(
      () => wallet(c),
      (x) => x.status === 'ready',
    );
    expect(w.status).toBe('ready');
  });
});

describe('re-sync on read', () => {
  it('enqueues one background re-sync for data older than 5 minutes and serves the old data at once', async () => {
    const read = async (c: { access: string }) => (await manual.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    const c = await signInCustomer(manual);
    const w = await readyWallet(manual, c);
    const old = new Date(Date.now() - 10 * 60_000);
    await manual.deps.db.updateTable('loyalty_wallets').set({ last_synced_at: old }).where('id', '=', w.id).execute();
    await manual.deps.db.updateTable('loyalty_ledger_accounts').set({ balance: '77.00' }).where('id', '=', w.active_account_id).execute();
    const reads = await Promise.all(Array.from({ length: 5 }, () => read(c)));
    for (const r of reads) expect(r).toMatchObject({ balance: '0.00', last_synced_at: old.toISOString(), status: 'ready' });
    const syncs = await manual.deps.db
      .selectFrom('loyalty_jobs')
      .select('id')
      .where('wallet_id', '=', w.id)
      .where('kind', '=', 'sync')
      .execute();
    expect(syncs).toHaveLength(1);
    await runLoyaltyWorkerOnce(manual.deps);
    const refreshed = await read(c);
    expect(refreshed.balance).toBe('77.00');
    expect(Date.parse(refreshed.last_synced_at)).toBeGreaterThan(old.getTime());
  });
});

describe('stopping', () => {
  it('stops taking work and waits for the pass in progress', async () => {
    const deps = {
      ...manual.deps,
      loyalty: createLoyalty(manual.deps),
      config: { ...manual.config, loyalty: { ...manual.config.loyalty, worker: { enabled: true, intervalMs: 50 } } },
    };
    instances.push(deps);
    const worker = startLoyaltyWorker(deps);
    const read = async (c: { access: string }) => (await manual.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    const c = await signInCustomer(manual);
    await manual.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    expect(
      (
        await eventually(
          () => read(c),
          (x) => x.status === 'ready',
        )
      ).status,
    ).toBe('ready');
    await worker.stop();
    const d = await signInCustomer(manual);
    await manual.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(d) });
    await new Promise((r) => setTimeout(r, 400));
    expect((await read(d)).status).toBe('pending');
  });
});
