// Paying an order online: the invoice of an order - the open one, or a new one issued at the
// bank. Payment itself is the bank's word (its notification; in TEST the sandbox's QA
// operation), never the client's.
import { randomUUID } from 'node:crypto';
import { recordOrderChange } from '../db/queries/order-events.js';
import { findCustomerOrder, lockCustomerOrder, setOrderStatus, type OrderRow } from '../db/queries/orders.js';
import {
  differencesReturned,
  findInvoice,
  findOpenInvoice,
  findPaidInvoices,
  insertInvoice,
  type InvoiceRow,
} from '../db/queries/payments.js';
import type { Executor } from '../db/executor.js';
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

    // The total before payment; after picking (or a change) for more than was paid, the difference.
    const paid = await findPaidInvoices(trx, o.id);
    const amount = amountToInvoice(payableTotal(o), paid, paid.length ? await differencesReturned(trx, o.id) : '0.00');
    let row: InvoiceRow;
    try {
      row = await issueInvoice(trx, deps, o, { amount, ofDifference: paid.length > 0, now, lang });
    } catch (err) {
      if (err instanceof BankUnavailableError || err instanceof BankRefusedError) {
        throw badGateway('BANK_PROVIDER_ERROR', 'The bank could not issue the invoice; retry shortly');
      }
      throw err;
    }
    if (o.status === 'created') {
      await setOrderStatus(trx, o.id, 'awaiting_payment');
      await recordOrderChange(trx, o.id, ['status', 'payment'], { now: deps.clock.now() });
    }
    return row;
  });
}

/**
 * Issues a new invoice of the locked order at the bank for `amount` and records it open (the
 * order's status is the caller's). Throws the bank's BankUnavailableError or BankRefusedError.
 */
export async function issueInvoice(
  trx: Executor,
  deps: Pick<AppDeps, 'config' | 'bank'>,
  o: Pick<OrderRow, 'id' | 'no' | 'payment_due_at'>,
  request: { amount: string; ofDifference: boolean; now: Date; lang: Lang },
): Promise<InvoiceRow> {
  const invoiceId = randomUUID();
  const expiresAt = invoiceExpiry(request.now, deps.config.orders.bank.invoiceLifetimeMinutes, o.payment_due_at);
  const issued = await deps.bank.issueInvoice({
    invoiceId,
    orderId: o.id,
    orderNo: o.no,
    amount: request.amount,
    currency: deps.config.orders.bank.currency,
    expiresAt,
    returnUrl: deps.config.orders.bank.returnUrl,
    description: invoiceDescription(o.no, request.ofDifference, request.lang),
  });
  return insertInvoice(trx, {
    id: invoiceId,
    order_id: o.id,
    provider: deps.bank.name,
    provider_ref: issued.providerRef,
    amount: request.amount,
    currency: deps.config.orders.bank.currency,
    link: issued.link,
    expires_at: expiresAt,
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
