// A picker's item command whose instance dies before its write commits leaves nothing behind: the
// retry with the same Idempotency-Key (on another instance) applies it at once, exactly once.
// Under the claim-first protocol this replaced (issue 23), the key stayed `in_progress` and the
// retry answered 409 IDEMPOTENCY_IN_PROGRESS for IdempotencyOptions.staleSeconds (a minute).
//
// The instance is `npm start`'s entry point in its own process on this file's database. The
// command's write is held at its first lock (the order row, locked here), the process is
// SIGKILLed there, and its backend is ended before it could commit - what a host failing mid-
// command does. The retry goes to the in-process service.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { command, createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, itemCommand, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { spawnServe, type ServiceProcess } from '../support/service-process.js';

const STORE = DEMO_STORES[0]!.id;
let svc: TestService;
let instance: ChildProcess;
let running: ServiceProcess;

beforeAll(async () => {
  svc = await startTestService();
  const started = spawnServe(svc.database.url, {}, 'the instance to kill');
  instance = started.child;
  running = await started.listening;
}, 90_000);

afterAll(async () => {
  if (instance && instance.exitCode === null && instance.signalCode === null) instance.kill('SIGKILL');
  await svc?.close();
});

describe('an item command cut off by its instance dying', () => {
  it('leaves no record of its key: the retry applies at once, once', async () => {
    const [product] = await stockedProducts(svc, { weight: false, count: 1 });
    const picker = await createPicker(svc, [STORE]);
    const order = await createConfirmedOrder(svc, { lines: [{ inventoryId: product!.inventoryId, quantity: '2' }] });
    const session = await startPicking(svc, picker, order.orderId);
    const itemId = session.items[0]!.item_id;
    const key = randomUUID();

    const holder = new pg.Client(svc.database.url);
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM orders WHERE id = $1 FOR UPDATE', [order.orderId]);
      // The command reads (no lock needed) and then waits at its write's first lock.
      const cutOff = fetch(`${running.url}/api/picker/orders/${order.orderId}/items/${itemId}/piece-quantity`, {
        method: 'POST',
        headers: { ...command(picker.auth, { 'idempotency-key': key }), 'content-type': 'application/json' },
        body: JSON.stringify({ quantity: 1 }),
      }).catch(() => null);
      const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      let waiting: number[] = [];
      for (let i = 0; i < 200 && !waiting.length; i++) {
        await new Promise((r) => setTimeout(r, 50));
        const { rows } = await svc.deps.pool.query<{ pid: number }>(
          // The command's write (its first CTE locks the order); a background pass of the instance
          // that happens to wait for the same row is not it.
          "SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)) AND query LIKE '%UPDATE picking_sessions%'",
          [holderPid],
        );
        waiting = rows.map((r) => r.pid);
      }
      expect(waiting, `no write of the command waited for the order's lock:\n${running.log().slice(-2000)}`).toHaveLength(1);

      instance.kill('SIGKILL');
      await new Promise((r) => instance.once('exit', r));
      expect(await cutOff).toBeNull();
      // The dead instance's statement is ended before it commits.
      await svc.deps.pool.query('SELECT pg_terminate_backend($1)', [waiting[0]]);
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }

    const record = await svc.deps.db.selectFrom('idempotency_keys').select('state').where('key', '=', key).execute();
    expect(record).toEqual([]);

    const retry = await itemCommand(svc, picker, order.orderId, itemId, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ applied: true, session: { version: session.version + 1 }, item: { actual_quantity: '1.000' } });
    const again = await itemCommand(svc, picker, order.orderId, itemId, 'piece-quantity', { quantity: 1 }, { 'idempotency-key': key });
    expect(again.body).toEqual(retry.body);
  }, 60_000);
});
