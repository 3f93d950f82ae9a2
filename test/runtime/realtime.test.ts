// The tracking WebSocket: unauthorized connections close with 1008; events written to the
// outbox reach only the sockets of the order's customer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jwt from 'jsonwebtoken';
import WebSocket from 'ws';
import { startTestService, type TestService } from '../support/service.js';
import { trackingMessage } from '../support/realtime.js';
import { signInCustomer } from '../support/accounts.js';
import { tokensFor } from '../support/tokens.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const wsUrl = (path = '/ws/orders/tracking/') => `${svc.url.replace('http', 'ws')}${path}`;

function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.on('close', (code) => resolve(code)));
}

describe('/ws/orders/tracking/', () => {
  it('closes with 1008 without a valid customer access token', async () => {
    const t = tokensFor(svc.config);
    const cases = [
      new WebSocket(wsUrl()),
      new WebSocket(`${wsUrl()}?access_token=garbage`),
      new WebSocket(wsUrl(), { headers: { authorization: `Bearer ${t.sign('picker_access')}` } }),
      new WebSocket(`${wsUrl()}?access_token=${t.sign('customer_refresh')}`),
      // Signed correctly but of no active session (signed out, deleted account).
      new WebSocket(`${wsUrl()}?access_token=${t.sign('customer_access')}`),
    ];
    // Listen on every socket before awaiting any: a socket that closes while an earlier one
    // is awaited would otherwise never report its code.
    const codes = await Promise.all(cases.map(closeCode));
    expect(codes).toEqual(cases.map(() => 1008));
  });

  it('closes with 1008 when the token expires, and when its session is revoked', async () => {
    const a = await signInCustomer(svc);
    const b = await signInCustomer(svc);
    // a's token, re-signed to expire in a second (same session, still active).
    const claims = jwt.decode(a.access) as jwt.JwtPayload;
    const shortLived = tokensFor(svc.config).forge({ alg: 'HS256', typ: 'JWT' }, { ...claims, exp: Math.floor(Date.now() / 1000) + 1 });
    const expiring = new WebSocket(`${wsUrl()}?access_token=${shortLived}`);
    const signedOut = new WebSocket(wsUrl(), { headers: b.auth });
    const [expiringClosed, signedOutClosed] = [closeCode(expiring), closeCode(signedOut)];
    await Promise.all([expiring, signedOut].map((ws) => new Promise((r) => ws.once('open', r))));
    expect(await expiringClosed).toBe(1008);
    // b deletes the account: every session of it is revoked, and its socket hears no more.
    expect((await svc.client.call.DELETE('/api/accounts/me/', { headers: b.auth })).status).toBeLessThan(300);
    expect(await signedOutClosed).toBe(1008);
  });

  it('delivers an outbox event to the customer of the order only', async () => {
    const a = await signInCustomer(svc);
    const b = await signInCustomer(svc);
    const alice = a.customerId;
    const aliceWs = new WebSocket(`${wsUrl()}?access_token=${a.access}`);
    const bobWs = new WebSocket(wsUrl(), { headers: b.auth });
    await Promise.all([aliceWs, bobWs].map((ws) => new Promise((r) => ws.once('open', r))));
    const bobGot: unknown[] = [];
    bobWs.on('message', (m) => bobGot.push(trackingMessage(m)));
    const received = new Promise<{ message: any; isBinary: boolean }>((resolve) =>
      aliceWs.once('message', (m, isBinary) => resolve({ message: trackingMessage(m), isBinary })),
    );

    const orderId = randomUUID();
    const eventId = randomUUID();
    const payload = {
      type: 'order.changed',
      event_id: eventId,
      notification_id: null,
      occurred_at: new Date().toISOString(),
      data: { event_id: eventId, order_id: orderId, order_version: 2, status: 'confirmed', changes: ['status'] },
    };
    await svc.deps.db
      .insertInto('outbox_events')
      .values({ type: 'order.changed', customer_id: alice, order_id: orderId, payload: JSON.stringify(payload) })
      .execute();
    // An envelope written without them (an older build's) gets order_id and order_version at the top level.
    const { message, isBinary } = await received;
    expect(message).toEqual({ ...payload, order_id: orderId, order_version: 2 });
    // A text frame: a browser hands a binary one to onmessage as a Blob, not as the JSON text.
    expect(isBinary).toBe(false);
    await new Promise((r) => setTimeout(r, 100));
    expect(bobGot).toEqual([]);
    expect(svc.realtime.connections()).toBe(2);
    aliceWs.close();
    bobWs.close();
  });

  it('keeps at most 10 sockets per customer: another one closes the oldest with 4000, and only that one', async () => {
    const a = await signInCustomer(svc);
    const b = await signInCustomer(svc);
    const open = async (auth: Record<string, string>) => {
      const ws = new WebSocket(wsUrl(), { headers: auth });
      await new Promise((r) => ws.once('open', r));
      return ws;
    };
    const first = await open(a.auth);
    const firstClosed = new Promise<[number, string]>((resolve) => first.on('close', (code, reason) => resolve([code, String(reason)])));
    const others = [];
    for (let i = 0; i < 9; i++) others.push(await open(a.auth));
    const theirs = await open(b.auth);
    await new Promise((r) => setTimeout(r, 100));
    expect(first.readyState).toBe(WebSocket.OPEN); // ten are allowed
    const newest = await open(a.auth);
    expect(await firstClosed).toEqual([4000, 'replaced by a newer connection']);
    for (const ws of [...others, theirs, newest]) expect(ws.readyState).toBe(WebSocket.OPEN);

    // The ten left all hear the customer's events.
    const heard = [...others, newest].map(
      (ws) => new Promise((resolve) => ws.once('message', (m) => resolve(trackingMessage(m).event_id))),
    );
    const eventId = randomUUID();
    const orderId = randomUUID();
    const payload = {
      type: 'order.changed',
      event_id: eventId,
      notification_id: null,
      occurred_at: new Date().toISOString(),
      data: { event_id: eventId, order_id: orderId, order_version: 2, status: 'confirmed', changes: ['status'] },
    };
    await svc.deps.db
      .insertInto('outbox_events')
      .values({ type: 'order.changed', customer_id: a.customerId, order_id: orderId, payload: JSON.stringify(payload) })
      .execute();
    expect(await Promise.all(heard)).toEqual(Array(10).fill(eventId));
    for (const ws of [...others, theirs, newest]) ws.close();
  });

  it('does not deliver events of a rolled-back transaction', async () => {
    const c = await signInCustomer(svc);
    const carol = c.customerId;
    const ws = new WebSocket(`${wsUrl()}?access_token=${c.access}`);
    await new Promise((r) => ws.once('open', r));
    const got: unknown[] = [];
    ws.on('message', (m) => got.push(trackingMessage(m)));
    await svc.deps.db
      .transaction()
      .execute(async (trx) => {
        await trx
          .insertInto('outbox_events')
          .values({ type: 'order.changed', customer_id: carol, order_id: randomUUID(), payload: '{"rolled":"back"}' })
          .execute();
        throw new Error('roll back');
      })
      .catch(() => {});
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual([]);
    ws.close();
  });
});
