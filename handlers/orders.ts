// Handlers of the Orders tag, keyed by operationId: checkout (retry-safe, one transaction), the
// delivery price estimate, the customer's order list, detail and roadmaps, and cancellation.
// Another customer's order is a 404 everywhere: every read and command is scoped to the caller.
import type { OperationId } from '../generated/operations.js';
import {
  findCustomerOrder,
  listCustomerOrders,
  listOrderItems,
  listStatusHistory,
  lockCustomerOrder,
  type OrderRow,
} from '../db/queries/orders.js';
import { findPaidInvoices } from '../db/queries/payments.js';
import type { Executor } from '../db/executor.js';
import { transactionWithGenericPlans } from '../db/generic-plans.js';
import { notFound, unprocessable } from '../services/errors.js';
import { declaredHeader, type HandlerMap, type OperationsWithHeader, type RequestContext, type StepsMap } from '../server/handler-types.js';
import { fingerprintOf, storeRefusal } from '../services/idempotency.js';
import { amountDue } from '../domain/orders/bank-invoice.js';
import { changeViolation, orderInputViolation } from '../domain/orders/checkout.js';
import { estimateDelivery, placeOrder, placeOrderOnce } from '../services/checkout.js';
import { cancelByCustomer } from '../services/order-lifecycle.js';
import { latestPickingResult } from '../services/picking/reads.js';
import {
  historyEntries,
  orderDetailView,
  orderListingView,
  orderRoadmapDetailView,
  orderRoadmapView,
  paymentFacts,
} from '../services/presenters/orders.js';
import { customerIdOf } from './support/principal.js';
import { requireStore } from './support/store.js';

/** A declared header's trimmed value, null when absent or blank. */
function headerOf<N extends string, K extends OperationsWithHeader<N>>(ctx: RequestContext<K>, name: N): string | null {
  const value = declaredHeader(ctx, name)?.trim();
  return value ? value : null;
}

const orderNotFound = () => notFound('No order with this id');

async function orderDetail(db: Executor, o: OrderRow, ctx: Pick<RequestContext<OperationId>, 'lang' | 'deps'>) {
  const [items, picking] = await Promise.all([listOrderItems(db, o.id), latestPickingResult(db, o, ctx.lang)]);
  return orderDetailView(o, items, picking, ctx.lang, ctx.deps.config.orders.trackingRefreshSeconds);
}

export const ordersHandlers = {
  // GET /api/orders/
  listOrders: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const page = ctx.query.page ?? 1;
    const pageSize = ctx.query.page_size ?? 20;
    const active = ctx.query.active ?? null;
    const { rows, count } = await listCustomerOrders(ctx.deps.db, customerId, active, page, pageSize);
    return { status: 200, body: { items: rows.map((r) => orderListingView(r, ctx.lang)), count, has_next: page * pageSize < count } };
  },

  // POST /api/orders/
  createOrder: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const { config, db } = ctx.deps;
    const store = await requireStore(ctx);
    const key = headerOf(ctx, 'idempotency-key');
    if (!key && config.orders.idempotencyKeyRequired) {
      throw unprocessable('IDEMPOTENCY_KEY_REQUIRED', 'Send an Idempotency-Key header (one key per checkout attempt)');
    }
    const violation = orderInputViolation(ctx.body, config.orders.bank.enabled) ?? changeViolation(ctx.body.change);
    if (violation) throw unprocessable(violation.code, violation.detail);

    const request = { customerId, store, body: ctx.body, lang: ctx.lang };
    let orderId: string;
    if (!key) {
      orderId = await transactionWithGenericPlans(db, (trx) => placeOrder(trx, ctx.deps, request));
    } else {
      // Retry-safe (services/idempotency.ts), in fewer round trips: the key is claimed with the read
      // of the delivery zones and with its answer (the order id), committed with the order or not at all.
      const scope = { principal: `customer:${customerId}`, operationId: 'createOrder', key };
      const fingerprint = fingerprintOf(store.id, ctx.body);
      const attempt = { acting: false };
      try {
        const outcome = await transactionWithGenericPlans(db, (trx) =>
          placeOrderOnce(trx, ctx.deps, request, { scope, fingerprint }, attempt),
        );
        if (outcome.replayed) return { status: 201, body: outcome.id, headers: { Location: `/api/orders/${outcome.id}` } };
        orderId = outcome.id;
      } catch (err) {
        // A refusal (409/422) rolled the claim back with the order; it is stored afterwards.
        if (attempt.acting) await storeRefusal(db, scope, fingerprint, err);
        throw err;
      }
    }
    return { status: 201, body: orderId, headers: { Location: `/api/orders/${orderId}` } };
  },

  // POST /api/orders/delivery/price-estimate
  estimateDeliveryPrice: async (ctx) => {
    customerIdOf(ctx);
    const estimate = await estimateDelivery(ctx.deps.db, ctx.deps, headerOf(ctx, 'x-store-id'), ctx.body);
    return { status: 200, body: estimate };
  },

  // GET /api/orders/{order_id}
  getOrder: async (ctx) => {
    const o = await findCustomerOrder(ctx.deps.db, ctx.path.order_id.toLowerCase(), customerIdOf(ctx));
    if (!o) throw orderNotFound();
    return { status: 200, body: await orderDetail(ctx.deps.db, o, ctx) };
  },

  // POST /api/orders/{order_id}/cancel
  cancelOrder: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const orderId = ctx.path.order_id.toLowerCase();
    const detail = await ctx.deps.db.transaction().execute(async (trx) => {
      const o = await lockCustomerOrder(trx, orderId, customerId);
      if (!o) throw orderNotFound();
      await cancelByCustomer(trx, o, ctx.deps.clock.now());
      // The answer is the order as committed by this command.
      return orderDetail(trx, (await findCustomerOrder(trx, orderId, customerId))!, ctx);
    });
    return { status: 200, body: detail };
  },

  // GET /api/orders/roadmap/{order_id}/short
  getOrderRoadmap: async (ctx) => {
    const o = await findCustomerOrder(ctx.deps.db, ctx.path.order_id.toLowerCase(), customerIdOf(ctx));
    if (!o) throw orderNotFound();
    return { status: 200, body: orderRoadmapView(o, ctx.lang) };
  },

  // GET /api/orders/roadmap/{order_id}/detail
  getOrderRoadmapDetail: async (ctx) => {
    const o = await findCustomerOrder(ctx.deps.db, ctx.path.order_id.toLowerCase(), customerIdOf(ctx));
    if (!o) throw orderNotFound();
    const history = historyEntries(await listStatusHistory(ctx.deps.db, o.id));
    // What was paid matters only while a payment is awaited (the order's, or a difference's).
    const paid = o.payment_status === 'awaiting' ? await findPaidInvoices(ctx.deps.db, o.id) : [];
    const due = amountDue(paymentFacts(o), paid);
    return { status: 200, body: orderRoadmapDetailView(o, history, due, ctx.lang, ctx.deps.config.orders.trackingRefreshSeconds) };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const ordersSteps: StepsMap = {
  listOrders: { varyBy: ['Accept-Language'] },
  getOrder: { varyBy: ['Accept-Language'] },
  cancelOrder: { varyBy: ['Accept-Language'] },
  getOrderRoadmap: { varyBy: ['Accept-Language'] },
  getOrderRoadmapDetail: { varyBy: ['Accept-Language'] },
  createOrder: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  estimateDeliveryPrice: { varyBy: ['X-Store-Id'] },
};
