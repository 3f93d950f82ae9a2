import { describe, expect, it } from 'vitest';
import { barcodeLookupKeys, ean13, gtinCheckDigit, isPlu, isValidGtin } from '../../domain/codes/barcode.js';

describe('barcodes', () => {
  it('computes the GS1 check digit', () => {
    expect(gtinCheckDigit('400638133393')).toBe(1); // 4006381333931, a textbook EAN-13
    expect(gtinCheckDigit('9638507')).toBe(4); // 96385074, EAN-8
    expect(ean13('460123456789')).toBe('4601234567893'); // 9·3+8+7·3+6+5·3+4+3·3+2+1·3+0+6·3+4 = 117
  });

  it('accepts EAN-8, UPC-A, EAN-13 and GTIN-14 with a correct check digit only', () => {
    for (const code of ['4006381333931', '96385074', '036000291452', '10012345678902']) expect(isValidGtin(code), code).toBe(true);
    for (const code of ['4006381333932', '400638133393', '40063813339310000', '4006381333 931', 'abcdefghijklm', ''])
      expect(isValidGtin(code), code).toBe(false);
    expect(() => ean13('12345')).toThrow(RangeError);
  });

  it('looks a UPC-A up under its EAN-13 form too', () => {
    expect(barcodeLookupKeys('036000291452')).toEqual(['036000291452', '0036000291452']);
    expect(barcodeLookupKeys('0036000291452')).toEqual(['0036000291452', '036000291452']);
    expect(barcodeLookupKeys('4006381333931')).toEqual(['4006381333931']);
    expect(barcodeLookupKeys('4006381333932')).toEqual([]);
  });

  it('recognises PLU codes of 4 or 5 digits', () => {
    expect(isPlu('4011')).toBe(true);
    expect(isPlu('94011')).toBe(true);
    expect(isPlu('401')).toBe(false);
    expect(isPlu('401a')).toBe(false);
  });
});
