// Changes of an order's lines before picking (OrderChangeInput): which orders may change, the
// rules of the change list, the verdict on the changed lines against the store (checkout's
// availability rule, counting what the line already holds), the order's new lines and totals,
// the stock each inventory row gives or takes, and how an online payment settles the new total.
import { decideAvailability, parseRequestedQuantity, QUANTITY_PROBLEMS, type QuantityUnit } from '../catalog/availability.js';
import { formatDecimal, parseDecimal } from '../money/decimal.js';
import { kopecks, lineTotal, money } from '../money/money.js';
import type { FailingLine } from './checkout.js';
import { replacementShapeProblem, storedReplacement, type ReplacementInput, type StoredReplacement } from './replacement.js';
import type { OrderStatus, PaymentStatus } from './vocabulary.js';

// ------------------------------------------------------------------------------------------------
// Which orders may change

export type Changeability = 'changeable' | 'PICKING_STARTED' | 'ORDER_NOT_CHANGEABLE';

const CHANGEABLE: readonly OrderStatus[] = ['created', 'awaiting_payment', 'confirmed'];

/**
 * Whether the lines may change now: until a picker starts the order. A session once started -
 * even one its picker released since - ends the changes: what the picker saw is what stays.
 * Past `confirmed` (picked, cancelled, delivered...) the order is not changeable at all.
 */
export function changeability(status: OrderStatus, pickingStarted: boolean): Changeability {
  if (status === 'picking') return 'PICKING_STARTED';
  if (!CHANGEABLE.includes(status)) return 'ORDER_NOT_CHANGEABLE';
  return pickingStarted ? 'PICKING_STARTED' : 'changeable';
}

// ------------------------------------------------------------------------------------------------
// The change list

export type ChangeOp = 'add' | 'remove' | 'set_quantity' | 'set_replacement';

/** One change as sent (OrderLineChangeInput). */
export interface LineChange {
  op: ChangeOp;
  item_id?: number;
  product_id?: string;
  unit_id?: string;
  quantity?: string | number;
  replacement?: ReplacementInput | null;
}

type Field = Exclude<keyof LineChange, 'op'>;
const FIELDS: readonly Field[] = ['item_id', 'product_id', 'unit_id', 'quantity', 'replacement'];

/** The fields each op needs, and the ones it may take besides (OrderChangeInput's table). */
const OP_FIELDS: Record<ChangeOp, { needs: readonly Field[]; may: readonly Field[] }> = {
  add: { needs: ['product_id', 'unit_id', 'quantity'], may: ['replacement'] },
  remove: { needs: ['item_id'], may: [] },
  set_quantity: { needs: ['item_id', 'quantity'], may: [] },
  set_replacement: { needs: ['item_id', 'replacement'], may: [] },
};

export interface ChangeViolation {
  code: 'INVALID_ORDER_CHANGE' | 'REPLACEMENT_PREFERENCE_INVALID' | 'ORDER_LINE_NOT_FOUND' | 'DUPLICATE_ITEM' | 'ORDER_WOULD_BE_EMPTY';
  detail: string;
}

/**
 * The first change that lacks a field its op needs or has one it does not take
 * (INVALID_ORDER_CHANGE), then the first preference breaking its own rule
 * (REPLACEMENT_PREFERENCE_INVALID); null when every change is well formed. `null` is a value of
 * `replacement` (back to the order's absence_action), so it counts as sent.
 */
export function changeListViolation(changes: readonly LineChange[]): ChangeViolation | null {
  for (const [i, change] of changes.entries()) {
    const rule = OP_FIELDS[change.op];
    const missing = rule.needs.find((f) => change[f] === undefined);
    if (missing) return { code: 'INVALID_ORDER_CHANGE', detail: `Change ${i + 1} (${change.op}) needs ${missing}` };
    const extra = FIELDS.find((f) => change[f] !== undefined && !rule.needs.includes(f) && !rule.may.includes(f));
    if (extra) return { code: 'INVALID_ORDER_CHANGE', detail: `Change ${i + 1} (${change.op}) does not take ${extra}` };
  }
  for (const [i, change] of changes.entries()) {
    const problem = replacementShapeProblem(change.replacement);
    if (problem) return { code: 'REPLACEMENT_PREFERENCE_INVALID', detail: `Change ${i + 1}: ${problem}` };
  }
  return null;
}

