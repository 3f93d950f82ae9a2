// Handlers of the QA tag, keyed by operationId (TEST only: services/qa.ts, services/payments.ts).
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { otpState } from '../domain/codes/otp.js';
import { settleSandboxInvoice } from '../services/payments.js';
import { orderStatusView } from '../services/presenters/orders.js';
import { lastTestCode, simulateCourierEvent } from '../services/qa.js';
import { customerIdOf } from './support/principal.js';

export const qaHandlers = {
  // GET /api/qa/otp/last
  getLastOtpCode: async (ctx) => {
    const { config } = ctx.deps;
    const code = await lastTestCode(ctx.deps, ctx.query.phone, ctx.query.purpose);
    return {
      status: 200,
      body: {
        phone: ctx.query.phone,
        code: code.plain_code,
        purpose: code.purpose,
        state: otpState(code, config.auth.otpMaxAttempts, ctx.deps.clock.now()),
        sent_at: code.created_at.toISOString(),
        expires_at: code.expires_at.toISOString(),
        attempts_left: Math.max(0, config.auth.otpMaxAttempts - code.attempts),
      },
    };
  },

  // POST /api/qa/orders/{order_id}/delivery-tracking: the courier simulator.
  simulateDeliveryTracking: async (ctx) => {
    const delivery = await simulateCourierEvent(ctx.deps, customerIdOf(ctx), ctx.path.order_id.toLowerCase(), ctx.body, ctx.lang);
    return { status: 200, body: delivery! };
  },

  // POST /api/qa/payments/bank/{order_id}/settle: the sandbox bank's notification.
  settleSandboxBankInvoice: async (ctx) => {
    const { invoice, order } = await settleSandboxInvoice(ctx.deps, customerIdOf(ctx), ctx.path.order_id.toLowerCase(), ctx.body.outcome);
    return {
      status: 200,
      body: {
        invoice_id: invoice.id,
        order_id: invoice.order_id,
        // What settleInvoice just closed it as (under the order's lock, so nothing else did).
        status: ctx.body.outcome,
        amount: invoice.amount,
        currency: invoice.currency,
        link: invoice.link,
        created_at: invoice.created_at.toISOString(),
        expires_at: invoice.expires_at.toISOString(),
        settled_at: invoice.settled_at ? invoice.settled_at.toISOString() : null,
        order_status: orderStatusView(order, ctx.lang),
        payment_status: order.payment_status,
      },
    };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const qaSteps: StepsMap = {
  simulateDeliveryTracking: { varyBy: ['Accept-Language'] },
  settleSandboxBankInvoice: { varyBy: ['Accept-Language'] },
};
