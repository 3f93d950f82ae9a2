// Handlers of the Payments tag, keyed by operationId: online payment settings, and the invoice
// of an order (services/payments.ts).
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { onlinePaymentDisabledMessage } from '../domain/texts/orders.js';
import { invoiceForOrder } from '../services/payments.js';
import { customerIdOf } from './support/principal.js';

export const paymentsHandlers = {
  // GET /api/payments/bank/preferences
  getBankPreferences: async (ctx) => {
    customerIdOf(ctx);
    const bank = ctx.deps.config.orders.bank;
    return {
      status: 200,
      body: {
        enabled: bank.enabled,
        currency: bank.currency,
        payment_window_minutes: bank.paymentWindowMinutes,
        invoice_lifetime_minutes: bank.invoiceLifetimeMinutes,
        return_url: bank.returnUrl,
        disabled_message: bank.enabled ? null : onlinePaymentDisabledMessage(ctx.lang),
      },
    };
  },

  // GET /api/payments/bank/{order_id}/invoice - a read with effects: it may issue an invoice.
  getBankInvoice: async (ctx) => {
    const invoice = await invoiceForOrder(ctx.deps, customerIdOf(ctx), ctx.path.order_id.toLowerCase(), ctx.lang);
    return { status: 200, body: { link: invoice.link, expires_at: invoice.expires_at.toISOString() } };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const paymentsSteps: StepsMap = {
  getBankPreferences: { varyBy: ['Accept-Language'] },
  getBankInvoice: { noStore: true },
};
