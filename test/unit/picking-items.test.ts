// The picking item state machine against the spec's tables (interface spec "Picking item", and
// the decided rows in PickingItemSchema): every row is a case here, and every state a command
// does not accept is checked to be refused. The expectations are written from the spec, not
// read from the module.
import { describe, expect, it } from 'vitest';
import {
  acceptingStates,
  addedQuantityProblem,
  applyItemCommand,
  decidingRow,
  ITEM_TABLE,
  TRIGGERS,
  type AnyItemRow,
  type Trigger,
  currentItemIndex,
  currentLineTotal,
  isResolved,
  openSessionStatus,
  differenceToCollect,
  differenceToRefund,
  reconciliationStatus,
  stateKey,
  toleranceFor,
  type ItemCommand,
  type ItemFacts,
  type StateKey,
} from '../../domain/picking/items.js';
import { lineTotal } from '../../domain/money/money.js';
import { statusOf } from '../../services/errors.js';

const kg = (s: string) => BigInt(Math.round(Number(s) * 1000));
const pcs = (n: number) => BigInt(n) * 1000n;

/** An item in a given state: a piece item ordered 2 pcs, or a weight item ordered 1.000 kg (10 %). */
function item(kind: 'piece' | 'weight', key: StateKey, extra: Partial<ItemFacts> = {}): ItemFacts {
  const [state, clarificationKind] = key.includes('/')
    ? (key.split('/') as [ItemFacts['state'], ItemFacts['clarificationKind']])
    : [key as ItemFacts['state'], null];
  const weight = kind === 'weight';
  const ordered = weight ? kg('1.000') : pcs(2);
  const base: ItemFacts = {
    state,
    clarificationKind,
    missingAction: null,
    isWeightBased: weight,
    ordered,
    actual: null,
    confirmed: null,
    pickSource: null,
    lastScannedBarcode: null,
    labelPlu: null,
    hasReplacement: false,
    tolerance: weight ? toleranceFor(ordered, 100n) : null,
  };
  const byState: Partial<Record<StateKey, Partial<ItemFacts>>> = {
    awaiting_quantity: weight
      ? { lastScannedBarcode: '4600000000001' }
      : { actual: pcs(1), pickSource: 'scan', lastScannedBarcode: '4600000000001' },
    picked: weight
      ? { actual: kg('0.950'), pickSource: 'weight' }
      : { actual: pcs(2), pickSource: 'scan', lastScannedBarcode: '4600000000001' },
    missing: { missingAction: 'call' },
    'clarified/removed': { missingAction: 'remove' },
    'clarified/quantity_mismatch': { actual: pcs(1), confirmed: pcs(1), pickSource: 'manual' },
    'clarified/weight_mismatch': { actual: kg('1.260'), confirmed: kg('1.260'), pickSource: 'weight' },
  };
  return { ...base, ...byState[key], ...extra };
}

const own = { kind: 'item_product', labelWeight: null, labelPlu: null } as const;
const label = (w: string) => ({ kind: 'item_product', labelWeight: kg(w), labelPlu: '03000' }) as const;
const scan = (match: Extract<ItemCommand, { type: 'scan' }>['match']): ItemCommand => ({ type: 'scan', barcode: '2203000012603', match });

interface Expected {
  outcome?: string;
  applied?: boolean;
  state?: StateKey;
  actual?: bigint | null;
  confirmed?: bigint | null;
  missingAction?: 'call' | 'remove' | null;
  hasReplacement?: boolean;
  code?: string;
  /** The HTTP status the refusal answers with (through services/errors.ts ERROR_STATUS); 409 unless said. */
  status?: number;
}

function check(before: ItemFacts, cmd: ItemCommand, want: Expected) {
  const t = applyItemCommand(before, cmd);
  if (want.code) {
    expect(t).toEqual({ ok: false, code: want.code });
    if (!t.ok) expect(statusOf(t.code)).toBe(want.status ?? 409);
    return;
  }
  if (!t.ok) throw new Error(`refused with ${t.code}`);
  if (want.outcome) expect(t.outcome).toBe(want.outcome);
  if (want.applied !== undefined) expect(t.applied).toBe(want.applied);
  if (want.state) expect(stateKey(t.next)).toBe(want.state);
  if (want.actual !== undefined) expect(t.next.actual).toBe(want.actual);
  if (want.confirmed !== undefined) expect(t.next.confirmed).toBe(want.confirmed);
  if (want.missingAction !== undefined) expect(t.next.missingAction).toBe(want.missingAction);
  if (want.hasReplacement !== undefined) expect(t.next.hasReplacement).toBe(want.hasReplacement);
}

