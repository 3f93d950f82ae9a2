// The HTTP adapters of the outbound providers - bank, courier service, push gateway - against
// servers played by msw (any request nobody expected fails the test): what they send, and how
// each kind of failure surfaces (502 to the client, a retry, a dead token forgotten).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { lockOrder } from '../../db/queries/orders.js';
import { findOpenInvoice } from '../../db/queries/payments.js';
import { settleInvoice } from '../../services/order-lifecycle.js';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { registerPushDevice, signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  bankInvoice,
  cancelOrder,
  expressAlwaysOpen,
  getOrder,
  IN_ZONE,
  deliveryBody,
  line,
  makeProduct,
  makeSlot,
  placedOrder,
  roadmapDetail,
  setTracking,
  settleSandboxInvoice,
  TVERSKAYA,
} from './fixtures.js';
import { passLocalFailOthers } from '../support/msw.js';

const BANK = 'https://acquiring.bank.example.test/v1';
const COURIER = 'https://couriers.example.test/api';
const PUSH = 'https://push.example.test/send';
// The bank is asked about every open invoice by the worker: by default it is still unpaid.
// (A test that replaces the handlers keeps this one: resetHandlers(...) replaces the defaults.)
const bankStillUnpaid = http.get(`${BANK}/invoices/:id`, () => HttpResponse.json({ status: 'pending' }));
// The worker asks the courier service where each delivery under way is: by default the service
// agrees with what this service last recorded.
const courierAgrees = http.get(`${COURIER}/deliveries/:id`, async ({ params }) => {
  const row = await svc.deps.db
    .selectFrom('order_deliveries')
    .select('tracking_state')
    .where('courier_request_ref', '=', String(params.id))
    .executeTakeFirst();
  return row ? HttpResponse.json({ state: row.tracking_state }) : HttpResponse.json({ error: 'not found' }, { status: 404 });
});
const DEFAULTS = [bankStillUnpaid, courierAgrees];
const remote = setupServer(...DEFAULTS);

let svc: TestService;
beforeAll(async () => {
  remote.listen(passLocalFailOthers);
  svc = await startTestService({
    env: {
      ORDER_WORKER_ENABLED: 'false',
      BANK_PROVIDER: 'http',
      BANK_HTTP_URL: BANK,
      BANK_HTTP_TOKEN: 'bank-token',
      BANK_TIMEOUT_MS: '300',
      COURIER_PROVIDER: 'http',
      COURIER_HTTP_URL: COURIER,
      COURIER_HTTP_TOKEN: 'courier-token',
      COURIER_TIMEOUT_MS: '300',
      // Every pass asks the courier service about every delivery under way.
      COURIER_STATUS_CHECK_SECONDS: '0',
      // Scheduled orders ask for a courier at once, so the dispatch is observable.
      COURIER_DISPATCH_LEAD_MINUTES: '100000',
      PUSH_PROVIDER: 'http',
      PUSH_HTTP_URL: PUSH,
      PUSH_HTTP_TOKEN: 'push-token',
      PUSH_RETRY_BASE_SECONDS: '0',
      PUSH_MAX_ATTEMPTS: '3',
    },
  });
});
afterEach(() => remote.resetHandlers());
afterAll(async () => {
  await svc?.close();
  remote.close();
});

const invoice = (auth: Record<string, string>, id: string) => bankInvoice(svc, auth, id);

async function onlineOrder(auth: Record<string, string>) {
  const p = await makeProduct(svc, { price: '1500.00' });
  return placedOrder(svc, auth, deliveryBody([line(p)], await makeSlot(svc), { payment_method: 'online' }));
}

/** Drains the worker's due work (several passes: fan-out, then sending). */
const drainWorker = async (passes = 3) => {
  for (let i = 0; i < passes; i++) await runOrderWorkerOnce(svc.deps);
};

