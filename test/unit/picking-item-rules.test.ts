// The picking item state machine (domain/picking/items.ts) beyond the rows of the spec table: what
// each command records (source, barcode, label PLU), when a command counts as applied, the rows
// that apply only to some states or to a customer who agreed to a substitute, and the session
// rules (status, current item, stock taken, refunds and extra payments, added quantities).
import { describe, expect, it } from 'vitest';
import {
  acceptingStates,
  addedQuantityProblem,
  applyItemCommand,
  currentItemIndex,
  currentLineTotal,
  differenceToCollect,
  differenceToRefund,
  ITEM_TABLE,
  openSessionStatus,
  stateKey,
  takenQuantity,
  toleranceFor,
  TRIGGERS,
  type ItemCommand,
  type ItemFacts,
  type ReplacementMatch,
  type StateKey,
  type Transition,
} from '../../domain/picking/items.js';

const kg = (s: string) => BigInt(Math.round(Number(s) * 1000));
const pcs = (n: number) => BigInt(n) * 1000n;
const OWN = '4600000000001';
const LABEL = '2203000010203';

/** A pending item: 2 pieces, or 1.000 kg with a 10 % tolerance; `extra` sets any other fact. */
function item(kind: 'piece' | 'weight', extra: Partial<ItemFacts> = {}): ItemFacts {
  const weight = kind === 'weight';
  const ordered = weight ? kg('1.000') : pcs(2);
  return {
    state: 'pending',
    clarificationKind: null,
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
    ...extra,
  };
}

function ok(t: Transition): Extract<Transition, { ok: true }> {
  if (!t.ok) throw new Error(`refused with ${t.code}`);
  return t;
}

const scan = (match: Extract<ItemCommand, { type: 'scan' }>['match'], barcode = OWN): ItemCommand => ({ type: 'scan', barcode, match });
const own = { kind: 'item_product', labelWeight: null, labelPlu: null } as const;
const label = (w: string, plu = '03000') => ({ kind: 'item_product', labelWeight: kg(w), labelPlu: plu }) as const;
const weigh = (w: string, barcode: string | null = null, match: Extract<ItemCommand, { type: 'weight' }>['match'] = null): ItemCommand => ({
  type: 'weight',
  weight: kg(w),
  barcode,
  match,
});
const replace = (match: ReplacementMatch): ItemCommand => ({ type: 'replacement', barcode: '4601234567893', match });

describe('the table as written', () => {
  it('words the condition and the effect of every row, each row named uniquely', () => {
    const names = ITEM_TABLE.map((r) => `${TRIGGERS[r.trigger]} (${r.kind}) from ${r.from.join('|')} when ${r.condition}`);
    for (const r of ITEM_TABLE) {
      expect(r.condition.trim(), TRIGGERS[r.trigger]).not.toBe('');
      expect(r.also.trim(), `${TRIGGERS[r.trigger]} when ${r.condition}`).not.toBe('');
    }
    expect(new Set(names).size).toBe(names.length);
  });

  it('derives the states each command is accepted in', () => {
    expect(acceptingStates('scan', 'piece')).toEqual(['pending', 'awaiting_quantity', 'picked']);
    expect(acceptingStates('scan', 'weight')).toEqual(['pending', 'awaiting_quantity', 'picked', 'clarified/weight_mismatch']);
    expect(acceptingStates('weight', 'piece')).toEqual([]);
    expect(acceptingStates('piece_quantity', 'weight')).toEqual([]);
    expect(acceptingStates('resolve', 'weight')).toEqual(['missing']);
    expect(acceptingStates('confirm', 'piece')).toEqual(['clarified/quantity_mismatch', 'clarified/weight_mismatch']);
    expect(acceptingStates('replacement', 'piece')).toEqual(['missing']);
  });
});

