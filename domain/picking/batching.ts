// Batch picking's rules: which orders one walk picks together, the walk itself (the lines of all
// the batch's orders merged in the store's shelf order, one stop per product and location), and
// which tote a picked item may go into.
import type { ItemFacts } from './items.js';

export type TemperatureClass = 'ambient' | 'chilled' | 'frozen';

// ---------------------------------------------------------------------------------------------
// The proposal

/** An order waiting for picking, as the proposal weighs it. */
export interface BatchCandidate {
  orderId: string;
  isExpress: boolean;
  /** When the order must be picked (the queue's deadline). */
  dueAt: Date;
  linesCount: number;
  /** The shelf locations its lines stand at (location sequences; unlocated lines left out). */
  locations: readonly string[];
}

export interface BatchLimits {
  maxOrders: number;
  maxLines: number;
  /** Orders due this long after the most urgent one may join its batch. */
  dueWindowMinutes: number;
}

export interface ProposedOrder {
  candidate: BatchCandidate;
  /** Locations this order shares with the orders chosen before it. */
  sharedLocations: number;
}

/** Most urgent first: express orders, then by deadline; equals keep their order (the queue's: oldest first). */
export const byUrgency = (a: BatchCandidate, b: BatchCandidate): number =>
  Number(b.isExpress) - Number(a.isExpress) || a.dueAt.getTime() - b.dueAt.getTime();

/**
 * The orders one walk should pick together. The most urgent order always comes first, so an
 * express order is never held back to fill a batch; then, from the orders due within the window
 * after it, the one sharing the most shelf locations with those already chosen joins, the
 * earlier deadline breaking ties, while the batch stays within its order and line limits.
 */
export function proposeBatch(candidates: readonly BatchCandidate[], limits: BatchLimits): ProposedOrder[] {
  const queue = [...candidates].sort(byUrgency);
  const first = queue.shift();
  if (!first) return [];
  const chosen: ProposedOrder[] = [{ candidate: first, sharedLocations: 0 }];
  const visited = new Set(first.locations);
  let lines = first.linesCount;
  const horizon = first.dueAt.getTime() + limits.dueWindowMinutes * 60_000;
  let pool = queue.filter((c) => c.dueAt.getTime() <= horizon);
  while (chosen.length < limits.maxOrders) {
    pool = pool.filter((c) => lines + c.linesCount <= limits.maxLines);
    let best: ProposedOrder | null = null;
    for (const c of pool) {
      const shared = new Set(c.locations.filter((l) => visited.has(l))).size;
      if (!best || shared > best.sharedLocations) best = { candidate: c, sharedLocations: shared };
    }
    if (!best) break;
    chosen.push(best);
    lines += best.candidate.linesCount;
    for (const l of best.candidate.locations) visited.add(l);
    pool = pool.filter((c) => c !== best.candidate);
  }
  return chosen;
}

// ---------------------------------------------------------------------------------------------
// The walk

/** A line of one order's session, as the walk places it. */
export interface WalkLine {
  itemId: number;
  orderId: string;
  productId: string;
  /** The store's route key; null walks last. */
  sequence: string | null;
  /** Position of the item in its own session (the order's own walking order). */
  position: number;
}

export interface Stop<L extends WalkLine> {
  productId: string;
  sequence: string | null;
  lines: L[];
}

/** Which stop a line is walked at: its product at its place; unlocated lines cannot merge by place, each is its own stop. */
export const stopKey = (line: { id: number; sequence: string | null; productId: string }): string =>
  line.sequence === null ? `line:${line.id}` : `${line.sequence}\u0000${line.productId}`;

/** Compares route keys: located before unlocated, then as text (the keys are made to sort so). */
export const compareSequence = (a: string | null, b: string | null): number =>
  a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1;

/**
 * The batch's walk: every line of every order in the store's shelf order, lines of one product
 * at one location merged into one stop (the same product for two orders is one stop, two totes).
 * Ties keep each order's own order, so a batch of one walks exactly as its session lists.
 */
export function walkStops<L extends WalkLine>(lines: readonly L[], orderRank: (orderId: string) => number): Stop<L>[] {
  const inOrderOfOrders = (a: L, b: L) => orderRank(a.orderId) - orderRank(b.orderId) || a.position - b.position;
  const byKey = new Map<string, Stop<L>>();
  for (const line of [...lines].sort(inOrderOfOrders)) {
    const key = stopKey({ id: line.itemId, sequence: line.sequence, productId: line.productId });
    const stop = byKey.get(key);
    if (stop) stop.lines.push(line);
    else byKey.set(key, { productId: line.productId, sequence: line.sequence, lines: [line] });
  }
  return [...byKey.values()].sort((a, b) => compareSequence(a.sequence, b.sequence) || inOrderOfOrders(a.lines[0]!, b.lines[0]!));
}

/**
 * Shelf positions a walk passes along the store's route: from the entrance to its farthest stop,
 * counted in the store's located positions (`route`, sorted). Unlocated stops count one each, at
 * the end of the route. Picking orders one after another passes the route once per order.
 */
export function routePositionsPassed(route: readonly string[], stops: readonly (string | null)[]): number {
  let farthest = 0;
  let unlocated = 0;
  for (const s of stops) {
    if (s === null) {
      unlocated++;
      continue;
    }
    farthest = Math.max(farthest, upperIndex(route, s));
  }
  return farthest + unlocated;
}

/** How many route positions sort at or before `key`. */
function upperIndex(route: readonly string[], key: string): number {
  let lo = 0;
  let hi = route.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareSequence(route[mid]!, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// ---------------------------------------------------------------------------------------------
// Totes

/** Whether an item holds goods the picker has in hand: picked, or picked and awaiting a confirmation. */
export const holdsGoods = (f: Pick<ItemFacts, 'state' | 'clarificationKind' | 'actual'>): boolean =>
  f.state === 'picked' ||
  (f.actual !== null &&
    (f.state === 'awaiting_quantity' ||
      (f.state === 'clarified' && (f.clarificationKind === 'quantity_mismatch' || f.clarificationKind === 'weight_mismatch'))));

/** What a tote scanned for an item is to it. */
export type ToteFit = 'fits' | 'another_order' | 'another_temperature';

export function toteFit(
  tote: { sessionId: number; temperatureClass: TemperatureClass },
  item: { sessionId: number; temperatureClass: TemperatureClass },
): ToteFit {
  if (tote.sessionId !== item.sessionId) return 'another_order';
  return tote.temperatureClass === item.temperatureClass ? 'fits' : 'another_temperature';
}

/** The temperature classes a session's items need a tote for, in a fixed order. */
export function totesNeeded(classes: readonly TemperatureClass[]): TemperatureClass[] {
  const order: TemperatureClass[] = ['ambient', 'chilled', 'frozen'];
  return order.filter((c) => classes.includes(c));
}

/** Items a finish of a batch session refuses: picked but in no tote. */
export const itemsOutsideTotes = <I extends { id: number; state: ItemFacts['state']; tote_id: number | null }>(
  items: readonly I[],
): number[] => items.filter((i) => i.state === 'picked' && i.tote_id === null).map((i) => i.id);

/** The totes an order is handed over in: those holding at least one picked item. */
export const handoffToteCount = (items: readonly { state: ItemFacts['state']; tote_id: number | null }[]): number =>
  new Set(items.filter((i) => i.state === 'picked' && i.tote_id !== null).map((i) => i.tote_id)).size;
