// normalizeDecimal's fast path (domain/money/decimal.ts): a value already in the exact form
// formatDecimal gives is returned as it is without the bigint round trip; anything else is re-read,
// re-scaled, or refused.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { minBigint, normalizeDecimal } from '../../domain/money/decimal.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** normalizeDecimal's answer, and whether it converted the value through BigInt to get it. */
function normalized(value: string, scale: number): { text: string; roundTrip: boolean } {
  const bigint = vi.spyOn(globalThis, 'BigInt');
  try {
    return { text: normalizeDecimal(value, scale), roundTrip: bigint.mock.calls.length > 0 };
  } finally {
    bigint.mockRestore();
  }
}

describe('normalizeDecimal', () => {
  it('returns values already in their exact form without a bigint round trip, at every scale', () => {
    const exact: Array<[string, number]> = [
      ['0', 0],
      ['7', 0],
      ['-7', 0],
      ['1234', 0],
      ['-1234', 0],
      ['0.5', 1],
      ['7.0', 1],
      ['-12.5', 1],
      ['123.4', 1],
      ['135.65', 2],
      ['-135.65', 2],
      ['0.05', 2],
      ['5.25', 2],
      ['99999999999.99', 2],
      ['0.930', 3],
      ['12.345', 3],
      ['1.250', 3],
      ['1234.567', 3],
      ['-12.345', 3],
    ];
    for (const [value, scale] of exact) expect(normalized(value, scale), `${value} @${scale}`).toEqual({ text: value, roundTrip: false });
  });

  it('re-reads values with leading zeros, whatever the scale', () => {
    expect(normalized('007', 0)).toEqual({ text: '7', roundTrip: true });
    expect(normalized('00.5', 1)).toEqual({ text: '0.5', roundTrip: true });
    expect(normalized('05.5', 1)).toEqual({ text: '5.5', roundTrip: true });
    expect(normalized('012.34', 2)).toEqual({ text: '12.34', roundTrip: true });
    expect(normalized('00.930', 3)).toEqual({ text: '0.930', roundTrip: true });
    expect(normalized('012.345', 3)).toEqual({ text: '12.345', roundTrip: true });
  });

  it('re-scales values read at another scale, including scales past the fast path', () => {
    expect(normalizeDecimal('1.5', 4)).toBe('1.5000');
    expect(normalizeDecimal('-0.25', 5)).toBe('-0.25000');
  });

  it('refuses text that only looks like a decimal in part, naming the value and the scale', () => {
    const cases: Array<[string, number]> = [
      ['x1.5', 1],
      ['1a.5', 1],
      ['1.a', 1],
      ['1a.50', 2],
      ['1.ab', 2],
      ['x1.50', 2],
      ['1a.930', 3],
      ['1.abc', 3],
      ['x1.930', 3],
      ['7 ', 0],
    ];
    for (const [value, scale] of cases)
      expect(() => normalizeDecimal(value, scale), `${value} @${scale}`).toThrow(
        `"${value}" is not a decimal with at most ${scale} decimals`,
      );
  });
});

describe('minBigint', () => {
  it('gives the smaller of two amounts', () => {
    expect(minBigint(3n, 5n)).toBe(3n);
    expect(minBigint(5n, 3n)).toBe(3n);
    expect(minBigint(-1n, 0n)).toBe(-1n);
  });
});
