// THE picking item state machine (spec: PickingItemSchema, "Picking item" of the interface spec),
// written as one table of rows - state, trigger, condition, next state, also - that reads against
// the spec's table (ITEM_TABLE below). The handlers apply it; a test walks every row and every
// state x trigger the table leaves out. Pure: values in, values out; a refusal is a domain
// outcome (its code), whose HTTP status services/errors.ts chooses.
//
// Quantities are bigint thousandths: pieces x 1000 ("2.000" is 2000n) and kilograms in grams
// ("0.930" is 930n). Money is bigint kopecks. No value passes through a JS float.
//
// Decisions where the interface spec is silent (also written in the spec's PickingItemSchema):
//   - scan of a piece item adds one piece (awaiting_quantity until the ordered count, then picked);
//     a scan of a weight item's own barcode confirms the product (pending -> awaiting_quantity);
//     a scale label with the item's PLU weighs it, exactly like the weight command;
//   - replacement records the substitute and then applies the barcode as a scan of it;
//   - a full-quantity piece-quantity call picks the item;
//   - a command that leaves the item exactly as it was answers `ok` with `applied: false`.
//   - check order inside a command: the item kind, the item state, then the value rules that
//     need the item (above ordered, confirmed value missing, value differs): the table's row order.

import type { ErrorCode } from '../errors.js';
import { lineTotal } from '../money/money.js';

export type ItemState = 'pending' | 'awaiting_quantity' | 'picked' | 'missing' | 'clarified';
export type ClarificationKind = 'removed' | 'quantity_mismatch' | 'weight_mismatch' | 'store_transfer_shortage';
export type MissingAction = 'call' | 'remove';
export type PickSource = 'scan' | 'scale_label' | 'manual' | 'weight';
/** The business outcome of a command (PickingActionOutput.status). */
export type ItemOutcome = 'ok' | 'clarification_required' | 'mismatch' | 'not_found' | 'already_picked' | 'same_product' | 'kind_mismatch';
/** The state in the spec's notation: `clarified/<kind>` for clarified items. */
export type StateKey = Exclude<ItemState, 'clarified'> | `clarified/${ClarificationKind}`;

export interface Tolerance {
  /** Tenths of a percent ("10.0" is 100n). */
  percentTenths: bigint;
  min: bigint;
  max: bigint;
}

/** What the state machine knows of an item. */
export interface ItemFacts {
  state: ItemState;
  clarificationKind: ClarificationKind | null;
  missingAction: MissingAction | null;
  isWeightBased: boolean;
  ordered: bigint;
  actual: bigint | null;
  confirmed: bigint | null;
  pickSource: PickSource | null;
  lastScannedBarcode: string | null;
  /** PLU of the scale label that weighed the item. */
  labelPlu: string | null;
  /** Whether a replacement product is chosen (its data lives with the item, outside the machine). */
  hasReplacement: boolean;
  tolerance: Tolerance | null;
}

/** How a scanned barcode relates to the product the item is to be picked as. */
export type ScanMatch =
  /** The item's product (the replacement once one is chosen): its own barcode, or a scale label with its PLU and a weight. */
  | { kind: 'item_product'; labelWeight: bigint | null; labelPlu: string | null }
  | { kind: 'other_product' }
  /** Not sold in the session's store, unknown, or a wrong check digit. */
  | { kind: 'unknown' };

/** How a barcode sent as a replacement relates to the missing item. */
export type ReplacementMatch =
  | { kind: 'substitute'; isWeightBased: boolean; labelWeight: bigint | null; labelPlu: string | null }
  | { kind: 'same_product' }
  | { kind: 'unknown' };

export type ItemCommand =
  | { type: 'scan'; barcode: string; match: ScanMatch }
  | { type: 'weight'; weight: bigint; barcode: string | null; match: ScanMatch | null }
  | { type: 'piece_quantity'; quantity: bigint }
  | { type: 'manual_pick'; quantity: bigint; confirm: boolean }
  | { type: 'missing'; action: MissingAction }
  | { type: 'resolve'; resolution: 'remove' }
  | { type: 'reopen'; reason: 'found_in_store' | 'recheck' }
  | { type: 'confirm'; resolution: 'quantity_mismatch' | 'weight_mismatch' | null; quantity: bigint | null; quantityKg: bigint | null }
  | { type: 'replacement'; barcode: string; match: ReplacementMatch };

