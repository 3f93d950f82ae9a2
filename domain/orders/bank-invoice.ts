// Online payment of an order: whether it can be paid now, whether the open invoice is reused or
// a new one is issued, and how long a new invoice lives.
import type { OrderStatus, PaymentStatus, BankInvoiceStatus } from './vocabulary.js';
import { kopecks, money } from '../money/money.js';

export type PayabilityProblem = 'ONLINE_PAYMENT_DISABLED' | 'ORDER_NOT_PAYABLE_ONLINE' | 'ORDER_ALREADY_PAID' | 'ORDER_NOT_PAYABLE';

/** Why the order cannot get an invoice now (409), or null when it can. */
export function payabilityProblem(
  order: { paymentMethod: 'cash' | 'online'; paymentStatus: PaymentStatus; status: OrderStatus; paymentDueAt: Date | null },
  onlinePaymentEnabled: boolean,
  now: Date,
): PayabilityProblem | null {
  if (!onlinePaymentEnabled) return 'ONLINE_PAYMENT_DISABLED';
  if (order.paymentMethod !== 'online') return 'ORDER_NOT_PAYABLE_ONLINE';
  if (order.paymentStatus !== 'awaiting') return order.paymentStatus === 'paid' ? 'ORDER_ALREADY_PAID' : 'ORDER_NOT_PAYABLE';
  if (order.status === 'cancelled' || order.status === 'cancellation_requested') return 'ORDER_NOT_PAYABLE';
  if (order.paymentDueAt !== null && order.paymentDueAt.getTime() <= now.getTime()) return 'ORDER_NOT_PAYABLE';
  return null;
}

export type InvoiceDecision = { action: 'reuse' } | { action: 'issue'; expireOpen: boolean };

/** An open invoice still ahead of its expiry is returned again; otherwise a new one is issued. */
export function decideInvoice(open: { status: BankInvoiceStatus; expiresAt: Date } | null, now: Date): InvoiceDecision {
  if (open && open.status === 'open' && open.expiresAt.getTime() > now.getTime()) return { action: 'reuse' };
  return { action: 'issue', expireOpen: open !== null && open.status === 'open' };
}

/** A new invoice lives `lifetimeMinutes`, but never beyond the order's payment window. */
export function invoiceExpiry(now: Date, lifetimeMinutes: number, paymentDueAt: Date | null): Date {
  const byLifetime = new Date(now.getTime() + lifetimeMinutes * 60_000);
  return paymentDueAt !== null && paymentDueAt.getTime() < byLifetime.getTime() ? paymentDueAt : byLifetime;
}

/**
 * What a new invoice asks for: the order's total (the final one once picked) less what it has
 * been paid - its paid invoices, less what went (or is going) back to the card as differences
 * (`returned`: a change to a smaller order, picking for less) - the whole total before payment,
 * the difference when the order grew (picked, or changed) beyond what was paid.
 */
export function amountToInvoice(total: string, paidInvoices: readonly { amount: string }[], returned = '0.00'): string {
  return money(kopecks(total) - paidInvoices.reduce((sum, i) => sum + kopecks(i.amount), 0n) + kopecks(returned));
}

/**
 * What the order's "Pay" action asks for now (DetailOrderRoadmapSchema.amount_due): the amount
 * of the next invoice while an online order awaits payment and is not cancelled, else null.
 */
export function amountDue(
  order: { paymentMethod: 'cash' | 'online'; paymentStatus: PaymentStatus; status: OrderStatus; total: string },
  paidInvoices: readonly { amount: string }[],
  returned = '0.00',
): string | null {
  if (order.paymentMethod !== 'online' || order.paymentStatus !== 'awaiting') return null;
  if (order.status === 'cancelled' || order.status === 'cancellation_requested') return null;
  return amountToInvoice(order.total, paidInvoices, returned);
}

/**
 * A whole refund of a cancelled order, invoice by invoice (first paid first): each paid amount,
 * less what the bank already returned as picking differences (taken from the first ones);
 * invoices with nothing left to return are skipped.
 */
export function wholeRefunds<I extends { amount: string }>(
  paidInvoices: readonly I[],
  alreadyReturned: string,
): { invoice: I; amount: string }[] {
  let returned = kopecks(alreadyReturned);
  const refunds: { invoice: I; amount: string }[] = [];
  for (const invoice of paidInvoices) {
    const paid = kopecks(invoice.amount);
    const offset = returned < paid ? returned : paid;
    returned -= offset;
    if (paid - offset > 0n) refunds.push({ invoice, amount: money(paid - offset) });
  }
  return refunds;
}