describe('HTTP bank', () => {
  it('issues the invoice with the amount, the bearer token and the invoice id as idempotency key', async () => {
    const seen: { body: any; key: string | null; auth: string | null }[] = [];
    remote.use(
      http.post(`${BANK}/invoices`, async ({ request }) => {
        seen.push({ body: await request.json(), key: request.headers.get('idempotency-key'), auth: request.headers.get('authorization') });
        return HttpResponse.json({ id: 'inv-777', payment_url: 'https://pay.bank.example.test/inv-777' }, { status: 201 });
      }),
    );
    const c = await signInCustomer(svc);
    const id = await onlineOrder(c.auth);
    const r = await invoice(c.auth, id);
    expect(r.status).toBe(200);
    expect(r.body.link).toBe('https://pay.bank.example.test/inv-777');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ auth: 'Bearer bank-token', body: { amount: { value: '1699.00', currency: 'RUB' }, order_id: id } });
    const row = await svc.deps.db
      .selectFrom('bank_invoices')
      .select(['id', 'provider', 'provider_ref'])
      .where('order_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ provider: 'http', provider_ref: 'inv-777' });
    expect(seen[0]!.key).toBe(row.id);
    // Only the sandbox settles through the QA operation; a real bank's invoice is the bank's to settle.
    const qa = await settleSandboxInvoice(svc, c.auth, id, 'paid');
    expect([qa.status, qa.body.code]).toEqual([409, 'NO_OPEN_INVOICE']);
  });

  it('answers 502 BANK_PROVIDER_ERROR when the bank fails, times out or answers nonsense, and keeps nothing', async () => {
    const c = await signInCustomer(svc);
    const id = await onlineOrder(c.auth);
    for (const handler of [
      http.post(`${BANK}/invoices`, () => HttpResponse.json({ error: 'down' }, { status: 503 })),
      http.post(`${BANK}/invoices`, () => HttpResponse.json({ error: 'bad merchant' }, { status: 400 })),
      http.post(`${BANK}/invoices`, async () => {
        await delay(1000);
        return HttpResponse.json({ id: 'late', payment_url: 'https://pay.bank.example.test/late' });
      }),
      http.post(`${BANK}/invoices`, () => HttpResponse.json({ id: 'no-link' })),
    ]) {
      remote.resetHandlers(...DEFAULTS, handler);
      const r = await invoice(c.auth, id);
      expect([r.status, r.body.code]).toEqual([502, 'BANK_PROVIDER_ERROR']);
    }
    expect(await svc.deps.db.selectFrom('bank_invoices').select('id').where('order_id', '=', id).execute()).toEqual([]);
    const order = await svc.deps.db.selectFrom('orders').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect(order.status).toBe('created');
  });

  it('refunds a cancelled paid order through the bank, polling a pending refund until it succeeds', async () => {
    let calls = 0;
    const keys = new Set<string | null>();
    remote.use(
      http.post(`${BANK}/invoices`, () => HttpResponse.json({ id: `inv-${randomUUID()}`, payment_url: 'https://pay.bank.example.test/x' })),
      http.post(`${BANK}/refunds`, async ({ request }) => {
        calls++;
        keys.add(request.headers.get('idempotency-key'));
        const body = (await request.json()) as { amount: { value: string } };
        expect(body.amount.value).toBe('1699.00');
        return HttpResponse.json({ id: 'ref-1', status: calls === 1 ? 'pending' : 'succeeded' });
      }),
    );
    const c = await signInCustomer(svc);
    const id = await onlineOrder(c.auth);
    await invoice(c.auth, id);
    // The bank's word that it was paid (what the worker's check does, test below).
    await svc.deps.db.transaction().execute(async (trx) => {
      const o = (await lockOrder(trx, id))!;
      await settleInvoice(trx, o, (await findOpenInvoice(trx, id))!.id, 'paid', svc.deps.clock.now());
    });
    expect((await cancelOrder(svc, c.auth, id)).body.status.value).toBe('cancelled');
    await drainWorker(1);
    const stateOf = async () =>
      (await svc.deps.db.selectFrom('orders').select('payment_status').where('id', '=', id).executeTakeFirstOrThrow()).payment_status;
    expect(await stateOf()).toBe('refund_pending');
    await svc.deps.db
      .updateTable('provider_commands')
      .set({ next_attempt_at: new Date() })
      .where('order_id', '=', id)
      .where('kind', '=', 'bank.refund')
      .execute();
    await drainWorker(1);
    expect(await stateOf()).toBe('refunded');
    expect(calls).toBe(2);
    // The retry repeats the same refund, never a second one.
    expect(keys.size).toBe(1);
  });
});

const statusOf = async (id: string) =>
  svc.deps.db.selectFrom('orders').select(['status', 'payment_status']).where('id', '=', id).executeTakeFirstOrThrow();
/** Makes the order's invoices due for their next check now. */
const dueNow = (id: string) =>
  svc.deps.db
    .updateTable('bank_invoices')
    .set({ next_check_at: new Date(Date.now() - 1000) })
    .where('order_id', '=', id)
    .execute();