export type RefusalCode = Extract<
  ErrorCode,
  | 'ITEM_STATE_CONFLICT'
  | 'ITEM_IS_WEIGHT_BASED'
  | 'ITEM_NOT_WEIGHT_BASED'
  | 'CONFIRMED_QUANTITY_MISMATCH'
  | 'QUANTITY_ABOVE_ORDERED'
  | 'CONFIRMED_QUANTITY_REQUIRED'
>;

/** A command the item's state, kind or values do not allow: a domain outcome (services/errors.ts ERROR_STATUS gives its HTTP status). */
export type Refusal = { ok: false; code: RefusalCode };

/** What happens to the chosen replacement: kept, cleared, or set to the scanned substitute. */
export type ReplacementEffect = 'keep' | 'clear' | 'set';

export type Transition =
  | { ok: true; outcome: ItemOutcome; applied: boolean; next: ItemFacts; replacement: ReplacementEffect; labelWeight: bigint | null }
  | Refusal;

export const UNIT = 1000n;

export const stateKey = (f: Pick<ItemFacts, 'state' | 'clarificationKind'>): StateKey =>
  f.state === 'clarified' ? (`clarified/${f.clarificationKind}` as StateKey) : f.state;

/** Resolved items let the session finish (spec: PickingSessionSchema). */
export const RESOLVED_STATES: readonly StateKey[] = ['picked', 'clarified/removed', 'clarified/store_transfer_shortage'];
export const isResolved = (f: Pick<ItemFacts, 'state' | 'clarificationKind'>): boolean => RESOLVED_STATES.includes(stateKey(f));

/** Tolerance bounds: ordered x (1 -/+ percent/100), rounded half-up to grams. */
export function toleranceFor(ordered: bigint, percentTenths: bigint): Tolerance {
  const scaled = (factorTenths: bigint) => (ordered * factorTenths + 500n) / 1000n;
  const min = scaled(1000n - percentTenths);
  return { percentTenths, min: min < 1n ? 1n : min, max: scaled(1000n + percentTenths) };
}

export const withinTolerance = (weight: bigint, t: Tolerance): boolean => weight >= t.min && weight <= t.max;

/**
 * The item's contribution to the session's current total (PaymentSummarySchema): the actual
 * quantity once recorded, the ordered quantity while it is still expected, nothing for an item
 * that will not be delivered. `priceKopecks` is the replacement's price when one is chosen.
 */
export function currentLineTotal(f: ItemFacts, priceKopecks: bigint): bigint {
  switch (stateKey(f)) {
    case 'pending':
    case 'awaiting_quantity':
      return lineTotal(f.ordered, priceKopecks);
    case 'picked':
    case 'clarified/quantity_mismatch':
    case 'clarified/weight_mismatch':
      return lineTotal(f.actual ?? f.ordered, priceKopecks);
    default:
      return 0n;
  }
}

const sameFacts = (a: ItemFacts, b: ItemFacts): boolean =>
  a.state === b.state &&
  a.clarificationKind === b.clarificationKind &&
  a.missingAction === b.missingAction &&
  a.actual === b.actual &&
  a.confirmed === b.confirmed &&
  a.pickSource === b.pickSource &&
  a.lastScannedBarcode === b.lastScannedBarcode &&
  a.labelPlu === b.labelPlu &&
  a.hasReplacement === b.hasReplacement;

const done = (
  before: ItemFacts,
  outcome: ItemOutcome,
  next: ItemFacts,
  replacement: ReplacementEffect = 'keep',
  labelWeight: bigint | null = null,
): Transition => ({ ok: true, outcome, applied: replacement !== 'keep' || !sameFacts(before, next), next, replacement, labelWeight });

const unchanged = (f: ItemFacts, outcome: ItemOutcome, labelWeight: bigint | null = null): Transition => ({
  ok: true,
  outcome,
  applied: false,
  next: f,
  replacement: 'keep',
  labelWeight,
});

const as = (f: ItemFacts, state: ItemState, kind: ClarificationKind | null = null): ItemFacts => ({ ...f, state, clarificationKind: kind });

/** The item weighed (the weight command, a scale label, a weighed substitute): picked inside the tolerance, else a weight mismatch to confirm. */
function weighed(f: ItemFacts, weight: bigint, source: PickSource, barcode: string | null, labelPlu: string | null): ItemFacts {
  const base: ItemFacts = {
    ...f,
    actual: weight,
    pickSource: source,
    lastScannedBarcode: barcode ?? f.lastScannedBarcode,
    labelPlu: source === 'scale_label' ? labelPlu : null,
  };
  if (fits(f, weight)) return { ...as(base, 'picked'), confirmed: null };
  return { ...as(base, 'clarified', 'weight_mismatch'), confirmed: weight };
}

