// Product codes: GTIN barcodes (EAN-13, EAN-8, UPC-A, GTIN-14) with their check digit, and the
// PLU codes of loose produce.

/** The GS1 check digit of the digits before it (weights 3,1,3,... from the right). */
export function gtinCheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    const digit = body.charCodeAt(body.length - 1 - i) - 48;
    sum += digit * (i % 2 === 0 ? 3 : 1);
  }
  return (10 - (sum % 10)) % 10;
}

/** Whether `code` is an EAN-8, UPC-A (12), EAN-13 or GTIN-14 with a correct check digit. */
export function isValidGtin(code: string): boolean {
  if (!/^[0-9]+$/.test(code) || ![8, 12, 13, 14].includes(code.length)) return false;
  return gtinCheckDigit(code.slice(0, -1)) === Number(code[code.length - 1]);
}

/** A 12-digit body completed with its check digit: a valid EAN-13. */
export function ean13(body12: string): string {
  if (!/^[0-9]{12}$/.test(body12)) throw new RangeError(`EAN-13 body must be 12 digits, got "${body12}"`);
  return body12 + gtinCheckDigit(body12);
}

/** The barcode forms a scanned or typed code may be stored under (UPC-A is also EAN-13 with a 0). */
export function barcodeLookupKeys(code: string): string[] {
  if (!isValidGtin(code)) return [];
  return code.length === 12 ? [code, `0${code}`] : code.length === 13 && code.startsWith('0') ? [code, code.slice(1)] : [code];
}

export const isPlu = (code: string): boolean => /^[0-9]{4,5}$/.test(code);
