// Paying an order online: the invoice of an order - the open one, or a new one issued at the
// bank. Payment itself is the bank's word (its notification; in TEST the sandbox's QA
// operation), never the client's.
import { randomUUID } from 'node:crypto';
import { recordOrderChange } from '../db/queries/order-events.js';
import { findCustomerOrder, lockCustomerOrder, setOrderStatus } from '../db/queries/orders.js';
import { findInvoice, findOpenInvoice, findPaidInvoices, insertInvoice, type InvoiceRow } from '../db/queries/payments.js';
import { amountToInvoice, decideInvoice, invoiceExpiry, payabilityProblem, type PayabilityProblem } from '../domain/orders/bank-invoice.js';
import { invoiceDescription, type Lang } from '../domain/texts/orders.js';
import { BankRefusedError, BankUnavailableError } from '../platform/providers/bank/index.js';
import type { AppDeps } from './deps.js';
import { badGateway, conflict, notFound } from './errors.js';
import { settleInvoice, withdrawInvoice } from './order-lifecycle.js';
import { payableTotal } from './presenters/orders.js';
import { onlyInTest } from './qa.js';

const PROBLEMS: Record<PayabilityProblem, string> = {
  ONLINE_PAYMENT_DISABLED: 'Online payment is not available now',
  ORDER_NOT_PAYABLE_ONLINE: 'This order is paid in cash on handover',
  ORDER_ALREADY_PAID: 'This order is already paid',
  ORDER_NOT_PAYABLE: 'This order can no longer be paid (cancelled, or its payment window is over)',
};

/** The customer's invoice for the order: the open one, else one issued now (a read with effects). */
export async function invoiceForOrder(
  deps: Pick<AppDeps, 'db' | 'config' | 'clock' | 'bank'>,
  customerId: string,
  orderId: string,
  lang: Lang,
): Promise<InvoiceRow> {
  return deps.db.transaction().execute(async (trx) => {
    // The order row lock serializes concurrent calls: the second one finds the first one's invoice.
    const o = await lockCustomerOrder(trx, orderId, customerId);
    if (!o) throw notFound('No order with this id');
    const now = deps.clock.now();
    const problem = payabilityProblem(
      { paymentMethod: o.payment_method, paymentStatus: o.payment_status, status: o.status, paymentDueAt: o.payment_due_at },
      deps.config.orders.bank.enabled,
      now,
    );
    if (problem) throw conflict(problem, PROBLEMS[problem]);

    const open = await findOpenInvoice(trx, o.id);
    const decision = decideInvoice(open ? { status: open.status, expiresAt: open.expires_at } : null, now);
    if (decision.action === 'reuse') return open!;
    if (decision.expireOpen) await withdrawInvoice(trx, o.id, open!, 'expired');

    const invoiceId = randomUUID();
    const expiresAt = invoiceExpiry(now, deps.config.orders.bank.invoiceLifetimeMinutes, o.payment_due_at);
    // The total before payment; after picking for more than was paid, the difference.
    const paid = await findPaidInvoices(trx, o.id);
    const amount = amountToInvoice(payableTotal(o), paid);
    const ofDifference = paid.length > 0;
    let issued;
    try {
      issued = await deps.bank.issueInvoice({
        invoiceId,
        orderId: o.id,
        orderNo: o.no,
        amount,
        currency: deps.config.orders.bank.currency,
        expiresAt,
        returnUrl: deps.config.orders.bank.returnUrl,
        description: invoiceDescription(o.no, ofDifference, lang),
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
      provider: deps.bank.name,
      provider_ref: issued.providerRef,
      amount,
      currency: deps.config.orders.bank.currency,
      link: issued.link,
      expires_at: expiresAt,
    });
    if (o.status === 'created') {
      await setOrderStatus(trx, o.id, 'awaiting_payment');
      await recordOrderChange(trx, o.id, ['status', 'payment'], { now: deps.clock.now() });
    }
    return row;
  });
}

/**
 * The sandbox bank's notification (TEST only): settles the order's open sandbox invoice as
 * `outcome`, answering the invoice and the order as committed.
 */
export async function settleSandboxInvoice(
  deps: Pick<AppDeps, 'db' | 'config' | 'clock'>,
  customerId: string,
  orderId: string,
  outcome: Parameters<typeof settleInvoice>[3],
) {
  onlyInTest(deps);
  return deps.db.transaction().execute(async (trx) => {
    const o = await lockCustomerOrder(trx, orderId, customerId);
    if (!o) throw notFound('No order with this id');
    const open = await findOpenInvoice(trx, o.id);
    // Only the sandbox settles its own invoices; a real bank's invoice is that bank's to settle.
    if (!open || open.provider !== 'sandbox' || open.expires_at.getTime() <= deps.clock.nowMs()) {
      throw conflict('NO_OPEN_INVOICE', 'The order has no open sandbox invoice; GET its invoice first');
    }
    await settleInvoice(trx, o, open.id, outcome, deps.clock.now());
    const [invoice, after] = await Promise.all([findInvoice(trx, open.id), findCustomerOrder(trx, orderId, customerId)]);
    return { invoice: invoice!, order: after! };
  });
}