const ALL: StateKey[] = [
  'pending',
  'awaiting_quantity',
  'picked',
  'missing',
  'clarified/removed',
  'clarified/quantity_mismatch',
  'clarified/weight_mismatch',
  'clarified/store_transfer_shortage',
];
const PIECE_STATES = ALL.filter((s) => s !== 'clarified/weight_mismatch');
const WEIGHT_STATES = ALL.filter((s) => s !== 'clarified/quantity_mismatch');

// ---------------------------------------------------------------------------------------------
// Rows of the interface spec's table

describe('rows of the spec table', () => {
  const pieceQuantityStates: StateKey[] = ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'];
  it.each(pieceQuantityStates)('piece-quantity from %s: a partial quantity becomes clarified/quantity_mismatch', (s) => {
    check(
      item('piece', s),
      { type: 'piece_quantity', quantity: pcs(1) },
      { outcome: 'clarification_required', state: 'clarified/quantity_mismatch', actual: pcs(1), confirmed: pcs(1) },
    );
  });
  it.each(pieceQuantityStates)('piece-quantity from %s: the ordered quantity picks the item', (s) => {
    check(
      item('piece', s),
      { type: 'piece_quantity', quantity: pcs(2) },
      { outcome: 'ok', state: 'picked', actual: pcs(2), confirmed: null },
    );
  });

  const workableWeight: StateKey[] = ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'];
  it.each(workableWeight)('weight inside the tolerance from %s picks the item', (s) => {
    check(
      item('weight', s),
      { type: 'weight', weight: kg('1.080'), barcode: null, match: null },
      { outcome: 'ok', applied: true, state: 'picked', actual: kg('1.080'), confirmed: null },
    );
  });
  it.each(workableWeight)('weight outside the tolerance from %s needs a confirmation', (s) => {
    check(
      item('weight', s),
      { type: 'weight', weight: kg('1.150'), barcode: null, match: null },
      { outcome: 'clarification_required', state: 'clarified/weight_mismatch', actual: kg('1.150'), confirmed: kg('1.150') },
    );
  });
  it('a repeated weight call on a picked item corrects the weight', () => {
    check(
      item('weight', 'picked'),
      { type: 'weight', weight: kg('0.910'), barcode: null, match: null },
      { state: 'picked', actual: kg('0.910') },
    );
  });
  it('the tolerance bounds are inclusive', () => {
    check(item('weight', 'pending'), { type: 'weight', weight: kg('0.900'), barcode: null, match: null }, { state: 'picked' });
    check(item('weight', 'pending'), { type: 'weight', weight: kg('1.100'), barcode: null, match: null }, { state: 'picked' });
    check(
      item('weight', 'pending'),
      { type: 'weight', weight: kg('1.101'), barcode: null, match: null },
      { state: 'clarified/weight_mismatch' },
    );
    check(
      item('weight', 'pending'),
      { type: 'weight', weight: kg('0.899'), barcode: null, match: null },
      { state: 'clarified/weight_mismatch' },
    );
  });

  it('manual-pick with the ordered quantity picks the item', () => {
    check(
      item('piece', 'pending'),
      { type: 'manual_pick', quantity: pcs(2), confirm: false },
      { outcome: 'ok', state: 'picked', actual: pcs(2) },
    );
  });
  it.each([1, 3])('manual-pick of %i (not the ordered 2) without confirm saves it as a discrepancy', (n) => {
    check(
      item('piece', 'pending'),
      { type: 'manual_pick', quantity: pcs(n), confirm: false },
      { outcome: 'clarification_required', state: 'clarified/quantity_mismatch', actual: pcs(n), confirmed: pcs(n) },
    );
  });
  it.each([1, 3])('manual-pick of %i with confirm: true saves it and picks the item', (n) => {
    check(
      item('piece', 'awaiting_quantity'),
      { type: 'manual_pick', quantity: pcs(n), confirm: true },
      { outcome: 'ok', state: 'picked', actual: pcs(n), confirmed: pcs(n) },
    );
  });

  it('clarification/confirm of a quantity mismatch with confirmed_quantity picks it, actual unchanged', () => {
    check(
      item('piece', 'clarified/quantity_mismatch'),
      { type: 'confirm', resolution: null, quantity: pcs(1), quantityKg: null },
      { outcome: 'ok', state: 'picked', actual: pcs(1), confirmed: pcs(1) },
    );
  });
  it('clarification/confirm of a weight mismatch with confirmed_quantity picks it, actual unchanged', () => {
    check(
      item('weight', 'clarified/weight_mismatch'),
      { type: 'confirm', resolution: 'weight_mismatch', quantity: null, quantityKg: kg('1.260') },
      { outcome: 'ok', state: 'picked', actual: kg('1.260') },
    );
  });

  for (const kind of ['piece', 'weight'] as const) {
    const states = kind === 'piece' ? PIECE_STATES : WEIGHT_STATES;
    it.each(states.flatMap((s) => (['call', 'remove'] as const).map((a) => [s, a] as const)))(
      `missing on a ${kind} item in %s with %s records the action`,
      (s, action) => {
        check(
          item(kind, s, { hasReplacement: s === 'picked' }),
          { type: 'missing', action },
          { outcome: 'ok', state: 'missing', missingAction: action, actual: null, confirmed: null, hasReplacement: false },
        );
      },
    );
  }

  it('clarification/resolve remove on missing with action remove removes the item', () => {
    check(
      item('piece', 'missing', { missingAction: 'remove' }),
      { type: 'resolve', resolution: 'remove' },
      { outcome: 'ok', state: 'clarified/removed' },
    );
  });

  it.each(['picked', 'clarified/quantity_mismatch'] as StateKey[])('reopen %s (piece) with recheck: pending, actual cleared', (s) => {
    check(item('piece', s), { type: 'reopen', reason: 'recheck' }, { outcome: 'ok', state: 'pending', actual: null, confirmed: null });
  });
  it('reopen clarified/weight_mismatch with recheck keeps a chosen replacement', () => {
    check(
      item('weight', 'clarified/weight_mismatch', { hasReplacement: true }),
      { type: 'reopen', reason: 'recheck' },
      { state: 'pending', actual: null, hasReplacement: true },
    );
  });
  it.each(['missing', 'clarified/removed', 'clarified/store_transfer_shortage'] as StateKey[])(
    'reopen %s with found_in_store: pending, action and replacement cleared',
    (s) => {
      check(
        item('piece', s),
        { type: 'reopen', reason: 'found_in_store' },
        { outcome: 'ok', state: 'pending', actual: null, missingAction: null, hasReplacement: false },
      );
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Rows decided in PickingItemSchema (scan, replacement, additional items)

describe('decided rows: scan', () => {
  it('a piece item scan adds a piece: awaiting_quantity below the ordered count, then picked', () => {
    check(item('piece', 'pending'), scan(own), { outcome: 'ok', applied: true, state: 'awaiting_quantity', actual: pcs(1) });
    check(item('piece', 'awaiting_quantity'), scan(own), { outcome: 'ok', state: 'picked', actual: pcs(2) });
  });
  it('a one-piece line is picked by its first scan', () => {
    check(item('piece', 'pending', { ordered: pcs(1) }), scan(own), { state: 'picked', actual: pcs(1) });
  });
  it('scanning a picked piece item answers already_picked and changes nothing', () => {
    check(item('piece', 'picked'), scan(own), { outcome: 'already_picked', applied: false, state: 'picked' });
  });
  it.each(['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'] as StateKey[])(
    'a scale label with the PLU weighs a %s weight item',
    (s) => {
      check(item('weight', s), scan(label('1.020')), { outcome: 'ok', state: 'picked', actual: kg('1.020') });
      check(item('weight', s), scan(label('1.260')), {
        outcome: 'clarification_required',
        state: 'clarified/weight_mismatch',
        confirmed: kg('1.260'),
      });
    },
  );
  it('the own barcode of a pending weight item makes it awaiting_quantity', () => {
    check(item('weight', 'pending'), scan(own), { outcome: 'ok', applied: true, state: 'awaiting_quantity' });
  });
  it('the own barcode of an awaiting weight item is ok without a change', () => {
    check(item('weight', 'awaiting_quantity'), scan(own), { outcome: 'ok', applied: false, state: 'awaiting_quantity' });
  });
  it('the own barcode of a picked weight item is already_picked', () => {
    check(item('weight', 'picked'), scan(own), { outcome: 'already_picked', applied: false });
  });
  it.each([
    ['piece', 'pending'],
    ['piece', 'picked'],
    ['weight', 'awaiting_quantity'],
    ['weight', 'clarified/weight_mismatch'],
  ] as const)('another product on a %s item in %s is a mismatch; unknown is not_found', (kind, s) => {
    check(item(kind, s), scan({ kind: 'other_product' }), { outcome: 'mismatch', applied: false, state: s });
    check(item(kind, s), scan({ kind: 'unknown' }), { outcome: 'not_found', applied: false, state: s });
  });
});

describe('decided rows: replacement', () => {
  const missingCall = (kind: 'piece' | 'weight', extra: Partial<ItemFacts> = {}) => item(kind, 'missing', extra);
  const substitute = (isWeightBased: boolean, labelWeight: bigint | null = null) =>
    ({ kind: 'substitute', isWeightBased, labelWeight, labelPlu: labelWeight ? '03011' : null }) as const;
  const replace = (match: Extract<ItemCommand, { type: 'replacement' }>['match']): ItemCommand => ({
    type: 'replacement',
    barcode: '4601234567893',
    match,
  });

  it('a piece substitute is recorded and counted as one piece (picked when one was ordered)', () => {
    check(missingCall('piece'), replace(substitute(false)), {
      outcome: 'ok',
      state: 'awaiting_quantity',
      actual: pcs(1),
      missingAction: null,
      hasReplacement: true,
    });
    check(missingCall('piece', { ordered: pcs(1) }), replace(substitute(false)), { state: 'picked', actual: pcs(1) });
  });
  it('a weight substitute is weighed by its label, or awaits the weight after its own barcode', () => {
    check(missingCall('weight'), replace(substitute(true, kg('0.980'))), {
      outcome: 'ok',
      state: 'picked',
      actual: kg('0.980'),
      hasReplacement: true,
    });
    check(missingCall('weight'), replace(substitute(true, kg('1.300'))), {
      outcome: 'clarification_required',
      state: 'clarified/weight_mismatch',
    });
    check(missingCall('weight'), replace(substitute(true)), { outcome: 'ok', state: 'awaiting_quantity', hasReplacement: true });
  });
  it('the ordered product itself is same_product; the other kind is kind_mismatch; unknown is not_found', () => {
    check(missingCall('piece'), replace({ kind: 'same_product' }), { outcome: 'same_product', applied: false, state: 'missing' });
    check(missingCall('piece'), replace(substitute(true)), { outcome: 'kind_mismatch', applied: false, state: 'missing' });
    check(missingCall('weight'), replace(substitute(false)), { outcome: 'kind_mismatch', applied: false });
    check(missingCall('piece'), replace({ kind: 'unknown' }), { outcome: 'not_found', applied: false });
  });
});

// ---------------------------------------------------------------------------------------------
// Forbidden transitions: every state a command does not accept is refused

describe('forbidden transitions', () => {
  // Accepting states, as the spec lists them per command.
  const ACCEPTS: Record<string, { piece: StateKey[]; weight: StateKey[] }> = {
    scan: {
      piece: ['pending', 'awaiting_quantity', 'picked'],
      weight: ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'],
    },
    weight: { piece: [], weight: ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'] },
    piece_quantity: { piece: ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'], weight: [] },
    manual_pick: { piece: ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'], weight: [] },
    resolve: { piece: [], weight: [] }, // only missing with action remove, checked below
    reopen_recheck: { piece: ['picked', 'clarified/quantity_mismatch'], weight: ['picked', 'clarified/weight_mismatch'] },
    reopen_found: {
      piece: ['missing', 'clarified/removed', 'clarified/store_transfer_shortage'],
      weight: ['missing', 'clarified/removed', 'clarified/store_transfer_shortage'],
    },
    confirm: { piece: ['clarified/quantity_mismatch'], weight: ['clarified/weight_mismatch'] },
    replacement: { piece: ['missing'], weight: ['missing'] },
  };
  const commandFor = (name: string, kind: 'piece' | 'weight'): ItemCommand => {
    switch (name) {
      case 'scan':
        return scan(own);
      case 'weight':
        return { type: 'weight', weight: kg('1.000'), barcode: null, match: null };
      case 'piece_quantity':
        return { type: 'piece_quantity', quantity: pcs(1) };
      case 'manual_pick':
        return { type: 'manual_pick', quantity: pcs(1), confirm: false };
      case 'resolve':
        return { type: 'resolve', resolution: 'remove' };
      case 'reopen_recheck':
        return { type: 'reopen', reason: 'recheck' };
      case 'reopen_found':
        return { type: 'reopen', reason: 'found_in_store' };
      case 'confirm':
        return kind === 'piece'
          ? { type: 'confirm', resolution: null, quantity: pcs(1), quantityKg: null }
          : { type: 'confirm', resolution: null, quantity: null, quantityKg: kg('1.260') };
      default:
        return {
          type: 'replacement',
          barcode: '4601234567893',
          match: { kind: 'substitute', isWeightBased: kind === 'weight', labelWeight: null, labelPlu: null },
        };
    }
  };
  const cases = Object.keys(ACCEPTS).flatMap((name) =>
    (['piece', 'weight'] as const).flatMap((kind) =>
      (kind === 'piece' ? PIECE_STATES : WEIGHT_STATES)
        .filter((s) => !ACCEPTS[name]![kind].includes(s))
        .map((s) => [name, kind, s] as const),
    ),
  );
  it.each(cases)('%s on a %s item in %s is refused', (name, kind, s) => {
    const t = applyItemCommand(item(kind, s), commandFor(name, kind));
    const expectedCode =
      kind === 'piece' && name === 'weight'
        ? 'ITEM_NOT_WEIGHT_BASED'
        : kind === 'weight' && (name === 'piece_quantity' || name === 'manual_pick')
          ? 'ITEM_IS_WEIGHT_BASED'
          : 'ITEM_STATE_CONFLICT';
    expect(t).toEqual({ ok: false, code: expectedCode });
    expect(statusOf(expectedCode)).toBe(409);
  });

  it('resolve on missing with action call is refused (mark it missing with remove first)', () => {
    check(item('piece', 'missing', { missingAction: 'call' }), { type: 'resolve', resolution: 'remove' }, { code: 'ITEM_STATE_CONFLICT' });
  });
  it('replacement on missing with action remove is refused (the customer declined)', () => {
    check(item('piece', 'missing', { missingAction: 'remove' }), commandFor('replacement', 'piece'), { code: 'ITEM_STATE_CONFLICT' });
  });
  it('piece-quantity above the ordered quantity is 422 QUANTITY_ABOVE_ORDERED', () => {
    check(item('piece', 'pending'), { type: 'piece_quantity', quantity: pcs(3) }, { code: 'QUANTITY_ABOVE_ORDERED', status: 422 });
  });
  it('confirm checks the kind, the presence and the value of what is confirmed', () => {
    const qm = item('piece', 'clarified/quantity_mismatch');
    check(qm, { type: 'confirm', resolution: 'weight_mismatch', quantity: pcs(1), quantityKg: null }, { code: 'ITEM_STATE_CONFLICT' });
    check(
      qm,
      { type: 'confirm', resolution: null, quantity: null, quantityKg: null },
      { code: 'CONFIRMED_QUANTITY_REQUIRED', status: 422 },
    );
    check(qm, { type: 'confirm', resolution: null, quantity: pcs(2), quantityKg: null }, { code: 'CONFIRMED_QUANTITY_MISMATCH' });
    const wm = item('weight', 'clarified/weight_mismatch');
    check(
      wm,
      { type: 'confirm', resolution: null, quantity: 1000n, quantityKg: null },
      { code: 'CONFIRMED_QUANTITY_REQUIRED', status: 422 },
    );
    check(wm, { type: 'confirm', resolution: null, quantity: null, quantityKg: kg('1.250') }, { code: 'CONFIRMED_QUANTITY_MISMATCH' });
  });
  it('marking an item missing again with the same action changes nothing', () => {
    check(item('piece', 'missing', { missingAction: 'call' }), { type: 'missing', action: 'call' }, { outcome: 'ok', applied: false });
    check(
      item('piece', 'missing', { missingAction: 'call' }),
      { type: 'missing', action: 'remove' },
      { applied: true, missingAction: 'remove' },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The table itself (domain/picking/items.ts ITEM_TABLE): every row is reachable and does what it
// says; every state x trigger it leaves out is refused; the spec's rows are all in it.

describe('the item table', () => {
  const KINDS = ['piece', 'weight'] as const;
  const statesOf = (kind: 'piece' | 'weight'): readonly StateKey[] => (kind === 'piece' ? PIECE_STATES : WEIGHT_STATES);
  /** Items to try a row on: the state as `item` builds it, with the other missing action, and lines of one and of three pieces. */
  const itemsIn = (kind: 'piece' | 'weight', s: StateKey) => [
    item(kind, s),
    item(kind, s, { missingAction: s === 'missing' ? 'remove' : 'call' }),
    ...(kind === 'piece' ? [item(kind, s, { ordered: pcs(1) }), item(kind, s, { ordered: pcs(3) })] : []),
  ];
  const substitute = (isWeightBased: boolean, labelWeight: bigint | null) =>
    ({ kind: 'substitute', isWeightBased, labelWeight, labelPlu: labelWeight ? '03011' : null }) as const;
  /** Commands of each trigger covering its conditions. */
  const COMMANDS: Record<Trigger, ItemCommand[]> = {
    scan: [scan(own), scan(label('1.020')), scan(label('1.260')), scan({ kind: 'other_product' }), scan({ kind: 'unknown' })],
    weight: [
      { type: 'weight', weight: kg('1.020'), barcode: null, match: null },
      { type: 'weight', weight: kg('1.260'), barcode: null, match: null },
      { type: 'weight', weight: kg('1.020'), barcode: '2203000010203', match: { kind: 'other_product' } },
      { type: 'weight', weight: kg('1.020'), barcode: '2203000010203', match: { kind: 'unknown' } },
    ],
    piece_quantity: [1, 2, 3].map((n) => ({ type: 'piece_quantity', quantity: pcs(n) })),
    manual_pick: [1, 2].flatMap((n) => [true, false].map((confirm) => ({ type: 'manual_pick', quantity: pcs(n), confirm }) as const)),
    missing: [
      { type: 'missing', action: 'call' },
      { type: 'missing', action: 'remove' },
    ],
    resolve: [{ type: 'resolve', resolution: 'remove' }],
    reopen: [
      { type: 'reopen', reason: 'recheck' },
      { type: 'reopen', reason: 'found_in_store' },
    ],
    confirm: [
      { type: 'confirm', resolution: null, quantity: pcs(1), quantityKg: null },
      { type: 'confirm', resolution: 'quantity_mismatch', quantity: pcs(1), quantityKg: null },
      { type: 'confirm', resolution: 'weight_mismatch', quantity: null, quantityKg: kg('1.260') },
      { type: 'confirm', resolution: null, quantity: null, quantityKg: kg('1.260') },
      { type: 'confirm', resolution: null, quantity: null, quantityKg: null },
      { type: 'confirm', resolution: null, quantity: pcs(2), quantityKg: kg('1.250') },
    ],
    replacement: [
      substitute(false, null),
      substitute(true, null),
      substitute(true, kg('0.980')),
      substitute(true, kg('1.300')),
      { kind: 'same_product' } as const,
      { kind: 'unknown' } as const,
    ].map((match) => ({ type: 'replacement', barcode: '4601234567893', match }) as const),
  };
  const rowName = (r: AnyItemRow) => `${TRIGGERS[r.trigger]} (${r.kind}) from ${r.from.join('|')} when ${r.condition}`;

  it.each(ITEM_TABLE.map((r) => [rowName(r), r] as const))('%s: allowed, and leads where the row says', (_name, r) => {
    for (const kind of KINDS.filter((k) => r.kind === 'any' || r.kind === k)) {
      for (const s of r.from.filter((x) => statesOf(kind).includes(x))) {
        const decided = itemsIn(kind, s)
          .flatMap((f) => COMMANDS[r.trigger].map((cmd) => ({ f, cmd })))
          .filter(({ f, cmd }) => decidingRow(f, cmd) === r);
        expect(decided.length, `${kind} item in ${s}: no case reaches the row`).toBeGreaterThan(0);
        for (const { f, cmd } of decided) {
          const t = applyItemCommand(f, cmd);
          if (typeof r.next === 'object') {
            expect(t).toEqual({ ok: false, code: r.next.refused });
            continue;
          }
          if (!t.ok) throw new Error(`refused with ${t.code}`);
          expect(stateKey(t.next), `${kind} ${s} ${JSON.stringify(cmd, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`).toBe(
            r.next === 'same' ? s : r.next,
          );
          if (r.next === 'same') expect(t.applied).toBe(false);
        }
      }
    }
  });

  const outside = (Object.keys(TRIGGERS) as Trigger[]).flatMap((trigger) =>
    KINDS.flatMap((kind) =>
      statesOf(kind)
        .filter((s) => !acceptingStates(trigger, kind).includes(s))
        .map((s) => [TRIGGERS[trigger], kind, s, trigger] as const),
    ),
  );
  it.each(outside)('%s on a %s item in %s is in no row: refused', (_name, kind, s, trigger) => {
    const rowsForKind = ITEM_TABLE.some((r) => r.trigger === trigger && (r.kind === 'any' || r.kind === kind));
    const code = rowsForKind ? 'ITEM_STATE_CONFLICT' : kind === 'weight' ? 'ITEM_IS_WEIGHT_BASED' : 'ITEM_NOT_WEIGHT_BASED';
    for (const f of itemsIn(kind, s)) for (const cmd of COMMANDS[trigger]) expect(applyItemCommand(f, cmd)).toEqual({ ok: false, code });
  });

  // The interface spec's "Picking item" table, row by row (State, Trigger, Next state): each of its
  // states is the start of a row of ITEM_TABLE citing it, for that trigger, leading to that state.
  const SPEC_ROWS: { states: StateKey[]; kinds: ('piece' | 'weight')[]; trigger: Trigger; next: StateKey | null }[] = [
    {
      states: ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'],
      kinds: ['piece'],
      trigger: 'piece_quantity',
      next: 'clarified/quantity_mismatch',
    },
    {
      states: ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'],
      kinds: ['weight'],
      trigger: 'weight',
      next: 'picked',
    }, // "any workable state", inside tolerance
    {
      states: ['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch'],
      kinds: ['weight'],
      trigger: 'weight',
      next: 'clarified/weight_mismatch',
    }, // outside tolerance
    {
      states: ['pending', 'awaiting_quantity', 'picked', 'clarified/quantity_mismatch'],
      kinds: ['piece'],
      trigger: 'manual_pick',
      next: null,
    }, // "saved actual quantity"
    {
      states: ['clarified/quantity_mismatch', 'clarified/weight_mismatch'],
      kinds: ['piece', 'weight'],
      trigger: 'confirm',
      next: 'picked',
    },
    { states: ALL, kinds: ['piece', 'weight'], trigger: 'missing', next: 'missing' }, // "item in the session"
    { states: ['missing'], kinds: ['piece', 'weight'], trigger: 'resolve', next: 'clarified/removed' },
    {
      states: [
        'missing',
        'clarified/removed',
        'clarified/quantity_mismatch',
        'clarified/weight_mismatch',
        'clarified/store_transfer_shortage',
        'picked',
      ],
      kinds: ['piece', 'weight'],
      trigger: 'reopen',
      next: 'pending',
    },
  ];
  it.each(SPEC_ROWS.map((r) => [TRIGGERS[r.trigger], r.next ?? 'a saved quantity', r] as const))(
    "the spec's row %s -> %s is in the table",
    (_t, _n, spec) => {
      for (const kind of spec.kinds) {
        for (const s of spec.states.filter((x) => statesOf(kind).includes(x))) {
          const citing = ITEM_TABLE.filter(
            (r) => r.spec !== null && r.trigger === spec.trigger && (r.kind === 'any' || r.kind === kind) && r.from.includes(s),
          );
          expect(citing.length, `${kind} in ${s}`).toBeGreaterThan(0);
          if (spec.next)
            expect(
              citing.map((r) => r.next),
              `${kind} in ${s}`,
            ).toContain(spec.next);
        }
      }
      expect(
        ITEM_TABLE.filter((r) => r.spec !== null && r.trigger === spec.trigger).every((r) =>
          r.spec!.startsWith(`${TRIGGERS[spec.trigger]}:`),
        ),
      ).toBe(true);
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Session-level rules and money

describe('totals, tolerance and the session status', () => {
  it('rounds line totals half-up to kopecks', () => {
    expect(lineTotal(kg('1.260'), 12990n)).toBe(16367n); // 1.260 x 129.90 = 163.674
    expect(lineTotal(kg('0.930'), 24900n)).toBe(23157n); // 231.57
    expect(lineTotal(kg('0.005'), 100n)).toBe(1n); // 0.005 -> 0.01 (half up)
    expect(lineTotal(pcs(3), 8990n)).toBe(26970n);
  });
  it('computes tolerance bounds rounded to grams', () => {
    expect(toleranceFor(kg('1.000'), 100n)).toMatchObject({ min: kg('0.900'), max: kg('1.100') });
    expect(toleranceFor(kg('0.333'), 100n)).toMatchObject({ min: kg('0.300'), max: kg('0.366') });
    expect(toleranceFor(kg('0.455'), 125n)).toMatchObject({ min: kg('0.398'), max: kg('0.512') });
  });
  it('counts expected, actual and nothing by state (PaymentSummarySchema)', () => {
    expect(currentLineTotal(item('piece', 'pending'), 10000n)).toBe(20000n);
    expect(currentLineTotal(item('piece', 'clarified/quantity_mismatch'), 10000n)).toBe(10000n);
    expect(currentLineTotal(item('weight', 'picked'), 10000n)).toBe(9500n);
    for (const s of ['missing', 'clarified/removed', 'clarified/store_transfer_shortage'] as StateKey[])
      expect(currentLineTotal(item('piece', s), 10000n)).toBe(0n);
  });
  it('is ready to finish only when every item is resolved', () => {
    const resolved = [item('piece', 'picked'), item('piece', 'clarified/removed'), item('weight', 'clarified/store_transfer_shortage')];
    expect(resolved.every(isResolved)).toBe(true);
    expect(openSessionStatus(resolved)).toBe('ready_to_finish');
    for (const s of ['pending', 'awaiting_quantity', 'missing', 'clarified/quantity_mismatch'] as StateKey[]) {
      expect(openSessionStatus([...resolved, item('piece', s)])).toBe('active');
    }
    expect(currentItemIndex([item('piece', 'picked'), item('piece', 'missing'), item('piece', 'pending')])).toBe(1);
    expect(currentItemIndex(resolved)).toBe(3);
  });
  it('asks for reconciliation only of an online payment that changed', () => {
    expect(reconciliationStatus('online', 1000n, 900n)).toBe('pending');
    expect(reconciliationStatus('online', 1000n, 1000n)).toBe('not_required');
    expect(reconciliationStatus('cash', 1000n, 900n)).toBe('not_required');
    expect(differenceToRefund('online', 'paid', 1000n, 900n)).toBe(100n);
    expect(differenceToRefund('online', 'paid', 1000n, 1100n)).toBeNull();
    expect(differenceToRefund('online', 'awaiting', 1000n, 900n)).toBeNull();
    expect(differenceToRefund('cash', 'not_required', 1000n, 900n)).toBeNull();
    expect(differenceToCollect('online', 'paid', 1000n, 1100n)).toBe(100n);
    expect(differenceToCollect('online', 'paid', 1000n, 900n)).toBeNull();
    expect(differenceToCollect('online', 'paid', 1000n, 1000n)).toBeNull();
    expect(differenceToCollect('cash', 'not_required', 1000n, 1100n)).toBeNull();
  });
  it('checks the quantity of an added item', () => {
    expect(addedQuantityProblem(pcs(2), false)).toBeNull();
    expect(addedQuantityProblem(kg('1.5'), false)).toBe('QUANTITY_NOT_INTEGER');
    expect(addedQuantityProblem(kg('0.455'), true)).toBeNull();
    expect(addedQuantityProblem(0n, true)).toBe('QUANTITY_INVALID');
    expect(addedQuantityProblem(null, true)).toBe('QUANTITY_INVALID');
  });
});
