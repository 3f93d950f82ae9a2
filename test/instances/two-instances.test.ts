// Several instances behave as one service: a tracking socket connected to one instance hears a
// change made through another. Instance A runs in this process; instance B is a separate server
// process (scripts/serve.ts) on the same PostgreSQL database.
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signInCustomer } from '../support/accounts.js';
import { trackingMessage } from '../support/realtime.js';
import { createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { startTestService, type TestService } from '../support/service.js';
import { spawnServe } from '../support/service-process.js';

let a: TestService;
let b: ChildProcess;
let bUrl: string;

beforeAll(async () => {
  a = await startTestService();
  const started = spawnServe(a.database.url, {}, 'instance B');
  b = started.child;
  bUrl = (await started.listening).url;
}, 60_000);

afterAll(async () => {
  if (b && b.exitCode === null) {
    const exited = new Promise((r) => b.once('exit', r));
    b.kill('SIGTERM');
    await exited;
  }
  await a?.close();
});

describe('two instances on one database', () => {
  it('deliver a change made through instance B to a socket on instance A', async () => {
    const customer = await signInCustomer(a);
    const [product] = await stockedProducts(a, { weight: false, count: 1 });
    const { orderId } = await createConfirmedOrder(a, {
      customerId: customer.customerId,
      lines: [{ inventoryId: product!.inventoryId, quantity: '1' }],
    });

    const ws = new WebSocket(`${a.url.replace('http', 'ws')}/ws/orders/tracking/`, { headers: customer.auth });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const received = new Promise<any>((resolve) =>
      ws.on('message', (m) => {
        const event = trackingMessage(m);
        if (event.data?.order_id === orderId) resolve(event);
      }),
    );

    const cancel = await fetch(`${bUrl}/api/orders/${orderId}/cancel`, { method: 'POST', headers: customer.auth });
    expect(cancel.status).toBe(200);
    const event = await received;
    // A delivery order's cancellation also cancels its delivery: one event of either kind.
    expect(['order.changed', 'delivery.tracking.changed']).toContain(event.type);
    expect(event.data.order_id).toBe(orderId);
    expect(event.data.order_version).toBeGreaterThan(1);
    const detail = await fetch(`${a.url}/api/orders/${orderId}`, { headers: customer.auth }).then((r) => r.json());
    expect(detail.status.value).toBe('cancelled');
    ws.close();
  });
});
