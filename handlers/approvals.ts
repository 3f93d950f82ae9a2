// Handlers of the customer's approvals of pickers' proposals (tag Orders), keyed by operationId.
import { notImplemented, type HandlerMap, type StepsMap } from '../server/handler-types.js';

export const approvalHandlers = {
  // POST /api/orders/{order_id}/approvals/{approval_id}/decision
  decideItemApproval: notImplemented('the approval use case'),
} satisfies Partial<HandlerMap>;

export const approvalSteps: StepsMap = {
  decideItemApproval: { varyBy: ['Accept-Language'] },
};
