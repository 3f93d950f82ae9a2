// Picking rates: items and orders per hour of picking time, for walks of one mode (a session
// started on its own, or a batch) and for both together. A walk's picking time runs from its start
// to the last closure of its sessions, so time between walks is not counted. Integer arithmetic on
// counts and seconds; the rates are decimal strings rounded half-up, as the summary's pace is.
import { ratio } from './stats.js';

export type PickingMode = 'single' | 'batch';

/** What a set of ended walks recorded. */
export interface WalkTotals {
  walks_count: number;
  /** Completed sessions of the walks. */
  orders_count: number;
  /** Items that ended `picked` in those sessions. */
  items_count: number;
  /** Sum of the walks' picking times, whole seconds. */
  picking_seconds: number;
}

export interface PickingRate extends WalkTotals {
  /** Items per hour of picking time, 2 decimals; null without picking time. */
  items_per_hour: string | null;
  /** Orders per hour of picking time, 2 decimals; null without picking time. */
  orders_per_hour: string | null;
}

export type PickingRates = Record<PickingMode | 'all', PickingRate>;

export const NO_WALKS: WalkTotals = Object.freeze({ walks_count: 0, orders_count: 0, items_count: 0, picking_seconds: 0 });

/** `count` per hour of `seconds`, 2 decimals; null without time. */
export function perHour(count: number, seconds: number): string | null {
  // count / (seconds / 3600) = count * 3600 / seconds, exact while count * 3600 stays a safe integer.
  return seconds > 0 ? ratio(count * 3600, seconds, 2) : null;
}

export function addWalkTotals(a: WalkTotals, b: WalkTotals): WalkTotals {
  return {
    walks_count: a.walks_count + b.walks_count,
    orders_count: a.orders_count + b.orders_count,
    items_count: a.items_count + b.items_count,
    picking_seconds: a.picking_seconds + b.picking_seconds,
  };
}

export function pickingRate(t: WalkTotals): PickingRate {
  return {
    walks_count: t.walks_count,
    orders_count: t.orders_count,
    items_count: t.items_count,
    picking_seconds: t.picking_seconds,
    items_per_hour: perHour(t.items_count, t.picking_seconds),
    orders_per_hour: perHour(t.orders_count, t.picking_seconds),
  };
}

/** The rates of each mode and of both together; a mode without walks has zero counts and null rates. */
export function pickingRates(byMode: Partial<Record<PickingMode, WalkTotals>>): PickingRates {
  const single = byMode.single ?? NO_WALKS;
  const batch = byMode.batch ?? NO_WALKS;
  // Rates of the whole are taken from the summed counts, never averaged from the modes' rates.
  return { single: pickingRate(single), batch: pickingRate(batch), all: pickingRate(addWalkTotals(single, batch)) };
}