/** A weight item always has a tolerance; without one only the exact ordered weight fits. */
const fits = (f: ItemFacts, weight: bigint) => (f.tolerance ? withinTolerance(weight, f.tolerance) : weight === f.ordered);

/** The weight on a scale label the barcode is (null for a product's own barcode or another kind of match). */
const labelOf = (m: ScanMatch | ReplacementMatch): bigint | null => ('labelWeight' in m ? m.labelWeight : null);
const labelPluOf = (m: ScanMatch | ReplacementMatch): string | null => ('labelPlu' in m ? m.labelPlu : null);

/** A scale label weighs `f` (the item, or the item with its substitute chosen); `before` is the item the command found. */
function labelWeighed(
  f: ItemFacts,
  cmd: { barcode: string; match: ScanMatch | ReplacementMatch },
  replacement: ReplacementEffect,
  before: ItemFacts = f,
): Transition {
  const weight = labelOf(cmd.match)!;
  const next = weighed(f, weight, 'scale_label', cmd.barcode, labelPluOf(cmd.match));
  return done(before, next.state === 'picked' ? 'ok' : 'clarification_required', next, replacement, weight);
}

/** A piece counted by a scan of the item's product: one more, picked at the ordered count. */
function pieceCounted(f: ItemFacts, barcode: string): ItemFacts {
  const actual = (f.actual ?? 0n) + UNIT;
  const base: ItemFacts = { ...f, actual, confirmed: null, pickSource: 'scan', lastScannedBarcode: barcode, labelPlu: null };
  return as(base, actual >= f.ordered ? 'picked' : 'awaiting_quantity');
}

/** A count typed in keeps `scan` as the source when a scan confirmed the product; otherwise it is manual. */
const countSource = (f: ItemFacts): PickSource => (f.lastScannedBarcode ? 'scan' : 'manual');

// ---------------------------------------------------------------------------------------------
// THE table: one row per (states, trigger, condition) -> next state, also

/** The commands, named as the spec's table and paths name them (the Trigger column). */
export const TRIGGERS = {
  scan: 'scan',
  weight: 'weight',
  piece_quantity: 'piece-quantity',
  manual_pick: 'manual-pick',
  missing: 'missing',
  resolve: 'clarification/resolve',
  reopen: 'clarification/reopen',
  confirm: 'clarification/confirm',
  replacement: 'replacement',
} as const satisfies Record<ItemCommand['type'], string>;
export type Trigger = ItemCommand['type'];
type CommandOf<T extends Trigger> = Extract<ItemCommand, { type: T }>;

/** What a row leads to: a state (`same` = the item as it was), or a refusal of the command. */
export type RowNext = StateKey | 'same' | { refused: RefusalCode };

export interface ItemRow<T extends Trigger = Trigger> {
  /** The states the row applies in (State column). */
  from: readonly StateKey[];
  /** Which items it applies to: piece items, weight items, or both. */
  kind: 'piece' | 'weight' | 'any';
  trigger: T;
  /** The Condition column, in words; `when` is the same condition as code (absent: always). */
  condition: string;
  when?: (f: ItemFacts, cmd: CommandOf<T>) => boolean;
  /** The Next state column. */
  next: RowNext;
  /** The Also column, in words; `apply` computes the item after the row (absent for refusals). */
  also: string;
  apply?: (f: ItemFacts, cmd: CommandOf<T>) => Transition;
  /**
   * The row of the interface spec's "Picking item" table this one implements (its Trigger and
   * Condition cells), or null for a row decided in PickingItemSchema (spec rule 8: scan,
   * replacement and a full piece-quantity are not shown in the table).
   */
  spec: string | null;
}

/** Any row, whatever its trigger. */
export type AnyItemRow = { [T in Trigger]: ItemRow<T> }[Trigger];
const row = <T extends Trigger>(r: ItemRow<T>): ItemRow<T> => r;

const ALL_STATES: readonly StateKey[] = [
  'pending',
  'awaiting_quantity',
  'picked',
  'missing',
  'clarified/removed',
  'clarified/quantity_mismatch',
  'clarified/weight_mismatch',
  'clarified/store_transfer_shortage',
];
const WORKABLE_PIECE: readonly StateKey[] = ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'];
const WORKABLE_WEIGHT: readonly StateKey[] = ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'];
const confirmedValue = (f: ItemFacts, cmd: CommandOf<'confirm'>) =>
  f.clarificationKind === 'quantity_mismatch' ? cmd.quantity : cmd.quantityKg;