/** A line of the order as it stands (order_items), quantity in thousandths. */
export interface OrderLine {
  id: number;
  productId: string;
  unitId: string;
  inventoryId: string | null;
  quantity: bigint;
  unitPrice: string;
  oldPrice: string | null;
  lineTotal: string;
  preference: StoredReplacement;
}

/** A line whose quantity is asked for anew (added, or set): priced and judged against the store. */
export interface PricedRequest {
  /** 1-based position in the change list (for the refusal's detail). */
  changeNo: number;
  productId: string;
  unitId: string;
  quantity: string | number;
  /** The line it changes (null: an added line). */
  line: OrderLine | null;
  preference: StoredReplacement;
}

export interface ChangePlan {
  removed: OrderLine[];
  /** Lines kept as they are but for their preference. */
  repreferred: { line: OrderLine; preference: StoredReplacement }[];
  /** Lines whose quantity is set, and lines added, in the order of the changes. */
  priced: PricedRequest[];
  /** Lines left untouched by the change (their price stays). */
  untouched: OrderLine[];
}

/** How many lines the order has after the change. */
export const linesAfter = (plan: ChangePlan): number => plan.untouched.length + plan.repreferred.length + plan.priced.length;

const pairOf = (productId: string, unitId: string) => `${productId.toLowerCase()}/${unitId.toLowerCase()}`;

/**
 * The change list against the order's lines: an item_id that is not a line
 * (ORDER_LINE_NOT_FOUND), one line changed twice or an added product/unit pair already on the
 * order or added twice (DUPLICATE_ITEM), no line left (ORDER_WOULD_BE_EMPTY); else what happens
 * to each line. The list is assumed well formed (changeListViolation).
 */
export function planChange(changes: readonly LineChange[], lines: readonly OrderLine[]): ChangeViolation | ChangePlan {
  const byId = new Map(lines.map((l) => [l.id, l]));
  const touched = new Set<number>();
  const pairs = new Set(lines.map((l) => pairOf(l.productId, l.unitId)));
  const plan: ChangePlan = { removed: [], repreferred: [], priced: [], untouched: [] };
  for (const [i, change] of changes.entries()) {
    const changeNo = i + 1;
    if (change.op === 'add') {
      const pair = pairOf(change.product_id!, change.unit_id!);
      if (pairs.has(pair))
        return {
          code: 'DUPLICATE_ITEM',
          detail: `Change ${changeNo} adds a product and unit already on the order; set its quantity instead`,
        };
      pairs.add(pair);
      plan.priced.push({
        changeNo,
        productId: change.product_id!.toLowerCase(),
        unitId: change.unit_id!.toLowerCase(),
        quantity: change.quantity!,
        line: null,
        preference: storedReplacement(change.replacement),
      });
      continue;
    }
    const line = byId.get(change.item_id!);
    if (!line) return { code: 'ORDER_LINE_NOT_FOUND', detail: `Change ${changeNo}: item ${change.item_id} is not a line of this order` };
    if (touched.has(line.id)) return { code: 'DUPLICATE_ITEM', detail: `Change ${changeNo} changes item ${line.id} a second time` };
    touched.add(line.id);
    if (change.op === 'remove') plan.removed.push(line);
    else if (change.op === 'set_replacement') plan.repreferred.push({ line, preference: storedReplacement(change.replacement) });
    else
      plan.priced.push({
        changeNo,
        productId: line.productId,
        unitId: line.unitId,
        quantity: change.quantity!,
        line,
        preference: line.preference,
      });
  }
  plan.untouched = lines.filter((l) => !touched.has(l.id));
  if (linesAfter(plan) === 0)
    return { code: 'ORDER_WOULD_BE_EMPTY', detail: 'The changes would leave the order without lines; cancel it instead' };
  return plan;
}

// ------------------------------------------------------------------------------------------------
// The priced lines against the store

/** What the store knows of a priced line's product and unit (null inventory: not sold here in it). */
export interface ChangeLineFacts {
  productExists: boolean;
  unit: QuantityUnit | null;
  inventory: { id: string; stock: string | null; orderQuantityLimit: string | null; unitPrice: string; oldPrice: string | null } | null;
}

/** A priced line with its quantity read and the store's facts: what the change does to it. */
export interface JudgedLine {
  request: PricedRequest;
  quantity: bigint;
  facts: ChangeLineFacts;
}

export type QuantitiesVerdict =
  | { ok: true; lines: JudgedLine[] }
  | { ok: false; code: 'INVALID_QUANTITY'; detail: string }
  | { ok: false; code: 'UNKNOWN_PRODUCT'; detail: string; lines: FailingLine[] };

