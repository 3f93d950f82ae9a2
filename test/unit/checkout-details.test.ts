// Checkout's request rules as the client reads them (domain/orders/checkout.ts): each violation's
// code with its detail, the cases each rule lets through, and the detail of a refused line.
import { describe, expect, it } from 'vitest';
import {
  changeViolation,
  deliveryModeOf,
  duplicateLine,
  judgeLines,
  orderInputViolation,
  unsoldLines,
} from '../../domain/orders/checkout.js';

const P = '2f6c1f34-58b2-4a4e-8d1c-0e5b7f9d2a61';
const U = '9a4d3c1b-7e2f-4b8a-a1c3-5d6e7f8a9b0c';
const line = (quantity: string | number, product = P, unit = U) => ({ product_id: product, unit_id: unit, quantity });
const delivery = {
  type: 'delivery' as const,
  payment_method: 'cash' as const,
  items: [line('1')],
  delivery_context: { slot_id: 'slot', is_express: false },
};
const pickup = { type: 'pickup' as const, payment_method: 'cash' as const, items: [line('1')], pickup_context: { slot_id: 's' } };
const piece = { kind: 'piece' as const, ratio: '1.000' };
const sold = (stock: string | null, limit: string | null = null) => ({
  productExists: true,
  unit: piece,
  inventory: { stock, orderQuantityLimit: limit },
});

describe('order request violations and their details', () => {
  it('explains each broken rule', () => {
    expect(orderInputViolation({ ...delivery, delivery_context: null }, true)).toEqual({
      code: 'DELIVERY_CONTEXT_REQUIRED',
      detail: 'A delivery order needs delivery_context and no pickup_context',
    });
    expect(orderInputViolation({ ...pickup, pickup_context: null }, true)).toEqual({
      code: 'PICKUP_CONTEXT_REQUIRED',
      detail: 'A pickup order needs pickup_context and no delivery_context',
    });
    expect(orderInputViolation({ ...delivery, payment_method: 'online', change: 5000 }, true)).toEqual({
      code: 'CHANGE_NOT_ALLOWED',
      detail: 'change is only for cash orders',
    });
    expect(orderInputViolation({ ...pickup, payment_method: 'online' }, false)).toEqual({
      code: 'ONLINE_PAYMENT_DISABLED',
      detail: 'Online payment is not available now; choose cash',
    });
  });

  it('refuses a pickup order that also carries a delivery context', () => {
    expect(orderInputViolation({ ...pickup, delivery_context: { slot_id: 'slot' } }, true)?.code).toBe('PICKUP_CONTEXT_REQUIRED');
  });

  it('takes change only with cash, and no change (null) with any payment', () => {
    expect(orderInputViolation({ ...delivery, change: '5000' }, true)).toBeNull();
    expect(orderInputViolation({ ...delivery, payment_method: 'online', change: null }, true)).toBeNull();
    expect(orderInputViolation({ ...pickup, payment_method: 'online', change: undefined }, true)).toBeNull();
  });

  it('lets cash orders through while online payment is off', () => {
    expect(orderInputViolation(delivery, false)).toBeNull();
    expect(orderInputViolation(pickup, false)).toBeNull();
  });

  it('explains an impossible delivery mode by what was sent', () => {
    expect(deliveryModeOf({ is_express: true, slot_id: 'slot' }, true)).toEqual({
      code: 'DELIVERY_MODE_INVALID',
      detail: 'An express delivery has no slot: send slot_id null',
    });
    expect(deliveryModeOf({ slot_id: null }, false)).toEqual({
      code: 'DELIVERY_MODE_INVALID',
      detail: 'Choose a delivery slot (slot_id) or express delivery (is_express true)',
    });
  });
});

describe('duplicate lines', () => {
  it('names the line that repeats an earlier product and unit, ignoring case', () => {
    const other = 'b1e3a9c7-0000-4000-8000-000000000001';
    expect(duplicateLine([line(1), line(1, other), line(2, P, U.toUpperCase())])).toEqual({
      code: 'DUPLICATE_ITEM',
      detail: 'Line 3 repeats a product and unit of an earlier line; merge them',
    });
  });

  it('accepts the same product in another unit and other products in the same unit', () => {
    const other = 'b1e3a9c7-0000-4000-8000-000000000001';
    expect(duplicateLine([line(1), line(1, P, other), line(1, other)])).toBeNull();
  });
});

describe('the change banknote', () => {
  it('accepts amounts from 0.01 up, read from text with blanks around', () => {
    expect(changeViolation('0.01')).toBeNull();
    expect(changeViolation(' 5000 ')).toBeNull();
    expect(changeViolation(null)).toBeNull();
    expect(changeViolation(undefined)).toBeNull();
  });

  it('explains a refused amount', () => {
    expect(changeViolation('0.00')).toEqual({
      code: 'INVALID_CHANGE',
      detail: 'change must be an amount from 0.01 to 1000000.00 with at most 2 decimals',
    });
    expect(changeViolation(' ')?.code).toBe('INVALID_CHANGE');
  });
});

describe('line verdict details', () => {
  it('names the line and the quantity that breaks its unit rule', () => {
    expect(judgeLines([line('1'), line('1.5', 'b')], [sold('5.000'), sold('5.000')])).toEqual({
      ok: false,
      code: 'INVALID_QUANTITY',
      detail: 'Line 2: quantity "1.5" must be a whole number for a piece unit',
    });
  });

  it('counts the failing lines and lists their reasons in order', () => {
    const verdict = judgeLines(
      [line('1', 'a'), line('9', 'b'), line('3', 'c')],
      [{ productExists: false, unit: null, inventory: null }, sold('10.000', '5.000'), sold('2.000')],
    );
    expect(verdict).toMatchObject({ detail: '3 line(s) cannot be ordered: UNKNOWN_PRODUCT, LIMIT_EXCEEDED, OUT_OF_STOCK' });
  });

  it('reports a line not sold in the store with nothing available', () => {
    expect(unsoldLines([line(2, 'a')], [2000n], [{ productExists: true, unit: piece, inventory: null }])).toEqual([
      { product_id: 'a', unit_id: U, requested_quantity: '2.000', available_quantity: '0.000', reason_code: 'NOT_SOLD_IN_STORE' },
    ]);
  });
});