const onePieceMore = (f: ItemFacts) => (f.actual ?? 0n) + UNIT;
/** The item once the customer's substitute is chosen (the replacement rows). */
const withSubstitute = (f: ItemFacts): ItemFacts => ({ ...f, missingAction: null, hasReplacement: true, actual: null, confirmed: null });

/**
 * Every transition of a picking item. For a command on an item the rows of its trigger and kind
 * are read in order: none from the item's kind is ITEM_IS_WEIGHT_BASED / ITEM_NOT_WEIGHT_BASED,
 * none from its state (or none whose condition holds) is ITEM_STATE_CONFLICT, else the first
 * row whose condition holds decides.
 */
export const ITEM_TABLE: readonly AnyItemRow[] = [
  // piece-quantity (piece items)
  row({
    trigger: 'piece_quantity',
    kind: 'piece',
    from: WORKABLE_PIECE,
    spec: 'piece-quantity: integer quantity from 1 to the ordered quantity',
    condition: 'quantity above the ordered quantity',
    when: (f, c) => c.quantity > f.ordered,
    next: { refused: 'QUANTITY_ABOVE_ORDERED' },
    also: 'nothing changes',
  }),
  row({
    trigger: 'piece_quantity',
    kind: 'piece',
    from: WORKABLE_PIECE,
    spec: null,
    condition: 'quantity equals the ordered quantity',
    when: (f, c) => c.quantity === f.ordered,
    next: 'picked',
    also: 'actual = quantity; source stays scan after a scan, else manual',
    apply: (f, c) => done(f, 'ok', { ...as(f, 'picked'), actual: c.quantity, pickSource: countSource(f), labelPlu: null, confirmed: null }),
  }),
  row({
    trigger: 'piece_quantity',
    kind: 'piece',
    from: WORKABLE_PIECE,
    spec: 'piece-quantity: integer quantity from 1 to the ordered quantity',
    condition: 'a partial quantity',
    next: 'clarified/quantity_mismatch',
    also: 'actual = confirmed_quantity = quantity; the product is not removed (clarification_required)',
    apply: (f, c) =>
      done(f, 'clarification_required', {
        ...as(f, 'clarified', 'quantity_mismatch'),
        actual: c.quantity,
        pickSource: countSource(f),
        labelPlu: null,
        confirmed: c.quantity,
      }),
  }),

  // weight (weight items)
  row({
    trigger: 'weight',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: null,
    condition: 'the barcode sent with it is unknown',
    when: (_f, c) => c.match?.kind === 'unknown',
    next: 'same',
    also: 'outcome not_found',
    apply: (f) => unchanged(f, 'not_found'),
  }),
  row({
    trigger: 'weight',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: null,
    condition: 'the barcode sent with it is another product',
    when: (_f, c) => c.match?.kind === 'other_product',
    next: 'same',
    also: 'outcome mismatch',
    apply: (f) => unchanged(f, 'mismatch'),
  }),
  row({
    trigger: 'weight',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: 'weight: weight inside tolerance',
    condition: 'weight inside tolerance',
    when: (f, c) => fits(f, c.weight),
    next: 'picked',
    also: 'actual = weight; a repeated call on a picked item corrects the weight',
    apply: (f, c) => done(f, 'ok', weighed(f, c.weight, 'weight', c.barcode, null)),
  }),
  row({
    trigger: 'weight',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: 'weight: weight outside tolerance',
    condition: 'weight outside tolerance',
    next: 'clarified/weight_mismatch',
    also: 'actual = confirmed_quantity = weight; needs a separate confirmation (clarification_required)',
    apply: (f, c) => done(f, 'clarification_required', weighed(f, c.weight, 'weight', c.barcode, null)),
  }),

  // manual-pick (piece items)
  row({
    trigger: 'manual_pick',
    kind: 'piece',
    from: WORKABLE_PIECE,
    spec: null,
    condition: 'quantity equals the ordered quantity',
    when: (f, c) => c.quantity === f.ordered,
    next: 'picked',
    also: 'actual = quantity, source manual',
    apply: (f, c) => done(f, 'ok', { ...as(f, 'picked'), actual: c.quantity, pickSource: 'manual', labelPlu: null, confirmed: null }),
  }),
  row({
    trigger: 'manual_pick',
    kind: 'piece',
    from: WORKABLE_PIECE,
    spec: 'manual-pick: quantity differs from ordered',
    condition: 'quantity differs from ordered, `confirm: true`',
    when: (_f, c) => c.confirm,
    next: 'picked',
    also: 'the actual quantity is saved and the discrepancy confirmed (confirmed_quantity = quantity)',
    apply: (f, c) => done(f, 'ok', { ...as(f, 'picked'), actual: c.quantity, pickSource: 'manual', labelPlu: null, confirmed: c.quantity }),
  }),
  row({
    trigger: 'manual_pick',
    kind: 'piece',
    from: WORKABLE_PIECE,
    spec: 'manual-pick: quantity differs from ordered',
    condition: 'quantity differs from ordered, no confirm',
    next: 'clarified/quantity_mismatch',
    also: 'the actual quantity is saved, to be confirmed (clarification_required)',
    apply: (f, c) =>
      done(f, 'clarification_required', {
        ...as(f, 'clarified', 'quantity_mismatch'),
        actual: c.quantity,
        pickSource: 'manual',
        labelPlu: null,
        confirmed: c.quantity,
      }),
  }),

  // clarification/confirm
  row({
    trigger: 'confirm',
    kind: 'any',
    from: ['clarified/quantity_mismatch', 'clarified/weight_mismatch'],
    spec: null,
    condition: '`resolution` names the other kind of mismatch',
    when: (f, c) => c.resolution !== null && c.resolution !== f.clarificationKind,
    next: { refused: 'ITEM_STATE_CONFLICT' },
    also: 'nothing changes',
  }),
  row({
    trigger: 'confirm',
    kind: 'any',
    from: ['clarified/quantity_mismatch', 'clarified/weight_mismatch'],
    spec: null,
    condition: 'no value to confirm (quantity for a piece item, quantity_kg for a weight item)',
    when: (f, c) => confirmedValue(f, c) === null,
    next: { refused: 'CONFIRMED_QUANTITY_REQUIRED' },
    also: 'nothing changes',
  }),
  row({
    trigger: 'confirm',
    kind: 'any',
    from: ['clarified/quantity_mismatch', 'clarified/weight_mismatch'],
    spec: null,
    condition: 'the value differs from `confirmed_quantity`',
    when: (f, c) => confirmedValue(f, c) !== f.confirmed,
    next: { refused: 'CONFIRMED_QUANTITY_MISMATCH' },
    also: 'nothing changes',
  }),
  row({
    trigger: 'confirm',
    kind: 'any',
    from: ['clarified/quantity_mismatch', 'clarified/weight_mismatch'],
    spec: 'clarification/confirm: quantity or weight equals `confirmed_quantity` in the current session',
    condition: 'quantity or weight equals `confirmed_quantity`',
    next: 'picked',
    also: 'the actual value is not changed',
    apply: (f) => done(f, 'ok', as(f, 'picked')),
  }),

  // missing
  row({
    trigger: 'missing',
    kind: 'any',
    from: ALL_STATES,
    spec: 'missing: `action` is `call` or `remove`',
    condition: '`action` is `call` or `remove`',
    next: 'missing',
    also: 'records missing_action; clears the actual quantity and a chosen replacement; the item stays in the order',
    apply: (f, c) =>
      done(
        f,
        'ok',
        {
          ...as(f, 'missing'),
          missingAction: c.action,
          actual: null,
          confirmed: null,
          pickSource: null,
          labelPlu: null,
          hasReplacement: false,
        },
        f.hasReplacement ? 'clear' : 'keep',
      ),
  }),

  // clarification/resolve
  row({
    trigger: 'resolve',
    kind: 'any',
    from: ['missing'],
    spec: 'clarification/resolve: `resolution` is `remove`',
    condition: 'missing with action remove, `resolution` is `remove`',
    when: (f) => f.missingAction === 'remove',
    next: 'clarified/removed',
    also: 'the item is removed from the order before finish',
    apply: (f) => done(f, 'ok', as(f, 'clarified', 'removed')),
  }),

  // clarification/reopen
  row({
    trigger: 'reopen',
    kind: 'any',
    from: ['picked', 'clarified/quantity_mismatch', 'clarified/weight_mismatch'],
    spec: 'clarification/reopen: `reason` is `recheck` for picked',
    condition: '`reason` is `recheck`',
    when: (_f, c) => c.reason === 'recheck',
    next: 'pending',
    also: 'clears the actual quantity; keeps a chosen replacement',
    apply: (f) => done(f, 'ok', { ...as(f, 'pending'), actual: null, confirmed: null, pickSource: null, labelPlu: null }),
  }),
  row({
    trigger: 'reopen',
    kind: 'any',
    from: ['missing', 'clarified/removed', 'clarified/store_transfer_shortage'],
    spec: 'clarification/reopen: `found_in_store` for a previously missing item',
    condition: '`reason` is `found_in_store`',
    when: (_f, c) => c.reason === 'found_in_store',
    next: 'pending',
    also: 'clears the actual quantity and missing_action; back to the ordered product',
    apply: (f) =>
      done(
        f,
        'ok',
        {
          ...as(f, 'pending'),
          actual: null,
          confirmed: null,
          pickSource: null,
          labelPlu: null,
          missingAction: null,
          hasReplacement: false,
        },
        f.hasReplacement ? 'clear' : 'keep',
      ),
  }),

  // scan of a piece item
  row({
    trigger: 'scan',
    kind: 'piece',
    from: ['pending', 'awaiting_quantity', 'picked'],
    spec: null,
    condition: 'the barcode is unknown or not sold in the store',
    when: (_f, c) => c.match.kind === 'unknown',
    next: 'same',
    also: 'outcome not_found',
    apply: (f) => unchanged(f, 'not_found'),
  }),
  row({
    trigger: 'scan',
    kind: 'piece',
    from: ['pending', 'awaiting_quantity', 'picked'],
    spec: null,
    condition: 'the barcode is another product',
    when: (_f, c) => c.match.kind === 'other_product',
    next: 'same',
    also: 'outcome mismatch',
    apply: (f) => unchanged(f, 'mismatch'),
  }),
  row({
    trigger: 'scan',
    kind: 'piece',
    from: ['picked'],
    spec: null,
    condition: "the item's product",
    next: 'same',
    also: 'outcome already_picked',
    apply: (f) => unchanged(f, 'already_picked'),
  }),
  row({
    trigger: 'scan',
    kind: 'piece',
    from: ['pending', 'awaiting_quantity'],
    spec: null,
    condition: "the item's product, one more piece reaches the ordered count",
    when: (f) => onePieceMore(f) >= f.ordered,
    next: 'picked',
    also: 'actual + 1 piece, source scan',
    apply: (f, c) => done(f, 'ok', pieceCounted(f, c.barcode)),
  }),
  row({
    trigger: 'scan',
    kind: 'piece',
    from: ['pending', 'awaiting_quantity'],
    spec: null,
    condition: "the item's product, below the ordered count",
    next: 'awaiting_quantity',
    also: 'actual + 1 piece, source scan',
    apply: (f, c) => done(f, 'ok', pieceCounted(f, c.barcode)),
  }),

  // scan of a weight item
  row({
    trigger: 'scan',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: null,
    condition: 'the barcode is unknown or not sold in the store',
    when: (_f, c) => c.match.kind === 'unknown',
    next: 'same',
    also: 'outcome not_found',
    apply: (f) => unchanged(f, 'not_found'),
  }),
  row({
    trigger: 'scan',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: null,
    condition: 'the barcode is another product',
    when: (_f, c) => c.match.kind === 'other_product',
    next: 'same',
    also: 'outcome mismatch',
    apply: (f) => unchanged(f, 'mismatch'),
  }),
  row({
    trigger: 'scan',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: null,
    condition: 'a scale label with the PLU, weight inside tolerance',
    when: (f, c) => labelOf(c.match) !== null && fits(f, labelOf(c.match)!),
    next: 'picked',
    also: 'weighed as by the weight command, source scale_label',
    apply: (f, c) => labelWeighed(f, c, 'keep'),
  }),
  row({
    trigger: 'scan',
    kind: 'weight',
    from: WORKABLE_WEIGHT,
    spec: null,
    condition: 'a scale label with the PLU, weight outside tolerance',
    when: (_f, c) => labelOf(c.match) !== null,
    next: 'clarified/weight_mismatch',
    also: 'weighed as by the weight command, source scale_label',
    apply: (f, c) => labelWeighed(f, c, 'keep'),
  }),
  row({
    trigger: 'scan',
    kind: 'weight',
    from: ['pending'],
    spec: null,
    condition: "the item's own barcode",
    next: 'awaiting_quantity',
    also: 'the product is confirmed; the weight is still to come',
    apply: (f, c) => done(f, 'ok', { ...as(f, 'awaiting_quantity'), lastScannedBarcode: c.barcode }),
  }),
  row({
    trigger: 'scan',
    kind: 'weight',
    from: ['picked'],
    spec: null,
    condition: "the item's own barcode",
    next: 'same',
    also: 'outcome already_picked',
    apply: (f) => unchanged(f, 'already_picked'),
  }),
  row({
    trigger: 'scan',
    kind: 'weight',
    from: ['awaiting_quantity', 'clarified/weight_mismatch'],
    spec: null,
    condition: "the item's own barcode",
    next: 'same',
    also: 'outcome ok, nothing changes',
    apply: (f) => unchanged(f, 'ok'),
  }),

  // replacement (the customer agreed to a substitute)
  row({
    trigger: 'replacement',
    kind: 'any',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; the barcode is unknown',
    when: (f, c) => f.missingAction === 'call' && c.match.kind === 'unknown',
    next: 'same',
    also: 'outcome not_found',
    apply: (f) => unchanged(f, 'not_found'),
  }),
  row({
    trigger: 'replacement',
    kind: 'any',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; the ordered product itself',
    when: (f, c) => f.missingAction === 'call' && c.match.kind === 'same_product',
    next: 'same',
    also: 'outcome same_product',
    apply: (f) => unchanged(f, 'same_product'),
  }),
  row({
    trigger: 'replacement',
    kind: 'any',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; a substitute of the other kind (piece/weight)',
    when: (f, c) => f.missingAction === 'call' && c.match.kind === 'substitute' && c.match.isWeightBased !== f.isWeightBased,
    next: 'same',
    also: 'outcome kind_mismatch',
    apply: (f) => unchanged(f, 'kind_mismatch'),
  }),
  row({
    trigger: 'replacement',
    kind: 'weight',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; a weight substitute by a scale label inside tolerance',
    when: (f, c) => f.missingAction === 'call' && labelOf(c.match) !== null && fits(f, labelOf(c.match)!),
    next: 'picked',
    also: 'the substitute is chosen and weighed',
    apply: (f, c) => labelWeighed(withSubstitute(f), c, 'set', f),
  }),
  row({
    trigger: 'replacement',
    kind: 'weight',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; a weight substitute by a scale label outside tolerance',
    when: (f, c) => f.missingAction === 'call' && labelOf(c.match) !== null,
    next: 'clarified/weight_mismatch',
    also: 'the substitute is chosen and weighed',
    apply: (f, c) => labelWeighed(withSubstitute(f), c, 'set', f),
  }),
  row({
    trigger: 'replacement',
    kind: 'weight',
    from: ['missing'],
    spec: null,
    condition: "missing with action call; a weight substitute's own barcode",
    when: (f) => f.missingAction === 'call',
    next: 'awaiting_quantity',
    also: 'the substitute is chosen; its weight is still to come',
    apply: (f, c) =>
      done(f, 'ok', { ...as(withSubstitute(f), 'awaiting_quantity'), lastScannedBarcode: c.barcode, pickSource: null }, 'set'),
  }),
  row({
    trigger: 'replacement',
    kind: 'piece',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; a piece substitute, one piece reaches the ordered count',
    when: (f) => f.missingAction === 'call' && UNIT >= f.ordered,
    next: 'picked',
    also: 'the substitute is chosen and counted as one piece',
    apply: (f, c) => done(f, 'ok', pieceCounted(withSubstitute(f), c.barcode), 'set'),
  }),
  row({
    trigger: 'replacement',
    kind: 'piece',
    from: ['missing'],
    spec: null,
    condition: 'missing with action call; a piece substitute, below the ordered count',
    when: (f) => f.missingAction === 'call',
    next: 'awaiting_quantity',
    also: 'the substitute is chosen and counted as one piece',
    apply: (f, c) => done(f, 'ok', pieceCounted(withSubstitute(f), c.barcode), 'set'),
  }),
];