const failingLine = (line: JudgedLine, available: string, reason: FailingLine['reason_code']): FailingLine => ({
  product_id: line.request.productId,
  unit_id: line.request.unitId,
  requested_quantity: formatDecimal(line.quantity, 3),
  available_quantity: available,
  reason_code: reason,
});

/**
 * The priced lines' quantities by their unit's rule, as at checkout (INVALID_QUANTITY: the
 * first breaking it), then the added lines the store does not sell (UNKNOWN_PRODUCT, every one
 * in `lines`). `facts` are in the order of `priced`.
 */
export function readPricedLines(priced: readonly PricedRequest[], facts: readonly ChangeLineFacts[]): QuantitiesVerdict {
  const lines: JudgedLine[] = [];
  for (const [i, request] of priced.entries()) {
    const q = parseRequestedQuantity(request.quantity, facts[i]!.unit);
    if (!q.ok)
      return {
        ok: false,
        code: 'INVALID_QUANTITY',
        detail: `Change ${request.changeNo}: quantity ${JSON.stringify(request.quantity)} ${QUANTITY_PROBLEMS[q.problem]}`,
      };
    lines.push({ request, quantity: q.thousandths, facts: facts[i]! });
  }
  const unsold = lines.flatMap((l) =>
    !l.request.line && !(l.facts.productExists && l.facts.inventory)
      ? [failingLine(l, '0.000', l.facts.productExists ? 'NOT_SOLD_IN_STORE' : 'UNKNOWN_PRODUCT')]
      : [],
  );
  if (unsold.length)
    return { ok: false, code: 'UNKNOWN_PRODUCT', detail: `${unsold.length} added line(s) are not sold in this store`, lines: unsold };
  return { ok: true, lines };
}

const STOCK_CODES = ['OUT_OF_STOCK', 'LIMIT_EXCEEDED', 'ITEM_UNAVAILABLE'] as const;
const stockCodeOf = (reason: FailingLine['reason_code']): (typeof STOCK_CODES)[number] =>
  reason === 'OUT_OF_STOCK' ? 'OUT_OF_STOCK' : reason === 'LIMIT_EXCEEDED' ? 'LIMIT_EXCEEDED' : 'ITEM_UNAVAILABLE';

/**
 * Checkout's availability rule on the priced lines, except that a line already on the order
 * counts what it holds of the row as its own (setting 3 where 2 are held needs one more in
 * stock): every failing line listed, `code` the first of OUT_OF_STOCK, LIMIT_EXCEEDED,
 * ITEM_UNAVAILABLE that applies; null when all can be had.
 */
export function stockVerdict(
  lines: readonly JudgedLine[],
): { code: (typeof STOCK_CODES)[number]; detail: string; lines: FailingLine[] } | null {
  const failed: FailingLine[] = [];
  for (const line of lines) {
    const { request, facts } = line;
    const inventory = facts.inventory;
    const held = request.line && inventory && request.line.inventoryId === inventory.id ? request.line.quantity : 0n;
    const stock = inventory ? formatDecimal((inventory.stock === null ? 0n : (parseDecimal(inventory.stock, 3) ?? 0n)) + held, 3) : null;
    const verdict = decideAvailability(
      line.quantity,
      facts.productExists,
      inventory ? { stock, orderQuantityLimit: inventory.orderQuantityLimit } : null,
    );
    if (verdict.reason_code) failed.push(failingLine(line, verdict.max_quantity, verdict.reason_code));
  }
  if (!failed.length) return null;
  const code = STOCK_CODES.find((c) => failed.some((l) => stockCodeOf(l.reason_code) === c))!;
  return { code, detail: `${failed.length} line(s) cannot be ordered: ${failed.map((l) => l.reason_code).join(', ')}`, lines: failed };
}

// ------------------------------------------------------------------------------------------------
// The order after the change

/** A line set or added at the store's current price. */
export interface PricedLine {
  /** The line it changes; null for an added line. */
  lineId: number | null;
  productId: string;
  unitId: string;
  inventoryId: string;
  quantity: string;
  unitPrice: string;
  oldPrice: string | null;
  lineTotal: string;
  preference: StoredReplacement;
}

export interface ChangeOutcome {
  removedIds: number[];
  /** Lines whose only change is their preference. */
  repreferred: { lineId: number; preference: StoredReplacement }[];
  priced: PricedLine[];
  goodsTotal: bigint;
  linesCount: number;
  /** Per inventory row, what the change gives back (positive) or takes (negative), thousandths; no zero entries. */
  stock: { inventoryId: string; delta: bigint }[];
}

