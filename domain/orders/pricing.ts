// Prices of an order in exact decimals (bigint kopecks and thousandths, see decimal.ts): line
// totals, the goods total, and the delivery rule shared by checkout and the price estimate.
import { formatDecimal, parseDecimal } from '../money/decimal.js';

export const MONEY_SCALE = 2;
export const QUANTITY_SCALE = 3;

/** Kopecks of a decimal money string read from PostgreSQL; throws on anything else (a data bug). */
export function kopecks(value: string): bigint {
  const units = parseDecimal(value, MONEY_SCALE);
  if (units === null) throw new RangeError(`"${value}" is not an amount of money`);
  return units;
}

export const money = (units: bigint): string => formatDecimal(units, MONEY_SCALE);

/** quantity x unit price, rounded half up to kopecks (quantities are thousandths, so /1000). */
export function lineTotal(quantityThousandths: bigint, unitPriceKopecks: bigint): bigint {
  const exact = quantityThousandths * unitPriceKopecks; // in 1/1000 kopeck
  return (exact + 500n) / 1000n;
}

export interface DeliveryTerms {
  /** Zone terms: cost of standard delivery, goods total from which it is free, minimum goods total. */
  deliveryCost: string;
  freeAmountThreshold: string;
  minOrderAmount: string;
}

export interface DeliveryPrice {
  deliveryPrice: bigint;
  minOrderAmount: bigint;
  meetsMinimum: boolean;
  amountToMinimum: bigint;
  /** Null for express: it has no free threshold. */
  freeDeliveryThreshold: bigint | null;
  amountToFreeDelivery: bigint | null;
}

const positivePart = (x: bigint) => (x > 0n ? x : 0n);

/**
 * The delivery rule: express costs the store's express cost whatever the goods total; standard
 * delivery costs the zone's cost, or nothing once the goods total reaches its free threshold.
 * The zone's minimum applies to both.
 */
export function priceDelivery(goodsTotal: bigint, terms: DeliveryTerms, express: { cost: string } | null): DeliveryPrice {
  const minOrderAmount = kopecks(terms.minOrderAmount);
  const base = { minOrderAmount, meetsMinimum: goodsTotal >= minOrderAmount, amountToMinimum: positivePart(minOrderAmount - goodsTotal) };
  if (express) return { ...base, deliveryPrice: kopecks(express.cost), freeDeliveryThreshold: null, amountToFreeDelivery: null };
  const threshold = kopecks(terms.freeAmountThreshold);
  const free = goodsTotal >= threshold;
  return {
    ...base,
    deliveryPrice: free ? 0n : kopecks(terms.deliveryCost),
    freeDeliveryThreshold: threshold,
    amountToFreeDelivery: positivePart(threshold - goodsTotal),
  };
}