/** The states from which a trigger applies to an item of a kind (derived from the table). */
export function acceptingStates(trigger: Trigger, kind: 'piece' | 'weight'): StateKey[] {
  const rows = ITEM_TABLE.filter((r) => r.trigger === trigger && (r.kind === 'any' || r.kind === kind));
  return ALL_STATES.filter((s) => rows.some((r) => r.from.includes(s)));
}

/**
 * The row of the table that decides `cmd` on the item, or the refusal when none does: no row for
 * the item's kind (ITEM_IS_WEIGHT_BASED / ITEM_NOT_WEIGHT_BASED), none from its state or none whose
 * condition holds (ITEM_STATE_CONFLICT).
 */
export function decidingRow(f: ItemFacts, cmd: ItemCommand): AnyItemRow | Refusal {
  const kind = f.isWeightBased ? 'weight' : 'piece';
  const rows = ITEM_TABLE.filter((r) => r.trigger === cmd.type && (r.kind === 'any' || r.kind === kind));
  if (!rows.length) return { ok: false, code: f.isWeightBased ? 'ITEM_IS_WEIGHT_BASED' : 'ITEM_NOT_WEIGHT_BASED' };
  const key = stateKey(f);
  // A row of this trigger takes this trigger's command (`r.trigger === cmd.type` above).
  const holds = (r: AnyItemRow) => !r.when || (r.when as (f: ItemFacts, c: ItemCommand) => boolean)(f, cmd);
  return rows.find((r) => r.from.includes(key) && holds(r)) ?? { ok: false, code: 'ITEM_STATE_CONFLICT' };
}

