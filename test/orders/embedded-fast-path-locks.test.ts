// Checkout's transaction takes a weak lock on every table and index it touches. PostgreSQL keeps
// such locks in a backend's own fast-path slots when one is free, and otherwise in the shared lock
// table, whose partition locks every concurrent checkout then contends on. PostgreSQL 18 sizes the
// slots from max_locks_per_transaction (db/embedded.ts sets it): on the embedded server, every
// relation lock of a checkout must find a slot, whether the transaction plans its statements or
// reuses the plans.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type DatabaseHandle } from '../../db/connection.js';
import { transactionWithGenericPlans } from '../../db/generic-plans.js';
import { findStoreForOrder } from '../../db/queries/orders.js';
import { placeOrderOnce } from '../../services/checkout.js';
import { fingerprintOf } from '../../services/idempotency.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { deliveryBody, line, makeProduct, makeSlot, TVERSKAYA } from './fixtures.js';

let svc: TestService;
let own: DatabaseHandle;

beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  // One connection: the second order reuses the plans the first one made.
  own = connect(svc.config.databaseUrl!, { max: 1 });
});
afterAll(async () => {
  await own?.close();
  await svc?.close();
});

interface LockCount {
  locks: number;
  /** The relation locks that found no fast-path slot, by name. */
  shared: string[];
}

/** This backend's relation locks, taken inside a checkout (the query's own lock on pg_locks left out). */
const RELATION_LOCKS = sql<{ relation: string; fastpath: boolean }>`
  SELECT relation::regclass::text AS relation, fastpath FROM pg_locks
  WHERE pid = pg_backend_pid() AND locktype = 'relation' AND relation <> 'pg_locks'::regclass`;

// A server this suite did not start (TEST_DATABASE_URL) has its own settings and version.
describe.skipIf(Boolean(process.env.TEST_DATABASE_URL))("checkout's relation locks on the embedded PostgreSQL", () => {
  it('all stay in fast-path slots, planning and with the plans reused', async () => {
    const { db } = svc.deps;
    const c = await signInCustomer(svc);
    const store = (await findStoreForOrder(db, TVERSKAYA))!;
    const p = await makeProduct(svc, { price: '1500.00' });
    const place = async (): Promise<LockCount> => {
      const body = deliveryBody([line(p)], await makeSlot(svc));
      const key = {
        scope: { principal: `customer:${c.customerId}`, operationId: 'createOrder', key: randomUUID() },
        fingerprint: fingerprintOf(store.id, body),
      };
      return transactionWithGenericPlans(own.db, async (trx) => {
        const placed = await placeOrderOnce(trx, svc.deps, { customerId: c.customerId, store, body, lang: 'en' }, key);
        expect(placed.replayed).toBe(false);
        const { rows } = await RELATION_LOCKS.execute(trx);
        return { locks: rows.length, shared: rows.filter((r) => !r.fastpath).map((r) => r.relation) };
      });
    };
    const planning = await place();
    const reusing = await place();
    // A checkout that locked nothing would pass for the wrong reason.
    expect(reusing.locks).toBeGreaterThan(16);
    expect({ planning, reusing }).toEqual({
      planning: { locks: planning.locks, shared: [] },
      reusing: { locks: reusing.locks, shared: [] },
    });
  });
});
