// Batch picking's pure rules (domain/picking/batching.ts): the proposal, the walk, the route
// yardstick and the tote rules.
import { describe, expect, it } from 'vitest';
import {
  compareSequence,
  handoffToteCount,
  holdsGoods,
  itemsOutsideTotes,
  proposeBatch,
  routePositionsPassed,
  stopKey,
  toteFit,
  totesNeeded,
  walkStops,
  type BatchCandidate,
} from '../../domain/picking/batching.js';

const at = (minutes: number) => new Date(Date.UTC(2026, 11, 2, 8, minutes));
const order = (orderId: string, dueMinutes: number, locations: string[], extra: Partial<BatchCandidate> = {}): BatchCandidate => ({
  orderId,
  isExpress: false,
  dueAt: at(dueMinutes),
  linesCount: locations.length,
  locations,
  ...extra,
});
const limits = { maxOrders: 3, maxLines: 120, dueWindowMinutes: 60 };

describe('proposeBatch', () => {
  it('starts with the most urgent order, express before any deadline', () => {
    const chosen = proposeBatch([order('a', 0, ['01']), order('x', 50, ['09'], { isExpress: true })], limits);
    expect(chosen.map((c) => c.candidate.orderId)).toEqual(['x', 'a']);
  });

  it('adds the order sharing most shelves, the earlier deadline breaking ties, within the window', () => {
    const chosen = proposeBatch(
      [
        order('first', 0, ['01', '02', '03']),
        order('none', 1, ['09']),
        order('two', 30, ['01', '02']),
        order('one', 5, ['03']),
        order('late', 61, ['01', '02', '03']),
      ],
      limits,
    );
    expect(chosen.map((c) => [c.candidate.orderId, c.sharedLocations])).toEqual([
      ['first', 0],
      ['two', 2],
      ['one', 1],
    ]);
  });

  it('keeps to the order and line limits, but never drops the most urgent order for its size', () => {
    const big = order('big', 0, ['01'], { linesCount: 200 });
    expect(proposeBatch([big, order('b', 1, ['01'])], limits).map((c) => c.candidate.orderId)).toEqual(['big']);
    const chosen = proposeBatch(
      [order('a', 0, ['01'], { linesCount: 60 }), order('b', 1, ['01'], { linesCount: 61 }), order('c', 2, [], { linesCount: 60 })],
      limits,
    );
    expect(chosen.map((c) => c.candidate.orderId)).toEqual(['a', 'c']);
    expect(proposeBatch([order('a', 0, []), order('b', 0, []), order('c', 0, [])], { ...limits, maxOrders: 2 })).toHaveLength(2);
    expect(proposeBatch([], limits)).toEqual([]);
  });
});

describe('the walk', () => {
  const line = (itemId: number, orderId: string, productId: string, sequence: string | null, position: number) => ({
    itemId,
    orderId,
    productId,
    sequence,
    position,
  });

  it('merges one product at one place into one stop, in route order, unlocated lines last and each alone', () => {
    const rank = (o: string) => (o === 'A' ? 0 : 1);
    const stops = walkStops(
      [
        line(1, 'A', 'p2', '02-A-1', 1),
        line(2, 'A', 'p1', '01-A-1', 2),
        line(3, 'B', 'p2', '02-A-1', 1),
        line(4, 'B', 'p9', null, 2),
        line(5, 'A', 'p9', null, 3),
      ],
      rank,
    );
    expect(stops.map((s) => [s.sequence, s.lines.map((l) => l.itemId)])).toEqual([
      ['01-A-1', [2]],
      ['02-A-1', [1, 3]],
      [null, [5]],
      [null, [4]],
    ]);
  });

  it('compares route keys by code unit, whatever a collation would say', () => {
    expect(['b', 'B-2', '10', '09', null, 'B-10'].sort(compareSequence)).toEqual(['09', '10', 'B-10', 'B-2', 'b', null]);
    expect(stopKey({ id: 7, sequence: null, productId: 'p' })).not.toBe(stopKey({ id: 8, sequence: null, productId: 'p' }));
    expect(stopKey({ id: 7, sequence: '01', productId: 'p' })).toBe(stopKey({ id: 8, sequence: '01', productId: 'p' }));
  });

  it('counts the route positions passed to the farthest stop, unlocated stops one each at the end', () => {
    const route = ['01', '02', '03', '04', '05'];
    expect(routePositionsPassed(route, ['02', '04'])).toBe(4);
    expect(routePositionsPassed(route, ['05', null, null])).toBe(7);
    expect(routePositionsPassed(route, [])).toBe(0);
    expect(routePositionsPassed(route, ['03', '01'])).toBe(3);
  });
});

describe('totes', () => {
  it('fit an item of their own order and class only', () => {
    expect(toteFit({ sessionId: 1, temperatureClass: 'chilled' }, { sessionId: 1, temperatureClass: 'chilled' })).toBe('fits');
    expect(toteFit({ sessionId: 2, temperatureClass: 'chilled' }, { sessionId: 1, temperatureClass: 'chilled' })).toBe('another_order');
    expect(toteFit({ sessionId: 1, temperatureClass: 'ambient' }, { sessionId: 1, temperatureClass: 'chilled' })).toBe(
      'another_temperature',
    );
  });

  it('are needed once per class, in a fixed order', () => {
    expect(totesNeeded(['frozen', 'ambient', 'frozen'])).toEqual(['ambient', 'frozen']);
    expect(totesNeeded([])).toEqual([]);
  });

  it('take goods in hand: picked, or picked and awaiting a confirmation', () => {
    expect(holdsGoods({ state: 'picked', clarificationKind: null, actual: null })).toBe(true);
    expect(holdsGoods({ state: 'awaiting_quantity', clarificationKind: null, actual: 1000n })).toBe(true);
    expect(holdsGoods({ state: 'awaiting_quantity', clarificationKind: null, actual: null })).toBe(false);
    expect(holdsGoods({ state: 'clarified', clarificationKind: 'weight_mismatch', actual: 1260n })).toBe(true);
    expect(holdsGoods({ state: 'clarified', clarificationKind: 'removed', actual: 1000n })).toBe(false);
    expect(holdsGoods({ state: 'missing', clarificationKind: null, actual: 1000n })).toBe(false);
    expect(holdsGoods({ state: 'pending', clarificationKind: null, actual: null })).toBe(false);
  });

  it('hand off those holding picked goods; a finish waits for every picked item to be in one', () => {
    const items = [
      { id: 1, state: 'picked' as const, tote_id: 10 },
      { id: 2, state: 'picked' as const, tote_id: 10 },
      { id: 3, state: 'picked' as const, tote_id: 11 },
      { id: 4, state: 'missing' as const, tote_id: 12 },
      { id: 5, state: 'picked' as const, tote_id: null },
    ];
    expect(handoffToteCount(items)).toBe(2);
    expect(itemsOutsideTotes(items)).toEqual([5]);
  });
});
