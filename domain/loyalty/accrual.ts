// How many points a purchase earns. One module for every place that answers that question: the
// discount preview (POST /api/loaylty/discounts/preview/), checkout when it shows the points an
// order will earn, and the worker that credits a completed order. They all call
// `loyaltyAccrualFor`, so the estimate and the grant cannot drift apart.
//
// The rule: a linked wallet whose main card is not blocked earns `floor(goods total x tier rate)`
// whole points, computed on the total (not per line), because a completed order is credited on
// its picked goods total (orders.final_total minus delivery), where per-line amounts may differ
// from the cart. The preview shows each line's share of those points (largest remainder), so the
// lines add up to the total exactly. The program grants points only: prices are never discounted
// by the loyalty program (checkout charges shelf prices), so the discount is always zero.
import { formatDecimal, parseDecimal } from '../money/decimal.js';
import { MONEY_SCALE, money } from '../money/money.js';

/** Kopecks per rouble and hundredths of a percent: amounts are scale 2, rates scale 2. */
const PERCENT_SCALE = 2;
/** kopecks x rate-in-hundredths-of-a-percent / this = points. */
const POINTS_DIVISOR = 100n * 100n * 100n;

export type AccrualOutcome = 'accrued' | 'no_wallet' | 'card_blocked';

/** The customer's standing in the program when the points are computed. */
export interface LoyaltyMember {
  /** Label of the current tier (for display). */
  tierLabel: string | null;
  /** Points per 100 roubles of the current tier, decimal string ("5.00"); null when unknown. */
  accrualPercent: string | null;
  /** A blocked main card neither earns nor spends points. */
  mainCardBlocked: boolean;
}

export interface AccrualResult {
  outcome: AccrualOutcome;
  /** Whole points, as a bigint. */
  points: bigint;
  /** The rate applied (decimal string), null when nothing accrues. */
  accrualPercent: string | null;
}

/** Kopecks of `value`, a non-negative amount with at most two decimals; throws naming `what` otherwise. */
function nonNegativeKopecks(value: string, what: string): bigint {
  const units = parseDecimal(value, MONEY_SCALE);
  if (units === null || units < 0n) throw new RangeError(`${what} "${value}" is not a non-negative amount with at most 2 decimals`);
  return units;
}

function rateOf(member: LoyaltyMember): bigint {
  const units = member.accrualPercent === null ? 0n : parseDecimal(member.accrualPercent, PERCENT_SCALE);
  if (units === null || units < 0n) throw new RangeError(`accrual percent "${member.accrualPercent}" is not a valid rate`);
  return units;
}

/**
 * Points for a goods amount (roubles, decimal string). `member` null: the customer has no linked
 * wallet, so nothing accrues (as at a till without a card).
 */
export function loyaltyAccrualFor(goodsTotal: string, member: LoyaltyMember | null): AccrualResult {
  const kopecks = nonNegativeKopecks(goodsTotal, 'goods total');
  if (!member) return { outcome: 'no_wallet', points: 0n, accrualPercent: null };
  if (member.mainCardBlocked) return { outcome: 'card_blocked', points: 0n, accrualPercent: null };
  const rate = rateOf(member);
  return { outcome: 'accrued', points: (kopecks * rate) / POINTS_DIVISOR, accrualPercent: formatDecimal(rate, PERCENT_SCALE) };
}

/**
 * Splits `points` over lines in proportion to their amounts (kopecks): each line gets the floor of
 * its exact share, and the points left by rounding go to the largest remainders (earlier lines
 * first on ties). The shares add up to `points` exactly.
 */
export function pointsShares(lineKopecks: bigint[], points: bigint): bigint[] {
  const total = lineKopecks.reduce((a, b) => a + b, 0n);
  if (total === 0n || points === 0n) return lineKopecks.map(() => 0n);
  const exact = lineKopecks.map((k) => ({ floor: (k * points) / total, remainder: (k * points) % total }));
  let left = points - exact.reduce((a, e) => a + e.floor, 0n);
  const order = exact.map((e, i) => ({ i, r: e.remainder })).sort((a, b) => (a.r === b.r ? a.i - b.i : a.r > b.r ? -1 : 1));
  const shares = exact.map((e) => e.floor);
  for (const { i } of order) {
    if (left === 0n) break;
    shares[i]! += 1n;
    left -= 1n;
  }
  return shares;
}

/** quantity (thousandths) x unit price (kopecks), rounded half-up to kopecks. */
export function lineAmountKopecks(quantityThousandths: bigint, unitPriceKopecks: bigint): bigint {
  return (quantityThousandths * unitPriceKopecks + 500n) / 1000n;
}

export const parseMoney = (value: string): bigint => nonNegativeKopecks(value, 'amount');

export interface PreviewLineInput {
  quantityThousandths: bigint;
  unitPrice: string;
}

export interface PreviewLine {
  subtotal: bigint;
  discount: bigint;
  total: bigint;
  points: bigint;
}

export interface CartPreview {
  lines: PreviewLine[];
  subtotal: bigint;
  discount: bigint;
  total: bigint;
  accrual: AccrualResult;
}

/** The loyalty estimate of a cart priced at shelf prices (see the module comment). */
export function previewCart(lines: PreviewLineInput[], member: LoyaltyMember | null): CartPreview {
  const subtotals = lines.map((l) => lineAmountKopecks(l.quantityThousandths, nonNegativeKopecks(l.unitPrice, 'unit price')));
  const subtotal = subtotals.reduce((a, b) => a + b, 0n);
  // The program gives no price discounts (see the module comment): totals equal subtotals.
  const accrual = loyaltyAccrualFor(money(subtotal), member);
  const shares = pointsShares(subtotals, accrual.points);
  return {
    lines: subtotals.map((s, i) => ({ subtotal: s, discount: 0n, total: s, points: shares[i]! })),
    subtotal,
    discount: 0n,
    total: subtotal,
    accrual,
  };
}
