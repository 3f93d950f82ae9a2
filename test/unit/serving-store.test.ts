// The serving-store rule of check-location: each tie-breaker in its order, on real-looking zones.
import { describe, expect, it } from 'vitest';
import type { Position } from '../../domain/geo/geometry.js';
import { chooseServingZone, type ZoneCandidate } from '../../domain/geo/serving-store.js';

const square = (x0: number, y0: number, x1: number, y1: number): Position[] => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
  [x0, y0],
];
const zone = (over: Partial<ZoneCandidate> & Pick<ZoneCandidate, 'zoneId' | 'storeId'>): ZoneCandidate => ({
  store: { lon: 10, lat: 10 },
  priority: 0,
  deliveryCost: '100.00',
  area: { type: 'Polygon', coordinates: [square(9, 9, 11, 11)] },
  ...over,
});
const point = { lon: 10, lat: 10 };

describe('chooseServingZone', () => {
  it('is null when no zone contains the point', () => {
    expect(chooseServingZone([zone({ zoneId: 'z1', storeId: 's1' })], { lon: 20, lat: 20 })).toBeNull();
    expect(chooseServingZone([], point)).toBeNull();
  });

  it('prefers the greatest priority, even when it costs more and is farther', () => {
    const cheapNear = zone({ zoneId: 'a', storeId: 'a', priority: 5, deliveryCost: '50.00', store: { lon: 10, lat: 10 } });
    const dearFar = zone({ zoneId: 'b', storeId: 'b', priority: 6, deliveryCost: '500.00', store: { lon: 10.9, lat: 10.9 } });
    expect(chooseServingZone([cheapNear, dearFar], point)?.zone.zoneId).toBe('b');
  });

  it('then the lowest delivery cost, compared as decimals', () => {
    const a = zone({ zoneId: 'a', storeId: 'a', deliveryCost: '99.50', store: { lon: 10.5, lat: 10.5 } });
    const b = zone({ zoneId: 'b', storeId: 'b', deliveryCost: '99.5', store: { lon: 10, lat: 10 } });
    const c = zone({ zoneId: 'c', storeId: 'c', deliveryCost: '100', store: { lon: 10, lat: 10 } });
    // "9.90" < "100.00" as numbers though not as text.
    const d = zone({ zoneId: 'd', storeId: 'd', deliveryCost: '9.90', store: { lon: 10.9, lat: 10.9 } });
    expect(chooseServingZone([a, c], point)?.zone.zoneId).toBe('a');
    expect(chooseServingZone([a, b, c, d], point)?.zone.zoneId).toBe('d');
    // Equal costs written differently fall through to distance: b is nearer.
    expect(chooseServingZone([a, b], point)?.zone.zoneId).toBe('b');
  });

  it('then the nearest store, then the smallest store id, then the smallest zone id (lowercase)', () => {
    const near = zone({ zoneId: 'z9', storeId: 'S9', store: { lon: 10.01, lat: 10 } });
    const far = zone({ zoneId: 'z1', storeId: 's1', store: { lon: 10.02, lat: 10 } });
    expect(chooseServingZone([far, near], point)?.zone.zoneId).toBe('z9');
    const sameStoreSpotA = zone({ zoneId: 'zB', storeId: 'B-store', store: { lon: 10.01, lat: 10 } });
    const sameStoreSpotB = zone({ zoneId: 'zA', storeId: 'a-store', store: { lon: 10.01, lat: 10 } });
    expect(chooseServingZone([sameStoreSpotA, sameStoreSpotB], point)?.zone.storeId).toBe('a-store');
    const z2 = zone({ zoneId: 'Zone-2', storeId: 's' });
    const z1 = zone({ zoneId: 'zone-1', storeId: 's' });
    expect(chooseServingZone([z2, z1], point)?.zone.zoneId).toBe('zone-1');
    expect(chooseServingZone([z1, z2], point)?.zone.zoneId).toBe('zone-1');
  });

  it('gives the unrounded distance from the chosen store', () => {
    const choice = chooseServingZone([zone({ zoneId: 'a', storeId: 'a', store: { lon: 10, lat: 10.01 } })], point);
    expect(choice?.distanceKm).toBeCloseTo(1.11195, 4);
  });

  it('counts a point on a zone edge as contained', () => {
    const edge = zone({ zoneId: 'edge', storeId: 's', area: { type: 'Polygon', coordinates: [square(10, 10, 11, 11)] } });
    expect(chooseServingZone([edge], point)?.zone.zoneId).toBe('edge');
  });
});