describe('HTTP bank: the outcome of an invoice', () => {
  const invoiceOf = async (id: string) =>
    svc.deps.db
      .selectFrom('bank_invoices')
      .select(['status', 'checked_at', 'next_check_at'])
      .where('order_id', '=', id)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();

  /** An online order with an open invoice `ref` at the bank. */
  async function orderWithInvoice(ref: string) {
    remote.use(
      http.post(`${BANK}/invoices`, () => HttpResponse.json({ id: ref, payment_url: `https://pay.bank.example.test/${ref}` })),
      // A confirmed order asks for its courier at once here (COURIER_DISPATCH_LEAD_MINUTES).
      http.post(`${COURIER}/deliveries`, () => HttpResponse.json({ id: `dlv-${randomUUID()}` })),
    );
    const c = await signInCustomer(svc);
    const id = await onlineOrder(c.auth);
    expect((await invoice(c.auth, id)).status).toBe(200);
    return { c, id };
  }

  it('asks the bank about an open invoice and confirms the order once the bank says it is paid', async () => {
    const ref = `inv-${randomUUID()}`;
    const { id } = await orderWithInvoice(ref);
    let asked = 0;
    let answer = 'pending';
    remote.use(
      http.get(`${BANK}/invoices/${ref}`, ({ request }) => {
        asked++;
        expect(request.headers.get('authorization')).toBe('Bearer bank-token');
        return HttpResponse.json({ id: ref, status: answer });
      }),
    );
    await runOrderWorkerOnce(svc.deps);
    expect(asked).toBe(1);
    expect(await statusOf(id)).toEqual({ status: 'awaiting_payment', payment_status: 'awaiting' });
    const open = await invoiceOf(id);
    expect(open.status).toBe('open');
    expect(open.checked_at).not.toBeNull();
    // Not asked again before BANK_STATUS_CHECK_SECONDS.
    await runOrderWorkerOnce(svc.deps);
    expect(asked).toBe(1);

    answer = 'paid';
    await dueNow(id);
    await runOrderWorkerOnce(svc.deps);
    expect(asked).toBe(2);
    expect(await statusOf(id)).toEqual({ status: 'confirmed', payment_status: 'paid' });
    expect((await invoiceOf(id)).status).toBe('paid');
    // A settled invoice is not asked about again.
    await dueNow(id);
    await runOrderWorkerOnce(svc.deps);
    expect(asked).toBe(2);
  });

  it('closes a declined or expired invoice, and asks again later when the bank does not answer', async () => {
    for (const [answer, closedAs] of [
      ['failed', 'failed'],
      ['expired', 'expired'],
      ['cancelled', 'expired'],
    ] as const) {
      const ref = `inv-${randomUUID()}`;
      const { c, id } = await orderWithInvoice(ref);
      let bankUp = false;
      remote.use(
        http.get(`${BANK}/invoices/${ref}`, () =>
          bankUp ? HttpResponse.json({ status: answer }) : HttpResponse.json({ error: 'down' }, { status: 503 }),
        ),
      );
      await runOrderWorkerOnce(svc.deps);
      const unanswered = await invoiceOf(id);
      expect([unanswered.status, unanswered.checked_at]).toEqual(['open', null]);
      expect(unanswered.next_check_at.getTime()).toBeGreaterThan(Date.now());

      bankUp = true;
      await dueNow(id);
      await runOrderWorkerOnce(svc.deps);
      expect((await invoiceOf(id)).status, answer).toBe(closedAs);
      expect(await statusOf(id)).toEqual({ status: 'awaiting_payment', payment_status: 'awaiting' });
      // The customer can pay again: a new invoice.
      remote.use(
        http.post(`${BANK}/invoices`, () => HttpResponse.json({ id: `${ref}-2`, payment_url: 'https://pay.bank.example.test/2' })),
      );
      expect((await invoice(c.auth, id)).body.link).toBe('https://pay.bank.example.test/2');
    }
  });

  it('does not cancel an order at its payment deadline until the bank has been asked since', async () => {
    const pastDeadline = (id: string) =>
      svc.deps.db
        .updateTable('orders')
        .set({ payment_due_at: new Date(Date.now() - 1000) })
        .where('id', '=', id)
        .execute();
    // Paid in the last moments: confirmed, not cancelled.
    const paidRef = `inv-${randomUUID()}`;
    const paid = await orderWithInvoice(paidRef);
    await pastDeadline(paid.id);
    remote.use(http.get(`${BANK}/invoices/${paidRef}`, () => HttpResponse.json({ status: 'paid' })));
    await runOrderWorkerOnce(svc.deps);
    expect(await statusOf(paid.id)).toEqual({ status: 'confirmed', payment_status: 'paid' });

    // The bank does not answer: the order waits; once it says "still unpaid", the order is cancelled.
    const ref = `inv-${randomUUID()}`;
    const { id } = await orderWithInvoice(ref);
    await pastDeadline(id);
    let bankUp = false;
    remote.use(http.get(`${BANK}/invoices/${ref}`, () => (bankUp ? HttpResponse.json({ status: 'pending' }) : HttpResponse.error())));
    let cancelledAtBank = 0;
    remote.use(
      http.post(`${BANK}/invoices/${ref}/cancel`, () => {
        cancelledAtBank++;
        return HttpResponse.json({});
      }),
    );
    await runOrderWorkerOnce(svc.deps);
    expect((await statusOf(id)).status).toBe('awaiting_payment');
    bankUp = true;
    await dueNow(id);
    await runOrderWorkerOnce(svc.deps);
    expect((await statusOf(id)).status).toBe('cancelled');
    // And the invoice is withdrawn at the bank (the next pass sends the command).
    await runOrderWorkerOnce(svc.deps);
    expect(cancelledAtBank).toBe(1);
  });
});