describe('what a weight records', () => {
  it('refuses to weigh with a barcode that is unknown or of another product, changing nothing', () => {
    const f = item('weight');
    expect(ok(applyItemCommand(f, weigh('1.020', LABEL, { kind: 'unknown' })))).toMatchObject({
      outcome: 'not_found',
      applied: false,
      next: f,
    });
    expect(ok(applyItemCommand(f, weigh('1.020', LABEL, { kind: 'other_product' })))).toMatchObject({
      outcome: 'mismatch',
      applied: false,
      next: f,
    });
  });

  it('records a weight inside the tolerance as picked by weight, with the barcode sent', () => {
    const t = ok(applyItemCommand(item('weight', { labelPlu: '03000', pickSource: 'scale_label' }), weigh('1.020', LABEL, own)));
    expect(t).toMatchObject({ outcome: 'ok', applied: true, replacement: 'keep', labelWeight: null });
    expect(t.next).toMatchObject({
      state: 'picked',
      actual: kg('1.020'),
      confirmed: null,
      pickSource: 'weight',
      lastScannedBarcode: LABEL,
      labelPlu: null,
    });
  });

  it('records a weight outside the tolerance as a mismatch to confirm, by weight', () => {
    const t = ok(applyItemCommand(item('weight'), weigh('1.260')));
    expect(t.outcome).toBe('clarification_required');
    expect(t.next).toMatchObject({
      state: 'clarified',
      clarificationKind: 'weight_mismatch',
      actual: kg('1.260'),
      confirmed: kg('1.260'),
      pickSource: 'weight',
    });
  });

  it('keeps the barcode scanned before when the weight comes without one', () => {
    const f = item('weight', { state: 'awaiting_quantity', lastScannedBarcode: OWN });
    expect(ok(applyItemCommand(f, weigh('1.000'))).next.lastScannedBarcode).toBe(OWN);
    expect(ok(applyItemCommand(f, weigh('1.000', LABEL, own))).next.lastScannedBarcode).toBe(LABEL);
  });

  it('fits only the exact ordered weight when the item has no tolerance', () => {
    const f = item('weight', { tolerance: null });
    expect(stateKey(ok(applyItemCommand(f, weigh('1.000'))).next)).toBe('picked');
    expect(stateKey(ok(applyItemCommand(f, weigh('1.001'))).next)).toBe('clarified/weight_mismatch');
  });

  it('never lets the lower bound of a tolerance fall below one gram', () => {
    expect(toleranceFor(1n, 1000n)).toEqual({ percentTenths: 1000n, min: 1n, max: 2n });
  });
});

describe('what a scan records', () => {
  it('weighs by a scale label, recording its PLU and weight as picked by label', () => {
    const t = ok(applyItemCommand(item('weight'), scan(label('1.020'), LABEL)));
    expect(t).toMatchObject({ outcome: 'ok', applied: true, labelWeight: kg('1.020'), replacement: 'keep' });
    expect(t.next).toMatchObject({
      state: 'picked',
      actual: kg('1.020'),
      pickSource: 'scale_label',
      lastScannedBarcode: LABEL,
      labelPlu: '03000',
    });
  });

  it('confirms the product of a weight item by its own barcode and waits for the weight', () => {
    const t = ok(applyItemCommand(item('weight'), scan(own)));
    expect(t).toMatchObject({ outcome: 'ok', applied: true, labelWeight: null });
    expect(t.next).toMatchObject({ state: 'awaiting_quantity', actual: null, lastScannedBarcode: OWN });
    for (const state of ['awaiting_quantity', 'clarified/weight_mismatch'] as const) {
      const [s, k] = state.split('/') as [ItemFacts['state'], ItemFacts['clarificationKind']];
      const f = item('weight', { state: s, clarificationKind: k ?? null, lastScannedBarcode: OWN });
      expect(ok(applyItemCommand(f, scan(own))), state).toMatchObject({ outcome: 'ok', applied: false, next: f });
    }
  });

  it('counts a piece by a scan of its product, as scanned', () => {
    const t = ok(applyItemCommand(item('piece', { ordered: pcs(3) }), scan(own)));
    expect(t.next).toMatchObject({
      state: 'awaiting_quantity',
      actual: pcs(1),
      pickSource: 'scan',
      lastScannedBarcode: OWN,
      labelPlu: null,
    });
    const second = ok(applyItemCommand(t.next, scan(own)));
    expect(second.next).toMatchObject({ state: 'awaiting_quantity', actual: pcs(2) });
  });

  it('answers an unknown or foreign barcode on a piece item in any scannable state without changing it', () => {
    const states: Partial<ItemFacts>[] = [
      {},
      { state: 'awaiting_quantity', actual: pcs(1), pickSource: 'scan', lastScannedBarcode: OWN },
      { state: 'picked', actual: pcs(2), pickSource: 'scan', lastScannedBarcode: OWN },
    ];
    for (const extra of states) {
      const f = item('piece', extra);
      expect(ok(applyItemCommand(f, scan({ kind: 'unknown' })))).toMatchObject({ outcome: 'not_found', applied: false, next: f });
      expect(ok(applyItemCommand(f, scan({ kind: 'other_product' })))).toMatchObject({ outcome: 'mismatch', applied: false, next: f });
    }
  });
});

