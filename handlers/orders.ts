// Handlers of the Orders tag, keyed by operationId: checkout (retry-safe, one transaction), the
// delivery price estimate, the customer's order list, detail and roadmaps, and cancellation.
// Another customer's order is a 404 everywhere: every read and command is scoped to the caller.
import { declaredHeader, type HandlerMap, type OperationsWithHeader, type RequestContext, type StepsMap } from '../server/handler-types.js';
import { estimateDelivery } from '../services/checkout.js';
import { cancelOrder, createOrder, listOrders, orderDetail, orderRoadmap, orderRoadmapDetail } from '../services/orders.js';
import { customerIdOf } from './support/principal.js';
import { requireStore } from './support/store.js';

/** A declared header's trimmed value, null when absent or blank. */
function headerOf<N extends string, K extends OperationsWithHeader<N>>(ctx: RequestContext<K>, name: N): string | null {
  const value = declaredHeader(ctx, name)?.trim();
  return value ? value : null;
}

export const ordersHandlers = {
  // GET /api/orders/
  listOrders: async (ctx) => {
    const q = ctx.query;
    const page = await listOrders(ctx.deps, {
      customerId: customerIdOf(ctx),
      active: q.active ?? null,
      page: q.page ?? 1,
      pageSize: q.page_size ?? 20,
      lang: ctx.lang,
    });
    return { status: 200, body: page };
  },

  // POST /api/orders/
  createOrder: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const store = await requireStore(ctx);
    const order = await createOrder(ctx.deps, { customerId, store, body: ctx.body, lang: ctx.lang }, headerOf(ctx, 'idempotency-key'));
    return { status: 201, body: order.id, headers: { Location: `/api/orders/${order.id}` } };
  },

  // POST /api/orders/delivery/price-estimate
  estimateDeliveryPrice: async (ctx) => {
    customerIdOf(ctx);
    const estimate = await estimateDelivery(ctx.deps.db, ctx.deps, headerOf(ctx, 'x-store-id'), ctx.body);
    return { status: 200, body: estimate };
  },

  // GET /api/orders/{order_id}
  getOrder: async (ctx) => ({ status: 200, body: await orderDetail(ctx.deps, customerIdOf(ctx), ctx.path.order_id, ctx.lang) }),

  // POST /api/orders/{order_id}/cancel
  cancelOrder: async (ctx) => ({ status: 200, body: await cancelOrder(ctx.deps, customerIdOf(ctx), ctx.path.order_id, ctx.lang) }),

  // GET /api/orders/roadmap/{order_id}/short
  getOrderRoadmap: async (ctx) => ({ status: 200, body: await orderRoadmap(ctx.deps, customerIdOf(ctx), ctx.path.order_id, ctx.lang) }),

  // GET /api/orders/roadmap/{order_id}/detail
  getOrderRoadmapDetail: async (ctx) => ({
    status: 200,
    body: await orderRoadmapDetail(ctx.deps, customerIdOf(ctx), ctx.path.order_id, ctx.lang),
  }),
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
