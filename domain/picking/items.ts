// THE picking item state machine (spec: PickingItemSchema, "Picking item" of the interface spec).
// Written once here; the handlers apply it and a table-driven test checks every row of the spec's
// table and every forbidden transition against it. Pure: values in, values out.
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
//   - check order inside a command: the item kind (409), the item state (409), then the value
//     rules that need the item (422: above ordered, confirmed value missing; 409: value differs).

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

export type RefusalCode =
  | 'ITEM_STATE_CONFLICT'
  | 'ITEM_IS_WEIGHT_BASED'
  | 'ITEM_NOT_WEIGHT_BASED'
  | 'CONFIRMED_QUANTITY_MISMATCH'
  | 'QUANTITY_ABOVE_ORDERED'
  | 'CONFIRMED_QUANTITY_REQUIRED';

export type Refusal = { ok: false; httpStatus: 409 | 422; code: RefusalCode };

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

/** Which item states each command accepts; any other state is 409 ITEM_STATE_CONFLICT. */
export const ACCEPTING_STATES = {
  scanPiece: ['pending', 'awaiting_quantity', 'picked'],
  scanWeight: ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'],
  weight: ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'],
  pieceQuantity: ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'],
  manualPick: ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'],
  missing: ['pending', 'awaiting_quantity', 'picked', 'missing', 'clarified/removed', 'clarified/quantity_mismatch', 'clarified/weight_mismatch', 'clarified/store_transfer_shortage'],
  resolve: ['missing'],
  reopenRecheck: ['picked', 'clarified/quantity_mismatch', 'clarified/weight_mismatch'],
  reopenFoundInStore: ['missing', 'clarified/removed', 'clarified/store_transfer_shortage'],
  confirm: ['clarified/quantity_mismatch', 'clarified/weight_mismatch'],
  replacement: ['missing'],
} as const satisfies Record<string, readonly StateKey[]>;

const accepts = (states: readonly StateKey[], f: ItemFacts) => states.includes(stateKey(f));
const refuse = (code: RefusalCode, httpStatus: 409 | 422 = 409): Refusal => ({ ok: false, httpStatus, code });

/** Tolerance bounds: ordered x (1 -/+ percent/100), rounded half-up to grams. */
export function toleranceFor(ordered: bigint, percentTenths: bigint): Tolerance {
  const scaled = (factorTenths: bigint) => (ordered * factorTenths + 500n) / 1000n;
  const min = scaled(1000n - percentTenths);
  return { percentTenths, min: min < 1n ? 1n : min, max: scaled(1000n + percentTenths) };
}

export const withinTolerance = (weight: bigint, t: Tolerance): boolean => weight >= t.min && weight <= t.max;

/** quantity (thousandths) x price (kopecks), rounded half-up to kopecks. */
export function lineTotal(quantity: bigint, priceKopecks: bigint): bigint {
  return (quantity * priceKopecks + 500n) / UNIT;
}

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

/** The weight rule shared by the weight command, scale-label scans and weighed replacements. */
function weigh(f: ItemFacts, weight: bigint, source: PickSource, barcode: string | null, labelPlu: string | null): { next: ItemFacts; outcome: ItemOutcome } {
  const base: ItemFacts = {
    ...f,
    actual: weight,
    pickSource: source,
    lastScannedBarcode: barcode ?? f.lastScannedBarcode,
    labelPlu: source === 'scale_label' ? labelPlu : null,
  };
  // A weight item always has a tolerance; without one only the exact ordered weight fits.
  const fits = f.tolerance ? withinTolerance(weight, f.tolerance) : weight === f.ordered;
  if (fits) return { next: { ...as(base, 'picked'), confirmed: null }, outcome: 'ok' };
  return { next: { ...as(base, 'clarified', 'weight_mismatch'), confirmed: weight }, outcome: 'clarification_required' };
}

