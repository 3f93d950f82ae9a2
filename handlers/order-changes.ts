// Handlers of order changes before picking (tag Orders), keyed by operationId.
import { notImplemented, type HandlerMap, type StepsMap } from '../server/handler-types.js';

export const orderChangeHandlers = {
  // POST /api/orders/{order_id}/items/changes
  changeOrderItems: notImplemented('the order-change use case'),
} satisfies Partial<HandlerMap>;

export const orderChangeSteps: StepsMap = {
  changeOrderItems: { varyBy: ['Accept-Language'] },
};
