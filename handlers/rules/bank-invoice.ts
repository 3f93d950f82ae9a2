// Online payment of an order: whether it can be paid now, whether the open invoice is reused or
// a new one is issued, and how long a new invoice lives.
import type { OrderStatus, PaymentStatus } from '../../db/tables/orders.js';
import type { BankInvoiceStatus } from '../../db/tables/payments.js';

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
