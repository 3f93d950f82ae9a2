// The edges of the code rules in domain/codes: whole-string formats, lookup forms by length,
// one-time code hashing, the cooldown without an earlier send, SMS texts and weak PINs.
import { describe, expect, it } from 'vitest';
import { barcodeLookupKeys, ean13, isPlu, isValidGtin } from '../../domain/codes/barcode.js';
import { hashOtp, otpMatches, otpSmsText, sendLimit } from '../../domain/codes/otp.js';
import { pinProblem } from '../../domain/codes/pin.js';
import { readScannedCode, scaleLabel } from '../../domain/codes/scale-label.js';

describe('barcode formats are checked over the whole code', () => {
  it('refuses a code with a non-digit first, even when its check digit would add up', () => {
    // "H" counts as 24 in the check-digit sum, which is 4 modulo 10, like the "4" it replaces.
    expect(isValidGtin('4006381333931')).toBe(true);
    expect(isValidGtin('H006381333931')).toBe(false);
  });

  it('refuses a code with a non-digit last, even one that reads as the number 0', () => {
    expect(isValidGtin('4006381333030')).toBe(true);
    expect(isValidGtin('400638133303 ')).toBe(false);
  });

  it('builds an EAN-13 from exactly twelve digits only', () => {
    expect(ean13('400638133393')).toBe('4006381333931');
    for (const body of ['4006381333931', 'x40063813339', '40063813339x', '40063813339'])
      expect(() => ean13(body), body).toThrow(/EAN-13 body must be 12 digits/);
  });

  it('looks EAN-8 and GTIN-14 codes up under their own form only', () => {
    expect(barcodeLookupKeys('96385074')).toEqual(['96385074']);
    expect(barcodeLookupKeys('10012345678902')).toEqual(['10012345678902']);
  });

  it('takes four or five digits, nothing more or around them, as a PLU', () => {
    for (const code of ['123456', 'a1234', '1234a', '04011 ']) expect(isPlu(code), code).toBe(false);
  });
});

describe('scale labels', () => {
  it('reads only a 13-digit code starting with 2 as a scale label', () => {
    expect(readScannedCode('23456785')).toEqual({ kind: 'gtin', barcodes: ['23456785'] });
    expect(readScannedCode('201234567899')).toEqual({ kind: 'gtin', barcodes: ['201234567899', '0201234567899'] });
  });

  it('prints labels with a two-digit 20-29 prefix only', () => {
    expect(scaleLabel('4011', 1260, '29').startsWith('2904011')).toBe(true);
    for (const prefix of ['19', '2', '220', 'x2', '2x', '30'])
      expect(() => scaleLabel('4011', 1260, prefix), prefix).toThrow('scale labels start with 20-29');
  });

  it('refuses a PLU or a weight that does not fit its five digits, saying which', () => {
    expect(() => scaleLabel('123456', 100)).toThrow('PLU 123456 or weight 100 g does not fit a scale label');
    expect(() => scaleLabel('4011', 100_000)).toThrow('PLU 4011 or weight 100000 g does not fit a scale label');
  });
});

describe('one-time codes', () => {
  it('stores the HMAC as 43 base64url characters', () => {
    expect(hashOtp('k', '+79990000001', 'login', '123456')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('treats a stored hash of another length as no match', () => {
    const h = hashOtp('k', '+79990000001', 'login', '123456');
    expect(otpMatches('k', '+79990000001', 'login', '123456', h.slice(1))).toBe(false);
    expect(otpMatches('k', '+79990000001', 'login', '123456', '')).toBe(false);
  });

  it('applies no cooldown when this purpose was never sent', () => {
    const now = new Date(Date.UTC(2026, 10, 22, 12));
    expect(sendLimit(now, null, [], { cooldownSeconds: 60, maxPerHour: 5 })).toBeNull();
  });

  it('words the SMS in the language asked for', () => {
    expect(otpSmsText('042917', 'ru')).toBe('Код для входа: 042917. Никому его не сообщайте.');
    expect(otpSmsText('042917', 'en')).toBe('Your sign-in code: 042917. Do not share it.');
  });
});

describe('PIN strength', () => {
  it('refuses only a whole run down, not a PIN that steps down somewhere', () => {
    expect(pinProblem('5434')).toBeNull();
    expect(pinProblem('1210')).toBeNull();
    expect(pinProblem('4321')).toBe('PIN_TOO_WEAK');
  });
});
