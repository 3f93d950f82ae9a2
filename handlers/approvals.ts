// Handlers of the customer's answers to pickers' proposals (tag Orders), keyed by operationId.
import { declaredHeader, type HandlerMap, type StepsMap } from '../server/handler-types.js';
import { decideApproval } from '../services/picking/approvals.js';
import { customerIdOf } from './support/principal.js';

export const approvalHandlers = {
  // POST /api/orders/{order_id}/approvals/{approval_id}/decision
  decideItemApproval: async (ctx) =>
    decideApproval(ctx.deps, {
      customerId: customerIdOf(ctx),
      orderId: ctx.path.order_id,
      // Path parameters arrive as text; the contract has already checked this one is an integer >= 1.
      approvalId: Number(ctx.path.approval_id),
      decision: ctx.body.decision,
      lang: ctx.lang,
      idempotencyKey: declaredHeader(ctx, 'idempotency-key')?.trim() || null,
    }),
} satisfies Partial<HandlerMap>;

export const approvalSteps: StepsMap = {
  decideItemApproval: { varyBy: ['Accept-Language'] },
};
