// The delivery rule of an order's price, shared by checkout and the price estimate (amounts in
// bigint kopecks, see money/money.ts).
import { kopecks } from '../money/money.js';

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
