import { describe, expect, it } from 'vitest';
import { formatDecimal, normalizeDecimal, parseDecimal } from '../../domain/money/decimal.js';

describe('decimal', () => {
  it('reads decimals exactly as scaled integers', () => {
    expect(parseDecimal('0.930', 3)).toBe(930n);
    expect(parseDecimal('89.9', 2)).toBe(8990n);
    expect(parseDecimal(0.75, 3)).toBe(750n);
    expect(parseDecimal('-1', 3)).toBe(-1000n);
    expect(parseDecimal('1.2300', 2)).toBe(123n); // trailing zeros are not extra decimals
    expect(parseDecimal('12345678901234567890.5', 1)).toBe(123456789012345678905n);
  });

  it('refuses what is not a plain decimal or has too many decimals', () => {
    for (const v of ['', ' ', '1e3', '1.', '.5', '1,5', 'NaN', '0x10', '+1']) expect(parseDecimal(v, 3), v).toBeNull();
    expect(parseDecimal(1e21, 3)).toBeNull();
    expect(parseDecimal(Number.NaN, 3)).toBeNull();
    expect(parseDecimal('0.0005', 3)).toBeNull();
    expect(parseDecimal('12.345', 2)).toBeNull();
  });

  it('formats with exactly the scale', () => {
    expect(formatDecimal(930n, 3)).toBe('0.930');
    expect(formatDecimal(0n, 3)).toBe('0.000');
    expect(formatDecimal(-5n, 2)).toBe('-0.05');
    expect(formatDecimal(12n, 0)).toBe('12');
    expect(normalizeDecimal('15.1', 2)).toBe('15.10');
    expect(normalizeDecimal('2', 3)).toBe('2.000');
    expect(() => normalizeDecimal('0.0001', 3)).toThrow(RangeError);
  });

  it('returns a value already in its exact form as it is, and only then', () => {
    const forms = [
      '0',
      '-0',
      '00',
      '7',
      '-7',
      '007',
      '10',
      '0.5',
      '-0.5',
      '0.50',
      '-0.50',
      '0.00',
      '-0.00',
      '135.65',
      '135.650',
      '-135.65',
      '1.000',
      '1.0',
      '12.345',
      '012.34',
      '99999999999.99',
      '1.23400',
      '5.',
    ];
    for (const scale of [0, 1, 2, 3]) {
      for (const value of forms) {
        const units = parseDecimal(value, scale);
        if (units === null) expect(() => normalizeDecimal(value, scale), `${value} @${scale}`).toThrow(RangeError);
        else expect(normalizeDecimal(value, scale), `${value} @${scale}`).toBe(formatDecimal(units, scale));
      }
    }
  });
});
