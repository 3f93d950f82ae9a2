import { describe, expect, it } from 'vitest';
import { decideAvailability, parseRequestedQuantity } from '../../domain/catalog/availability.js';

const stock = (s: string | null, limit: string | null = null) => ({ stock: s, orderQuantityLimit: limit });
const PIECE = { kind: 'piece' as const, ratio: '1.000' };
const KG = { kind: 'weight' as const, ratio: '1.000' };
const G100 = { kind: 'weight' as const, ratio: '0.100' };

describe('requested quantity', () => {
  it('reads quantities in thousandths', () => {
    expect(parseRequestedQuantity('2', PIECE)).toEqual({ ok: true, thousandths: 2000n });
    expect(parseRequestedQuantity(0.75, KG)).toEqual({ ok: true, thousandths: 750n });
    expect(parseRequestedQuantity(' 1.250 ', KG)).toEqual({ ok: true, thousandths: 1250n });
    expect(parseRequestedQuantity('0.001', null)).toEqual({ ok: true, thousandths: 1n });
  });

  it('names the broken rule', () => {
    expect(parseRequestedQuantity('1.5', PIECE)).toEqual({ ok: false, problem: 'fractional_pieces' });
    expect(parseRequestedQuantity('0.0005', KG)).toEqual({ ok: false, problem: 'too_many_decimals' });
    expect(parseRequestedQuantity('0', KG)).toEqual({ ok: false, problem: 'below_minimum' });
    expect(parseRequestedQuantity('-3', PIECE)).toEqual({ ok: false, problem: 'below_minimum' });
    expect(parseRequestedQuantity('1e2', PIECE)).toEqual({ ok: false, problem: 'not_a_decimal' });
    expect(parseRequestedQuantity(1e21, PIECE)).toEqual({ ok: false, problem: 'not_a_decimal' });
  });

  it('takes units of 100 g in whole grams: a scale weighs grams, and the picked line is kept in kg', () => {
    expect(parseRequestedQuantity('2.55', G100)).toEqual({ ok: true, thousandths: 2550n });
    expect(parseRequestedQuantity('2.555', G100)).toEqual({ ok: false, problem: 'fractional_grams' });
    expect(parseRequestedQuantity('0.004', G100)).toEqual({ ok: false, problem: 'fractional_grams' });
    expect(parseRequestedQuantity('0.255', KG)).toEqual({ ok: true, thousandths: 255n });
  });
});

describe('availability verdict', () => {
  it('follows the table of the spec, first match wins', () => {
    expect(decideAvailability(1000n, false, null)).toMatchObject({
      is_available: false,
      max_quantity: '0.000',
      reason_code: 'UNKNOWN_PRODUCT',
    });
    expect(decideAvailability(1000n, true, null)).toMatchObject({
      is_available: false,
      max_quantity: '0.000',
      reason_code: 'NOT_SOLD_IN_STORE',
    });
    expect(decideAvailability(3000n, true, stock('10.000', '2.000'))).toMatchObject({
      is_available: false,
      max_quantity: '2.000',
      reason_code: 'LIMIT_EXCEEDED',
    });
    expect(decideAvailability(11000n, true, stock('10.000'))).toMatchObject({
      is_available: false,
      max_quantity: '10.000',
      reason_code: 'OUT_OF_STOCK',
    });
    expect(decideAvailability(1n, true, stock(null))).toMatchObject({
      is_available: false,
      max_quantity: '0.000',
      reason_code: 'OUT_OF_STOCK',
    });
    expect(decideAvailability(2500n, true, stock('2.500'))).toMatchObject({ is_available: true, max_quantity: '2.500', reason_code: null });
  });

  it('reports a limit at or above the stock as out of stock, not as the limit', () => {
    // The limit (5) does not bind below the stock (3): asking 4 is a stock problem.
    expect(decideAvailability(4000n, true, stock('3.000', '5.000'))).toMatchObject({
      max_quantity: '3.000',
      reason_code: 'OUT_OF_STOCK',
      is_user_order_quantity_limit_enabled: true,
      user_order_quantity_limit: '5.000',
    });
    expect(decideAvailability(3000n, true, stock('3.000', '3.000'))).toMatchObject({ is_available: true, max_quantity: '3.000' });
  });

  it('echoes the requested quantity with three decimals and the limit fields', () => {
    expect(decideAvailability(2000n, true, stock('14.000'))).toEqual({
      is_available: true,
      max_quantity: '14.000',
      is_user_order_quantity_limit_enabled: false,
      user_order_quantity_limit: '0.000',
      requested_quantity: '2.000',
      reason_code: null,
    });
  });
});
