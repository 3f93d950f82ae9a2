// Checkout's request rules and its verdict on the lines.
import { describe, expect, it } from 'vitest';
import { changeViolation, deliveryModeOf, judgeLines, orderInputViolation, unsoldLines } from '../../domain/orders/checkout.js';

const P = '2f6c1f34-58b2-4a4e-8d1c-0e5b7f9d2a61';
const U = '9a4d3c1b-7e2f-4b8a-a1c3-5d6e7f8a9b0c';
const line = (quantity: string | number, product = P) => ({ product_id: product, unit_id: U, quantity });
const base = {
  type: 'delivery' as const,
  payment_method: 'cash' as const,
  items: [line('1')],
  delivery_context: { slot_id: 'slot', is_express: false },
};

describe('orderInputViolation', () => {
  it('accepts a consistent request', () => {
    expect(orderInputViolation(base, true)).toBeNull();
    expect(
      orderInputViolation({ type: 'pickup', payment_method: 'online', items: [line(1)], pickup_context: { slot_id: 's' } }, true),
    ).toBeNull();
  });

  it('names the broken rule with its code', () => {
    expect(orderInputViolation({ ...base, delivery_context: null }, true)?.code).toBe('DELIVERY_CONTEXT_REQUIRED');
    expect(orderInputViolation({ ...base, pickup_context: { slot_id: 's' } }, true)?.code).toBe('DELIVERY_CONTEXT_REQUIRED');
    expect(orderInputViolation({ ...base, type: 'pickup' }, true)?.code).toBe('PICKUP_CONTEXT_REQUIRED');
    expect(orderInputViolation({ ...base, payment_method: 'online', change: '5000' }, true)?.code).toBe('CHANGE_NOT_ALLOWED');
    expect(orderInputViolation({ ...base, payment_method: 'online' }, false)?.code).toBe('ONLINE_PAYMENT_DISABLED');
    expect(orderInputViolation({ ...base, items: [line(1), { ...line(2), product_id: P.toUpperCase() }] }, true)?.code).toBe(
      'DUPLICATE_ITEM',
    );
    expect(orderInputViolation({ ...base, delivery_context: { slot_id: 'slot', is_express: true } }, true)?.code).toBe(
      'DELIVERY_MODE_INVALID',
    );
    expect(orderInputViolation({ ...base, delivery_context: { slot_id: null, is_express: false } }, true)?.code).toBe(
      'DELIVERY_MODE_INVALID',
    );
  });

  it('checks the change banknote', () => {
    expect(changeViolation('5000')).toBeNull();
    expect(changeViolation(2000.5)).toBeNull();
    expect(changeViolation('0')?.code).toBe('INVALID_CHANGE');
    expect(changeViolation('-5')?.code).toBe('INVALID_CHANGE');
    expect(changeViolation('10.001')?.code).toBe('INVALID_CHANGE');
    expect(changeViolation('1000000.00')).toBeNull();
    expect(changeViolation('1000000.01')?.code).toBe('INVALID_CHANGE');
  });
});

describe('deliveryModeOf', () => {
  it('tells express from scheduled, and allows no slot only for the estimate', () => {
    expect(deliveryModeOf({ is_express: true }, false)).toBe('express');
    expect(deliveryModeOf({ slot_id: 'x' }, false)).toBe('scheduled');
    expect(deliveryModeOf({}, true)).toBe('standard_without_slot');
    expect(deliveryModeOf({}, false)).toMatchObject({ code: 'DELIVERY_MODE_INVALID' });
  });
});

describe('judgeLines', () => {
  const sold = (stock: string | null, limit: string | null = null) => ({
    productExists: true,
    unit: { kind: 'piece' as const, ratio: '1.000' },
    inventory: { stock, orderQuantityLimit: limit },
  });

  it('passes lines that can be ordered, with their quantities', () => {
    expect(judgeLines([line('2'), line(1, 'b')], [sold('5.000'), sold('1.000')])).toEqual({ ok: true, quantities: [2000n, 1000n] });
  });

  it('refuses a quantity against the unit before anything else (INVALID_QUANTITY)', () => {
    expect(judgeLines([line('1.5')], [sold('0.000')])).toMatchObject({ ok: false, code: 'INVALID_QUANTITY' });
  });

  it('lists every failing line and picks the code by precedence', () => {
    const verdict = judgeLines(
      [line('1', 'a'), line('9', 'b'), line('3', 'c')],
      [{ productExists: false, unit: null, inventory: null }, sold('10.000', '5.000'), sold('2.000')],
    );
    expect(verdict).toMatchObject({ ok: false, code: 'OUT_OF_STOCK' });
    if (verdict.ok || !('lines' in verdict)) throw new Error('unreachable');
    expect(verdict.lines.map((l) => [l.product_id, l.reason_code, l.available_quantity])).toEqual([
      ['a', 'UNKNOWN_PRODUCT', '0.000'],
      ['b', 'LIMIT_EXCEEDED', '5.000'],
      ['c', 'OUT_OF_STOCK', '2.000'],
    ]);
    expect(judgeLines([line('9', 'b')], [sold('10.000', '5.000')])).toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(judgeLines([line('1')], [{ productExists: true, unit: { kind: 'piece', ratio: '1.000' }, inventory: null }])).toMatchObject({
      code: 'ITEM_UNAVAILABLE',
    });
  });

  it('finds the lines not sold in the store for the estimate', () => {
    const lines = unsoldLines(
      [line(1, 'a'), line(1, 'b'), line(1, 'c')],
      [1000n, 1000n, 1000n],
      [
        { productExists: false, unit: null, inventory: null },
        { productExists: true, unit: { kind: 'piece', ratio: '1.000' }, inventory: null },
        sold(null),
      ],
    );
    expect(lines.map((l) => [l.product_id, l.reason_code])).toEqual([
      ['a', 'UNKNOWN_PRODUCT'],
      ['b', 'NOT_SOLD_IN_STORE'],
    ]);
  });
});
