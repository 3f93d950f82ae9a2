// What a barcode read by the picker's scanner says, before any lookup: a scale label (an EAN-13
// printed by the store's scales, `2X PPPPP WWWWW C`: prefix 20-29, a 5-digit PLU, the net weight
// in grams, the check digit), a product barcode (GTIN with a correct check digit), or nothing
// usable. The GTIN arithmetic is the catalog's (./barcode.ts).
import { barcodeLookupKeys, ean13, isValidGtin } from './barcode.js';

export type ScannedCode =
  /** A scale label: the PLU (5 digits, zero-padded) and the net weight in grams. */
  | { kind: 'scale_label'; plu: string; grams: bigint; barcodes: string[] }
  /** A product barcode: the forms it may be stored under. */
  | { kind: 'gtin'; barcodes: string[] }
  /** Not a barcode, or a wrong check digit: nothing can match it. */
  | { kind: 'invalid' };

/**
 * Reads a scanned code. A 2X EAN-13 is a scale label; it is also looked up as a plain barcode,
 * because a store may register in-store codes (same 20-29 range) on products, and an exact product
 * barcode wins over the label reading.
 */
export function readScannedCode(raw: string): ScannedCode {
  const code = raw.trim();
  if (!isValidGtin(code)) return { kind: 'invalid' };
  const barcodes = barcodeLookupKeys(code);
  if (code.length === 13 && code[0] === '2') {
    return { kind: 'scale_label', plu: code.slice(2, 7), grams: BigInt(code.slice(7, 12)), barcodes };
  }
  return { kind: 'gtin', barcodes };
}

/** A PLU as printed on scale labels: 5 digits, zero-padded ("4011" -> "04011"). */
export const labelPlu = (plu: string): string => plu.padStart(5, '0');

/**
 * The weight a label carries, in grams, or null when it carries none (00000: the label names
 * the product only, like its own barcode).
 */
export const labelWeight = (code: ScannedCode): bigint | null => (code.kind === 'scale_label' && code.grams > 0n ? code.grams : null);

/** A scale label for tests and demo scripts: PLU and grams with a correct check digit. */
export function scaleLabel(plu: string, grams: number, prefix = '22'): string {
  if (!/^2[0-9]$/.test(prefix)) throw new RangeError('scale labels start with 20-29');
  const body = `${prefix}${labelPlu(plu)}${String(grams).padStart(5, '0')}`;
  if (body.length !== 12) throw new RangeError(`PLU ${plu} or weight ${grams} g does not fit a scale label`);
  return ean13(body);
}
