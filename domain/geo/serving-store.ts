// The serving-store rule of POST /api/logistics/stores/delivery/check-location (also used by
// can-use-location and check-multiply-locations): which zone, and so which store, delivers to a
// point when several zones contain it.
import { parseDecimal } from '../money/decimal.js';
import { areaContains, haversineKm, type Area, type Point } from './geometry.js';

export interface ZoneCandidate {
  zoneId: string;
  storeId: string;
  /** Where the store is (distance is measured from it). */
  store: Point;
  priority: number;
  /** Decimal string, as read from PostgreSQL ("199.00"). */
  deliveryCost: string;
  area: Area;
}

export interface ServingChoice<Z extends ZoneCandidate> {
  zone: Z;
  /** Great-circle distance from the store to the point, unrounded. */
  distanceKm: number;
}

const costUnits = (cost: string): bigint => {
  const units = parseDecimal(cost, 6);
  if (units === null) throw new RangeError(`delivery cost "${cost}" is not a decimal`);
  return units;
};

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The zone that serves `point`, or null when none contains it. Among the zones containing the
 * point, in order: greatest priority; lowest delivery cost; nearest store; smallest store id;
 * smallest zone id (ids compared as lowercase text). Deterministic for the same data.
 */
export function chooseServingZone<Z extends ZoneCandidate>(zones: readonly Z[], point: Point): ServingChoice<Z> | null {
  let best: { zone: Z; distanceKm: number; cost: bigint } | null = null;
  for (const zone of zones) {
    if (!areaContains(zone.area, point)) continue;
    const candidate = { zone, distanceKm: haversineKm(zone.store, point), cost: costUnits(zone.deliveryCost) };
    if (!best || precedes(candidate, best)) best = candidate;
  }
  return best && { zone: best.zone, distanceKm: best.distanceKm };
}

function precedes(
  a: { zone: ZoneCandidate; distanceKm: number; cost: bigint },
  b: { zone: ZoneCandidate; distanceKm: number; cost: bigint },
): boolean {
  if (a.zone.priority !== b.zone.priority) return a.zone.priority > b.zone.priority;
  if (a.cost !== b.cost) return a.cost < b.cost;
  if (a.distanceKm !== b.distanceKm) return a.distanceKm < b.distanceKm;
  const byStore = compareText(a.zone.storeId.toLowerCase(), b.zone.storeId.toLowerCase());
  if (byStore !== 0) return byStore < 0;
  return compareText(a.zone.zoneId.toLowerCase(), b.zone.zoneId.toLowerCase()) < 0;
}
