// The picker channel: its parameters (getPickerRealtimeMetadata) and the WebSocket at
// /ws/picker/ - who may connect, and which events reach whom (queue changes to the store's
// pickers, session changes and order cancellations to the session's picker).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { revokeSessions } from '../../db/queries/auth.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { LISTENER_APPLICATION_NAME } from '../../server/realtime/outbox-feed.js';
import { signInCustomer } from '../support/accounts.js';
import { pickerMessage } from '../support/realtime.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, itemCommand, signInDemoCustomer, startPicking, type TestPicker } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { tokensFor } from '../support/tokens.js';

let svc: TestService;
let pieces: StockedProduct[];
const STORE = DEMO_STORES[0]!.id;

beforeAll(async () => {
  svc = await startTestService();
  pieces = await stockedProducts(svc, { weight: false, count: 2 });
});
afterAll(() => svc?.close());

const wsUrl = () => `${svc.url.replace('http', 'ws')}/ws/picker/`;
const closeCode = (ws: WebSocket) => new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));

/** An open picker socket that collects what it receives. */
async function listen(picker: TestPicker) {
  const ws = new WebSocket(`${wsUrl()}?access_token=${picker.access}`);
  const received: any[] = [];
  ws.on('message', (m) => received.push(pickerMessage(m)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('close', (code) => reject(new Error(`closed with ${code}`)));
  });
  const waitFor = async (predicate: (e: any) => boolean, ms = 3000) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const found = received.find(predicate);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no such event; received ${JSON.stringify(received)}`);
  };
  return { ws, received, waitFor };
}

const anOrder = () =>
  createConfirmedOrder(svc, {
    lines: [
      { inventoryId: pieces[0]!.inventoryId, quantity: '1' },
      { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
    ],
  });

describe('getPickerRealtimeMetadata', () => {
  it("describes the channel and the caller's queue scope", async () => {
    const picker = await createPicker(svc, [STORE, DEMO_STORES[1]!.id]);
    const r = await svc.client.call.GET('/api/picker/realtime/metadata', { headers: picker.auth });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      url: `${svc.url.replace('http', 'ws')}/ws/picker/`,
      path: '/ws/picker/',
      auth_methods: ['bearer_header', 'access_token_query'],
      event_kinds: ['queue.changed', 'session.changed', 'order.cancelled', 'item.approval.decided'],
      heartbeat_interval_seconds: 30,
      protocol_version: 1,
    });
    expect([...r.body.store_ids].sort()).toEqual([STORE, DEMO_STORES[1]!.id].sort());
  });

  it('answers 401 without a picker token', async () => {
    const customer = await signInCustomer(svc);
    expect((await svc.client.call.GET('/api/picker/realtime/metadata', { headers: customer.auth })).status).toBe(401);
  });
});

describe('/ws/picker/', () => {
  it('closes with 1008 without a valid picker access token', async () => {
    const t = tokensFor(svc.config);
    const customer = await signInCustomer(svc);
    const disabled = await createPicker(svc, [STORE]);
    await svc.deps.db.updateTable('pickers').set({ is_active: false }).where('id', '=', disabled.pickerId).execute();
    const cases = [
      new WebSocket(wsUrl()),
      new WebSocket(`${wsUrl()}?access_token=garbage`),
      new WebSocket(wsUrl(), { headers: customer.auth }),
      new WebSocket(`${wsUrl()}?access_token=${t.sign('picker_refresh')}`),
      new WebSocket(`${wsUrl()}?access_token=${t.sign('picker_access', '1')}`), // no active session behind it
      new WebSocket(`${wsUrl()}?access_token=${disabled.access}`),
    ];
    // Listen on every socket before awaiting any: a socket that closes while an earlier one
    // is awaited would otherwise never report its code.
    const codes = await Promise.all(cases.map(closeCode));
    expect(codes).toEqual(cases.map(() => 1008));
  });

  it("closes with 1008 when the picker's session is revoked", async () => {
    const picker = await createPicker(svc, [STORE]);
    const other = await createPicker(svc, [STORE]);
    const [ws, kept] = [new WebSocket(wsUrl(), { headers: picker.auth }), new WebSocket(wsUrl(), { headers: other.auth })];
    const closed = closeCode(ws);
    await Promise.all([ws, kept].map((w) => new Promise((r) => w.once('open', r))));
    await revokeSessions(svc.deps.db, { pickerId: picker.pickerId }, 'test');
    expect(await closed).toBe(1008);
    expect(kept.readyState).toBe(WebSocket.OPEN);
    kept.close();
  });

  it('keeps at most 10 sockets per picker: another one closes the oldest with 4000', async () => {
    const picker = await createPicker(svc, [STORE]);
    const sockets = [];
    for (let i = 0; i < 10; i++) sockets.push((await listen(picker)).ws);
    const oldestClosed = closeCode(sockets[0]!);
    const newest = await listen(picker);
    expect(await oldestClosed).toBe(4000);
    for (const ws of [...sockets.slice(1), newest.ws]) expect(ws.readyState).toBe(WebSocket.OPEN);
    // The newest still hears the store's queue.
    const order = await anOrder();
    expect(await newest.waitFor((e) => e.kind === 'queue.changed' && e.order_id === order.orderId)).toMatchObject({
      reason: 'order_added',
    });
    for (const ws of [...sockets.slice(1), newest.ws]) ws.close();
  });

  it('accepts the bearer header, and leaves the tracking channel to customers', async () => {
    const picker = await createPicker(svc, [STORE]);
    const ws = new WebSocket(wsUrl(), { headers: picker.auth });
    await new Promise((r) => ws.once('open', r));
    expect(svc.pickerRealtime.connections()).toBeGreaterThanOrEqual(1);
    ws.close();
    const tracking = new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/`, { headers: picker.auth });
    expect(await closeCode(tracking)).toBe(1008);
  });

  it("tells the store's pickers about queue changes, and only them", async () => {
    const here = await listen(await createPicker(svc, [STORE]));
    const there = await listen(await createPicker(svc, [DEMO_STORES[2]!.id]));
    const order = await anOrder();
    const added = await here.waitFor((e) => e.kind === 'queue.changed' && e.order_id === order.orderId);
    expect(added).toMatchObject({ store_id: STORE, reason: 'order_added' });
    expect(added.event_id).toMatch(/^[0-9a-f-]{36}$/);
    await new Promise((r) => setTimeout(r, 150));
    expect(there.received.filter((e) => e.order_id === order.orderId)).toEqual([]);
    here.ws.close();
    there.ws.close();
  });

  it("tells the owner of a session about its changes, and about the order's cancellation", async () => {
    const owner = await createPicker(svc, [STORE]);
    const colleague = await createPicker(svc, [STORE]);
    const mine = await listen(owner);
    const theirs = await listen(colleague);
    const order = await anOrder();
    const session = await startPicking(svc, owner, order.orderId);
    await theirs.waitFor((e) => e.kind === 'queue.changed' && e.order_id === order.orderId && e.reason === 'order_started');
    expect(await mine.waitFor((e) => e.kind === 'session.changed' && e.session_id === session.session_id && e.version === 1)).toMatchObject(
      {
        order_id: order.orderId,
        picker_id: owner.pickerId,
        session_status: 'active',
        store_id: STORE,
      },
    );
    await itemCommand(svc, owner, order.orderId, session.items[0]!.item_id, 'piece-quantity', { quantity: 1 });
    await mine.waitFor((e) => e.kind === 'session.changed' && e.version === 2);

    const customer = await signInDemoCustomer(svc);
    expect(
      (
        await svc.client.call.POST('/api/orders/{order_id}/cancel', {
          params: { path: { order_id: order.orderId } },
          headers: customer.auth,
        })
      ).status,
    ).toBe(200);
    expect(await mine.waitFor((e) => e.kind === 'order.cancelled')).toMatchObject({
      order_id: order.orderId,
      session_id: session.session_id,
      version: 3,
    });
    await mine.waitFor((e) => e.kind === 'session.changed' && e.version === 3 && e.session_status === 'cancelled');
    await theirs.waitFor((e) => e.kind === 'queue.changed' && e.order_id === order.orderId && e.reason === 'order_cancelled');
    expect(theirs.received.filter((e) => e.kind !== 'queue.changed')).toEqual([]);
    mine.ws.close();
    theirs.ws.close();
  });

  it('delivers an event committed while the instance had lost its LISTEN connection', async () => {
    const owner = await createPicker(svc, [STORE]);
    const mine = await listen(owner);
    const order = await anOrder();
    await mine.waitFor((e) => e.kind === 'queue.changed' && e.order_id === order.orderId);
    const killed = await sql<{ ok: boolean }>`
      SELECT pg_terminate_backend(pid, 5000) AS ok FROM pg_stat_activity
      WHERE application_name = ${LISTENER_APPLICATION_NAME} AND datname = current_database()`.execute(svc.deps.db);
    expect(killed.rows).toEqual([{ ok: true }]);
    // Committed while no NOTIFY can reach this instance; read back when the listener returns.
    const session = await startPicking(svc, owner, order.orderId);
    expect(await mine.waitFor((e) => e.kind === 'session.changed' && e.session_id === session.session_id, 10_000)).toMatchObject({
      version: 1,
    });
    mine.ws.close();
  });
});
