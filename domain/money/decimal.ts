// Exact decimal arithmetic for money and quantities: a decimal is held as a bigint count of
// 10^-scale units ("0.930" at scale 3 is 930n), so no value ever passes through a JS float.

const DECIMAL = /^(-)?([0-9]+)(?:\.([0-9]+))?$/;

/**
 * The value in units of 10^-scale, or null when it is not a plain decimal (exponent notation,
 * blanks, NaN) or has more than `scale` decimals. Numbers are read through their shortest
 * round-trip text, which is what the client wrote for any value with few decimals.
 */
export function parseDecimal(value: string | number, scale: number): bigint | null {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value;
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const [, minus, whole, fraction = ''] = m;
  const significant = fraction.replace(/0+$/, '');
  if (significant.length > scale) return null;
  const units = BigInt(whole + significant.padEnd(scale, '0'));
  return minus ? -units : units;
}

/** The decimal string of `units` at `scale` ("930n, 3" -> "0.930"). */
export function formatDecimal(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The exact form formatDecimal gives, per scale: no leading zero but one, no "-0". */
const CANONICAL = [
  /^(?:0|-?[1-9][0-9]*)$/,
  /^(?:0|-?[1-9][0-9]*)\.[0-9]$/,
  /^(?:0|-?[1-9][0-9]*)\.[0-9]{2}$/,
  /^(?:0|-?[1-9][0-9]*)\.[0-9]{3}$/,
];

/** Re-scales a decimal string read from PostgreSQL (numeric) to exactly `scale` decimals. */
export function normalizeDecimal(value: string, scale: number): string {
  // Most values are already in their exact form (a numeric(12,2) column reads as "135.65"):
  // returned as they are, without the bigint round trip (listings normalise a hundred per page).
  if (CANONICAL[scale]?.test(value)) return value;
  const units = parseDecimal(value, scale);
  if (units === null) throw new RangeError(`"${value}" is not a decimal with at most ${scale} decimals`);
  return formatDecimal(units, scale);
}

export const minBigint = (a: bigint, b: bigint): bigint => (a < b ? a : b);
