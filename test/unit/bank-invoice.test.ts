// Online payment rules: who may pay, invoice reuse, invoice lifetime; and the retry schedule.
import { describe, expect, it } from 'vitest';
import {
  amountDue,
  amountToInvoice,
  decideInvoice,
  invoiceExpiry,
  payabilityProblem,
  wholeRefunds,
} from '../../domain/orders/bank-invoice.js';
import { afterFailure, retryDelaySeconds } from '../../domain/time/retry-schedule.js';

const now = new Date('2025-03-14T07:30:00Z');
const order = (over: Partial<Parameters<typeof payabilityProblem>[0]> = {}) => ({
  paymentMethod: 'online' as const,
  paymentStatus: 'awaiting' as const,
  status: 'created' as const,
  paymentDueAt: new Date('2025-03-14T08:00:00Z'),
  ...over,
});

describe('payabilityProblem', () => {
  it('lets an unpaid online order inside its window be paid', () => {
    expect(payabilityProblem(order(), true, now)).toBeNull();
    expect(payabilityProblem(order({ status: 'awaiting_payment' }), true, now)).toBeNull();
  });

  it('names why not', () => {
    expect(payabilityProblem(order(), false, now)).toBe('ONLINE_PAYMENT_DISABLED');
    expect(payabilityProblem(order({ paymentMethod: 'cash', paymentStatus: 'not_required' }), true, now)).toBe('ORDER_NOT_PAYABLE_ONLINE');
    expect(payabilityProblem(order({ paymentStatus: 'paid', status: 'confirmed' }), true, now)).toBe('ORDER_ALREADY_PAID');
    expect(payabilityProblem(order({ status: 'cancelled' }), true, now)).toBe('ORDER_NOT_PAYABLE');
    expect(payabilityProblem(order({ paymentDueAt: now }), true, now)).toBe('ORDER_NOT_PAYABLE');
  });
});

describe('decideInvoice and invoiceExpiry', () => {
  it('reuses an open invoice ahead of its expiry, replaces an expired one', () => {
    expect(decideInvoice(null, now)).toEqual({ action: 'issue', expireOpen: false });
    expect(decideInvoice({ status: 'open', expiresAt: new Date(now.getTime() + 1000) }, now)).toEqual({ action: 'reuse' });
    expect(decideInvoice({ status: 'open', expiresAt: now }, now)).toEqual({ action: 'issue', expireOpen: true });
  });

  it('never lets an invoice outlive the payment window', () => {
    expect(invoiceExpiry(now, 15, new Date('2025-03-14T08:00:00Z'))).toEqual(new Date('2025-03-14T07:45:00Z'));
    expect(invoiceExpiry(now, 15, new Date('2025-03-14T07:40:00Z'))).toEqual(new Date('2025-03-14T07:40:00Z'));
  });
});

describe('retry schedule', () => {
  it('doubles from the base delay up to an hour, then gives up after the last attempt', () => {
    expect([1, 2, 3, 4].map((n) => retryDelaySeconds(n, 5))).toEqual([5, 10, 20, 40]);
    expect(retryDelaySeconds(40, 5)).toBe(3600);
    expect(afterFailure(2, 3, 5)).toEqual({ retry: true, delaySeconds: 10 });
    expect(afterFailure(3, 3, 5)).toEqual({ retry: false });
  });
});

describe('amounts of invoices and refunds', () => {
  it('invoices the total before payment, and only the difference after picking for more', () => {
    expect(amountToInvoice('1733.50', [])).toBe('1733.50');
    expect(amountToInvoice('1833.40', [{ amount: '1733.50' }])).toBe('99.90');
  });
  it('asks the Pay action for what an online order awaiting payment owes, else nothing', () => {
    const o = { paymentMethod: 'online' as const, paymentStatus: 'awaiting' as const, status: 'picked' as const, total: '1833.40' };
    expect(amountDue(o, [{ amount: '1733.50' }])).toBe('99.90');
    expect(amountDue({ ...o, status: 'awaiting_payment' }, [])).toBe('1833.40');
    expect(amountDue({ ...o, paymentStatus: 'paid' }, [{ amount: '1833.40' }])).toBeNull();
    expect(amountDue({ ...o, status: 'cancelled' }, [])).toBeNull();
    expect(amountDue({ ...o, status: 'cancellation_requested' }, [])).toBeNull();
    expect(amountDue({ ...o, paymentMethod: 'cash', paymentStatus: 'not_required' }, [])).toBeNull();
  });
  it('refunds every paid invoice, less the differences already returned, first paid first', () => {
    const paid = [
      { id: 'a', amount: '1733.50' },
      { id: 'b', amount: '99.90' },
    ];
    expect(wholeRefunds(paid, '0.00')).toEqual([
      { invoice: paid[0], amount: '1733.50' },
      { invoice: paid[1], amount: '99.90' },
    ]);
    expect(wholeRefunds(paid.slice(0, 1), '300.00')).toEqual([{ invoice: paid[0], amount: '1433.50' }]);
    // What was returned beyond the first invoice comes off the next; nothing left is no refund.
    expect(
      wholeRefunds(
        [
          { id: 'a', amount: '100.00' },
          { id: 'b', amount: '50.00' },
        ],
        '120.00',
      ),
    ).toEqual([{ invoice: { id: 'b', amount: '50.00' }, amount: '30.00' }]);
    expect(wholeRefunds(paid.slice(0, 1), '1733.50')).toEqual([]);
  });
});