describe('HTTP bank: a payment on an invoice closed here before the bank had its word', () => {
  const invoicesOf = async (id: string) =>
    svc.deps.db
      .selectFrom('bank_invoices')
      .select(['provider_ref', 'status', 'bank_word_pending', 'amount'])
      .where('order_id', '=', id)
      .orderBy('created_at')
      .execute();

  /**
   * A bank at which each invoice has a status the test sets (default pending), that records
   * cancellations and refunds, and an online order whose first invoice `ref1` expired by the
   * service's clock and was replaced by `ref2`.
   */
  async function orderWithReplacedInvoice() {
    const ref1 = `inv-${randomUUID()}`;
    const ref2 = `inv-${randomUUID()}`;
    const bankStatus = new Map<string, string>();
    const cancelled: string[] = [];
    const refunds: { invoice_id: string; amount: { value: string } }[] = [];
    let issued = 0;
    remote.use(
      http.post(`${BANK}/invoices`, () => {
        const ref = ++issued === 1 ? ref1 : ref2;
        return HttpResponse.json({ id: ref, payment_url: `https://pay.bank.example.test/${ref}` });
      }),
      http.get(`${BANK}/invoices/:ref`, ({ params }) => HttpResponse.json({ status: bankStatus.get(String(params.ref)) ?? 'pending' })),
      http.post(`${BANK}/invoices/:ref/cancel`, ({ params }) => {
        cancelled.push(String(params.ref));
        return HttpResponse.json({});
      }),
      http.post(`${BANK}/refunds`, async ({ request }) => {
        refunds.push((await request.json()) as (typeof refunds)[number]);
        return HttpResponse.json({ id: `rf-${refunds.length}`, status: 'succeeded' });
      }),
      http.post(`${COURIER}/deliveries`, () => HttpResponse.json({ id: `dlv-${randomUUID()}` })),
    );
    const c = await signInCustomer(svc);
    const id = await onlineOrder(c.auth);
    expect((await invoice(c.auth, id)).body.link).toContain(ref1);
    await svc.deps.db
      .updateTable('bank_invoices')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('order_id', '=', id)
      .execute();
    expect((await invoice(c.auth, id)).body.link).toContain(ref2);
    expect((await invoicesOf(id)).map((i) => [i.provider_ref, i.status, i.bank_word_pending])).toEqual([
      [ref1, 'expired', true],
      [ref2, 'open', false],
    ]);
    return { c, id, ref1, ref2, bankStatus, cancelled, refunds };
  }

  it('lets the order take a payment the bank took on its replaced invoice, and withdraws the new one', async () => {
    const { id, ref1, ref2, bankStatus, cancelled } = await orderWithReplacedInvoice();
    bankStatus.set(ref1, 'paid'); // paid on the bank's page a moment before the service replaced it
    await drainWorker(2);
    expect(await statusOf(id)).toEqual({ status: 'confirmed', payment_status: 'paid' });
    expect((await invoicesOf(id)).map((i) => [i.provider_ref, i.status, i.bank_word_pending])).toEqual([
      [ref1, 'paid', false],
      [ref2, 'cancelled', true],
    ]);
    expect(cancelled.sort()).toEqual([ref1, ref2].sort());
    // The bank confirms the withdrawal: nothing more to ask.
    bankStatus.set(ref2, 'cancelled');
    await dueNow(id);
    await drainWorker(1);
    expect((await invoicesOf(id)).map((i) => [i.status, i.bank_word_pending])).toEqual([
      ['paid', false],
      ['cancelled', false],
    ]);
  });

  it('refunds the whole of a payment the order no longer needed: paid through the new invoice', async () => {
    const { id, ref1, ref2, bankStatus, refunds } = await orderWithReplacedInvoice();
    bankStatus.set(ref2, 'paid');
    await drainWorker(1);
    expect(await statusOf(id)).toEqual({ status: 'confirmed', payment_status: 'paid' });
    bankStatus.set(ref1, 'paid');
    await dueNow(id);
    await drainWorker(2);
    const [first, second] = await invoicesOf(id);
    expect([first!.status, first!.bank_word_pending, second!.status]).toEqual(['surplus', false, 'paid']);
    expect(refunds).toEqual([expect.objectContaining({ invoice_id: ref1, amount: { value: first!.amount, currency: 'RUB' } })]);
    // The order keeps its own payment.
    expect(await statusOf(id)).toEqual({ status: 'confirmed', payment_status: 'paid' });
    const commands = await svc.deps.db
      .selectFrom('provider_commands')
      .select(['kind', 'state'])
      .where('order_id', '=', id)
      .where('kind', '=', 'bank.refund_surplus')
      .execute();
    expect(commands).toEqual([{ kind: 'bank.refund_surplus', state: 'done' }]);
  });

  it('refunds a late payment of the whole total when the order, picked for more, owes only the difference', async () => {
    const { id, ref1, ref2, bankStatus, refunds } = await orderWithReplacedInvoice();
    bankStatus.set(ref2, 'paid');
    await drainWorker(1);
    // Picked for 99.90 more than was paid (finishSession's effect on the order).
    await svc.deps.db
      .updateTable('orders')
      .set((eb) => ({
        status: 'picked',
        payment_status: 'awaiting',
        payment_due_at: null,
        final_total: sql<string>`${eb.ref('total_price')} + 99.90`,
      }))
      .where('id', '=', id)
      .execute();
    bankStatus.set(ref1, 'paid');
    await dueNow(id);
    await drainWorker(2);
    const [first] = await invoicesOf(id);
    expect([first!.status, first!.bank_word_pending]).toEqual(['surplus', false]);
    expect(refunds).toEqual([expect.objectContaining({ invoice_id: ref1, amount: { value: first!.amount, currency: 'RUB' } })]);
    // Still owed: the difference, through an invoice of its own.
    expect(await statusOf(id)).toEqual({ status: 'picked', payment_status: 'awaiting' });
  });

  it('refunds a payment the bank took on the invoice of an order cancelled meanwhile', async () => {
    const { c, id, ref2, bankStatus, cancelled, refunds } = await orderWithReplacedInvoice();
    expect((await cancelOrder(svc, c.auth, id)).body.status.value).toBe('cancelled');
    expect((await invoicesOf(id))[1]).toMatchObject({ status: 'cancelled', bank_word_pending: true });
    bankStatus.set(ref2, 'paid');
    await drainWorker(2);
    expect(cancelled).toContain(ref2);
    expect((await invoicesOf(id))[1]).toMatchObject({ status: 'surplus', bank_word_pending: false });
    expect(refunds.map((r) => r.invoice_id)).toEqual([ref2]);
    expect((await statusOf(id)).status).toBe('cancelled');
  });

  it('stops asking once the bank says how a closed invoice ended, or a day after it expired', async () => {
    const { id, ref1, bankStatus } = await orderWithReplacedInvoice();
    let asked = 0;
    remote.use(
      http.get(`${BANK}/invoices/${ref1}`, () => {
        asked++;
        return HttpResponse.json({ status: bankStatus.get(ref1) ?? 'pending' });
      }),
    );
    await drainWorker(1);
    expect(asked).toBe(1);
    expect((await invoicesOf(id))[0]).toMatchObject({ status: 'expired', bank_word_pending: true });
    bankStatus.set(ref1, 'expired');
    await dueNow(id);
    await drainWorker(1);
    expect(asked).toBe(2);
    expect((await invoicesOf(id))[0]).toMatchObject({ status: 'expired', bank_word_pending: false });
    await dueNow(id);
    await drainWorker(1);
    expect(asked).toBe(2);

    // A bank that still says "pending" a day after the invoice expired is not asked again.
    const other = await orderWithReplacedInvoice();
    await svc.deps.db
      .updateTable('bank_invoices')
      .set({ expires_at: new Date(Date.now() - 25 * 3600 * 1000) })
      .where('provider_ref', '=', other.ref1)
      .execute();
    await drainWorker(1);
    expect((await invoicesOf(other.id))[0]).toMatchObject({ status: 'expired', bank_word_pending: false });
  });
});

