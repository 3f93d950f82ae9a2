// Picking rates (domain/picking/rates.ts): items and orders per hour of picking time, per mode
// and for both modes together.
import { describe, expect, it } from 'vitest';
import { addWalkTotals, NO_WALKS, perHour, pickingRate, pickingRates } from '../../domain/picking/rates.js';

describe('picking rates', () => {
  it('writes a count per hour of seconds with 2 decimals, rounded half-up', () => {
    expect(perHour(10, 3600)).toBe('10.00');
    expect(perHour(1, 7200)).toBe('0.50');
    expect(perHour(1, 3)).toBe('1200.00');
    expect(perHour(7, 2400)).toBe('10.50');
    expect(perHour(1, 7)).toBe('514.29'); // 514.2857...
    expect(perHour(1, 1_440_000)).toBe('0.00'); // 0.0025
    expect(perHour(1, 720_000)).toBe('0.01'); // 0.005: a half rounds up
    // 1.005 exactly, which a float holds as 1.00499... (toFixed(2) would write 1.00)
    expect(perHour(67, 240_000)).toBe('1.01');
    expect(perHour(0, 600)).toBe('0.00');
  });

  it('has no rate without picking time', () => {
    expect(perHour(5, 0)).toBeNull();
    expect(pickingRate({ walks_count: 1, orders_count: 1, items_count: 3, picking_seconds: 0 })).toEqual({
      walks_count: 1,
      orders_count: 1,
      items_count: 3,
      picking_seconds: 0,
      items_per_hour: null,
      orders_per_hour: null,
    });
  });

  it('is exact for large counts and long times', () => {
    expect(perHour(1_000_000_000, 3)).toBe('1200000000000.00');
    expect(perHour(123_456_789, 987_654_321)).toBe('450.00'); // 449.9999989...
    expect(perHour(2, 3)).toBe('2400.00');
  });

  it('gives each mode its rates and takes the whole from the summed counts', () => {
    const single = { walks_count: 2, orders_count: 2, items_count: 9, picking_seconds: 1800 };
    const batch = { walks_count: 1, orders_count: 2, items_count: 11, picking_seconds: 1200 };
    expect(pickingRates({ single, batch })).toEqual({
      single: { ...single, items_per_hour: '18.00', orders_per_hour: '4.00' },
      batch: { ...batch, items_per_hour: '33.00', orders_per_hour: '6.00' },
      // 20 items and 4 orders in 3000 s, not the average of the two modes' rates
      all: { walks_count: 3, orders_count: 4, items_count: 20, picking_seconds: 3000, items_per_hour: '24.00', orders_per_hour: '4.80' },
    });
  });

  it('has zero counts and no rates for a mode without walks', () => {
    const single = { walks_count: 1, orders_count: 1, items_count: 4, picking_seconds: 900 };
    const rates = pickingRates({ single });
    expect(rates.batch).toEqual({ ...NO_WALKS, items_per_hour: null, orders_per_hour: null });
    expect(rates.all).toEqual(rates.single);
    expect(pickingRates({}).all).toEqual({ ...NO_WALKS, items_per_hour: null, orders_per_hour: null });
  });

  it('adds walk totals field by field', () => {
    expect(
      addWalkTotals(
        { walks_count: 1, orders_count: 2, items_count: 3, picking_seconds: 4 },
        { walks_count: 10, orders_count: 20, items_count: 30, picking_seconds: 40 },
      ),
    ).toEqual({ walks_count: 11, orders_count: 22, items_count: 33, picking_seconds: 44 });
    expect(addWalkTotals(NO_WALKS, NO_WALKS)).toEqual(NO_WALKS);
  });
});
