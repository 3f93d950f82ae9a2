// Online payment with the sandbox bank: preferences, issuing and reusing the invoice, settling it
// (the bank's word moves the order), expiry, the payment window, the refund of a cancelled paid
// order, and what picking changes: the difference of a smaller order goes back to the card, an
// order of which nothing could be picked is refunded whole.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { SandboxBank } from '../../platform/providers/bank/index.js';
import { registerPushDevice, signInCustomer, signInPicker } from '../support/accounts.js';
import { command } from '../support/orders.js';
import { createPicker, itemCommand, sessionCommand, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import {
  bankInvoice,
  cancelOrder,
  createOrder,
  deliveryBody,
  getOrder,
  line,
  makeProduct,
  makeSlot,
  placedOrder,
  reservedOf,
  roadmapDetail,
  settleSandboxInvoice,
  stockOf,
  TVERSKAYA,
  type SettleOutcome,
} from '../orders/fixtures.js';

let svc: TestService;
beforeAll(async () => {
  // The worker runs only when a test drives it, so each step is observed.
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

const invoice = (auth: Record<string, string>, id: string) => bankInvoice(svc, auth, id);
const settle = (auth: Record<string, string>, id: string, outcome: SettleOutcome) => settleSandboxInvoice(svc, auth, id, outcome);
const cancel = (auth: Record<string, string>, id: string) => cancelOrder(svc, auth, id);

/** The refunds the sandbox bank is asked for during one pass of the orders worker. */
async function refundsOfWorkerPass(): Promise<{ amount: string; refundId: string }[]> {
  const refund = vi.spyOn(SandboxBank.prototype, 'refund');
  try {
    await runOrderWorkerOnce(svc.deps);
    return refund.mock.calls.map(([r]) => ({ amount: r.amount, refundId: r.refundId }));
  } finally {
    refund.mockRestore();
  }
}

async function onlineOrder(auth: Record<string, string>) {
  const p = await makeProduct(svc, { price: '1234.50', stock: '10.000' });
  const slot = await makeSlot(svc);
  return { id: await placedOrder(svc, auth, deliveryBody([line(p)], slot, { payment_method: 'online' })), p, slot };
}

describe('getBankPreferences', () => {
  it('answers the online payment terms', async () => {
    const c = await signInCustomer(svc);
    const r = await svc.client.call.GET('/api/payments/bank/preferences', { headers: c.auth });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      enabled: true,
      currency: 'RUB',
      payment_window_minutes: 30,
      invoice_lifetime_minutes: 15,
      return_url: 'groceryapp://payments/return',
      disabled_message: null,
    });
  });

  it('answers 401 without a customer token', async () => {
    const p = await signInPicker(svc);
    expect((await svc.client.call.GET('/api/payments/bank/preferences')).status).toBe(401);
    expect((await svc.client.call.GET('/api/payments/bank/preferences', { headers: p.auth })).status).toBe(401);
  });
});

describe('getBankInvoice', () => {
  it('issues the invoice once, returns the same link while it is open, and moves the order to awaiting_payment', async () => {
    const c = await signInCustomer(svc);
    const { id } = await onlineOrder(c.auth);
    const first = await invoice(c.auth, id);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.link).toMatch(/^https:\/\/sandbox\.pay\.bank\.example\/invoice\/[0-9a-f-]{36}$/);
    const lifetime = new Date(first.body.expires_at).getTime() - Date.now();
    expect(lifetime).toBeGreaterThan(14 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
    expect((await invoice(c.auth, id)).body).toEqual(first.body);
    const order = (await roadmapDetail(svc, c.auth, id)).body;
    expect(order).toMatchObject({ status: { value: 'awaiting_payment' }, payment_status: 'awaiting', amount_due: '1433.50' });
    const rows = await svc.deps.db.selectFrom('bank_invoices').select(['amount', 'status']).where('order_id', '=', id).execute();
    expect(rows).toEqual([{ amount: '1433.50', status: 'open' }]);
  });

  it('gives concurrent callers one invoice', async () => {
    const c = await signInCustomer(svc);
    const { id } = await onlineOrder(c.auth);
    const replies = await Promise.all(Array.from({ length: 10 }, () => invoice(c.auth, id)));
    expect(new Set(replies.map((r) => r.body.link)).size).toBe(1);
    expect((await svc.deps.db.selectFrom('bank_invoices').select('id').where('order_id', '=', id).execute()).length).toBe(1);
  });

  it('replaces an expired invoice with a new one', async () => {
    const c = await signInCustomer(svc);
    const { id } = await onlineOrder(c.auth);
    const first = (await invoice(c.auth, id)).body;
    await svc.deps.db
      .updateTable('bank_invoices')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('order_id', '=', id)
      .execute();
    const second = (await invoice(c.auth, id)).body;
    expect(second.link).not.toBe(first.link);
    const states = await svc.deps.db
      .selectFrom('bank_invoices')
      .select('status')
      .where('order_id', '=', id)
      .orderBy('created_at')
      .execute();
    expect(states.map((s) => s.status).sort()).toEqual(['expired', 'open']);
  });

  it('answers 409 with why the order cannot be paid online', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00' });
    const cash = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    expect((await invoice(c.auth, cash)).body.code).toBe('ORDER_NOT_PAYABLE_ONLINE');

    const paid = await onlineOrder(c.auth);
    await invoice(c.auth, paid.id);
    await settle(c.auth, paid.id, 'paid');
    const again = await invoice(c.auth, paid.id);
    expect([again.status, again.body.code]).toEqual([409, 'ORDER_ALREADY_PAID']);

    const cancelled = await onlineOrder(c.auth);
    await cancel(c.auth, cancelled.id);
    expect((await invoice(c.auth, cancelled.id)).body.code).toBe('ORDER_NOT_PAYABLE');
  });

  it('answers 404 for another customer’s order, 422 for a malformed id, 401 without a token', async () => {
    const owner = await signInCustomer(svc);
    const stranger = await signInCustomer(svc);
    const { id } = await onlineOrder(owner.auth);
    expect((await invoice(stranger.auth, id)).status).toBe(404);
    expect((await invoice(owner.auth, randomUUID())).status).toBe(404);
    expect((await svc.client.invalid('GET', '/api/payments/bank/x/invoice', { headers: owner.auth })).status).toBe(422);
    expect((await invoice({}, id)).status).toBe(401);
    expect(await svc.deps.db.selectFrom('bank_invoices').select('id').where('order_id', '=', id).execute()).toEqual([]);
  });
});