/**
 * The order's lines and goods total after the change, and the stock it moves: a removed line gives
 * back what it holds, a set quantity holds the new quantity instead of the old one (at the
 * store's current price), an added line takes its quantity; untouched lines keep their price.
 * Every priced line has passed stockVerdict (it is sold here: its inventory row is known).
 */
export function changeOutcome(plan: ChangePlan, judged: readonly JudgedLine[]): ChangeOutcome {
  const moves = new Map<string, bigint>();
  const move = (inventoryId: string | null, delta: bigint) => {
    if (inventoryId !== null) moves.set(inventoryId, (moves.get(inventoryId) ?? 0n) + delta);
  };
  for (const line of plan.removed) move(line.inventoryId, line.quantity);
  const priced = judged.map(({ request, quantity, facts }): PricedLine => {
    const inventory = facts.inventory!;
    if (request.line) move(request.line.inventoryId, request.line.quantity);
    move(inventory.id, -quantity);
    return {
      lineId: request.line?.id ?? null,
      productId: request.productId,
      unitId: request.unitId,
      inventoryId: inventory.id,
      quantity: formatDecimal(quantity, 3),
      unitPrice: inventory.unitPrice,
      oldPrice: inventory.oldPrice,
      lineTotal: money(lineTotal(quantity, kopecks(inventory.unitPrice))),
      preference: request.preference,
    };
  });
  // Lines whose price stays: untouched, or changed in their preference only.
  const kept = [...plan.untouched, ...plan.repreferred.map((r) => r.line)];
  const goodsTotal = [...kept.map((l) => l.lineTotal), ...priced.map((p) => p.lineTotal)].reduce((sum, t) => sum + kopecks(t), 0n);
  return {
    removedIds: plan.removed.map((l) => l.id),
    repreferred: plan.repreferred.map((r) => ({ lineId: r.line.id, preference: r.preference })),
    priced,
    goodsTotal,
    linesCount: linesAfter(plan),
    stock: [...moves].filter(([, delta]) => delta !== 0n).map(([inventoryId, delta]) => ({ inventoryId, delta })),
  };
}

/**
 * Whether the change makes an express order break its line limit (EXPRESS_ITEMS_LIMIT): more lines
 * than the store takes, and more than before - an order over a limit lowered since it was placed
 * may still shed lines or change others.
 */
export const breaksExpressLimit = (linesBefore: number, linesAfter: number, max: number | null): boolean =>
  max !== null && linesAfter > max && linesAfter > linesBefore;

/**
 * Whether the change takes the goods total below the minimum (BELOW_MINIMUM_ORDER): under it, and
 * lower than before - as with the express limit, a minimum raised since the order was placed does
 * not refuse a change that leaves the total as it was or raises it.
 */
export const breaksMinimum = (goodsBefore: bigint, goodsAfter: bigint, minimum: bigint): boolean =>
  goodsAfter < minimum && goodsAfter < goodsBefore;

// ------------------------------------------------------------------------------------------------
// Payment

export type PaymentSettlement =
  /** Nothing to settle: cash, or the total did not move. */
  | { kind: 'none' }
  /** Not paid yet: the payment still awaits the whole (new) total; an open invoice is replaced. */
  | { kind: 'unpaid' }
  /** Paid for more than the new total: the surplus goes back to the card; the order is paid. */
  | { kind: 'refund'; amount: bigint }
  /** What was paid is the new total exactly: paid. */
  | { kind: 'settled' }
  /** Paid for less than the new total: the difference is due (a new invoice). */
  | { kind: 'collect'; amount: bigint };

/**
 * How an online order settles a new total, as re-pricing after picking does: `paid` is what its
 * paid invoices brought less what was (or is being) returned of it as differences. Nothing paid
 * yet: it keeps awaiting the whole total.
 */
export function settleNewTotal(
  order: { paymentMethod: 'cash' | 'online'; paymentStatus: PaymentStatus; oldTotal: bigint; newTotal: bigint },
  paid: { any: boolean; net: bigint },
): PaymentSettlement {
  if (order.paymentMethod !== 'online' || order.oldTotal === order.newTotal) return { kind: 'none' };
  if (!paid.any) return { kind: 'unpaid' };
  if (order.newTotal < paid.net) return { kind: 'refund', amount: paid.net - order.newTotal };
  if (order.newTotal === paid.net) return { kind: 'settled' };
  return { kind: 'collect', amount: order.newTotal - paid.net };
}
