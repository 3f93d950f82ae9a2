// A backlog of push events (a morning rush: every order entering a store's queue is a push to each
// of its idle pickers, every cancellation one to the customer's phones) drains at the database's
// pace: the fan-out handles a batch in the same few statements whatever it holds, and a pass runs
// batches while it finds full ones, up to PUSH_BATCHES_PER_PASS, before the worker's other jobs
// (then says more is waiting, and the scheduler starts the next pass at once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { PUSH_BATCHES_PER_PASS, runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { fanOutPushes } from '../../server/jobs/push-fan-out.js';
import { RecordingPushSender } from '../../platform/providers/push/index.js';
import { countRoundTrips, queriesMadeBy } from '../../scripts/lib/round-trips.js';
import { registerPushDevice, signInCustomer } from '../support/accounts.js';
import { assertMatchesSchema } from '../support/client.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

const BATCH = 2;
const STORE = DEMO_STORES[0]!.id;
const OTHER_STORE = DEMO_STORES[2]!.id;

let svc: TestService;
/** A product sold in each store. */
const pieces = new Map<string, StockedProduct>();
beforeAll(async () => {
  await countRoundTrips(); // before the service's pool opens a connection
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false', ORDER_WORKER_BATCH_SIZE: String(BATCH) } });
  for (const storeId of [STORE, OTHER_STORE]) pieces.set(storeId, (await stockedProducts(svc, { storeId, weight: false, count: 1 }))[0]!);
  await runOrderWorkerOnce(svc.deps); // what the fixtures left
});
afterAll(() => svc?.close());

const recorded = () => svc.deps.push as RecordingPushSender;
const sentTo = (token: string) => recorded().sent.filter((m) => m.token === token);
const confirmedOrder = (customerId: string, storeId: string) =>
  createConfirmedOrder(svc, { customerId, storeId, lines: [{ inventoryId: pieces.get(storeId)!.inventoryId, quantity: '1' }] });
const cancel = (auth: Record<string, string>, orderId: string) =>
  svc.client.call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id: orderId } }, headers: auth });

/**
 * Waits (up to 5 s) until the service's outbox feed has published every event: its marking
 * UPDATE locks the rows it marks, and a claim with SKIP LOCKED would take a short batch meanwhile
 * (which ends the pass's run of batches: right for the service, a race for exact counts here).
 */
async function feedCaughtUp(): Promise<void> {
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
    const waiting = await svc.deps.db
      .selectFrom('outbox_events')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('published_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(waiting.n) === 0) return;
  }
}

/** Pickers idle at two stores and one about to work, two customers with three phones; their devices' tokens. */
async function audience() {
  const [idle, idleElsewhere, working] = [
    await createPicker(svc, [STORE]),
    await createPicker(svc, [OTHER_STORE]),
    await createPicker(svc, [STORE]),
  ];
  const [ann, bob] = [await signInCustomer(svc), await signInCustomer(svc)];
  expect((await svc.client.call.PATCH('/api/accounts/me/preferences', { headers: bob.auth, body: { language: 'ru' } })).status).toBe(200);
  const device = (auth: Record<string, string>, appKind: 'customer' | 'picker') =>
    registerPushDevice(svc, auth, { appKind, lang: 'en' }).then((d) => d.push_token);
  return {
    idle,
    idleElsewhere,
    working,
    ann,
    bob,
    tokens: {
      idle: await device(idle.auth, 'picker'),
      idleElsewhere: await device(idleElsewhere.auth, 'picker'),
      working: await device(working.auth, 'picker'),
      annPhone: await device(ann.auth, 'customer'),
      annTablet: await device(ann.auth, 'customer'),
      bobPhone: await device(bob.auth, 'customer'),
    },
  };
}

/**
 * A rush before the worker's next pass: three orders enter each store's queue; pickers start
 * Ann's order at one store and Bob's at the other (each start is news to the customer); the third
 * picker starts another of Ann's, which she cancels (news to that picker, none to her).
 */