describe('settleSandboxBankInvoice', () => {
  it('confirms the order when the bank says paid, with an event for the customer', async () => {
    const c = await signInCustomer(svc);
    await registerPushDevice(svc, c.auth);
    const { id } = await onlineOrder(c.auth);
    const issued = (await invoice(c.auth, id)).body;
    const r = await settle(c.auth, id, 'paid');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      order_id: id,
      status: 'paid',
      amount: '1433.50',
      currency: 'RUB',
      link: issued.link,
      payment_status: 'paid',
      order_status: { value: 'confirmed' },
    });
    expect(r.body.settled_at).toEqual(expect.any(String));
    const events = await svc.deps.db
      .selectFrom('outbox_events')
      .select('payload')
      .where('order_id', '=', id)
      .where('type', '=', 'order.changed')
      .orderBy('id')
      .execute();
    const last = events.at(-1)!.payload as any;
    expect(last.data).toMatchObject({ status: 'confirmed', changes: ['payment', 'status'] });
    expect(last.notification_id).toEqual(expect.any(String));
  });

  it('keeps the order awaiting payment when the bank declines; the next GET issues a new invoice', async () => {
    const c = await signInCustomer(svc);
    const { id } = await onlineOrder(c.auth);
    const first = (await invoice(c.auth, id)).body;
    const r = await settle(c.auth, id, 'failed');
    expect(r.body).toMatchObject({ status: 'failed', payment_status: 'awaiting', order_status: { value: 'awaiting_payment' } });
    const second = (await invoice(c.auth, id)).body;
    expect(second.link).not.toBe(first.link);
  });

  it('answers 409 NO_OPEN_INVOICE when nothing is payable', async () => {
    const c = await signInCustomer(svc);
    const { id } = await onlineOrder(c.auth);
    const none = await settle(c.auth, id, 'paid');
    expect([none.status, none.body.code]).toEqual([409, 'NO_OPEN_INVOICE']);
    await invoice(c.auth, id);
    await svc.deps.db
      .updateTable('bank_invoices')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('order_id', '=', id)
      .execute();
    expect((await settle(c.auth, id, 'paid')).body.code).toBe('NO_OPEN_INVOICE');
    expect((await getOrder(svc, c.auth, id)).body.status.value).toBe('awaiting_payment');
  });

  it('answers 404, 401, 422 and 400 like every order operation', async () => {
    const owner = await signInCustomer(svc);
    const stranger = await signInCustomer(svc);
    const { id } = await onlineOrder(owner.auth);
    await invoice(owner.auth, id);
    expect((await settle(stranger.auth, id, 'paid')).status).toBe(404);
    expect((await settle({}, id, 'paid')).status).toBe(401);
    expect(
      (await svc.client.invalid('POST', `/api/qa/payments/bank/${id}/settle`, { headers: owner.auth, body: { outcome: 'maybe' } })).status,
    ).toBe(422);
    expect((await svc.client.invalid('POST', `/api/qa/payments/bank/${id}/settle`, { headers: owner.auth, body: '{' })).status).toBe(400);
    expect((await getOrder(svc, owner.auth, id)).body.status.value).toBe('awaiting_payment');
  });
});

