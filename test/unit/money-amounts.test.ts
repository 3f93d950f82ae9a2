// Amounts of money (domain/money/money.ts) and the minimum and free-delivery distances of the
// delivery rule (domain/orders/pricing.ts) at their edges.
import { describe, expect, it } from 'vitest';
import { kopecks, lineTotal, money, normalizeMoney } from '../../domain/money/money.js';
import { priceDelivery } from '../../domain/orders/pricing.js';

const zone = { deliveryCost: '199.00', freeAmountThreshold: '3000.00', minOrderAmount: '1000.00' };

describe('amounts of money', () => {
  it('reads amounts as kopecks and refuses anything else, naming it', () => {
    expect(kopecks('135.65')).toBe(13565n);
    expect(kopecks('7')).toBe(700n);
    for (const bad of ['1.234', '1,5', '']) expect(() => kopecks(bad), bad).toThrow(`"${bad}" is not an amount of money`);
  });

  it('writes and normalises amounts with exactly two decimals', () => {
    expect(money(13565n)).toBe('135.65');
    expect(money(5n)).toBe('0.05');
    expect(normalizeMoney('135.6')).toBe('135.60');
    expect(normalizeMoney('135.65')).toBe('135.65');
  });

  it('rounds a line total half up to kopecks', () => {
    expect(lineTotal(500n, 1n)).toBe(1n);
    expect(lineTotal(499n, 1n)).toBe(0n);
  });
});

describe('delivery price distances', () => {
  it('meets the minimum at exactly the minimum, with nothing left to it', () => {
    expect(priceDelivery(kopecks('1000.00'), zone, null)).toMatchObject({ meetsMinimum: true, amountToMinimum: 0n });
    expect(priceDelivery(kopecks('999.99'), zone, null)).toMatchObject({ meetsMinimum: false, amountToMinimum: 1n });
  });

  it('never reports a negative distance once past the minimum or the free threshold', () => {
    expect(priceDelivery(kopecks('3500.00'), zone, null)).toEqual({
      deliveryPrice: 0n,
      minOrderAmount: 100000n,
      meetsMinimum: true,
      amountToMinimum: 0n,
      freeDeliveryThreshold: 300000n,
      amountToFreeDelivery: 0n,
    });
  });
});