async function rush(a: Awaited<ReturnType<typeof audience>>) {
  const queued = [];
  for (const storeId of [STORE, OTHER_STORE])
    for (const customer of [a.ann, a.bob, a.ann]) queued.push({ storeId, ...(await confirmedOrder(customer.customerId, storeId)) });
  const annsStarted = await confirmedOrder(a.ann.customerId, STORE);
  const bobsStarted = await confirmedOrder(a.bob.customerId, OTHER_STORE);
  const cancelledInPicking = await confirmedOrder(a.ann.customerId, STORE);
  await startPicking(svc, await createPicker(svc, [STORE]), annsStarted.orderId);
  await startPicking(svc, await createPicker(svc, [OTHER_STORE]), bobsStarted.orderId);
  await startPicking(svc, a.working, cancelledInPicking.orderId);
  expect((await cancel(a.ann.auth, cancelledInPicking.orderId)).status).toBe(200);
  await feedCaughtUp();
  return { queued, annsStarted, bobsStarted, cancelledInPicking };
}

describe('a backlog of push events', () => {
  it('is fanned out in one pass, each notification to each of its devices once, in its language', async () => {
    const a = await audience();
    const r = await rush(a);

    const tick = await runOrderWorkerOnce(svc.deps);
    // 9 queue entries (the 3 started ones no longer waiting), 3 starts, 1 cancellation: 13 events,
    // more than 6 batches of 2, in one pass.
    expect(tick.pushEvents).toBe(13);
    expect((await runOrderWorkerOnce(svc.deps)).pushEvents).toBe(0);

    const told = (token: string) => sentTo(token).map((m) => [m.data.kind, m.data.order_id]);
    const queueOf = (storeId: string) => r.queued.filter((o) => o.storeId === storeId).map((o) => ['picker_queue', o.orderId]);
    expect(told(a.tokens.idle)).toEqual(queueOf(STORE));
    expect(told(a.tokens.idleElsewhere)).toEqual(queueOf(OTHER_STORE));
    expect(told(a.tokens.working)).toEqual([['picker_order_cancelled', r.cancelledInPicking.orderId]]);
    const annsNews = [r.annsStarted, r.cancelledInPicking].map((o) => ['order_status', o.orderId]);
    expect(told(a.tokens.annPhone)).toEqual(annsNews);
    expect(told(a.tokens.annTablet)).toEqual(annsNews);
    expect(told(a.tokens.bobPhone)).toEqual([['order_status', r.bobsStarted.orderId]]);
    expect(sentTo(a.tokens.annPhone)[0]!.title).toBe(`Order ${r.annsStarted.no}`);
    expect(sentTo(a.tokens.bobPhone)[0]!.title).toBe(`Заказ № ${r.bobsStarted.no}`);
    for (const m of recorded().sent) assertMatchesSchema('PushNotificationPayload', m.data);
  });

  it('stops a pass after PUSH_BATCHES_PER_PASS full batches, and the next pass goes on', async () => {
    const customer = await signInCustomer(svc);
    const orders = PUSH_BATCHES_PER_PASS * BATCH + 3;
    for (let i = 0; i < orders; i++) await confirmedOrder(customer.customerId, STORE);
    await feedCaughtUp();

    // The first pass says more is waiting (the scheduler then starts the next at once); the next drains it.
    expect(await runOrderWorkerOnce(svc.deps)).toMatchObject({ pushEvents: PUSH_BATCHES_PER_PASS * BATCH, pushesWaiting: true });
    expect(await runOrderWorkerOnce(svc.deps)).toMatchObject({ pushEvents: 3 });
    expect(await runOrderWorkerOnce(svc.deps)).toMatchObject({ pushEvents: 0, pushesSent: 0, pushesWaiting: false });
  });

  it('fans out a batch in the same few statements whatever it holds', async () => {
    const a = await audience();
    const config = svc.deps.config.orders.worker;
    config.batchSize = 50;
    try {
      const r = await rush(a);
      const { result: events, queries } = await queriesMadeBy(() => fanOutPushes(svc.deps));
      expect(events).toBe(13);
      // BEGIN, the claim, the orders, the customers', stores' and pickers' devices, the deliveries, the mark, COMMIT.
      expect(queries).toBe(9);
      expect(await fanOutPushes(svc.deps)).toBe(0);

      const made = await svc.deps.db
        .selectFrom('push_deliveries')
        .select(({ fn }) => fn.countAll<string>().as('n'))
        .where('order_id', 'in', [r.annsStarted.orderId, r.bobsStarted.orderId, r.cancelledInPicking.orderId])
        .executeTakeFirstOrThrow();
      // Ann's two phones and Bob's one of the starts, the picker at work of the cancellation.
      expect(Number(made.n)).toBe(2 + 1 + 2 + 1);
    } finally {
      config.batchSize = BATCH;
    }
  });
});