describe('after payment', () => {
  it('refunds a paid order cancelled by the customer in full (refund_pending, then refunded)', async () => {
    const c = await signInCustomer(svc);
    const { id, p } = await onlineOrder(c.auth);
    await invoice(c.auth, id);
    await settle(c.auth, id, 'paid');
    const cancelled = await cancel(c.auth, id);
    expect(cancelled.body.status.value).toBe('cancelled');
    const detailOf = async () => (await roadmapDetail(svc, c.auth, id)).body;
    expect((await detailOf()).payment_status).toBe('refund_pending');
    expect(await stockOf(svc, p)).toBe('10.000');
    await runOrderWorkerOnce(svc.deps);
    expect((await detailOf()).payment_status).toBe('refunded');
    const commands = await svc.deps.db.selectFrom('provider_commands').select(['kind', 'state']).where('order_id', '=', id).execute();
    expect(commands).toContainEqual({ kind: 'bank.refund', state: 'done' });
  });

  it('cancels an online order not paid within its window, releasing stock and slot', async () => {
    const c = await signInCustomer(svc);
    const { id, p, slot } = await onlineOrder(c.auth);
    const link = (await invoice(c.auth, id)).body.link;
    expect(link).toEqual(expect.any(String));
    await runOrderWorkerOnce(svc.deps);
    expect((await getOrder(svc, c.auth, id)).body.status.value).toBe('awaiting_payment');
    await svc.deps.db
      .updateTable('orders')
      .set({ payment_due_at: new Date(Date.now() - 1000) })
      .where('id', '=', id)
      .execute();
    await runOrderWorkerOnce(svc.deps);
    const order = (await getOrder(svc, c.auth, id)).body;
    expect(order.status).toMatchObject({ value: 'cancelled', comment: 'The order was not paid in time.' });
    expect(await stockOf(svc, p)).toBe('10.000');
    expect(await reservedOf(svc, slot)).toBe(0);
    const invoices = await svc.deps.db.selectFrom('bank_invoices').select('status').where('order_id', '=', id).execute();
    expect(invoices).toEqual([{ status: 'cancelled' }]);
  });
});

describe('with online payment switched off', () => {
  let off: TestService;
  beforeAll(async () => {
    off = await startTestService({ env: { ONLINE_PAYMENT_ENABLED: 'false', ORDER_WORKER_ENABLED: 'false' } });
  });
  afterAll(() => off?.close());

  it('says so in the preferences, refuses online checkout (422) and invoices (409)', async () => {
    const c = await signInCustomer(off);
    const prefs = await off.client.call.GET('/api/payments/bank/preferences', { headers: { ...c.auth, 'accept-language': 'ru' } });
    expect(prefs.body).toMatchObject({ enabled: false, disabled_message: expect.stringContaining('Онлайн-оплата') });
    const p = await makeProduct(off, { price: '1100.00' });
    const slot = await makeSlot(off);
    const online = await createOrder(off, c.auth, deliveryBody([line(p)], slot, { payment_method: 'online' }));
    expect([online.status, online.body.code]).toEqual([422, 'ONLINE_PAYMENT_DISABLED']);
    const cash = await placedOrder(off, c.auth, deliveryBody([line(p)], slot));
    const r = await bankInvoice(off, c.auth, cash);
    expect([r.status, r.body.code]).toEqual([409, 'ONLINE_PAYMENT_DISABLED']);
  });
});