/** Applies one command to one item: the deciding row's next state and effects, or its refusal. */
export function applyItemCommand(f: ItemFacts, cmd: ItemCommand): Transition {
  const r = decidingRow(f, cmd);
  if ('ok' in r) return r;
  if (typeof r.next === 'object') return { ok: false, code: r.next.refused };
  return (r.apply as (f: ItemFacts, c: ItemCommand) => Transition)(f, cmd);
}

// ---------------------------------------------------------------------------------------------
// Session-level rules

export type SessionStatus = 'active' | 'ready_to_finish' | 'completed' | 'cancelled';

/** An open session is `ready_to_finish` exactly when every item is resolved. */
export const openSessionStatus = (items: readonly Pick<ItemFacts, 'state' | 'clarificationKind'>[]): 'active' | 'ready_to_finish' =>
  items.length > 0 && items.every(isResolved) ? 'ready_to_finish' : 'active';

/** Index of the first unresolved item; the number of items when all are resolved. */
export function currentItemIndex(items: readonly Pick<ItemFacts, 'state' | 'clarificationKind'>[]): number {
  const i = items.findIndex((f) => !isResolved(f));
  return i < 0 ? items.length : i;
}

/** What an item takes off the shelf when its session completes: a picked item's quantity, else nothing. */
export const takenQuantity = (f: Pick<ItemFacts, 'state' | 'actual' | 'ordered'>): bigint =>
  f.state === 'picked' ? (f.actual ?? f.ordered) : 0n;

