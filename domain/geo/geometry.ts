// Plane geometry on WGS 84 coordinates, enough for delivery zones without PostGIS: containment of
// a point in a GeoJSON Polygon / MultiPolygon (holes, edges, vertices) and great-circle distance.
//
// Containment works on raw degrees (zones are a few kilometres across, far from the poles and
// the antimeridian, where the distortion of treating lon/lat as a plane is irrelevant to "which
// side of this edge"). Positions are [lon, lat], as in GeoJSON.

export type Position = readonly [lon: number, lat: number];
export interface Point {
  lon: number;
  lat: number;
}
/** Rings of one polygon: the first is the outer boundary, the others are holes. */
export type PolygonRings = readonly (readonly Position[])[];
export type Area = { type: 'Polygon'; coordinates: PolygonRings } | { type: 'MultiPolygon'; coordinates: readonly PolygonRings[] };

/** The spec's containment tolerance: a point this close (in degrees) to an edge is on it. */
export const EDGE_TOLERANCE_DEG = 1e-6;
/** Mean Earth radius (IUGG), the one the spec names for `distance_km`. */
export const EARTH_RADIUS_KM = 6371.0088;

export type RingPosition = 'inside' | 'boundary' | 'outside';

function distanceToSegment(p: Point, a: Position, b: Position): number {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const lengthSquared = dx * dx + dy * dy;
  let t = lengthSquared === 0 ? 0 : ((p.lon - a[0]) * dx + (p.lat - a[1]) * dy) / lengthSquared;
  t = Math.max(0, Math.min(1, t));
  return Math.hypot(p.lon - (a[0] + t * dx), p.lat - (a[1] + t * dy));
}

/** Where a point lies relative to one closed ring (first position repeated last, or not). */
export function ringPosition(point: Point, ring: readonly Position[], tolerance = EDGE_TOLERANCE_DEG): RingPosition {
  const n = ring.length;
  if (n === 0) return 'outside';
  // The boundary first: the crossing count below is unreliable for points on an edge.
  for (let i = 0, j = n - 1; i < n; j = i++) {
    if (distanceToSegment(point, ring[j]!, ring[i]!) <= tolerance) return 'boundary';
  }
  // Even-odd rule with a horizontal ray to +lon. The half-open test (yi > y) !== (yj > y) counts
  // a vertex the ray passes through exactly once and skips horizontal edges.
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > point.lat !== yj > point.lat) {
      const crossingLon = ((xj - xi) * (point.lat - yi)) / (yj - yi) + xi;
      if (point.lon < crossingLon) inside = !inside;
    }
  }
  return inside ? 'inside' : 'outside';
}

/** A point on the outer edge or on a hole's edge is inside; strictly inside a hole is outside. */
export function polygonContains(rings: PolygonRings, point: Point, tolerance = EDGE_TOLERANCE_DEG): boolean {
  if (rings.length === 0) return false;
  const outer = ringPosition(point, rings[0]!, tolerance);
  if (outer === 'outside') return false;
  if (outer === 'boundary') return true;
  for (let h = 1; h < rings.length; h++) {
    if (ringPosition(point, rings[h]!, tolerance) === 'inside') return false;
  }
  return true;
}

/** A MultiPolygon contains the point when any of its polygons does. */
export function areaContains(area: Area, point: Point, tolerance = EDGE_TOLERANCE_DEG): boolean {
  if (area.type === 'Polygon') return polygonContains(area.coordinates, point, tolerance);
  return area.coordinates.some((rings) => polygonContains(rings, point, tolerance));
}

const isPosition = (p: unknown): p is Position =>
  Array.isArray(p) &&
  p.length >= 2 &&
  typeof p[0] === 'number' &&
  typeof p[1] === 'number' &&
  p[0] >= -180 &&
  p[0] <= 180 &&
  p[1] >= -90 &&
  p[1] <= 90;

function isRing(r: unknown): r is Position[] {
  if (!Array.isArray(r) || r.length < 4 || !r.every(isPosition)) return false;
  const first = r[0];
  const last = r[r.length - 1];
  return first![0] === last![0] && first![1] === last![1];
}

const isPolygonRings = (p: unknown): p is Position[][] => Array.isArray(p) && p.length > 0 && p.every(isRing);

/**
 * The value as a zone area, or null when it is not a GeoJSON Polygon / MultiPolygon with closed
 * rings of at least 4 positions inside the coordinate ranges (RFC 7946 3.1.6).
 */
export function parseArea(value: unknown): Area | null {
  if (typeof value !== 'object' || value === null) return null;
  const { type, coordinates } = value as { type?: unknown; coordinates?: unknown };
  if (type === 'Polygon' && isPolygonRings(coordinates)) return { type, coordinates };
  if (type === 'MultiPolygon' && Array.isArray(coordinates) && coordinates.length > 0 && coordinates.every(isPolygonRings)) {
    return { type, coordinates };
  }
  return null;
}

const toRadians = (deg: number) => (deg * Math.PI) / 180;

/** Great-circle distance in kilometres (haversine). */
export function haversineKm(a: Point, b: Point): number {
  const dLat = toRadians(b.lat - a.lat);
  const dLon = toRadians(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRadians(a.lat)) * Math.cos(toRadians(b.lat)) * Math.sin(dLon / 2) ** 2;
  // min() guards asin against 1 + epsilon from rounding for antipodal points.
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** `distance_km` as the API sends it: kilometres rounded to 3 decimals (metres). */
export const roundKm = (km: number): number => Math.round(km * 1000) / 1000;

/** A box around `center` that contains every point within `radiusKm` of it (for index prefilters). */
export function boundingBoxAround(center: Point, radiusKm: number): { minLon: number; minLat: number; maxLon: number; maxLat: number } {
  const angular = radiusKm / EARTH_RADIUS_KM;
  const dLat = (angular * 180) / Math.PI;
  // The widest longitude span of a spherical cap is asin(sin r / cos lat); when the cap reaches
  // over a pole, every longitude is within it.
  const ratio = Math.sin(angular) / Math.cos(toRadians(center.lat));
  const everyLongitude = ratio >= 1 || !Number.isFinite(ratio);
  const dLon = everyLongitude ? 360 : (Math.asin(ratio) * 180) / Math.PI;
  return {
    minLon: Math.max(-180, center.lon - dLon),
    maxLon: Math.min(180, center.lon + dLon),
    minLat: Math.max(-90, center.lat - dLat),
    maxLat: Math.min(90, center.lat + dLat),
  };
}