describe('after picking a paid order', () => {
  /** A paid online order of two products (1,234.50 and 300.00) and its picking session. */
  async function paidAndStarted() {
    const c = await signInCustomer(svc);
    const kept = await makeProduct(svc, { price: '1234.50', stock: '10.000' });
    const lost = await makeProduct(svc, { price: '300.00', stock: '10.000' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(kept), line(lost)], await makeSlot(svc), { payment_method: 'online' }));
    await invoice(c.auth, id);
    await settle(c.auth, id, 'paid');
    const picker = await createPicker(svc, [TVERSKAYA]);
    const session = await startPicking(svc, picker, id);
    const itemOf = (p: { productId: string }) => session.items.find((i) => i.product_id === p.productId)!;
    const remove = async (itemId: number) => {
      expect((await itemCommand(svc, picker, id, itemId, 'missing', { action: 'remove' })).status).toBe(200);
      expect((await itemCommand(svc, picker, id, itemId, 'clarification/resolve', { resolution: 'remove' })).status).toBe(200);
    };
    const finish = () => sessionCommand(svc, picker, id, 'finish');
    const refunds = () =>
      svc.deps.db
        .selectFrom('provider_commands')
        .select(['state', 'payload'])
        .where('order_id', '=', id)
        .where('kind', '=', 'bank.refund')
        .execute();
    const reconciliation = async () =>
      (
        await svc.deps.db
          .selectFrom('picking_sessions')
          .select('reconciliation_status')
          .where('order_id', '=', id)
          .executeTakeFirstOrThrow()
      ).reconciliation_status;
    const detail = async () => (await roadmapDetail(svc, c.auth, id)).body;
    return {
      id,
      auth: c.auth,
      picker,
      kept: itemOf(kept),
      lost: itemOf(lost),
      products: { kept, lost },
      remove,
      finish,
      refunds,
      reconciliation,
      detail,
    };
  }

  it('returns the difference to the card, and the session is settled once the bank has refunded it', async () => {
    const o = await paidAndStarted();
    expect((await itemCommand(svc, o.picker, o.id, o.kept.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    await o.remove(o.lost.item_id);
    const finished = await o.finish();
    expect(finished.status).toBe(200);
    expect(await o.reconciliation()).toBe('pending');
    expect(await o.refunds()).toEqual([{ state: 'pending', payload: { amount: '300.00', session_id: expect.any(Number) } }]);

    await runOrderWorkerOnce(svc.deps);
    expect(await o.refunds()).toEqual([expect.objectContaining({ state: 'done' })]);
    expect(await o.reconciliation()).toBe('completed');
    // A partial refund: the order stays paid, for what was delivered.
    expect(await o.detail()).toMatchObject({ payment_status: 'paid', status: { value: 'picked' } });
  });

  it('returns only what is left when an order partly refunded after picking is cancelled', async () => {
    const o = await paidAndStarted();
    expect((await itemCommand(svc, o.picker, o.id, o.kept.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    await o.remove(o.lost.item_id);
    expect((await o.finish()).status).toBe(200);
    await runOrderWorkerOnce(svc.deps);
    expect(await o.reconciliation()).toBe('completed');
    expect((await cancel(o.auth, o.id)).status).toBe(200);
    const paid = await svc.deps.db
      .selectFrom('bank_invoices')
      .select('amount')
      .where('order_id', '=', o.id)
      .where('status', '=', 'paid')
      .executeTakeFirstOrThrow();
    expect((await refundsOfWorkerPass()).map((r) => r.amount)).toEqual([(Math.round(Number(paid.amount) * 100 - 30000) / 100).toFixed(2)]);
    expect(await o.detail()).toMatchObject({ payment_status: 'refunded' });
  });

  it('returns everything when an order picked for less is cancelled before the difference went back', async () => {
    const o = await paidAndStarted();
    expect((await itemCommand(svc, o.picker, o.id, o.kept.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    await o.remove(o.lost.item_id);
    expect((await o.finish()).status).toBe(200);
    expect((await cancel(o.auth, o.id)).status).toBe(200);
    // The difference was never asked of the bank: the whole payment goes back in one refund.
    expect((await refundsOfWorkerPass()).map((r) => r.amount)).toEqual(['1733.50']);
    expect(await o.detail()).toMatchObject({ payment_status: 'refunded' });
    expect(await o.reconciliation()).toBe('not_required');
  });

  it('marks the settlement failed when the bank refuses the refund (staff settle it by hand)', async () => {
    const o = await paidAndStarted();
    expect((await itemCommand(svc, o.picker, o.id, o.kept.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    await o.remove(o.lost.item_id);
    expect((await o.finish()).status).toBe(200);
    // The bank no longer knows a paid invoice of the order.
    await svc.deps.db.updateTable('bank_invoices').set({ status: 'cancelled' }).where('order_id', '=', o.id).execute();
    await runOrderWorkerOnce(svc.deps);
    expect(await o.refunds()).toEqual([expect.objectContaining({ state: 'failed' })]);
    expect(await o.reconciliation()).toBe('failed');
  });

  it('refunds in full an order of which nothing could be picked', async () => {
    const o = await paidAndStarted();
    await o.remove(o.kept.item_id);
    await o.remove(o.lost.item_id);
    expect((await o.finish()).status).toBe(200);
    expect(await o.detail()).toMatchObject({ status: { value: 'cancelled' }, payment_status: 'refund_pending', amount_due: null });
    expect(await o.reconciliation()).toBe('not_required');
    await runOrderWorkerOnce(svc.deps);
    expect(await o.detail()).toMatchObject({ payment_status: 'refunded' });
    expect(await o.refunds()).toEqual([{ state: 'done', payload: {} }]);
  });

  /** The paid order picked in full plus an item of 99.90 the customer asked for: 99.90 more than paid. */
  async function pickedForMore() {
    const o = await paidAndStarted();
    await registerPushDevice(svc, o.auth); // told to pay the difference
    const extra = await makeProduct(svc, { price: '99.90', stock: '10.000' });
    for (const item of [o.kept, o.lost])
      expect((await itemCommand(svc, o.picker, o.id, item.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    const added = await svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
      params: { path: { order_id: o.id } },
      headers: command(o.picker.auth),
      body: { inventory_id: extra.inventoryId, quantity: '1' },
    });
    expect(added.status).toBe(200);
    expect((await itemCommand(svc, o.picker, o.id, added.body.item.item_id, 'manual-pick', { quantity: 1, confirm: false })).status).toBe(
      200,
    );
    const finished = await o.finish();
    expect(finished.status).toBe(200);
    expect(finished.body.session.payment_summary).toEqual({
      original_total: '1534.50',
      current_total: '1634.40',
      difference: '99.90',
      reconciliation_status: 'pending',
    });
    const invoices = () =>
      svc.deps.db.selectFrom('bank_invoices').select(['status', 'amount']).where('order_id', '=', o.id).orderBy('created_at').execute();
    return { ...o, invoices, extra };
  }

  it('asks the customer for the difference when the order was picked for more than was paid, and settles the session once paid', async () => {
    const o = await pickedForMore();
    // Awaiting the difference, with no deadline: the order goes on to the customer meanwhile.
    expect(await o.detail()).toMatchObject({ status: { value: 'picked' }, payment_status: 'awaiting', amount_due: '99.90' });
    expect(await o.reconciliation()).toBe('pending');
    expect(await o.refunds()).toEqual([]);
    expect(
      (await svc.deps.db.selectFrom('orders').select('payment_due_at').where('id', '=', o.id).executeTakeFirstOrThrow()).payment_due_at,
    ).toBeNull();
    await runOrderWorkerOnce(svc.deps);
    expect(await o.reconciliation()).toBe('pending');
    const told = await svc.deps.db.selectFrom('push_deliveries').select('body').where('order_id', '=', o.id).execute();
    expect(told.map((p) => p.body)).toContain('The order was picked for more than you paid: pay the difference in the app');

    // The new invoice asks for the difference only; paying it settles the session.
    const difference = await invoice(o.auth, o.id);
    expect(difference.status).toBe(200);
    expect(await o.invoices()).toEqual([
      { status: 'paid', amount: '1733.50' },
      { status: 'open', amount: '99.90' },
    ]);
    expect((await settle(o.auth, o.id, 'paid')).status).toBe(200);
    expect(await o.detail()).toMatchObject({ status: { value: 'picked' }, payment_status: 'paid', amount_due: null });
    expect(await o.reconciliation()).toBe('completed');
    expect((await invoice(o.auth, o.id)).body.code).toBe('ORDER_ALREADY_PAID');
    await runOrderWorkerOnce(svc.deps);
    const all = await svc.deps.db.selectFrom('push_deliveries').select('body').where('order_id', '=', o.id).execute();
    expect(all.map((p) => p.body)).toContain('Additional payment received');
    expect(all.map((p) => p.body)).not.toContain('The payment for the order was refunded');
  });

  it('refunds both payments when an order whose difference was paid is cancelled', async () => {
    const o = await pickedForMore();
    await invoice(o.auth, o.id);
    await settle(o.auth, o.id, 'paid');
    expect((await cancel(o.auth, o.id)).status).toBe(200);
    expect(await o.detail()).toMatchObject({ status: { value: 'cancelled' }, payment_status: 'refund_pending' });
    const refunds = await refundsOfWorkerPass();
    expect(refunds.map((r) => r.amount)).toEqual(['1733.50', '99.90']);
    expect(new Set(refunds.map((r) => r.refundId)).size).toBe(2);
    expect(await o.detail()).toMatchObject({ payment_status: 'refunded' });
  });

  it('gives back to the shelves what the picking took when a picked order is cancelled, once', async () => {
    const o = await paidAndStarted();
    const extra = await makeProduct(svc, { price: '99.90', stock: '10.000' });
    expect((await itemCommand(svc, o.picker, o.id, o.kept.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    await o.remove(o.lost.item_id);
    const added = await svc.client.call.POST('/api/picker/orders/{order_id}/additional-items', {
      params: { path: { order_id: o.id } },
      headers: command(o.picker.auth),
      body: { inventory_id: extra.inventoryId, quantity: '1' },
    });
    expect((await itemCommand(svc, o.picker, o.id, added.body.item.item_id, 'manual-pick', { quantity: 1, confirm: false })).status).toBe(
      200,
    );
    expect((await o.finish()).status).toBe(200);
    const stocks = async () => [await stockOf(svc, o.products.kept), await stockOf(svc, o.products.lost), await stockOf(svc, extra)];
    // Taken: one of `kept` and the added product; `lost` went back at finish.
    expect(await stocks()).toEqual(['9.000', '10.000', '9.000']);
    expect((await cancel(o.auth, o.id)).status).toBe(200);
    expect(await stocks()).toEqual(['10.000', '10.000', '10.000']);
    await runOrderWorkerOnce(svc.deps); // its refunds, not left to the next test's worker pass
    expect(await o.detail()).toMatchObject({ payment_status: 'refunded' });
  });

  it('refunds what was paid, and needs no settlement, when an order awaiting its difference is cancelled', async () => {
    const o = await pickedForMore();
    await invoice(o.auth, o.id);
    expect((await cancel(o.auth, o.id)).status).toBe(200);
    expect(await o.detail()).toMatchObject({ status: { value: 'cancelled' }, payment_status: 'refund_pending', amount_due: null });
    expect(await o.reconciliation()).toBe('not_required');
    // The difference's invoice is withdrawn with the order.
    expect(await o.invoices()).toEqual([
      { status: 'paid', amount: '1733.50' },
      { status: 'cancelled', amount: '99.90' },
    ]);
    expect((await refundsOfWorkerPass()).map((r) => r.amount)).toEqual(['1733.50']);
    expect(await o.detail()).toMatchObject({ payment_status: 'refunded' });
  });
});