/** A piece counted by a scan of the item's product: one more, picked at the ordered count. */
function countPiece(f: ItemFacts, barcode: string): { next: ItemFacts; outcome: ItemOutcome } {
  const actual = (f.actual ?? 0n) + UNIT;
  const base: ItemFacts = { ...f, actual, confirmed: null, pickSource: 'scan', lastScannedBarcode: barcode, labelPlu: null };
  return { next: as(base, actual >= f.ordered ? 'picked' : 'awaiting_quantity'), outcome: 'ok' };
}

/** Applies one command to one item. */
export function applyItemCommand(f: ItemFacts, cmd: ItemCommand): Transition {
  switch (cmd.type) {
    case 'scan': {
      if (!accepts(f.isWeightBased ? ACCEPTING_STATES.scanWeight : ACCEPTING_STATES.scanPiece, f)) return refuse('ITEM_STATE_CONFLICT');
      const m = cmd.match;
      if (m.kind === 'unknown') return unchanged(f, 'not_found');
      if (m.kind === 'other_product') return unchanged(f, 'mismatch');
      if (f.isWeightBased) {
        if (m.labelWeight !== null) {
          const w = weigh(f, m.labelWeight, 'scale_label', cmd.barcode, m.labelPlu);
          return done(f, w.outcome, w.next, 'keep', m.labelWeight);
        }
        if (f.state === 'pending') return done(f, 'ok', { ...as(f, 'awaiting_quantity'), lastScannedBarcode: cmd.barcode });
        return unchanged(f, f.state === 'picked' ? 'already_picked' : 'ok');
      }
      if (f.state === 'picked') return unchanged(f, 'already_picked');
      const c = countPiece(f, cmd.barcode);
      return done(f, c.outcome, c.next);
    }

    case 'weight': {
      if (!f.isWeightBased) return refuse('ITEM_NOT_WEIGHT_BASED');
      if (!accepts(ACCEPTING_STATES.weight, f)) return refuse('ITEM_STATE_CONFLICT');
      if (cmd.match?.kind === 'unknown') return unchanged(f, 'not_found');
      if (cmd.match?.kind === 'other_product') return unchanged(f, 'mismatch');
      const w = weigh(f, cmd.weight, 'weight', cmd.barcode, null);
      return done(f, w.outcome, w.next);
    }

    case 'piece_quantity': {
      if (f.isWeightBased) return refuse('ITEM_IS_WEIGHT_BASED');
      if (!accepts(ACCEPTING_STATES.pieceQuantity, f)) return refuse('ITEM_STATE_CONFLICT');
      if (cmd.quantity > f.ordered) return refuse('QUANTITY_ABOVE_ORDERED', 422);
      // A product confirmed by a scan keeps `scan` as the source; otherwise the count is manual.
      const base: ItemFacts = { ...f, actual: cmd.quantity, pickSource: f.lastScannedBarcode ? 'scan' : 'manual', labelPlu: null };
      if (cmd.quantity === f.ordered) return done(f, 'ok', { ...as(base, 'picked'), confirmed: null });
      return done(f, 'clarification_required', { ...as(base, 'clarified', 'quantity_mismatch'), confirmed: cmd.quantity });
    }

    case 'manual_pick': {
      if (f.isWeightBased) return refuse('ITEM_IS_WEIGHT_BASED');
      if (!accepts(ACCEPTING_STATES.manualPick, f)) return refuse('ITEM_STATE_CONFLICT');
      const base: ItemFacts = { ...f, actual: cmd.quantity, pickSource: 'manual', labelPlu: null };
      if (cmd.quantity === f.ordered) return done(f, 'ok', { ...as(base, 'picked'), confirmed: null });
      if (cmd.confirm) return done(f, 'ok', { ...as(base, 'picked'), confirmed: cmd.quantity });
      return done(f, 'clarification_required', { ...as(base, 'clarified', 'quantity_mismatch'), confirmed: cmd.quantity });
    }

    case 'missing': {
      if (!accepts(ACCEPTING_STATES.missing, f)) return refuse('ITEM_STATE_CONFLICT');
      const next: ItemFacts = { ...as(f, 'missing'), missingAction: cmd.action, actual: null, confirmed: null, pickSource: null, labelPlu: null, hasReplacement: false };
      return done(f, 'ok', next, f.hasReplacement ? 'clear' : 'keep');
    }

    case 'resolve': {
      if (!accepts(ACCEPTING_STATES.resolve, f) || f.missingAction !== 'remove') return refuse('ITEM_STATE_CONFLICT');
      return done(f, 'ok', as(f, 'clarified', 'removed'));
    }

    case 'reopen': {
      const recheck = cmd.reason === 'recheck';
      if (!accepts(recheck ? ACCEPTING_STATES.reopenRecheck : ACCEPTING_STATES.reopenFoundInStore, f)) return refuse('ITEM_STATE_CONFLICT');
      const cleared: ItemFacts = { ...as(f, 'pending'), actual: null, confirmed: null, pickSource: null, labelPlu: null };
      // `recheck` keeps a chosen replacement; `found_in_store` returns to the ordered product.
      if (recheck) return done(f, 'ok', cleared);
      return done(f, 'ok', { ...cleared, missingAction: null, hasReplacement: false }, f.hasReplacement ? 'clear' : 'keep');
    }

    case 'confirm': {
      if (!accepts(ACCEPTING_STATES.confirm, f)) return refuse('ITEM_STATE_CONFLICT');
      if (cmd.resolution !== null && cmd.resolution !== f.clarificationKind) return refuse('ITEM_STATE_CONFLICT');
      const sent = f.clarificationKind === 'quantity_mismatch' ? cmd.quantity : cmd.quantityKg;
      if (sent === null) return refuse('CONFIRMED_QUANTITY_REQUIRED', 422);
      if (sent !== f.confirmed) return refuse('CONFIRMED_QUANTITY_MISMATCH');
      return done(f, 'ok', as(f, 'picked'));
    }

    case 'replacement': {
      if (!accepts(ACCEPTING_STATES.replacement, f) || f.missingAction !== 'call') return refuse('ITEM_STATE_CONFLICT');
      const m = cmd.match;
      if (m.kind === 'unknown') return unchanged(f, 'not_found');
      if (m.kind === 'same_product') return unchanged(f, 'same_product');
      if (m.isWeightBased !== f.isWeightBased) return unchanged(f, 'kind_mismatch');
      const chosen: ItemFacts = { ...f, missingAction: null, hasReplacement: true, actual: null, confirmed: null };
      if (f.isWeightBased) {
        if (m.labelWeight !== null) {
          const w = weigh(chosen, m.labelWeight, 'scale_label', cmd.barcode, m.labelPlu);
          return done(f, w.outcome, w.next, 'set', m.labelWeight);
        }
        return done(f, 'ok', { ...as(chosen, 'awaiting_quantity'), lastScannedBarcode: cmd.barcode, pickSource: null }, 'set');
      }
      const c = countPiece(chosen, cmd.barcode);
      return done(f, c.outcome, c.next, 'set');
    }
  }
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
export const takenQuantity = (f: Pick<ItemFacts, 'state' | 'actual' | 'ordered'>): bigint => (f.state === 'picked' ? (f.actual ?? f.ordered) : 0n);

/** Settlement of the difference when a session completes (PaymentSummarySchema.reconciliation_status). */
export function reconciliationStatus(paymentMethod: 'cash' | 'online', original: bigint, current: bigint): 'not_required' | 'pending' {
  return paymentMethod === 'online' && original !== current ? 'pending' : 'not_required';
}

/** What goes back to the card when a paid online order was collected for less (kopecks), else null. */
export function differenceToRefund(paymentMethod: 'cash' | 'online', paymentStatus: string, original: bigint, current: bigint): bigint | null {
  return paymentMethod === 'online' && paymentStatus === 'paid' && current < original ? original - current : null;
}

/**
 * What a paid online order picked for more than was paid still owes (kopecks), else null: the
 * order awaits payment again and the customer pays it through a new invoice.
 */
export function differenceToCollect(paymentMethod: 'cash' | 'online', paymentStatus: string, original: bigint, current: bigint): bigint | null {
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
