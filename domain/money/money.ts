// Amounts of money: bigint kopecks in arithmetic, decimal strings with two decimals at the edges
// (the API's amounts and PostgreSQL's numeric columns). Quantities are bigint thousandths.
import { formatDecimal, normalizeDecimal, parseDecimal } from './decimal.js';

export const MONEY_SCALE = 2;
export const QUANTITY_SCALE = 3;

/** Kopecks of a decimal amount ("135.65" -> 13565n); throws on anything else (a data bug). */
export function kopecks(amount: string): bigint {
  const units = parseDecimal(amount, MONEY_SCALE);
  if (units === null) throw new RangeError(`"${amount}" is not an amount of money`);
  return units;
}

/** The API's decimal amount of `units` kopecks (13565n -> "135.65"). */
export const money = (units: bigint): string => formatDecimal(units, MONEY_SCALE);

/** An amount read from PostgreSQL in the API's form: exactly two decimals. */
export const normalizeMoney = (amount: string): string => normalizeDecimal(amount, MONEY_SCALE);

/** quantity (thousandths) x unit price (kopecks), rounded half up to kopecks. */
export function lineTotal(quantityThousandths: bigint, unitPriceKopecks: bigint): bigint {
  return (quantityThousandths * unitPriceKopecks + 500n) / 1000n;
}

/** Price per kg (kopecks) of goods priced per `unitRatio` kg ("0.100" for 100 g), rounded half up. */
export function pricePerKg(unitPrice: string, unitRatio: string): bigint {
  const ratio = parseDecimal(unitRatio, QUANTITY_SCALE);
  if (ratio === null || ratio <= 0n) throw new RangeError(`"${unitRatio}" is not a positive weight in kg`);
  // price / ratio: (price * 1000 * 2 + ratio) / (2 * ratio).
  return (kopecks(unitPrice) * 2000n + ratio) / (2n * ratio);
}
