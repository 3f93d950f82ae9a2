// Purchases, purchase details and transactions on the local ledger; the receipt of a picked
// online order (its lines as collected); the accrual of completed orders (on the picked total,
// exactly once) and the discount preview that estimates it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_LOYALTY_CUSTOMERS } from '../../db/seed/loyalty.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { runLoyaltyWorkerOnce } from '../../server/jobs/loyalty-worker.js';
import { signInCustomer } from '../support/accounts.js';
import { command, createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, itemCommand, startPicking, type ItemAction, type ItemBody } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { bearer, completeOrder, createOrder, readyWallet, signInDemoCustomer, storeLines, STORE, type StockLine } from './helpers.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
let pieces: StockLine[];
let weighed: StockLine[];
beforeAll(async () => {
  svc = await startTestService({ env: { LOYALTY_WORKER_ENABLED: 'false' } });
  pieces = await storeLines(svc, 'piece', 3);
  weighed = await storeLines(svc, 'weight', 1);
});
afterAll(() => svc?.close());

type Who = { access: string };
type Page = { page?: number; page_size?: number };
const readWallet = (c: Who) => svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) });
const listPurchases = (c: Who, query: Page = {}, lang?: 'ru' | 'en') =>
  svc.client.call.GET('/api/loaylty/wallet/purchases/', { params: { query }, headers: bearer(c, lang) });
const readPurchase = (c: Who, id: string) =>
  svc.client.call.GET('/api/loaylty/wallet/purchases/{purchase_id}/', { params: { path: { purchase_id: id } }, headers: bearer(c) });
const listTransactions = (c: Who, query: Page = {}, lang?: 'ru' | 'en') =>
  svc.client.call.GET('/api/loaylty/wallet/transactions/', { params: { query }, headers: bearer(c, lang) });
/** Deliberately invalid: paging outside the limits. */
const invalid = (path: string, c: Who) => svc.client.invalid('GET', path, { headers: bearer(c) });
const receipts = (customer: string) =>
  svc.deps.db
    .selectFrom('loyalty_ledger_receipts')
    .selectAll()
    .where('customer_id', '=', customer)
    .orderBy('occurred_at', 'desc')
    .orderBy('id')
    .execute();
const accrualOf = (orderId: string) => svc.deps.db.selectFrom('loyalty_accruals').selectAll().where('order_id', '=', orderId).execute();

describe('listLoyaltyPurchases', () => {
  it('is an empty page without a wallet and while the wallet is not linked', async () => {
    const c = await signInCustomer(svc);
    const none = await svc.client.api.GET('/api/loaylty/wallet/purchases/', { headers: bearer(c) });
    expect(none.response.status).toBe(200);
    expect(none.data).toEqual({ items: [], count: 0, has_next: false });
    await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    expect((await listPurchases(c)).body).toEqual({ items: [], count: 0, has_next: false });
  });

  it('lists the in-store purchases the provider reports, newest first, paged', async () => {
    const demo = await signInDemoCustomer(svc);
    await readyWallet(svc, demo);
    const ledger = await receipts(DEMO_LOYALTY_CUSTOMERS.demo.id);
    const first = await listPurchases(demo, { page: 1, page_size: 5 });
    expect(first.body.count).toBe(ledger.length);
    expect(first.body.has_next).toBe(true);
    expect(first.body.items.map((p: { id: string }) => p.id)).toEqual(ledger.slice(0, 5).map((r) => r.id));
    expect(first.body.items[0]).toEqual({
      id: ledger[0]!.id,
      date: ledger[0]!.occurred_at.toISOString(),
      shop_name: ledger[0]!.shop_name,
      total: ledger[0]!.total,
      bonus_accrual: ledger[0]!.bonus_accrual,
      items_count: ledger[0]!.positions.length,
      source: 'offline',
    });
    const last = await listPurchases(demo, { page: 3, page_size: 5 });
    expect(last.body.items.length).toBe(ledger.length - 10);
    expect(last.body.has_next).toBe(false);
    const past = await listPurchases(demo, { page: 9, page_size: 5 });
    expect(past.body).toEqual({ items: [], count: ledger.length, has_next: false });
  });

  it('answers 422 for a page size above 100 and 401 without a token', async () => {
    const c = await signInCustomer(svc);
    expect((await invalid('/api/loaylty/wallet/purchases/?page_size=101', c)).status).toBe(422);
    expect((await svc.client.invalid('GET', '/api/loaylty/wallet/purchases/')).status).toBe(401);
  });
});