/** Settlement of the difference when a session completes (PaymentSummarySchema.reconciliation_status). */
export function reconciliationStatus(paymentMethod: 'cash' | 'online', original: bigint, current: bigint): 'not_required' | 'pending' {
  return paymentMethod === 'online' && original !== current ? 'pending' : 'not_required';
}

/** What goes back to the card when a paid online order was collected for less (kopecks), else null. */
export function differenceToRefund(
  paymentMethod: 'cash' | 'online',
  paymentStatus: string,
  original: bigint,
  current: bigint,
): bigint | null {
  return paymentMethod === 'online' && paymentStatus === 'paid' && current < original ? original - current : null;
}

/**
 * What a paid online order picked for more than was paid still owes (kopecks), else null: the
 * order awaits payment again and the customer pays it through a new invoice.
 */
export function differenceToCollect(
  paymentMethod: 'cash' | 'online',
  paymentStatus: string,
  original: bigint,
  current: bigint,
): bigint | null {
  return paymentMethod === 'online' && paymentStatus === 'paid' && current > original ? current - original : null;
}

/** The most an added item may have: 999 pieces, or 999.999 kg (as a weighing may record). */
export const ADDED_QUANTITY_MAX = 999_999n;

/** The quantity an added item may have: whole pieces, or kg with at most three decimals, above 0 and at most ADDED_QUANTITY_MAX. */
export function addedQuantityProblem(quantity: bigint | null, isWeightBased: boolean): 'QUANTITY_INVALID' | 'QUANTITY_NOT_INTEGER' | null {
  if (quantity === null || quantity <= 0n || quantity > ADDED_QUANTITY_MAX) return 'QUANTITY_INVALID';
  if (!isWeightBased && quantity % UNIT !== 0n) return 'QUANTITY_NOT_INTEGER';
  return null;
}