describe('HTTP courier service', () => {
  it('quotes express through the courier service', async () => {
    await expressAlwaysOpen(svc);
    remote.use(http.post(`${COURIER}/quotes`, () => HttpResponse.json({ available: true, minutes: 32 })));
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '700.00' });
    const r = await svc.client.call.POST('/api/orders/delivery/price-estimate', {
      headers: { ...c.auth, 'x-store-id': TVERSKAYA },
      body: { location: IN_ZONE, items: [line(p)], is_express: true },
    });
    expect(r.body).toMatchObject({ is_express: true, eta_minutes: 32 });

    remote.resetHandlers(
      ...DEFAULTS,
      http.post(`${COURIER}/quotes`, () => HttpResponse.json({ available: false })),
    );
    const none = await svc.client.call.POST('/api/orders/delivery/price-estimate', {
      headers: { ...c.auth, 'x-store-id': TVERSKAYA },
      body: { location: IN_ZONE, items: [line(p)], is_express: true },
    });
    expect([none.status, none.body.code]).toEqual([422, 'EXPRESS_UNAVAILABLE']);

    remote.resetHandlers(
      ...DEFAULTS,
      http.post(`${COURIER}/quotes`, () => HttpResponse.text('oops', { status: 500 })),
    );
    const failed = await svc.client.call.POST('/api/orders/delivery/price-estimate', {
      headers: { ...c.auth, 'x-store-id': TVERSKAYA },
      body: { location: IN_ZONE, items: [line(p)], is_express: true },
    });
    expect([failed.status, failed.body.code]).toEqual([502, 'COURIER_PROVIDER_ERROR']);
  });

  it('requests a courier when the delivery is due and withdraws it when the order is cancelled', async () => {
    const requests: any[] = [];
    const cancels: string[] = [];
    let attempts = 0;
    remote.use(
      http.post(`${COURIER}/deliveries`, async ({ request }) => {
        attempts++;
        if (attempts === 1) return HttpResponse.text('busy', { status: 503 });
        requests.push({
          body: await request.json(),
          key: request.headers.get('idempotency-key'),
          auth: request.headers.get('authorization'),
        });
        return HttpResponse.json({ id: 'dlv-42' }, { status: 201 });
      }),
      http.post(`${COURIER}/deliveries/:id/cancel`, ({ params }) => {
        cancels.push(String(params.id));
        return HttpResponse.json({ ok: true });
      }),
    );
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1500.00' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    await drainWorker(2);
    expect((await getOrder(svc, c.auth, id)).body.delivery.tracking.state).toBe('searching_courier');
    // The first call failed (503): the command waits for its retry.
    expect(requests).toEqual([]);
    await svc.deps.db.updateTable('provider_commands').set({ next_attempt_at: new Date() }).where('order_id', '=', id).execute();
    await drainWorker(1);
    expect(requests).toEqual([
      {
        key: id,
        auth: 'Bearer courier-token',
        body: expect.objectContaining({ external_id: id, dropoff: IN_ZONE, express: false, address: 'Tverskaya St, 7, Moscow' }),
      },
    ]);
    expect(
      (await svc.deps.db.selectFrom('order_deliveries').select('courier_request_ref').where('order_id', '=', id).executeTakeFirstOrThrow())
        .courier_request_ref,
    ).toBe('dlv-42');

    expect((await cancelOrder(svc, c.auth, id)).body.status.value).toBe('cancelled');
    await drainWorker(1);
    expect(cancels).toEqual(['dlv-42']);
  });
});

