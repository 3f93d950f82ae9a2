// The customer's orders: checkout (retry-safe under an Idempotency-Key), the list, the detail and
// roadmaps, and cancellation. Another customer's order is not found: every read and command is
// scoped to the caller.
import { transactionWithGenericPlans } from '../db/generic-plans.js';
import type { Executor } from '../db/executor.js';
import {
  findCustomerOrder,
  listCustomerOrders,
  listOrderItems,
  listStatusHistory,
  lockCustomerOrder,
  type OrderRow,
} from '../db/queries/orders.js';
import { latestItemApprovals, productNames } from '../db/queries/order-changes.js';
import { differencesReturned, findPaidInvoices } from '../db/queries/payments.js';
import { amountDue } from '../domain/orders/bank-invoice.js';
import { changeViolation, orderInputViolation } from '../domain/orders/checkout.js';
import { replacementShapeProblem } from '../domain/orders/replacement.js';
import type { Lang } from '../domain/texts/orders.js';
import { placeOrder, placeOrderOnce, type CheckoutRequest } from './checkout.js';
import type { AppDeps } from './deps.js';
import { notFound, unprocessable } from './errors.js';
import { fingerprintOf, storeRefusal } from './idempotency.js';
import { cancelByCustomer } from './order-lifecycle.js';
import { latestPickingResult } from './picking/reads.js';
import {
  historyEntries,
  orderDetailView,
  orderListingView,
  orderRoadmapDetailView,
  orderRoadmapView,
  paymentFacts,
} from './presenters/orders.js';

const orderNotFound = () => notFound('No order with this id');

/**
 * Places the customer's order and returns its id. With an Idempotency-Key the attempt is
 * retry-safe (services/idempotency.ts) in fewer round trips: the key is claimed with the read of
 * the delivery zones and with its answer (the order id), committed with the order or not at all;
 * a refusal (409/422) rolls the claim back with the order and is stored afterwards.
 */
export async function createOrder(
  deps: AppDeps,
  request: CheckoutRequest,
  idempotencyKey: string | null,
): Promise<{ id: string; replayed: boolean }> {
  const { config, db } = deps;
  if (!idempotencyKey && config.orders.idempotencyKeyRequired) {
    throw unprocessable('IDEMPOTENCY_KEY_REQUIRED', 'Send an Idempotency-Key header (one key per checkout attempt)');
  }
  const violation = orderInputViolation(request.body, config.orders.bank.enabled) ?? changeViolation(request.body.change);
  if (violation) throw unprocessable(violation.code, violation.detail);
  for (const [i, item] of request.body.items.entries()) {
    const problem = replacementShapeProblem(item.replacement);
    if (problem) throw unprocessable('REPLACEMENT_PREFERENCE_INVALID', `Line ${i + 1}: ${problem}`);
  }
  if (!idempotencyKey) return { id: await transactionWithGenericPlans(db, (trx) => placeOrder(trx, deps, request)), replayed: false };

  const scope = { principal: `customer:${request.customerId}`, operationId: 'createOrder', key: idempotencyKey };
  const fingerprint = fingerprintOf(request.store.id, request.body);
  const attempt = { acting: false };
  try {
    return await transactionWithGenericPlans(db, (trx) => placeOrderOnce(trx, deps, request, { scope, fingerprint }, attempt));
  } catch (err) {
    if (attempt.acting) await storeRefusal(db, scope, fingerprint, err);
    throw err;
  }
}

/**
 * The order's detail (OrderDetailSchema) as `db` sees it: its lines with their preferences and
 * latest approvals, and the picking result. Beside the lines, one query for the approvals (only
 * once a picker started the order: approvals come from picking) and one for the names of the
 * products the preferences name (only when some line names any).
 */
export async function orderDetailOf(db: Executor, deps: Pick<AppDeps, 'config'>, o: OrderRow, lang: Lang) {
  const [items, picking, approvals] = await Promise.all([
    listOrderItems(db, o.id),
    latestPickingResult(db, o, lang),
    o.picking_started ? latestItemApprovals(db, o.id) : [],
  ]);
  const names = await productNames(db, [...new Set(items.flatMap((i) => i.replacement_product_ids))]);
  const extras = { approvals: new Map(approvals.map((a) => [a.order_item_id, a])), names };
  return orderDetailView(o, items, picking, lang, deps.config.orders.trackingRefreshSeconds, extras);
}

async function customerOrder(db: Executor, orderId: string, customerId: string): Promise<OrderRow> {
  const o = await findCustomerOrder(db, orderId.toLowerCase(), customerId);
  if (!o) throw orderNotFound();
  return o;
}

export interface OrderListRequest {
  customerId: string;
  active: boolean | null;
  page: number;
  pageSize: number;
  lang: Lang;
}

/** A page of the customer's orders, newest first. */
export async function listOrders(deps: Pick<AppDeps, 'db'>, r: OrderListRequest) {
  const { rows, count } = await listCustomerOrders(deps.db, r.customerId, r.active, r.page, r.pageSize);
  return { items: rows.map((row) => orderListingView(row, r.lang)), count, has_next: r.page * r.pageSize < count };
}

/** One of the customer's orders with its lines and picking result. */
export async function orderDetail(deps: Pick<AppDeps, 'db' | 'config'>, customerId: string, orderId: string, lang: Lang) {
  return orderDetailOf(deps.db, deps, await customerOrder(deps.db, orderId, customerId), lang);
}

/** Cancels the customer's order when its state allows; the answer is the order as committed. */
export async function cancelOrder(deps: Pick<AppDeps, 'db' | 'config' | 'clock'>, customerId: string, orderId: string, lang: Lang) {
  const id = orderId.toLowerCase();
  return deps.db.transaction().execute(async (trx) => {
    const o = await lockCustomerOrder(trx, id, customerId);
    if (!o) throw orderNotFound();
    await cancelByCustomer(trx, o, deps.clock.now());
    return orderDetailOf(trx, deps, (await findCustomerOrder(trx, id, customerId))!, lang);
  });
}

/** The short roadmap of the customer's order. */
export async function orderRoadmap(deps: Pick<AppDeps, 'db'>, customerId: string, orderId: string, lang: Lang) {
  return orderRoadmapView(await customerOrder(deps.db, orderId, customerId), lang);
}

/** The detailed roadmap: the status history and what is still owed. */
export async function orderRoadmapDetail(deps: Pick<AppDeps, 'db' | 'config'>, customerId: string, orderId: string, lang: Lang) {
  const o = await customerOrder(deps.db, orderId, customerId);
  const history = historyEntries(await listStatusHistory(deps.db, o.id));
  // What was paid matters only while a payment is awaited (the order's, or a difference's).
  const paid = o.payment_status === 'awaiting' ? await findPaidInvoices(deps.db, o.id) : [];
  const due = amountDue(paymentFacts(o), paid, paid.length ? await differencesReturned(deps.db, o.id) : '0.00');
  return orderRoadmapDetailView(o, history, due, lang, deps.config.orders.trackingRefreshSeconds);
}
