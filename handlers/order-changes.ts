// Handlers of order changes before picking (tag Orders), keyed by operationId.
import { declaredHeader, type HandlerMap, type StepsMap } from '../server/handler-types.js';
import { changeOrderItems } from '../services/order-changes.js';
import { customerIdOf } from './support/principal.js';

export const orderChangeHandlers = {
  // POST /api/orders/{order_id}/items/changes
  changeOrderItems: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const key = declaredHeader(ctx, 'idempotency-key')?.trim();
    const order = await changeOrderItems(ctx.deps, {
      customerId,
      orderId: ctx.path.order_id,
      idempotencyKey: key ? key : null,
      // Required by the contract, which has checked it is an integer from 1.
      expectedVersion: Number(declaredHeader(ctx, 'x-expected-version')),
      body: ctx.body,
      lang: ctx.lang,
    });
    return { status: 200, body: order };
  },
} satisfies Partial<HandlerMap>;

export const orderChangeSteps: StepsMap = {
  changeOrderItems: { varyBy: ['Accept-Language'] },
};
