// Online payment at its edges (domain/orders/bank-invoice.ts): refunded and pending-cancellation
// orders, a payment window without end, invoices that are no longer open, and refunds of a
// difference as large as a whole invoice.
import { describe, expect, it } from 'vitest';
import { amountDue, decideInvoice, invoiceExpiry, payabilityProblem, wholeRefunds } from '../../domain/orders/bank-invoice.js';

const now = new Date('2025-03-14T07:30:00Z');
const order = (over: Partial<Parameters<typeof payabilityProblem>[0]> = {}) => ({
  paymentMethod: 'online' as const,
  paymentStatus: 'awaiting' as const,
  status: 'created' as const,
  paymentDueAt: new Date('2025-03-14T08:00:00Z'),
  ...over,
});

describe('payabilityProblem at the edges', () => {
  it('refuses an order no longer awaiting payment, unless paid, as not payable', () => {
    expect(payabilityProblem(order({ paymentStatus: 'refunded' }), true, now)).toBe('ORDER_NOT_PAYABLE');
  });

  it('refuses an order whose cancellation is requested', () => {
    expect(payabilityProblem(order({ status: 'cancellation_requested' }), true, now)).toBe('ORDER_NOT_PAYABLE');
  });

  it('lets an order without a payment deadline be paid', () => {
    expect(payabilityProblem(order({ paymentDueAt: null }), true, now)).toBeNull();
  });
});

describe('invoices at the edges', () => {
  it('issues a new invoice, expiring nothing, when the last one is no longer open', () => {
    const later = new Date(now.getTime() + 60_000);
    expect(decideInvoice({ status: 'paid', expiresAt: later }, now)).toEqual({ action: 'issue', expireOpen: false });
    expect(decideInvoice({ status: 'expired', expiresAt: now }, now)).toEqual({ action: 'issue', expireOpen: false });
  });

  it('lives its whole lifetime without a payment window, and ends with a window ending at the same time', () => {
    expect(invoiceExpiry(now, 15, null)).toEqual(new Date('2025-03-14T07:45:00Z'));
    expect(invoiceExpiry(now, 15, new Date('2025-03-14T07:45:00Z'))).toEqual(new Date('2025-03-14T07:45:00Z'));
  });

  it('asks nothing of a cash order or a paid one', () => {
    const o = { paymentMethod: 'online' as const, paymentStatus: 'awaiting' as const, status: 'created' as const, total: '500.00' };
    expect(amountDue(o, [])).toBe('500.00');
    expect(amountDue({ ...o, paymentMethod: 'cash' }, [])).toBeNull();
    expect(amountDue({ ...o, paymentStatus: 'paid' }, [])).toBeNull();
  });

  it('skips an invoice the differences already returned in full', () => {
    const invoices = [
      { id: 1, amount: '300.00' },
      { id: 2, amount: '200.00' },
    ];
    expect(wholeRefunds(invoices, '300.00')).toEqual([{ invoice: invoices[1], amount: '200.00' }]);
    expect(wholeRefunds(invoices, '0')).toEqual([
      { invoice: invoices[0], amount: '300.00' },
      { invoice: invoices[1], amount: '200.00' },
    ]);
  });
});