describe('getLoyaltyPurchase', () => {
  it('returns an in-store purchase with its positions and discounts', async () => {
    const demo = await signInDemoCustomer(svc);
    await readyWallet(svc, demo);
    const [receipt] = await receipts(DEMO_LOYALTY_CUSTOMERS.demo.id);
    const r = await svc.client.api.GET('/api/loaylty/wallet/purchases/{purchase_id}/', {
      params: { path: { purchase_id: receipt!.id } },
      headers: bearer(demo),
    });
    expect(r.response.status).toBe(200);
    expect(r.data).toMatchObject({
      id: receipt!.id,
      total: receipt!.total,
      source: 'offline',
      positions: receipt!.positions,
      discounts: [],
    });
    const sum = receipt!.positions.reduce((s, p) => s + Math.round(Number(p.amount) * 100), 0);
    expect((sum / 100).toFixed(2)).toBe(receipt!.total);
  });

  it("answers 404 PURCHASE_NOT_FOUND for an unknown id and for another customer's purchase or order", async () => {
    const demo = await signInDemoCustomer(svc);
    await readyWallet(svc, demo);
    const [othersReceipt] = await receipts(DEMO_LOYALTY_CUSTOMERS.other.id);
    const stranger = await signInCustomer(svc);
    const order = await createOrder(svc, {
      customerId: stranger.customerId,
      lines: [{ line: pieces[0]!, quantity: '1' }],
      finalTotal: pieces[0]!.unit_price,
      status: 'completed',
    });
    for (const id of ['R-unknown', othersReceipt!.id, order.id, randomUUID()]) {
      const r = await readPurchase(demo, id);
      expect([r.status, r.body.code], id).toEqual([404, 'PURCHASE_NOT_FOUND']);
    }
  });

  it('answers 404 WALLET_NOT_LINKED without a linked wallet, and 401 without a token', async () => {
    const c = await signInCustomer(svc);
    const r = await readPurchase(c, 'R-000154-0001');
    expect([r.status, r.body.code]).toEqual([404, 'WALLET_NOT_LINKED']);
    expect((await svc.client.invalid('GET', '/api/loaylty/wallet/purchases/R-000154-0001/')).status).toBe(401);
  });
});

/**
 * The history read oldest first is a running balance: each posted movement's balance_after is the
 * previous one plus its amount (the account starts at 0), and the newest equals the balance.
 */
function expectRunningBalance(
  newestFirst: { status: string; amount: string; balance_after: string | null; created_at: string }[],
  balance: string,
) {
  const posted = newestFirst.filter((t) => t.status === 'posted').reverse();
  expect(posted.length).toBeGreaterThan(0);
  let running = 0;
  for (const t of posted) {
    running += Math.round(Number(t.amount) * 100);
    expect(t.balance_after, `balance_after of the movement of ${t.created_at}`).toBe((running / 100).toFixed(2));
    expect(running).toBeGreaterThanOrEqual(0);
  }
  expect(posted.at(-1)!.balance_after).toBe(Number(balance).toFixed(2));
}

