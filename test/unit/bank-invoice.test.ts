// Online payment rules: who may pay, invoice reuse, invoice lifetime; and the retry schedule.
import { describe, expect, it } from 'vitest';
import { decideInvoice, invoiceExpiry, payabilityProblem } from '../../handlers/rules/bank-invoice.js';
import { afterFailure, retryDelaySeconds } from '../../handlers/rules/retry.js';

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
