// Scale labels (2X PPPPP WWWWW C) and product barcodes as the picker's scanner reads them.
import { describe, expect, it } from 'vitest';
import { ean13 } from '../../domain/codes/barcode.js';
import { labelPlu, labelWeight, readScannedCode, scaleLabel } from '../../domain/codes/scale-label.js';

describe('readScannedCode', () => {
  it('reads the PLU and the net weight of a scale label', () => {
    const code = readScannedCode('2204011012603'); // 22 04011 01260 3
    expect(code).toMatchObject({ kind: 'scale_label', plu: '04011', grams: 1260n });
    expect(labelWeight(code)).toBe(1260n);
  });
  it('accepts every prefix 20-29 and trims what the scanner adds', () => {
    for (const prefix of ['20', '25', '29'])
      expect(readScannedCode(` ${scaleLabel('3000', 455, prefix)}\n`)).toMatchObject({ kind: 'scale_label', plu: '03000', grams: 455n });
  });
  it('refuses a label with a wrong check digit', () => {
    const good = scaleLabel('4011', 1260);
    const bad = good.slice(0, 12) + String((Number(good[12]) + 1) % 10);
    expect(readScannedCode(bad)).toEqual({ kind: 'invalid' });
  });
  it('a label without a weight names the product only', () => {
    expect(labelWeight(readScannedCode(scaleLabel('4011', 0)))).toBeNull();
  });
  it('reads product barcodes (EAN-13, EAN-8, UPC-A) with their lookup forms', () => {
    expect(readScannedCode('4607012345677')).toEqual({ kind: 'gtin', barcodes: ['4607012345677'] });
    const upc = '036000291452';
    expect(readScannedCode(upc)).toEqual({ kind: 'gtin', barcodes: [upc, `0${upc}`] });
    expect(readScannedCode('96385074')).toEqual({ kind: 'gtin', barcodes: ['96385074'] });
  });
  it('refuses what is not a barcode', () => {
    for (const raw of ['', 'abc', '4607012345670', '12345']) expect(readScannedCode(raw)).toEqual({ kind: 'invalid' });
  });
});

describe('scaleLabel', () => {
  it('builds valid EAN-13 labels with a zero-padded PLU', () => {
    const label = scaleLabel('4011', 1260);
    expect(label).toBe(ean13('220401101260'));
    expect(labelPlu('3005')).toBe('03005');
  });
  it('refuses weights that do not fit five digits', () => {
    expect(() => scaleLabel('4011', 100_000)).toThrow(RangeError);
  });
});