describe('following a delivery at the HTTP courier service', () => {
  /** A delivery order whose courier request the service took as `ref`; with the app installed when `withApp`. */
  const dispatched = async (ref: string, withApp: boolean) => {
    remote.use(
      http.post(`${COURIER}/deliveries`, () => HttpResponse.json({ id: ref }, { status: 201 })),
      http.post(PUSH, () => HttpResponse.json({ ok: true })),
    );
    const c = await signInCustomer(svc);
    if (withApp) await registerPushDevice(svc, c.auth);
    const p = await makeProduct(svc, { price: '1500.00' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    await drainWorker(2);
    return { c, id };
  };
  const detail = async (c: { auth: Record<string, string> }, id: string) => (await roadmapDetail(svc, c.auth, id)).body;
  const notified = async (id: string) =>
    (
      await svc.deps.db
        .selectFrom('outbox_events')
        .select(['payload'])
        .where('order_id', '=', id)
        .where(sql<boolean>`payload->>'notification_id' IS NOT NULL`)
        .orderBy('id')
        .execute()
    ).map((e) => (e.payload as { data: { state?: string } }).data.state);

  it('moves the tracking by what the service says, replaying the states it skipped, with one push for the last', async () => {
    let answer: object = { state: 'searching_courier' };
    const asked: { ref: string; auth: string | null }[] = [];
    remote.use(
      http.get(`${COURIER}/deliveries/dlv-follow-1`, ({ request }) => {
        asked.push({ ref: 'dlv-follow-1', auth: request.headers.get('authorization') });
        return HttpResponse.json(answer);
      }),
    );
    const { c, id } = await dispatched('dlv-follow-1', true);
    expect(asked.at(-1)).toEqual({ ref: 'dlv-follow-1', auth: 'Bearer courier-token' });
    expect((await detail(c, id)).delivery.tracking.state).toBe('searching_courier');

    answer = {
      state: 'courier_assigned',
      courier: { name: 'Пётр', phone: '+79990001122', transport: 'bicycle' },
      location: { lon: 37.61, lat: 55.76 },
      eta: new Date(Date.now() + 40 * 60_000).toISOString(),
    };
    await drainWorker(1);
    const assigned = await detail(c, id);
    expect(assigned.delivery).toMatchObject({
      tracking: { state: 'courier_assigned' },
      courier: { name: 'Пётр', phone: '+79990001122', transport: 'bicycle', location: { lon: 37.61, lat: 55.76 } },
    });

    // Still assigned, with a new position and estimate: both shown, with no event and no new version.
    const later = new Date(Date.now() + 55 * 60_000);
    later.setMilliseconds(0);
    answer = { state: 'courier_assigned', location: { lon: 37.612, lat: 55.758 }, eta: later.toISOString() };
    await drainWorker(1);
    const stillAssigned = await detail(c, id);
    expect(stillAssigned.delivery).toMatchObject({
      eta: later.toISOString(),
      courier: { name: 'Пётр', location: { lon: 37.612, lat: 55.758 } },
    });
    expect(stillAssigned.order_version).toBe(assigned.order_version);
    // An answer without an estimate keeps the last one.
    answer = { state: 'courier_assigned', location: { lon: 37.613, lat: 55.757 } };
    await drainWorker(1);
    expect((await detail(c, id)).delivery).toMatchObject({ eta: later.toISOString(), courier: { location: { lon: 37.613, lat: 55.757 } } });

    // The courier says it is on the way before the order is picked: refused, nothing moves.
    answer = { state: 'en_route', location: { lon: 37.611, lat: 55.759 } };
    await drainWorker(1);
    expect((await detail(c, id)).delivery.tracking.state).toBe('courier_assigned');

    // Picked (as the picker's finish leaves it); the next answer is already "delivered".
    await svc.deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('orders').set({ status: 'picked' }).where('id', '=', id).execute();
      await trx.insertInto('order_status_history').values({ order_id: id, status: 'picked' }).execute();
    });
    answer = { state: 'delivered' };
    await drainWorker(1);
    const done = await detail(c, id);
    expect([done.status.value, done.delivery.tracking.state]).toEqual(['completed', 'delivered']);
    const history = await svc.deps.db
      .selectFrom('order_tracking_history')
      .select('state')
      .where('order_id', '=', id)
      .orderBy('id')
      .execute();
    expect(history.map((h) => h.state)).toEqual([
      'pending',
      'searching_courier',
      'courier_assigned',
      'courier_at_store',
      'en_route',
      'arrived',
      'delivered',
    ]);
    expect(await notified(id)).toEqual(['courier_assigned', 'delivered']);
    // Delivered: no longer asked about.
    const questions = asked.length;
    await drainWorker(1); // and the last push goes out
    expect(asked.length).toBe(questions);
  });

  it('changes nothing when the service fails or answers nonsense, and asks again', async () => {
    const { c, id } = await dispatched('dlv-follow-2', false);
    const at = `${COURIER}/deliveries/dlv-follow-2`;
    for (const handler of [
      http.get(at, () => HttpResponse.text('down', { status: 503 })),
      http.get(at, () => HttpResponse.json({ state: 'teleported' })),
      http.get(at, () => HttpResponse.json({ state: 'courier_assigned', location: { lon: 500, lat: 0 } })),
      http.get(at, () => HttpResponse.json({ state: 'courier_assigned', courier: { phone: '+7999' } })),
    ]) {
      remote.resetHandlers();
      remote.use(handler); // ahead of the defaults
      await drainWorker(1);
      expect((await detail(c, id)).delivery.tracking.state).toBe('searching_courier');
    }
    remote.resetHandlers();
    remote.use(http.get(at, () => HttpResponse.json({ state: 'courier_assigned', courier: { name: 'Anna' } })));
    await drainWorker(1);
    expect((await detail(c, id)).delivery).toMatchObject({ tracking: { state: 'courier_assigned' }, courier: { name: 'Anna' } });
  });
});