describe('what a typed count records', () => {
  const scannedOnce = item('piece', { state: 'awaiting_quantity', actual: pcs(1), pickSource: 'scan', lastScannedBarcode: OWN });

  it('keeps scan as the source of a count typed after a scan, manual otherwise', () => {
    const full = { type: 'piece_quantity', quantity: pcs(2) } as const;
    expect(ok(applyItemCommand(scannedOnce, full)).next).toMatchObject({ state: 'picked', actual: pcs(2), pickSource: 'scan' });
    expect(ok(applyItemCommand(item('piece'), full)).next).toMatchObject({ state: 'picked', actual: pcs(2), pickSource: 'manual' });
    const partial = { type: 'piece_quantity', quantity: pcs(1) } as const;
    expect(ok(applyItemCommand(item('piece'), partial)).next).toMatchObject({ actual: pcs(1), confirmed: pcs(1), pickSource: 'manual' });
    expect(ok(applyItemCommand(scannedOnce, partial)).next).toMatchObject({ actual: pcs(1), confirmed: pcs(1), pickSource: 'scan' });
  });

  it('records a manual pick as manual, whatever was scanned before', () => {
    const exact = ok(applyItemCommand(scannedOnce, { type: 'manual_pick', quantity: pcs(2), confirm: false }));
    expect(exact.next).toMatchObject({ state: 'picked', actual: pcs(2), confirmed: null, pickSource: 'manual' });
    const confirmed = ok(applyItemCommand(scannedOnce, { type: 'manual_pick', quantity: pcs(1), confirm: true }));
    expect(confirmed.next).toMatchObject({ state: 'picked', actual: pcs(1), confirmed: pcs(1), pickSource: 'manual' });
    const toConfirm = ok(applyItemCommand(scannedOnce, { type: 'manual_pick', quantity: pcs(1), confirm: false }));
    expect(toConfirm.next).toMatchObject({ state: 'clarified', clarificationKind: 'quantity_mismatch', pickSource: 'manual' });
  });
});

