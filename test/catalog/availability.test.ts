// POST /api/catalog/products/check-availability on the fixture catalog (fixture.ts), store A:
// M1 10 pcs, M2 0 pcs, M4 3 pcs with a per-order limit of 2, C1 2.500 kg (also 25 x 100 g),
// S1 stock not reported; store B sells M1 (4 pcs) and B1 (0 pcs).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { loadFixture, P, STORE_A, STORE_B, storeHeaders, unitId } from './fixture.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
let pc: string;
let kg: string;
let g100: string;
beforeAll(async () => {
  svc = await startTestService();
  await loadFixture(svc);
  [pc, kg, g100] = await Promise.all([unitId(svc, 'pc'), unitId(svc, 'kg'), unitId(svc, 'g100')]);
});
afterAll(() => svc?.close());

type Lines = NonNullable<operations['checkProductsAvailability']['requestBody']>['content']['application/json'];
const check = (lines: Lines, headers: Record<string, string> = storeHeaders(STORE_A!.id)) =>
  svc.client.call.POST('/api/catalog/products/check-availability', { headers, body: lines });
/** Deliberately invalid: bodies the schema refuses, too large, or no store. */
const checkInvalid = (body: unknown, headers: Record<string, string> = storeHeaders(STORE_A!.id)) =>
  svc.client.invalid('POST', '/api/catalog/products/check-availability', { headers, body: body as object });

describe('checkProductsAvailability', () => {
  it("answers one verdict per line, in the order sent, following the spec's table", async () => {
    const unknown = randomUUID();
    const r = await check([
      { product_id: P.M1, unit_id: pc, quantity: '2' },
      { product_id: P.M1, unit_id: pc, quantity: 11 },
      { product_id: P.M4, unit_id: pc, quantity: '3' },
      { product_id: P.M4, unit_id: pc, quantity: 2 },
      { product_id: P.M2, unit_id: pc, quantity: 1 },
      { product_id: P.S1, unit_id: pc, quantity: 1 },
      { product_id: P.C1, unit_id: kg, quantity: 0.75 },
      { product_id: P.C1, unit_id: kg, quantity: '2.501' },
      { product_id: P.C1, unit_id: g100, quantity: '25' },
      { product_id: P.C1, unit_id: pc, quantity: 1 },
      { product_id: unknown, unit_id: pc, quantity: 1 },
    ]);
    expect(r.status).toBe(200);
    const verdict = (
      is_available: boolean,
      max_quantity: string,
      requested_quantity: string,
      reason_code: string | null,
      limit = '0.000',
    ) => ({
      is_available,
      max_quantity,
      requested_quantity,
      reason_code,
      user_order_quantity_limit: limit,
      is_user_order_quantity_limit_enabled: limit !== '0.000',
    });
    expect(r.body.map(({ product_id: _p, unit_id: _u, ...v }: Record<string, unknown>) => v)).toEqual([
      verdict(true, '10.000', '2.000', null),
      verdict(false, '10.000', '11.000', 'OUT_OF_STOCK'),
      verdict(false, '2.000', '3.000', 'LIMIT_EXCEEDED', '2.000'),
      verdict(true, '2.000', '2.000', null, '2.000'),
      verdict(false, '0.000', '1.000', 'OUT_OF_STOCK'),
      verdict(false, '0.000', '1.000', 'OUT_OF_STOCK'),
      verdict(true, '2.500', '0.750', null),
      verdict(false, '2.500', '2.501', 'OUT_OF_STOCK'),
      verdict(true, '25.000', '25.000', null),
      verdict(false, '0.000', '1.000', 'NOT_SOLD_IN_STORE'),
      verdict(false, '0.000', '1.000', 'UNKNOWN_PRODUCT'),
    ]);
    expect(r.body[10]).toMatchObject({ product_id: unknown, unit_id: pc });
  });

  it('matches upper-case ids and answers with the ids as sent', async () => {
    const r = await check([{ product_id: P.M1.toUpperCase(), unit_id: pc.toUpperCase(), quantity: '2' }]);
    expect(r.body).toEqual([
      expect.objectContaining({ product_id: P.M1.toUpperCase(), unit_id: pc.toUpperCase(), is_available: true, max_quantity: '10.000' }),
    ]);
  });

  it('uses the stock of the selected store', async () => {
    const r = await check(
      [
        { product_id: P.M1, unit_id: pc, quantity: 5 },
        { product_id: P.B1, unit_id: pc, quantity: 1 },
        { product_id: P.M3, unit_id: pc, quantity: 1 },
      ],
      storeHeaders(STORE_B!.id),
    );
    expect(r.body.map((v: { reason_code: string | null; max_quantity: string }) => [v.reason_code, v.max_quantity])).toEqual([
      ['OUT_OF_STOCK', '4.000'],
      ['OUT_OF_STOCK', '0.000'],
      ['NOT_SOLD_IN_STORE', '0.000'],
    ]);
  });

  it('answers an empty array for no lines', async () => {
    const r = await check([]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([]);
  });

  it('answers 422 INVALID_QUANTITY for a fractional piece quantity, too many decimals or a negative string', async () => {
    for (const [line, quantity] of [
      [P.M1, '1.5'],
      [P.C1, '0.0005'],
      [P.M1, '-1'],
      [P.C1, '0.000'],
    ] as const) {
      const unit = line === P.C1 ? kg : pc;
      const r = await check([
        { product_id: P.M3, unit_id: pc, quantity: 1 },
        { product_id: line, unit_id: unit, quantity },
      ]);
      expect(r.status, quantity).toBe(422);
      expect(r.body.code, quantity).toBe('INVALID_QUANTITY');
      expect(r.body.detail).toMatch(/^Line 2:/);
    }
  });

  it('answers 422 VALIDATION_ERROR for numbers below 0.001, bad ids, unknown fields and more than 100 lines', async () => {
    const bodies: unknown[] = [
      [{ product_id: P.M1, unit_id: pc, quantity: 0 }],
      [{ product_id: P.M1, unit_id: pc, quantity: -2 }],
      [{ product_id: 'milk', unit_id: pc, quantity: 1 }],
      [{ product_id: P.M1, unit_id: pc }],
      [{ product_id: P.M1, unit_id: pc, quantity: 1, note: 'x' }],
      Array.from({ length: 101 }, () => ({ product_id: P.M1, unit_id: pc, quantity: 1 })),
      { product_id: P.M1, unit_id: pc, quantity: 1 },
    ];
    for (const body of bodies) {
      const r = await checkInvalid(body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 400 for a body that is not JSON and 422 without a store', async () => {
    const r = await checkInvalid('[{"product_id":');
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('MALFORMED_JSON');
    expect((await checkInvalid([], {})).body.code).toBe('STORE_REQUIRED');
    const huge = await checkInvalid([{ product_id: P.M1, unit_id: pc, quantity: 'x'.repeat(svc.config.bodyLimitBytes) }]);
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
