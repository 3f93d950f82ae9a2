// Handlers of the Payments tag, keyed by operationId: online payment settings, and the invoice
// of an order - the open one, or a new one issued at the bank. Payment itself is the bank's word
// (its notification; in TEST the sandbox's QA operation), never the client's.
import { randomUUID } from 'node:crypto';
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { recordOrderChange } from '../db/queries/order-events.js';
import { lockCustomerOrder, setOrderStatus } from '../db/queries/orders.js';
import { findOpenInvoice, findPaidInvoices, insertInvoice } from '../db/queries/payments.js';
import { badGateway, conflict, notFound } from '../services/errors.js';
import { BankRefusedError, BankUnavailableError } from '../platform/providers/bank/index.js';
import { amountToInvoice, decideInvoice, invoiceExpiry, payabilityProblem, type PayabilityProblem } from '../domain/orders/bank-invoice.js';
import { invoiceDescription, onlinePaymentDisabledMessage } from '../domain/texts/orders.js';
import { withdrawInvoice } from '../services/order-lifecycle.js';
import { payableTotal } from '../services/presenters/orders.js';
import { customerIdOf } from './support/principal.js';

const PROBLEMS: Record<PayabilityProblem, string> = {
  ONLINE_PAYMENT_DISABLED: 'Online payment is not available now',
  ORDER_NOT_PAYABLE_ONLINE: 'This order is paid in cash on handover',
  ORDER_ALREADY_PAID: 'This order is already paid',
  ORDER_NOT_PAYABLE: 'This order can no longer be paid (cancelled, or its payment window is over)',
};

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
    const customerId = customerIdOf(ctx);
    const orderId = ctx.path.order_id.toLowerCase();
    const { config, db } = ctx.deps;
    const invoice = await db.transaction().execute(async (trx) => {
      // The order row lock serializes concurrent calls: the second one finds the first one's invoice.
      const o = await lockCustomerOrder(trx, orderId, customerId);
      if (!o) throw notFound('No order with this id');
      const now = ctx.deps.clock.now();
      const problem = payabilityProblem(
        { paymentMethod: o.payment_method, paymentStatus: o.payment_status, status: o.status, paymentDueAt: o.payment_due_at },
        config.orders.bank.enabled,
        now,
      );
      if (problem) throw conflict(problem, PROBLEMS[problem]);

      const open = await findOpenInvoice(trx, o.id);
      const decision = decideInvoice(open ? { status: open.status, expiresAt: open.expires_at } : null, now);
      if (decision.action === 'reuse') return open!;
      if (decision.expireOpen) await withdrawInvoice(trx, o.id, open!, 'expired');

      const invoiceId = randomUUID();
      const expiresAt = invoiceExpiry(now, config.orders.bank.invoiceLifetimeMinutes, o.payment_due_at);
      // The total before payment; after picking for more than was paid, the difference.
      const paid = await findPaidInvoices(trx, o.id);
      const amount = amountToInvoice(payableTotal(o), paid);
      const ofDifference = paid.length > 0;
      let issued;
      try {
        issued = await ctx.deps.bank.issueInvoice({
          invoiceId,
          orderId: o.id,
          orderNo: o.no,
          amount,
          currency: config.orders.bank.currency,
          expiresAt,
          returnUrl: config.orders.bank.returnUrl,
          description: invoiceDescription(o.no, ofDifference, ctx.lang),
        });
      } catch (err) {
        if (err instanceof BankUnavailableError || err instanceof BankRefusedError) {
          throw badGateway('BANK_PROVIDER_ERROR', 'The bank could not issue the invoice; retry shortly');
        }
        throw err;
      }
      const row = await insertInvoice(trx, {
        id: invoiceId,
        order_id: o.id,
        provider: ctx.deps.bank.name,
        provider_ref: issued.providerRef,
        amount,
        currency: config.orders.bank.currency,
        link: issued.link,
        expires_at: expiresAt,
      });
      if (o.status === 'created') {
        await setOrderStatus(trx, o.id, 'awaiting_payment');
        await recordOrderChange(trx, o.id, ['status', 'payment'], { now: ctx.deps.clock.now() });
      }
      return row;
    });
    return {
      status: 200,
      body: { link: invoice.link, expires_at: invoice.expires_at.toISOString() },
      headers: { 'Cache-Control': 'no-store' },
    };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const paymentsSteps: StepsMap = {
  getBankPreferences: { varyBy: ['Accept-Language'] },
  getBankInvoice: { noStore: true },
};
