// Shared helpers of the loyalty tests: sign-in of the demo customer, wallets made ready through
// the API and the worker, and a factory of orders written straight into the orders tables (the
// loyalty worker only reads them, whatever code wrote them).
import { sql } from 'kysely';
import { startSession } from '../../services/sessions.js';
import { DEMO_CUSTOMER } from '../../db/seed/accounts.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { TokenService } from '../../platform/tokens.js';
import { runLoyaltyWorkerOnce } from '../../server/jobs/loyalty-worker.js';
import type { TestService } from '../support/service.js';

export const STORE = DEMO_STORES[0];

/** A session of the seeded demo customer (whose loyalty history is in the local ledger). */
export async function signInDemoCustomer(svc: TestService) {
  const pair = await startSession(
    svc.deps.db,
    new TokenService(svc.config.jwt),
    { kind: 'customer', customerId: DEMO_CUSTOMER.id },
    svc.deps.clock.now(),
  );
  return { customerId: DEMO_CUSTOMER.id, phone: DEMO_CUSTOMER.phone, ...pair, auth: { authorization: `Bearer ${pair.access}` } };
}

export const bearer = (c: { access: string }, lang?: 'ru' | 'en') => ({
  authorization: `Bearer ${c.access}`,
  ...(lang ? { 'accept-language': lang } : {}),
});

/** POST create/ then one worker pass: the wallet provisioned by the configured provider. */
export async function readyWallet(svc: TestService, c: { access: string }) {
  const created = await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
  if (created.status !== 200) throw new Error(`create answered ${created.status}`);
  await runLoyaltyWorkerOnce(svc.deps);
  const wallet = await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) });
  if (wallet.body.status !== 'ready') throw new Error(`wallet is ${wallet.body.status}: ${JSON.stringify(wallet.body.last_error)}`);
  return wallet.body;
}

export interface StockLine {
  product_id: string;
  unit_id: string;
  unit_price: string;
  name_ru: string;
  name_en: string;
  kind: 'piece' | 'weight';
}

/** Products the store sells in piece (or weight) units, with their shelf prices. */
export async function storeLines(svc: TestService, kind: 'piece' | 'weight', count: number, storeId = STORE!.id): Promise<StockLine[]> {
  const { rows } = await sql<StockLine>`
    SELECT i.product_id::text, i.unit_id::text, i.unit_price, p.name_ru, p.name_en, u.kind
    FROM inventories i JOIN products p ON p.id = i.product_id JOIN measurement_units u ON u.id = i.unit_id
    WHERE i.store_id = ${storeId} AND p.is_active AND u.kind = ${kind}
    ORDER BY p.code, i.unit_id LIMIT ${count}`.execute(svc.deps.db);
  if (rows.length < count) throw new Error(`the demo store sells fewer than ${count} ${kind} products`);
  return rows;
}

export interface OrderSpec {
  customerId: string;
  lines: { line: StockLine; quantity: string }[];
  deliveryCost?: string;
  /** The picked total including delivery; null: not picked yet. */
  finalTotal: string | null;
  status: 'created' | 'picking' | 'picked' | 'en_route' | 'completed' | 'cancelled';
  storeId?: string;
}

const kop = (v: string) => Math.round(Number(v) * 100);
const rub = (k: number) => (k / 100).toFixed(2);

/**
 * An order with its lines, as checkout and picking leave it: line totals at shelf prices (half-up
 * to kopecks), goods and ordered totals, and for a completed order its completion time.
 */
export async function createOrder(
  svc: TestService,
  spec: OrderSpec,
): Promise<{ id: string; no: number; goodsTotal: string; totalPrice: string }> {
  const lineTotals = spec.lines.map((l) => Math.round((Number(l.quantity) * 1000 * kop(l.line.unit_price)) / 1000));
  const goods = lineTotals.reduce((a, b) => a + b, 0);
  const delivery = kop(spec.deliveryCost ?? '0.00');
  const order = await svc.deps.db
    .insertInto('orders')
    .values({
      customer_id: spec.customerId,
      store_id: spec.storeId ?? STORE!.id,
      type: 'delivery',
      payment_method: 'cash',
      status: spec.status,
      status_comment: null,
      payment_status: 'not_required',
      comment: null,
      change_amount: null,
      address_line: 'Moscow, Tverskaya St, 7',
      delivery_lon: 37.61,
      delivery_lat: 55.76,
      entrance: null,
      floor: null,
      apartment: null,
      intercom: null,
      courier_comment: null,
      delivery_zone_id: null,
      slot_id: null,
      slot_date: null,
      slot_start: null,
      slot_end: null,
      goods_total: rub(goods),
      delivery_cost: rub(delivery),
      total_price: rub(goods + delivery),
      final_total: spec.finalTotal,
      items_count: spec.lines.length,
      picking_completed_at: spec.finalTotal === null ? null : new Date(),
      created_at: new Date(Date.now() - 3600_000),
      updated_at: new Date(),
      completed_at: spec.status === 'completed' ? new Date() : null,
      cancelled_at: spec.status === 'cancelled' ? new Date() : null,
      cancellation_reason: null,
    })
    .returning(['id', 'no'])
    .executeTakeFirstOrThrow();
  await svc.deps.db
    .insertInto('order_items')
    .values(
      spec.lines.map((l, i) => ({
        order_id: order.id,
        line_no: i + 1,
        product_id: l.line.product_id,
        unit_id: l.line.unit_id,
        inventory_id: null,
        name_ru: l.line.name_ru,
        name_en: l.line.name_en,
        unit_name_ru: l.line.kind === 'piece' ? 'шт' : 'кг',
        unit_name_en: l.line.kind === 'piece' ? 'pcs' : 'kg',
        image: null,
        barcode: null,
        plu_code: null,
        weight_based: l.line.kind === 'weight',
        quantity: l.quantity,
        unit_price: l.line.unit_price,
        old_price: null,
        line_total: rub(lineTotals[i]!),
      })),
    )
    .execute();
  return { id: order.id, no: order.no, goodsTotal: rub(goods), totalPrice: rub(goods + delivery) };
}

/** Moves an order to `completed` the way the order code does (status and completion time). */
export async function completeOrder(svc: TestService, orderId: string, finalTotal: string): Promise<void> {
  await svc.deps.db
    .updateTable('orders')
    .set({ status: 'completed', final_total: finalTotal, completed_at: new Date(), updated_at: new Date() })
    .where('id', '=', orderId)
    .execute();
}
