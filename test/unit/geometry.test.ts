// Containment and distance at the edges of the data: vertices, edges, holes and their edges,
// multipolygons, concave rings, the tolerance, and the haversine against known distances.
import { describe, expect, it } from 'vitest';
import {
  areaContains,
  boundingBoxAround,
  EDGE_TOLERANCE_DEG,
  haversineKm,
  parseArea,
  polygonContains,
  ringPosition,
  roundKm,
  type Area,
  type Position,
} from '../../domain/geo/geometry.js';

const square = (x0: number, y0: number, x1: number, y1: number): Position[] => [
  [x0, y0],
  [x1, y0],
  [x1, y1],
  [x0, y1],
  [x0, y0],
];
const pt = (lon: number, lat: number) => ({ lon, lat });

describe('ringPosition', () => {
  const ring = square(0, 0, 10, 10);
  it('tells inside, outside and boundary apart', () => {
    expect(ringPosition(pt(5, 5), ring)).toBe('inside');
    expect(ringPosition(pt(15, 5), ring)).toBe('outside');
    expect(ringPosition(pt(-0.5, 5), ring)).toBe('outside');
    expect(ringPosition(pt(10, 5), ring)).toBe('boundary');
    expect(ringPosition(pt(5, 0), ring)).toBe('boundary');
  });

  it('counts every vertex as boundary', () => {
    for (const [x, y] of ring) expect(ringPosition(pt(x, y), ring)).toBe('boundary');
  });

  it('applies the 1e-6 degree tolerance on both sides of an edge', () => {
    expect(ringPosition(pt(10 + EDGE_TOLERANCE_DEG / 2, 5), ring)).toBe('boundary');
    expect(ringPosition(pt(10 - EDGE_TOLERANCE_DEG / 2, 5), ring)).toBe('boundary');
    expect(ringPosition(pt(10 + EDGE_TOLERANCE_DEG * 3, 5), ring)).toBe('outside');
    expect(ringPosition(pt(10 - EDGE_TOLERANCE_DEG * 3, 5), ring)).toBe('inside');
  });

  it('does not double-count a ray passing exactly through a vertex', () => {
    // A diamond: the ray from (0, 0) to +lon passes through the vertex (5, 0).
    const diamond: Position[] = [
      [0, -5],
      [5, 0],
      [0, 5],
      [-5, 0],
      [0, -5],
    ];
    expect(ringPosition(pt(0, 0), diamond)).toBe('inside');
    expect(ringPosition(pt(-6, 0), diamond)).toBe('outside');
    // A ray along a horizontal edge's line.
    expect(ringPosition(pt(-1, 10), square(0, 0, 10, 10))).toBe('outside');
  });

  it('handles a concave ring (the notch of a U is outside)', () => {
    const u: Position[] = [
      [0, 0],
      [9, 0],
      [9, 9],
      [6, 9],
      [6, 3],
      [3, 3],
      [3, 9],
      [0, 9],
      [0, 0],
    ];
    expect(ringPosition(pt(4.5, 6), u)).toBe('outside');
    expect(ringPosition(pt(1.5, 6), u)).toBe('inside');
    expect(ringPosition(pt(7.5, 6), u)).toBe('inside');
    expect(ringPosition(pt(4.5, 3), u)).toBe('boundary');
  });

  it('accepts a ring that is not explicitly closed and treats an empty ring as nothing', () => {
    expect(
      ringPosition(pt(5, 5), [
        [0, 0],
        [10, 0],
        [10, 10],
        [0, 10],
      ]),
    ).toBe('inside');
    expect(ringPosition(pt(5, 5), [])).toBe('outside');
  });
});

describe('polygonContains with holes', () => {
  const withHole = [square(0, 0, 10, 10), square(4, 4, 6, 6)];
  it('is outside strictly inside a hole, inside on the hole edge and vertex', () => {
    expect(polygonContains(withHole, pt(5, 5))).toBe(false);
    expect(polygonContains(withHole, pt(4, 5))).toBe(true);
    expect(polygonContains(withHole, pt(6, 6))).toBe(true);
    expect(polygonContains(withHole, pt(2, 2))).toBe(true);
    expect(polygonContains(withHole, pt(0, 0))).toBe(true);
    expect(polygonContains(withHole, pt(11, 5))).toBe(false);
  });

  it('treats several holes independently', () => {
    const twoHoles = [square(0, 0, 10, 10), square(1, 1, 3, 3), square(7, 7, 9, 9)];
    expect(polygonContains(twoHoles, pt(2, 2))).toBe(false);
    expect(polygonContains(twoHoles, pt(8, 8))).toBe(false);
    expect(polygonContains(twoHoles, pt(5, 5))).toBe(true);
  });

  it('contains nothing without rings', () => {
    expect(polygonContains([], pt(0, 0))).toBe(false);
  });
});