describe('when a command counts as applied', () => {
  it('counts a change of state alone', () => {
    const rechecked = item('weight', { lastScannedBarcode: OWN });
    const t = ok(applyItemCommand(rechecked, scan(own)));
    expect(t).toMatchObject({ applied: true, next: { ...rechecked, state: 'awaiting_quantity' } });
  });

  it('counts a change of the source alone', () => {
    const manual = item('piece', { state: 'picked', actual: pcs(2), pickSource: 'manual', lastScannedBarcode: OWN });
    const t = ok(applyItemCommand(manual, { type: 'piece_quantity', quantity: pcs(2) }));
    expect(t).toMatchObject({ applied: true, next: { ...manual, pickSource: 'scan' } });
  });

  it('counts a change of the scanned barcode alone', () => {
    const picked = item('weight', { state: 'picked', actual: kg('0.950'), pickSource: 'weight' });
    const t = ok(applyItemCommand(picked, weigh('0.950', LABEL, own)));
    expect(t).toMatchObject({ applied: true, next: { ...picked, lastScannedBarcode: LABEL } });
  });

  it('counts a change of the label PLU alone', () => {
    const picked = item('weight', {
      state: 'picked',
      actual: kg('1.020'),
      pickSource: 'scale_label',
      lastScannedBarcode: LABEL,
      labelPlu: '03011',
    });
    const t = ok(applyItemCommand(picked, scan(label('1.020'), LABEL)));
    expect(t).toMatchObject({ applied: true, next: { ...picked, labelPlu: '03000' } });
  });

  it('counts a confirmation of the count alone', () => {
    const picked = item('piece', { state: 'picked', actual: pcs(1), pickSource: 'manual' });
    const t = ok(applyItemCommand(picked, { type: 'manual_pick', quantity: pcs(1), confirm: true }));
    expect(t).toMatchObject({ applied: true, next: { ...picked, confirmed: pcs(1) } });
  });

  it('does not count the same weight with the same barcode again', () => {
    const picked = item('weight', { state: 'picked', actual: kg('0.950'), pickSource: 'weight', lastScannedBarcode: LABEL });
    expect(ok(applyItemCommand(picked, weigh('0.950', LABEL, own)))).toMatchObject({ applied: false, replacement: 'keep' });
  });
});

describe('the chosen replacement', () => {
  it('is cleared when the item is marked missing or found in store again, and kept otherwise', () => {
    const replaced = item('piece', { state: 'picked', actual: pcs(2), pickSource: 'scan', lastScannedBarcode: OWN, hasReplacement: true });
    expect(ok(applyItemCommand(replaced, { type: 'missing', action: 'call' })).replacement).toBe('clear');
    expect(ok(applyItemCommand(item('piece'), { type: 'missing', action: 'call' })).replacement).toBe('keep');
    const removed = { state: 'clarified', clarificationKind: 'removed', missingAction: 'remove' } as const;
    expect(
      ok(applyItemCommand(item('piece', { ...removed, hasReplacement: true }), { type: 'reopen', reason: 'found_in_store' })).replacement,
    ).toBe('clear');
    expect(ok(applyItemCommand(item('piece', removed), { type: 'reopen', reason: 'found_in_store' })).replacement).toBe('keep');
  });

  it('is refused in every form when the customer asked to remove the item', () => {
    const matches: ReplacementMatch[] = [
      { kind: 'unknown' },
      { kind: 'same_product' },
      { kind: 'substitute', isWeightBased: false, labelWeight: null, labelPlu: null },
      { kind: 'substitute', isWeightBased: true, labelWeight: null, labelPlu: null },
      { kind: 'substitute', isWeightBased: true, labelWeight: kg('0.980'), labelPlu: '03011' },
      { kind: 'substitute', isWeightBased: true, labelWeight: kg('1.300'), labelPlu: '03011' },
    ];
    for (const kind of ['piece', 'weight'] as const) {
      for (const ordered of kind === 'piece' ? [pcs(1), pcs(2)] : [kg('1.000')]) {
        const f = item(kind, { state: 'missing', missingAction: 'remove', ordered });
        for (const match of matches)
          expect(applyItemCommand(f, replace(match)), `${kind} ${match.kind}`).toEqual({ ok: false, code: 'ITEM_STATE_CONFLICT' });
      }
    }
  });
});

describe('confirming a discrepancy', () => {
  it('refuses a confirmation naming the other kind of mismatch, even with the right value', () => {
    const f = item('weight', { state: 'clarified', clarificationKind: 'weight_mismatch', actual: kg('1.260'), confirmed: kg('1.260') });
    expect(applyItemCommand(f, { type: 'confirm', resolution: 'quantity_mismatch', quantity: null, quantityKg: kg('1.260') })).toEqual({
      ok: false,
      code: 'ITEM_STATE_CONFLICT',
    });
  });
});