describe('listLoyaltyTransactions', () => {
  it('reads as a running balance in time order whose newest balance_after is the wallet balance (demo data)', async () => {
    const demo = await signInDemoCustomer(svc);
    const wallet = await readyWallet(svc, demo);
    const tx = await listTransactions(demo, { page_size: 100 });
    expect(tx.body.has_next).toBe(false);
    // Newest first by time: the redemption of a month ago sits between the receipts around it.
    const times = tx.body.items.map((t: { created_at: string }) => Date.parse(t.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(tx.body.items.findIndex((t: { type: string }) => t.type === 'redemption')).toBeGreaterThan(0);
    expectRunningBalance(tx.body.items, wallet.balance);
    // The other demo account too, straight from the ledger.
    const ops = await svc.deps.db
      .selectFrom('loyalty_ledger_operations')
      .selectAll()
      .where('customer_id', '=', DEMO_LOYALTY_CUSTOMERS.other.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const account = await svc.deps.db
      .selectFrom('loyalty_ledger_accounts')
      .select('balance')
      .where('customer_id', '=', DEMO_LOYALTY_CUSTOMERS.other.id)
      .where('kind', '=', 'bonus')
      .executeTakeFirstOrThrow();
    expectRunningBalance(
      ops.map((o) => ({ status: 'posted', amount: o.amount, balance_after: o.balance_after, created_at: o.created_at.toISOString() })),
      account.balance,
    );
  });

  it("lists the provider's movements newest first with descriptions in the request language", async () => {
    const demo = await signInDemoCustomer(svc);
    await readyWallet(svc, demo);
    const ops = await svc.deps.db
      .selectFrom('loyalty_ledger_operations')
      .selectAll()
      .where('customer_id', '=', 'LC-000001')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
    const en = await svc.client.api.GET('/api/loaylty/wallet/transactions/', {
      params: { query: { page_size: 50 } },
      headers: bearer(demo),
    });
    expect(en.response.status).toBe(200);
    expect(en.data!.count).toBe(ops.length);
    expect(en.data!.items.map((t) => t.id)).toEqual(ops.map((o) => o.id));
    const redemption = en.data!.items.find((t) => t.type === 'redemption')!;
    expect(redemption).toMatchObject({
      status: 'posted',
      amount: '-300.00',
      account_id: 'bonus-000001',
      source: 'provider',
      description: 'Points spent in store Тверская',
      order_id: null,
    });
    const ru = await listTransactions(demo, { page_size: 50 }, 'ru');
    expect(ru.body.items.find((t: { type: string }) => t.type === 'redemption').description).toBe('Списание баллов в магазине Тверская');
    const accrual = ru.body.items.find((t: { type: string }) => t.type === 'accrual');
    expect(accrual.description).toMatch(/^Баллы за покупку в магазине /);
    expect(accrual.purchase_id).toMatch(/^R-000154-/);
  });

  it('is an empty page without a linked wallet, and 401 without a token', async () => {
    const c = await signInCustomer(svc);
    expect((await listTransactions(c)).body).toEqual({ items: [], count: 0, has_next: false });
    expect((await invalid('/api/loaylty/wallet/transactions/?page=0', c)).status).toBe(422);
    expect((await svc.client.invalid('GET', '/api/loaylty/wallet/transactions/')).status).toBe(401);
  });
});

describe('the receipt of a picked online order', () => {
  it('lists the lines as collected: a removed line is absent, a line kept as ordered keeps its order line', async () => {
    const c = await signInCustomer(svc);
    await readyWallet(svc, c);
    const [kept, lost] = await stockedProducts(svc, { weight: false, count: 2 });
    const order = await createConfirmedOrder(svc, {
      customerId: c.customerId,
      lines: [
        { inventoryId: kept!.inventoryId, quantity: '2' },
        { inventoryId: lost!.inventoryId, quantity: '1' },
      ],
    });
    const picker = await createPicker(svc, [STORE!.id]);
    const session = await startPicking(svc, picker, order.orderId);
    const itemOf = (p: { productId: string }) => session.items.find((i) => i.product_id === p.productId)!.item_id;
    const send = async <A extends ItemAction>(itemId: number, action: A, body: ItemBody<A>) =>
      expect((await itemCommand(svc, picker, order.orderId, itemId, action, body)).status).toBe(200);
    await send(itemOf(kept!), 'piece-quantity', { quantity: 2 });
    await send(itemOf(lost!), 'missing', { action: 'remove' });
    await send(itemOf(lost!), 'clarification/resolve', { resolution: 'remove' });
    expect(
      (
        await svc.client.call.POST('/api/picker/orders/{order_id}/finish', {
          params: { path: { order_id: order.orderId } },
          headers: command(picker.auth),
        })
      ).status,
    ).toBe(200);
    const { final_total } = await svc.deps.db
      .selectFrom('orders')
      .select('final_total')
      .where('id', '=', order.orderId)
      .executeTakeFirstOrThrow();
    await completeOrder(svc, order.orderId, final_total!);

    const listing = await listPurchases(c);
    const listed = listing.body.items.find((p: { id: string }) => p.id === order.orderId);
    expect(listed).toMatchObject({ source: 'online', total: final_total, items_count: 1, shop_name: STORE!.name_en });
    // The shop's name follows the caller's language, so a cache must keep the languages apart.
    expect(listing.headers.get('vary')).toMatch(/Accept-Language/i);
    const russian = await listPurchases(c, {}, 'ru');
    expect(russian.body.items.find((p: { id: string }) => p.id === order.orderId)).toMatchObject({ shop_name: STORE!.name_ru });
    const detail = (await readPurchase(c, order.orderId)).body;
    const amount = (Math.round(Number(kept!.unitPrice) * 100) * 2) / 100;
    expect(detail.positions).toEqual([
      expect.objectContaining({ name: kept!.name, quantity: 2, price: kept!.unitPrice, amount: amount.toFixed(2) }),
    ]);
  });
});

describe('accrual of completed orders', () => {
  it('accrues once on the picked total (final_total minus delivery), not the ordered total', async () => {
    const c = await signInCustomer(svc);
    const before = await readyWallet(svc, c); // Bronze: 3%
    // Ordered: 2 pieces + 1.5 kg; picked: the weighed goods came lighter, the total changed.
    const order = await createOrder(svc, {
      customerId: c.customerId,
      lines: [
        { line: pieces[0]!, quantity: '2' },
        { line: weighed[0]!, quantity: '1.500' },
      ],
      deliveryCost: '199.00',
      finalTotal: null,
      status: 'picking',
    });
    const finalTotal = (Number(order.totalPrice) - 57.31).toFixed(2);
    await svc.deps.db.updateTable('orders').set({ status: 'picked', final_total: finalTotal }).where('id', '=', order.id).execute();
    await runLoyaltyWorkerOnce(svc.deps);
    expect(await accrualOf(order.id)).toEqual([]); // picked is not a purchase yet

    await completeOrder(svc, order.id, finalTotal);
    const [first, second] = await Promise.all([runLoyaltyWorkerOnce(svc.deps), runLoyaltyWorkerOnce(svc.deps)]);
    expect(first.accruals + second.accruals).toBe(1);
    await runLoyaltyWorkerOnce(svc.deps);
    const base = (Number(finalTotal) - 199).toFixed(2);
    const points = Math.floor((Math.round(Number(base) * 100) * 300) / 1_000_000);
    expect(points).toBeGreaterThan(0);
    const rows = await accrualOf(order.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      outcome: 'accrued',
      base_amount: base,
      points: `${points}.00`,
      accrual_percent: '3.00',
      tier_label: 'Бронза',
    });
    expect(rows[0]!.provider_operation_id).toMatch(/^op-/);
    // Not on the ordered total:
    expect(Math.floor((Math.round((Number(order.totalPrice) - 199) * 100) * 300) / 1_000_000)).not.toBe(points);

    const ledgerOps = await svc.deps.db.selectFrom('loyalty_ledger_operations').selectAll().where('order_id', '=', order.id).execute();
    expect(ledgerOps).toHaveLength(1);
    expect(ledgerOps[0]).toMatchObject({ type: 'accrual', amount: `${points}.00`, purchase_amount: base });

    const wallet = (await readWallet(c)).body;
    expect(Number(wallet.balance)).toBe(Number(before.balance) + points);
    expect(wallet.loyalty_status).toMatchObject({ last_purchase_points: `${points}.00`, total_turnover: base });

    const purchases = (await listPurchases(c)).body;
    expect(purchases.items[0]).toMatchObject({
      id: order.id,
      source: 'online',
      total: finalTotal,
      bonus_accrual: `${points}.00`,
      items_count: 2,
      shop_name: DEMO_STORES[0]!.name_en,
    });
    const detail = (await readPurchase(c, order.id)).body;
    expect(detail.positions).toHaveLength(2);
    expect(detail.positions[0]).toMatchObject({ name: pieces[0]!.name_en, quantity: 2, price: pieces[0]!.unit_price });
    expect(detail.positions[1]).toMatchObject({ name: weighed[0]!.name_en, quantity: 1 });

    const tx = (await listTransactions(c)).body;
    expect(tx.items[0]).toMatchObject({
      type: 'accrual',
      amount: `${points}.00`,
      order_id: order.id,
      purchase_id: order.id,
      description: `Points for order No. ${order.no}`,
      source: 'provider',
    });
    expectRunningBalance(tx.items, wallet.balance);
  });

  it('gives no points to an order completed without a linked wallet, or with a blocked main card, and none to a cancelled one', async () => {
    const none = await signInCustomer(svc);
    const o1 = await createOrder(svc, {
      customerId: none.customerId,
      lines: [{ line: pieces[1]!, quantity: '3' }],
      finalTotal: null,
      status: 'picking',
    });
    await completeOrder(svc, o1.id, o1.totalPrice);
    const blocked = await signInCustomer(svc);
    await readyWallet(svc, blocked);
    await svc.client.call.POST('/api/loaylty/wallet/block/', { headers: bearer(blocked), body: { reason: 'lost' } });
    const o2 = await createOrder(svc, {
      customerId: blocked.customerId,
      lines: [{ line: pieces[1]!, quantity: '3' }],
      finalTotal: null,
      status: 'picking',
    });
    await completeOrder(svc, o2.id, o2.totalPrice);
    const o3 = await createOrder(svc, {
      customerId: blocked.customerId,
      lines: [{ line: pieces[1]!, quantity: '3' }],
      finalTotal: null,
      status: 'cancelled',
    });
    await runLoyaltyWorkerOnce(svc.deps);
    expect(await accrualOf(o1.id)).toEqual([expect.objectContaining({ outcome: 'no_wallet', points: '0.00', wallet_id: null })]);
    expect(await accrualOf(o2.id)).toEqual([expect.objectContaining({ outcome: 'card_blocked', points: '0.00' })]);
    expect(await accrualOf(o3.id)).toEqual([]);
    expect(
      await svc.deps.db
        .selectFrom('loyalty_jobs')
        .select('id')
        .where('kind', '=', 'accrual')
        .where('payload', '@>', JSON.stringify({ order_id: o2.id }) as never)
        .execute(),
    ).toEqual([]);
  });
});

describe('previewLoyaltyDiscount', () => {
  const body = (lines: { line: StockLine; quantity: string | number }[], store_id?: string | null) => ({
    ...(store_id === undefined ? {} : { store_id }),
    items: lines.map((l) => ({ product_id: l.line.product_id, unit_id: l.line.unit_id, quantity: l.quantity })),
  });
  type Cart = NonNullable<operations['previewLoyaltyDiscount']['requestBody']>['content']['application/json'];
  const preview = (c: { access: string }, b: Cart, headers: Record<string, string> = {}) =>
    svc.client.call.POST('/api/loaylty/discounts/preview/', { headers: { ...bearer(c), ...headers }, body: b });

  it('estimates the points of a cart, equal to what the completed order is granted, and accrues nothing', async () => {
    const demo = await signInDemoCustomer(svc);
    await readyWallet(svc, demo); // Silver: 5%
    const lines = [
      { line: pieces[0]!, quantity: 2 },
      { line: weighed[0]!, quantity: '0.750' },
      { line: pieces[2]!, quantity: '1' },
    ];
    const opsBefore = await svc.deps.db.selectFrom('loyalty_ledger_operations').select('id').execute();
    const r = await preview(demo, body(lines, STORE!.id));
    expect(r.status).toBe(200);
    const p = r.body;
    expect(p).toMatchObject({ store_id: STORE!.id, is_wallet_linked: true, current_tier: 'Серебро', discount_amount: '0.00' });
    const subtotals = lines.map((l) => Math.round((Number(l.quantity) * 1000 * Math.round(Number(l.line.unit_price) * 100)) / 1000));
    expect(p.lines.map((l: { subtotal: string }) => l.subtotal)).toEqual(subtotals.map((k) => (k / 100).toFixed(2)));
    expect(p.lines[1]).toMatchObject({ quantity: '0.750', unit_price: weighed[0]!.unit_price, discount_amount: '0.00' });
    const total = subtotals.reduce((a, b) => a + b, 0);
    expect(p.total).toBe((total / 100).toFixed(2));
    const points = Math.floor((total * 500) / 1_000_000);
    expect(p.points_to_accrue).toBe(String(points));
    expect(p.lines.reduce((s: number, l: { points_to_accrue: string }) => s + Number(l.points_to_accrue), 0)).toBe(points);
    expect(p.applied_discounts).toEqual([
      { code: 'BASE_ACCRUAL', name: 'Серебро: 5% back in points', amount: '0.00', points: String(points) },
    ]);
    expect(await svc.deps.db.selectFrom('loyalty_ledger_operations').select('id').execute()).toHaveLength(opsBefore.length);

    // The same cart as an order, picked without changes and completed: the same points.
    const order = await createOrder(svc, {
      customerId: demo.customerId,
      lines: lines.map((l) => ({ line: l.line, quantity: String(l.quantity) })),
      deliveryCost: '149.00',
      finalTotal: null,
      status: 'picking',
    });
    expect(order.goodsTotal).toBe(p.total);
    await completeOrder(svc, order.id, order.totalPrice);
    await runLoyaltyWorkerOnce(svc.deps);
    expect((await accrualOf(order.id))[0]).toMatchObject({ outcome: 'accrued', points: `${p.points_to_accrue}.00` });
  });

  it('reads product and unit ids in any letter case, as checkout does', async () => {
    const c = await signInCustomer(svc);
    const lower = await preview(c, body([{ line: pieces[0]!, quantity: 1 }], STORE!.id));
    const upper = await preview(c, {
      store_id: STORE!.id,
      items: [{ product_id: pieces[0]!.product_id.toUpperCase(), unit_id: pieces[0]!.unit_id.toUpperCase(), quantity: 1 }],
    });
    expect(upper.status).toBe(200);
    expect(upper.body.total).toBe(lower.body.total);
  });

  it('gives no points without a linked wallet, takes the store from X-Store-Id, and says it varies by store', async () => {
    const c = await signInCustomer(svc);
    const r = await preview(c, body([{ line: pieces[0]!, quantity: 1 }]), { 'x-store-id': STORE!.id, 'accept-language': 'ru' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      is_wallet_linked: false,
      current_tier: null,
      points_to_accrue: '0',
      applied_discounts: [],
      subtotal: pieces[0]!.unit_price,
      total: pieces[0]!.unit_price,
    });
    expect(r.headers.get('vary')).toContain('X-Store-Id');
  });

  it('answers 422 STORE_REQUIRED, STORE_NOT_FOUND and STORE_MISMATCH', async () => {
    const c = await signInCustomer(svc);
    const cart = body([{ line: pieces[0]!, quantity: 1 }]);
    expect((await preview(c, cart)).body.code).toBe('STORE_REQUIRED');
    expect((await preview(c, { ...cart, store_id: randomUUID() })).body.code).toBe('STORE_NOT_FOUND');
    const mismatch = await preview(c, { ...cart, store_id: STORE!.id }, { 'x-store-id': DEMO_STORES[1]!.id });
    expect([mismatch.status, mismatch.body.code]).toEqual([422, 'STORE_MISMATCH']);
  });

  it('answers 422 UNKNOWN_PRODUCT naming the line, QUANTITY_INVALID, and VALIDATION_ERROR', async () => {
    const c = await signInCustomer(svc);
    const unknown = await preview(c, {
      store_id: STORE!.id,
      items: [
        { product_id: pieces[0]!.product_id, unit_id: pieces[0]!.unit_id, quantity: 1 },
        { product_id: randomUUID(), unit_id: pieces[0]!.unit_id, quantity: 1 },
      ],
    });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'UNKNOWN_PRODUCT']);
    expect(unknown.body.detail).toMatch(/^items\[1\]/);
    for (const quantity of ['0.0001', '1.5', '-2', '0.000']) {
      const r = await preview(c, body([{ line: pieces[0]!, quantity }], STORE!.id));
      expect([r.status, r.body.code], quantity).toEqual([422, 'QUANTITY_INVALID']);
    }
    for (const b of [
      { store_id: STORE!.id, items: [] },
      body([{ line: pieces[0]!, quantity: 0 }], STORE!.id),
      { ...body([{ line: pieces[0]!, quantity: 1 }], STORE!.id), coupon: 'X' },
    ]) {
      const r = await svc.client.invalid('POST', '/api/loaylty/discounts/preview/', { headers: bearer(c), body: b });
      expect([r.status, r.body.code]).toEqual([422, 'VALIDATION_ERROR']);
    }
  });

  it('answers 401 without a token', async () => {
    expect((await svc.client.invalid('POST', '/api/loaylty/discounts/preview/', { body: { items: [] } })).status).toBe(401);
  });
});
