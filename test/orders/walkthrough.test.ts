// The "done when", as the README walks it with curl and a WebSocket client: a new user
// finds a product and a slot in the demo data, places a delivery order twice with one key and
// gets one order, pays it at the sandbox bank, watches it change on the socket while the courier
// simulator moves it, and cancels another order.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signInCustomer } from '../support/accounts.js';
import { trackingMessage } from '../support/realtime.js';
import { startTestService, type TestService } from '../support/service.js';
import { eventually, IN_ZONE, TVERSKAYA, type OrderInput } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

it('places, pays, tracks and cancels through the public operations only', async () => {
  const c = await signInCustomer(svc);
  const headers = { ...c.auth, 'x-store-id': TVERSKAYA };
  const { call } = svc.client;

  const products = (await call.GET('/api/catalog/products/', { params: { query: { page_size: 5, sort_by: 'expensive' } }, headers })).body
    .items;
  const product = products.find((p: { stock: string }) => Number(p.stock) >= 4);
  const slots = (await call.GET('/api/logistics/stores/delivery/slots', { headers })).body;
  const slot = slots.find((s: { is_available: boolean }) => s.is_available);
  // absence_action and is_express are the spec's defaults (the generated type makes them required).
  const body: OrderInput = {
    type: 'delivery',
    payment_method: 'online',
    items: [{ product_id: product.id, unit_id: product.unit_id, quantity: '2' }],
    delivery_context: { address_line: 'Tverskaya St, 7, Moscow', location: IN_ZONE, slot_id: slot.id, is_express: false },
    absence_action: 'call',
  };
  const key = randomUUID();
  const first = await call.POST('/api/orders/', { headers: { ...headers, 'idempotency-key': key }, body });
  const second = await call.POST('/api/orders/', { headers: { ...headers, 'idempotency-key': key }, body });
  expect([first.status, second.status]).toEqual([201, 201]);
  expect(second.body).toBe(first.body);
  const orderId = first.body as string;
  expect((await call.GET('/api/orders/', { params: { query: { active: true } }, headers })).body.count).toBe(1);

  const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/?access_token=${c.access}`);
  const events: any[] = [];
  ws.on('message', (m) => events.push(trackingMessage(m)));
  await new Promise((r) => ws.once('open', r));

  const invoice = await call.GET('/api/payments/bank/{order_id}/invoice', { params: { path: { order_id: orderId } }, headers });
  expect(invoice.body.link).toMatch(/^https:\/\//);
  const paid = await call.POST('/api/qa/payments/bank/{order_id}/settle', {
    params: { path: { order_id: orderId } },
    headers,
    body: { outcome: 'paid' },
  });
  expect(paid.body).toMatchObject({ payment_status: 'paid', order_status: { value: 'confirmed' } });
  for (const state of ['searching_courier', 'courier_assigned', 'courier_at_store'] as const) {
    expect(
      (
        await call.POST('/api/qa/orders/{order_id}/delivery-tracking', {
          params: { path: { order_id: orderId } },
          headers,
          body: { state },
        })
      ).status,
    ).toBe(200);
  }
  // Every change is announced by an order.changed; a tracking change is followed by its own message.
  const seen = await eventually(
    async () => events.filter((e) => e.data.order_id === orderId),
    (e) => e.length >= 8,
  );
  expect(seen.map((e) => (e.type === 'order.changed' ? `order:${e.data.status}` : `tracking:${e.data.state}`))).toEqual([
    'order:awaiting_payment',
    'order:confirmed',
    'order:confirmed',
    'tracking:searching_courier',
    'order:confirmed',
    'tracking:courier_assigned',
    'order:confirmed',
    'tracking:courier_at_store',
  ]);
  const detail = (await call.GET('/api/orders/roadmap/{order_id}/detail', { params: { path: { order_id: orderId } }, headers })).body;
  expect(detail.order_version).toBe(seen.at(-1).data.order_version);
  expect(detail).toMatchObject({
    payment_status: 'paid',
    delivery: { tracking: { state: 'courier_at_store' }, courier: { name: expect.any(String) } },
  });

  const other = await call.POST('/api/orders/', {
    headers: { ...headers, 'idempotency-key': randomUUID() },
    body: { ...body, payment_method: 'cash' },
  });
  expect(other.status).toBe(201);
  const cancelled = await call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id: other.body } }, headers });
  expect(cancelled.body).toMatchObject({ status: { value: 'cancelled' }, can_cancel: false });
  ws.close();
});