describe('HTTP push gateway', () => {
  const assignCourier = async (auth: Record<string, string>) => {
    const p = await makeProduct(svc, { price: '1500.00' });
    const id = await placedOrder(svc, auth, deliveryBody([line(p)], await makeSlot(svc)));
    // Cancelling the courier search would notify nothing; an assigned courier does.
    await setTracking(svc, auth, id, { state: 'searching_courier' });
    await setTracking(svc, auth, id, { state: 'courier_assigned' });
    return id;
  };
  const register = (auth: Record<string, string>, token: string) =>
    svc.client.call.PUT('/api/accounts/me/push-devices', {
      headers: auth,
      body: { push_token: token, device_id: randomUUID(), platform: 'android', app_version: '1', build_number: '1', app_kind: 'customer' },
    });

  it('retries after a gateway failure and sends the notification once it answers', async () => {
    remote.use(
      http.post(`${COURIER}/deliveries`, () => HttpResponse.json({ id: `dlv-${randomUUID()}` })),
      http.post(`${BANK}/invoices/:id/cancel`, () => HttpResponse.json({})),
    );
    const c = await signInCustomer(svc);
    await register(c.auth, 'token-retry');
    const bodies: any[] = [];
    let calls = 0;
    remote.use(
      http.post(PUSH, async ({ request }) => {
        calls++;
        if (calls === 1) return HttpResponse.json({ error: 'INTERNAL' }, { status: 500 });
        bodies.push({ body: await request.json(), auth: request.headers.get('authorization') });
        return HttpResponse.json({ ok: true });
      }),
    );
    const id = await assignCourier(c.auth);
    await drainWorker(3);
    expect(calls).toBe(2);
    expect(bodies).toEqual([
      {
        auth: 'Bearer push-token',
        body: expect.objectContaining({
          to: 'token-retry',
          platform: 'android',
          id: expect.any(String),
          notification: { title: expect.stringMatching(/^Order \d+$/), body: 'Courier is heading to the store' },
        }),
      },
    ]);
    expect(bodies[0].body.data).toMatchObject({ order_id: id, notification_id: bodies[0].body.id });
    const delivery = await svc.deps.db
      .selectFrom('push_deliveries')
      .select(['state', 'attempts'])
      .where('order_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(delivery).toEqual({ state: 'sent', attempts: 2 });
  });

  it('forgets an installation whose token the gateway no longer knows, and gives up on a refused message', async () => {
    remote.use(http.post(`${COURIER}/deliveries`, () => HttpResponse.json({ id: `dlv-${randomUUID()}` })));
    const dead = await signInCustomer(svc);
    await register(dead.auth, 'token-dead');
    const refused = await signInCustomer(svc);
    await register(refused.auth, 'token-refused');
    remote.use(
      http.post(PUSH, async ({ request }) => {
        const body = (await request.json()) as { to: string };
        return body.to === 'token-dead'
          ? HttpResponse.json({ error: 'UNREGISTERED' }, { status: 404 })
          : HttpResponse.json({ error: 'payload too big' }, { status: 400 });
      }),
    );
    const deadOrder = await assignCourier(dead.auth);
    const refusedOrder = await assignCourier(refused.auth);
    await drainWorker(3);
    const stateOf = async (orderId: string) =>
      (await svc.deps.db.selectFrom('push_deliveries').select('state').where('order_id', '=', orderId).executeTakeFirstOrThrow()).state;
    expect(await stateOf(deadOrder)).toBe('stale_token');
    expect(await stateOf(refusedOrder)).toBe('failed');
    expect(await svc.deps.db.selectFrom('push_devices').select('device_id').where('push_token', '=', 'token-dead').execute()).toEqual([]);
    expect(
      (await svc.deps.db.selectFrom('push_devices').select('device_id').where('push_token', '=', 'token-refused').execute()).length,
    ).toBe(1);
  });

  it('keeps the installations when the gateway answers a bare 404 (a wrong URL, not a dead token), and retries', async () => {
    remote.use(http.post(`${COURIER}/deliveries`, () => HttpResponse.json({ id: `dlv-${randomUUID()}` })));
    const c = await signInCustomer(svc);
    await register(c.auth, 'token-wrong-url');
    remote.use(http.post(PUSH, () => HttpResponse.text('<html>Not Found</html>', { status: 404 })));
    const id = await assignCourier(c.auth);
    await drainWorker(2);
    const delivery = await svc.deps.db
      .selectFrom('push_deliveries')
      .select(['state', 'attempts', 'last_error'])
      .where('order_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(delivery).toMatchObject({ state: 'pending', last_error: expect.stringMatching(/404/) });
    expect(
      await svc.deps.db.selectFrom('push_devices').select('device_id').where('push_token', '=', 'token-wrong-url').execute(),
    ).toHaveLength(1);
  });
});
