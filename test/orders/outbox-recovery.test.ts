// A crash between commit and publish still delivers the event: the outbox row is committed with
// the change, and what a NOTIFY could not bring is read back from the outbox - by the socket
// fan-out when its listener reconnects, by the push worker when the service starts again.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../platform/logger.js';
import type { RecordingPushSender } from '../../platform/providers/push/index.js';
import { startService } from '../../server/runtime.js';
import { signInCustomer } from '../support/accounts.js';
import { trackingMessage } from '../support/realtime.js';
import { startTestService, type TestService } from '../support/service.js';
import { cancelOrder, deliveryBody, eventually, line, makeProduct, makeSlot, placedOrder, setTracking } from './fixtures.js';

describe('outbox recovery', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
  });
  afterAll(() => svc?.close());

  it('delivers to a connected socket an event committed while the listener was cut off', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/`, { headers: c.auth });
    const got: any[] = [];
    ws.on('message', (m) => got.push(trackingMessage(m)));
    await new Promise((r) => ws.once('open', r));

    // The instance loses its LISTEN connection (a database failover, a network cut)...
    const killed = await sql<{ ok: boolean }>`
      SELECT pg_terminate_backend(pid, 5000) AS ok FROM pg_stat_activity
      WHERE application_name = 'grocery-service-listener' AND datname = current_database()`.execute(svc.deps.db);
    expect(killed.rows).toEqual([{ ok: true }]);
    // (terminated and waited for: from here on no NOTIFY can reach this instance's old connection)
    // ...and while it is gone a change commits: its NOTIFY reaches no one of this instance.
    const cancelled = await cancelOrder(svc, c.auth, id);
    expect(cancelled.status).toBe(200);
    const row = await svc.deps.db
      .selectFrom('outbox_events')
      .select(['event_id', 'published_at'])
      .where('order_id', '=', id)
      .where('type', '=', 'delivery.tracking.changed')
      .executeTakeFirstOrThrow();

    // The listener reconnects and reads back what it missed.
    // (other events of the order may arrive first: wait for this one)
    await eventually(
      async () => got.map((m) => m.event_id),
      (ids) => ids.includes(row.event_id),
      10_000,
    );
    expect(got.map((m) => m.event_id)).toContain(row.event_id);
    expect(got.find((m) => m.event_id === row.event_id)).toMatchObject({
      type: 'delivery.tracking.changed',
      data: { order_id: id, state: 'cancelled' },
    });
    const published = await eventually(
      () => svc.deps.db.selectFrom('outbox_events').select('published_at').where('event_id', '=', row.event_id).executeTakeFirstOrThrow(),
      (r) => r.published_at !== null,
    );
    expect(published.published_at).not.toBeNull();
    ws.close();
  });
});

describe('outbox recovery across a restart', () => {
  it('pushes, after the service restarts, an event committed just before it died', async () => {
    const first = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
    let second: Awaited<ReturnType<typeof startService>> | null = null;
    try {
      const c = await signInCustomer(first);
      await first.client.call.PUT('/api/accounts/me/push-devices', {
        headers: c.auth,
        body: {
          push_token: 'token-before-crash',
          device_id: crypto.randomUUID(),
          platform: 'ios',
          app_version: '1.0',
          build_number: '1',
          app_kind: 'customer',
        },
      });
      const p = await makeProduct(first, { price: '1100.00' });
      const id = await placedOrder(first, c.auth, deliveryBody([line(p)], await makeSlot(first)));
      await setTracking(first, c.auth, id, { state: 'searching_courier' });
      await setTracking(first, c.auth, id, { state: 'courier_assigned' });
      // The change is committed; the instance dies before any worker fanned it out.
      await first.stop();
      const pending = await first.deps.db
        .selectFrom('outbox_events')
        .select('id')
        .where('order_id', '=', id)
        .where('pushed_at', 'is', null)
        .where(sql<boolean>`payload->>'notification_id' IS NOT NULL`)
        .execute();
      expect(pending.length).toBe(1);

      second = await startService({
        config: {
          ...first.config,
          orders: { ...first.config.orders, worker: { ...first.config.orders.worker, enabled: true, intervalMs: 50 } },
        },
        database: first.database,
        log: createLogger('silent'),
      });
      const sender = second.deps.push as RecordingPushSender;
      const sent = await eventually(
        async () => sender.sent.filter((m) => m.data.order_id === id),
        (s) => s.length > 0,
      );
      expect(sent).toEqual([expect.objectContaining({ token: 'token-before-crash', body: 'Courier is heading to the store' })]);
    } finally {
      await second?.stop();
      await first.close();
    }
  });
});
