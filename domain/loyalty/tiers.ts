// Tiers of a loyalty program: which level a purchase turnover reaches, and the customer's tier
// status (LoyaltyStatusSchema) drawn from the program's full level list (`cdp`) or, when that list
// could not be loaded, rebuilt from the customer's own current and next tier (`cdp_fallback`).
import { formatDecimal } from '../money/decimal.js';
import { kopecks } from '../money/money.js';

export interface ProgramLevel {
  id: number | null;
  order: number;
  name: string;
  /** Turnover from which the level applies, roubles decimal string. */
  boundary: string;
  range_label: string;
  description: string;
}

/** A tier as the provider reports it in a customer's status. */
export interface ReportedTier {
  id: number | null;
  order: number | null;
  name: string;
  boundary: string | null;
}

export interface TierStatus {
  program_name: string;
  current_tier: string;
  next_tier: string;
  tiers_source: 'cdp' | 'cdp_fallback';
  tiers_complete: boolean;
  progress: number;
  amount_to_next: string;
  total_turnover: string;
  last_purchase_points: string;
  tiers: {
    id: number | null;
    order: number | null;
    label: string;
    is_active: boolean;
    boundary: string | null;
    range_label: string;
    description: string;
  }[];
}

const byOrder = <T extends { order: number }>(levels: T[]) => [...levels].sort((a, b) => a.order - b.order);

/**
 * The index (in ascending order) of the highest level whose boundary the turnover reaches, or -1
 * when it reaches none (a program whose lowest level starts above zero).
 */
export function levelIndexFor(levels: ProgramLevel[], turnover: string): number {
  const t = kopecks(turnover);
  const sorted = byOrder(levels);
  let found = -1;
  sorted.forEach((l, i) => {
    if (kopecks(l.boundary) <= t) found = i;
  });
  return found;
}

/** Progress 0..1 from `from` to `to` at `turnover`, rounded to 4 decimals; 1 when `to` is null (top tier). */
export function progressBetween(from: string | null, to: string | null, turnover: string): number {
  if (to === null) return 1;
  if (from === null) return 0;
  const [a, b, t] = [kopecks(from), kopecks(to), kopecks(turnover)];
  if (b <= a) return 1;
  if (t <= a) return 0;
  if (t >= b) return 1;
  // Integer arithmetic to 4 decimals, then one conversion to a JS number for the API's `number`.
  return Number(((t - a) * 10_000n) / (b - a)) / 10_000;
}

const amountTo = (boundary: string | null, turnover: string): string => {
  if (boundary === null) return '0';
  const left = kopecks(boundary) - kopecks(turnover);
  return formatDecimal(left > 0n ? left : 0n, 2);
};

export interface TierStatusInput {
  programName: string;
  turnover: string;
  lastPurchasePoints: string;
  /** The provider's view of the customer's tiers (may be null when it reports none). */
  current: ReportedTier | null;
  next: ReportedTier | null;
  /** The program's full level list, or null when it could not be loaded. */
  levels: ProgramLevel[] | null;
}

/**
 * The customer's tier status. The provider decides the current tier (it may grant tiers by hand);
 * with the level list the scale shows every level and marks the current one, without it the scale
 * is rebuilt from the current and next tier the provider reported.
 */
export function tierStatusFor(input: TierStatusInput): TierStatus {
  const { programName, turnover, lastPurchasePoints, current, next } = input;
  const base = { program_name: programName, total_turnover: formatDecimal(kopecks(turnover), 2), last_purchase_points: lastPurchasePoints };
  if (input.levels && input.levels.length > 0) {
    const levels = byOrder(input.levels);
    const same = (l: ProgramLevel, t: ReportedTier | null) =>
      t !== null && (t.id !== null && l.id !== null ? t.id === l.id : t.name === l.name);
    let currentIndex = current ? levels.findIndex((l) => same(l, current)) : -1;
    if (currentIndex < 0) currentIndex = levelIndexFor(levels, turnover);
    const cur = levels[currentIndex] ?? null;
    const nxt = levels[currentIndex + 1] ?? null;
    return {
      ...base,
      current_tier: cur?.name ?? '',
      next_tier: nxt?.name ?? '',
      tiers_source: 'cdp',
      tiers_complete: true,
      progress: progressBetween(cur?.boundary ?? '0', nxt?.boundary ?? null, turnover),
      amount_to_next: amountTo(nxt?.boundary ?? null, turnover),
      tiers: levels.map((l, i) => ({
        id: l.id,
        order: l.order,
        label: l.name,
        is_active: i === currentIndex,
        boundary: formatDecimal(kopecks(l.boundary), 2),
        range_label: l.range_label,
        description: l.description,
      })),
    };
  }
  const tiers = [current, next]
    .filter((t): t is ReportedTier => t !== null)
    .map((t) => ({
      id: t.id,
      order: t.order,
      label: t.name,
      is_active: t === current,
      boundary: t.boundary === null ? null : formatDecimal(kopecks(t.boundary), 2),
      range_label: '',
      description: '',
    }));
  return {
    ...base,
    current_tier: current?.name ?? '',
    next_tier: next?.name ?? '',
    tiers_source: 'cdp_fallback',
    tiers_complete: false,
    progress: next === null ? (current ? 1 : 0) : progressBetween(current?.boundary ?? null, next.boundary, turnover),
    amount_to_next: amountTo(next?.boundary ?? null, turnover),
    tiers,
  };
}
