// The same request sent several times at once, as a double tap, a retry racing the first try, or
// two of the customer's phones do it: on real PostgreSQL every copy gets a declared answer (never
// a 500 from a unique key or a deadlock), and the effect happens once.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { createOrder, deliveryBody, line, makeProduct, makeSlot } from '../orders/fixtures.js';
import { randomTestPhone, signInCustomer } from '../support/accounts.js';
import type { components } from '../../generated/api.test.js';
import { command, createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const COPIES = 8;

/** Sends `COPIES` copies at once and returns their statuses, failing on any 5xx. */
async function atOnce(send: () => Promise<{ status: number; body: unknown }>): Promise<number[]> {
  const answers = await Promise.all(Array.from({ length: COPIES }, send));
  const statuses = answers.map((a) => a.status);
  expect(
    statuses.filter((s) => s >= 500),
    JSON.stringify(answers.map((a) => [a.status, a.body])),
  ).toEqual([]);
  return statuses;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('double submits', () => {
  it('sign-in by code: one new account and one sign-in, the code used once', async () => {
    const phone = randomTestPhone();
    expect((await svc.client.call.POST('/api/auth/otp/send', { body: { phone } })).status).toBe(200);
    const { code } = (await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone, purpose: 'login' } } })).body;
    const statuses = await atOnce(() => svc.client.call.POST('/api/auth/otp/confirm', { body: { phone, code } }));
    expect(count(statuses, 200)).toBe(1);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM customers WHERE phone = ${phone}`.execute(svc.deps.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('PIN recovery: the recovery token changes the PIN once', async () => {
    const c = await signInCustomer(svc, randomTestPhone());
    expect((await svc.client.call.POST('/api/auth/otp/update-pin/send', { body: { phone: c.phone } })).status).toBe(200);
    const { code } = (await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone: c.phone, purpose: 'update_pin' } } })).body;
    const verified = await atOnce(() => svc.client.call.POST('/api/auth/otp/update-pin/verify', { body: { phone: c.phone, code } }));
    expect(count(verified, 200)).toBe(1);
    const token = (await svc.deps.db.selectFrom('recovery_tokens').select('jti').where('customer_id', '=', c.customerId).execute()).length;
    expect(token).toBe(1);
  });

  it('profile, preferences and push devices: the last write wins, one device row', async () => {
    const c = await signInCustomer(svc);
    expect(await atOnce(() => svc.client.call.PATCH('/api/accounts/me/', { headers: c.auth, body: { first_name: 'Anna' } }))).toEqual(
      Array(COPIES).fill(200),
    );
    const prefs = await atOnce(() => svc.client.call.PATCH('/api/accounts/me/preferences', { headers: c.auth, body: { language: 'ru' } }));
    expect(prefs.every((s) => s === 200)).toBe(true);
    const deviceId = randomUUID();
    const device: components['schemas']['PushDeviceInput'] = {
      push_token: `token-${randomUUID()}`,
      device_id: deviceId,
      platform: 'android',
      app_kind: 'customer',
      app_version: '2.14.0',
      build_number: '2140',
    };
    const registered = await atOnce(() => svc.client.call.PUT('/api/accounts/me/push-devices', { headers: c.auth, body: device }));
    expect(
      registered.every((s) => s === 200 || s === 201),
      JSON.stringify(registered),
    ).toBe(true);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM push_devices WHERE device_id = ${deviceId}`.execute(
      svc.deps.db,
    );
    expect(rows[0]!.n).toBe(1);
    const removed = await atOnce(() =>
      svc.client.call.DELETE('/api/accounts/me/push-devices/{device_id}', { params: { path: { device_id: deviceId } }, headers: c.auth }),
    );
    expect(removed.every((s) => s === 204 || s === 404)).toBe(true);
  });

  it('push-device registration: copies racing on one device and token all succeed, one row', async () => {
    // Found by the case above: the row has two unique keys and the upsert's ON CONFLICT covers
    // one, so a racing copy failed on the other. Repeated, as a race shows only sometimes.
    const c = await signInCustomer(svc);
    for (let round = 0; round < 30; round++) {
      const device: components['schemas']['PushDeviceInput'] = {
        push_token: `token-${randomUUID()}`,
        device_id: randomUUID(),
        platform: 'ios',
        app_kind: 'customer',
        app_version: '2.14.0',
        build_number: '2140',
      };
      const statuses = await atOnce(() => svc.client.call.PUT('/api/accounts/me/push-devices', { headers: c.auth, body: device }));
      expect(statuses).toEqual(Array(COPIES).fill(200));
      const { rows } = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM push_devices WHERE push_token = ${device.push_token}`.execute(svc.deps.db);
      expect(rows[0]!.n).toBe(1);
    }
  });

  it('account deletion: one deletion, the other copies find the session gone', async () => {
    const c = await signInCustomer(svc);
    const statuses = await atOnce(() => svc.client.call.DELETE('/api/accounts/me/', { headers: c.auth }));
    expect(count(statuses, 204)).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 204 || s === 401)).toBe(true);
    expect((await svc.client.call.GET('/api/accounts/me/', { headers: c.auth })).status).toBe(401);
  });

  it('order cancellation: cancelled once, stock and slot released once', async () => {
    const c = await signInCustomer(svc);
    const product = await makeProduct(svc, { stock: '10' });
    const slot = await makeSlot(svc);
    const placed = await createOrder(svc, c.auth, deliveryBody([line(product, '3')], slot));
    expect(placed.status).toBe(201);
    const orderId = placed.body as string;
    const statuses = await atOnce(() =>
      svc.client.call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id: orderId } }, headers: c.auth }),
    );
    expect(count(statuses, 200)).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const stock = await svc.deps.db
      .selectFrom('inventories')
      .select('stock')
      .where('id', '=', product.inventoryId)
      .executeTakeFirstOrThrow();
    expect(stock.stock).toBe('10.000');
    const held = await svc.deps.db.selectFrom('store_slots').select('reserved').where('id', '=', slot).executeTakeFirstOrThrow();
    expect(held.reserved).toBe(0);
  });

  it('picker: one added item, one finish, one cancellation', async () => {
    const [piece, extra] = await stockedProducts(svc, { weight: false, count: 2, skip: 50 });
    const picker = await createPicker(svc, [DEMO_STORES[0]!.id]);
    const first = await createConfirmedOrder(svc, { lines: [{ inventoryId: piece!.inventoryId, quantity: '1' }] });
    const session = await startPicking(svc, picker, first.orderId);
    const order = { order_id: first.orderId };
    const added = await atOnce(() =>
      svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
        params: { path: order },
        headers: command(picker.auth),
        body: { inventory_id: extra!.inventoryId, quantity: 1 },
      }),
    );
    expect(count(added, 200)).toBe(1);
    expect(count(added, 409)).toBe(COPIES - 1);
    const items = await svc.deps.db.selectFrom('picking_items').select('id').where('session_id', '=', session.session_id).execute();
    expect(items).toHaveLength(2);
    for (const item of items) {
      const picked = await svc.client.call.POST('/api/picker/orders/{order_id}/items/{item_id}/piece-quantity', {
        params: { path: { ...order, item_id: item.id } },
        headers: command(picker.auth),
        body: { quantity: 1 },
      });
      expect(picked.status).toBe(200);
    }
    const finished = await atOnce(() =>
      svc.client.call.POST('/api/picker/orders/{order_id}/finish', { params: { path: order }, headers: command(picker.auth) }),
    );
    expect(count(finished, 200)).toBe(1);
    expect(count(finished, 409)).toBe(COPIES - 1);

    const second = await createConfirmedOrder(svc, { lines: [{ inventoryId: piece!.inventoryId, quantity: '1' }] });
    await startPicking(svc, picker, second.orderId);
    const cancelled = await atOnce(() =>
      svc.client.call.POST('/api/picker/orders/{order_id}/cancel', {
        params: { path: { order_id: second.orderId } },
        headers: command(picker.auth),
        body: { reason: 'other' },
      }),
    );
    expect(count(cancelled, 200)).toBe(1);
    expect(count(cancelled, 409)).toBe(COPIES - 1);
  });
});
