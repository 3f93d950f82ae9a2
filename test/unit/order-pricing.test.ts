// Exact prices: line totals in kopecks and the delivery rule of checkout and the estimate.
import { describe, expect, it } from 'vitest';
import { priceDelivery } from '../../domain/orders/pricing.js';
import { kopecks, lineTotal, money, pricePerKg } from '../../domain/money/money.js';

const zone = { deliveryCost: '199.00', freeAmountThreshold: '3000.00', minOrderAmount: '1000.00' };

describe('line totals', () => {
  it('multiplies exactly and rounds half up to kopecks', () => {
    expect(money(lineTotal(930n, kopecks('249.00')))).toBe('231.57');
    expect(money(lineTotal(3000n, kopecks('89.90')))).toBe('269.70');
    // 0.005 kopeck -> up: 1.001 x 0.05 = 0.05005
    expect(money(lineTotal(1001n, kopecks('0.05')))).toBe('0.05');
    expect(money(lineTotal(1500n, kopecks('0.01')))).toBe('0.02');
  });
});

describe('priceDelivery', () => {
  it('charges the zone cost below the free threshold and nothing from it', () => {
    expect(priceDelivery(kopecks('2999.99'), zone, null)).toMatchObject({
      deliveryPrice: kopecks('199.00'),
      amountToFreeDelivery: kopecks('0.01'),
      meetsMinimum: true,
    });
    expect(priceDelivery(kopecks('3000.00'), zone, null)).toMatchObject({ deliveryPrice: 0n, amountToFreeDelivery: 0n });
  });

  it('charges express its own cost whatever the total, with no free threshold', () => {
    expect(priceDelivery(kopecks('5000.00'), zone, { cost: '299.00' })).toMatchObject({
      deliveryPrice: kopecks('299.00'),
      freeDeliveryThreshold: null,
      amountToFreeDelivery: null,
    });
  });

  it('reports how far the cart is from the minimum', () => {
    expect(priceDelivery(kopecks('640.00'), zone, null)).toMatchObject({
      meetsMinimum: false,
      amountToMinimum: kopecks('360.00'),
      minOrderAmount: kopecks('1000.00'),
    });
  });
});

describe('pricePerKg', () => {
  it('divides the price by the kilograms it is for, rounding half up to kopecks', () => {
    expect(pricePerKg('50.00', '0.100')).toBe(50000n);
    expect(pricePerKg('100.00', '1')).toBe(10000n);
    expect(pricePerKg('10.00', '0.300')).toBe(3333n);
    expect(pricePerKg('0.05', '0.300')).toBe(17n);
  });

  it('refuses a ratio that is no positive weight, by name', () => {
    for (const ratio of ['0', '0.000', '-0.100', 'x', '0.0001'])
      expect(() => pricePerKg('10.00', ratio)).toThrow(`"${ratio}" is not a positive weight in kg`);
  });
});