describe('line totals by state', () => {
  it('counts the ordered quantity while pieces are still being counted', () => {
    expect(currentLineTotal(item('piece', { state: 'awaiting_quantity', actual: pcs(1) }), 5000n)).toBe(10000n);
  });

  it('counts the recorded weight of a weight mismatch', () => {
    const f = item('weight', { state: 'clarified', clarificationKind: 'weight_mismatch', actual: kg('1.260'), confirmed: kg('1.260') });
    expect(currentLineTotal(f, 10000n)).toBe(12600n);
  });
});

describe('session rules', () => {
  const resolved = (key: StateKey) => {
    const [state, clarificationKind] = key.split('/') as [ItemFacts['state'], ItemFacts['clarificationKind']];
    return { state, clarificationKind: clarificationKind ?? null };
  };

  it('keeps a session without items active', () => {
    expect(openSessionStatus([])).toBe('active');
    expect(openSessionStatus([resolved('picked')])).toBe('ready_to_finish');
  });

  it('points at the first unresolved item, the first one included', () => {
    expect(currentItemIndex([resolved('pending'), resolved('picked')])).toBe(0);
    expect(currentItemIndex([resolved('picked'), resolved('missing')])).toBe(1);
    expect(currentItemIndex([resolved('picked')])).toBe(1);
  });

  it('takes a picked item off the shelf at its recorded quantity, else its ordered one, and nothing else', () => {
    expect(takenQuantity({ state: 'picked', actual: pcs(1), ordered: pcs(2) })).toBe(pcs(1));
    expect(takenQuantity({ state: 'picked', actual: null, ordered: pcs(2) })).toBe(pcs(2));
    expect(takenQuantity({ state: 'missing', actual: pcs(1), ordered: pcs(2) })).toBe(0n);
    expect(takenQuantity({ state: 'clarified', actual: pcs(1), ordered: pcs(2) })).toBe(0n);
  });

  it('refunds or collects a difference only for a paid online order', () => {
    expect(differenceToRefund('online', 'paid', 10000n, 9000n)).toBe(1000n);
    expect(differenceToRefund('online', 'paid', 10000n, 10000n)).toBeNull();
    expect(differenceToRefund('online', 'paid', 10000n, 11000n)).toBeNull();
    expect(differenceToRefund('online', 'awaiting', 10000n, 9000n)).toBeNull();
    expect(differenceToRefund('cash', 'paid', 10000n, 9000n)).toBeNull();
    expect(differenceToCollect('online', 'paid', 10000n, 11000n)).toBe(1000n);
    expect(differenceToCollect('online', 'paid', 10000n, 10000n)).toBeNull();
    expect(differenceToCollect('online', 'awaiting', 10000n, 11000n)).toBeNull();
    expect(differenceToCollect('cash', 'paid', 10000n, 11000n)).toBeNull();
    expect(differenceToCollect('cash', 'awaiting', 10000n, 11000n)).toBeNull();
  });

  it('accepts added quantities up to 999.999 kg or 999 pieces, and whole pieces only', () => {
    expect(addedQuantityProblem(999_999n, true)).toBeNull();
    expect(addedQuantityProblem(1_000_000n, true)).toBe('QUANTITY_INVALID');
    expect(addedQuantityProblem(999_000n, false)).toBeNull();
    expect(addedQuantityProblem(1n, true)).toBeNull();
    expect(addedQuantityProblem(0n, true)).toBe('QUANTITY_INVALID');
    expect(addedQuantityProblem(null, false)).toBe('QUANTITY_INVALID');
    expect(addedQuantityProblem(1500n, false)).toBe('QUANTITY_NOT_INTEGER');
  });
});