describe('areaContains', () => {
  const multi: Area = { type: 'MultiPolygon', coordinates: [[square(0, 0, 1, 1)], [square(5, 5, 6, 6), square(5.4, 5.4, 5.6, 5.6)]] };
  it('is inside when any polygon of a MultiPolygon contains the point', () => {
    expect(areaContains(multi, pt(0.5, 0.5))).toBe(true);
    expect(areaContains(multi, pt(5.2, 5.2))).toBe(true);
    expect(areaContains(multi, pt(3, 3))).toBe(false);
    expect(areaContains(multi, pt(5.5, 5.5))).toBe(false);
    expect(areaContains(multi, pt(6, 5.5))).toBe(true);
  });

  it('works on the demo city coordinates (the Kremlin hole of the centre zone)', () => {
    const centre: Area = {
      type: 'Polygon',
      coordinates: [square(37.585, 55.745, 37.65, 55.78), square(37.6125, 55.7495, 37.6215, 55.7535)],
    };
    expect(areaContains(centre, pt(37.6176, 55.752))).toBe(false);
    expect(areaContains(centre, pt(37.6125, 55.752))).toBe(true);
    expect(areaContains(centre, pt(37.6103, 55.7616))).toBe(true);
    // A swapped pair lands far away (and is refused by the API's ranges before it gets here).
    expect(areaContains(centre, pt(55.7616, 37.6103))).toBe(false);
  });
});

describe('parseArea', () => {
  it('accepts Polygon and MultiPolygon with closed rings of at least 4 positions', () => {
    expect(parseArea({ type: 'Polygon', coordinates: [square(0, 0, 1, 1)] })).not.toBeNull();
    expect(parseArea({ type: 'MultiPolygon', coordinates: [[square(0, 0, 1, 1)]] })).not.toBeNull();
  });

  it('refuses anything else', () => {
    const open = [
      [0, 0],
      [1, 0],
      [1, 1],
      [0, 1],
    ];
    for (const bad of [
      null,
      'Polygon',
      { type: 'Point', coordinates: [0, 0] },
      { type: 'Polygon', coordinates: [] },
      { type: 'Polygon', coordinates: [open] },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [0, 0],
          ],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, '1'],
            [0, 0],
          ],
        ],
      },
      {
        type: 'Polygon',
        coordinates: [
          [
            [0, 0],
            [1, 0],
            [1, 91],
            [0, 0],
          ],
        ],
      },
      { type: 'MultiPolygon', coordinates: [square(0, 0, 1, 1)] },
      { type: 'MultiPolygon', coordinates: [] },
    ]) {
      expect(parseArea(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});

describe('haversineKm', () => {
  it('matches known distances', () => {
    // One degree of latitude is 111.195 km on a sphere of radius 6371.0088 km.
    expect(haversineKm(pt(0, 0), pt(0, 1))).toBeCloseTo(111.195, 3);
    // A quarter of the equator.
    expect(haversineKm(pt(0, 0), pt(90, 0))).toBeCloseTo((Math.PI / 2) * 6371.0088, 6);
    // Moscow (Red Square) to Saint Petersburg (Palace Square): about 634 km.
    expect(haversineKm(pt(37.6208, 55.7539), pt(30.3141, 59.9386))).toBeGreaterThan(630);
    expect(haversineKm(pt(37.6208, 55.7539), pt(30.3141, 59.9386))).toBeLessThan(637);
  });

  it('is zero for the same point, symmetric, and finite for antipodes', () => {
    expect(haversineKm(pt(37.6, 55.7), pt(37.6, 55.7))).toBe(0);
    expect(haversineKm(pt(1, 2), pt(3, 4))).toBe(haversineKm(pt(3, 4), pt(1, 2)));
    expect(haversineKm(pt(0, 0), pt(180, 0))).toBeCloseTo(Math.PI * 6371.0088, 6);
  });

  it('rounds to metres for the API', () => {
    expect(roundKm(0.87449)).toBe(0.874);
    expect(roundKm(0.8745)).toBe(0.875);
  });
});

describe('boundingBoxAround', () => {
  it('contains every point at the radius in the four directions', () => {
    const c = pt(37.6, 55.75);
    const b = boundingBoxAround(c, 0.1);
    const north = pt(c.lon, c.lat + (0.1 / 6371.0088) * (180 / Math.PI));
    expect(b.maxLat).toBeCloseTo(north.lat, 9);
    // The eastern point at 100 m lies inside the box, and the box is not absurdly wide.
    const eastLon = c.lon + 0.0016;
    expect(haversineKm(c, pt(eastLon, c.lat))).toBeGreaterThan(0.1);
    expect(b.maxLon).toBeLessThan(eastLon);
    expect(b.maxLon - c.lon).toBeGreaterThan(0.0015);
  });

  it('takes every longitude near a pole', () => {
    const b = boundingBoxAround(pt(10, 89.9999), 50);
    expect(b.minLon).toBe(-180);
    expect(b.maxLon).toBe(180);
    expect(b.maxLat).toBe(90);
  });
});
