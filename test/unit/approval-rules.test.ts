// The customer's say over a line while it is picked (domain/picking/approvals.ts): which
// replacements a preference allows, what goes to the customer, and what an answer does.
import { describe, expect, it } from 'vitest';
import {
  decidedItem,
  decisionOutcome,
  pendingApprovalRefusal,
  proposalKind,
  proposedQuantity,
  replacementRefusal,
  withdrawsProposal,
  type LinePreference,
} from '../../domain/picking/approvals.js';
import { applyItemCommand, toleranceFor, type ItemFacts } from '../../domain/picking/items.js';

const piece = (over: Partial<ItemFacts> = {}): ItemFacts => ({
  state: 'pending',
  clarificationKind: null,
  missingAction: null,
  isWeightBased: false,
  ordered: 3000n,
  actual: null,
  confirmed: null,
  pickSource: null,
  lastScannedBarcode: null,
  labelPlu: null,
  hasReplacement: false,
  tolerance: null,
  ...over,
});
const weight = (over: Partial<ItemFacts> = {}) =>
  piece({ isWeightBased: true, ordered: 1000n, tolerance: toleranceFor(1000n, 100n), ...over });
const asking = (over: Partial<LinePreference> = {}): LinePreference => ({
  policy: 'picker_choice',
  productIds: [],
  approvalRequired: true,
  ...over,
});
const missingCall = piece({ state: 'missing', missingAction: 'call' });
const substitute = { kind: 'substitute', isWeightBased: false, labelWeight: null, labelPlu: null } as const;

describe('replacementRefusal', () => {
  it('refuses every replacement of a line that wants none, whatever the barcode', () => {
    expect(replacementRefusal({ policy: 'no_replacement', productIds: [], approvalRequired: false }, 'replacement', null)).toBe(
      'REPLACEMENT_NOT_WANTED',
    );
    expect(replacementRefusal({ policy: 'no_replacement', productIds: [], approvalRequired: false }, 'replacement', 'p1')).toBe(
      'REPLACEMENT_NOT_WANTED',
    );
  });

  it('refuses a substitute the line does not name, and takes the named ones', () => {
    const named: LinePreference = { policy: 'named_products', productIds: ['p1', 'p2'], approvalRequired: false };
    expect(replacementRefusal(named, 'replacement', 'p3')).toBe('REPLACEMENT_NOT_NAMED');
    expect(replacementRefusal(named, 'replacement', 'p2')).toBeNull();
    // No substitute set (unknown barcode, the ordered product itself): the item's own rules answer.
    expect(replacementRefusal(named, 'replacement', null)).toBeNull();
  });

  it('leaves lines without a preference, picker_choice lines and other commands alone', () => {
    expect(replacementRefusal(null, 'replacement', 'p3')).toBeNull();
    expect(replacementRefusal(asking(), 'replacement', 'p3')).toBeNull();
    expect(replacementRefusal({ policy: 'no_replacement', productIds: [], approvalRequired: false }, 'missing', null)).toBeNull();
  });
});

describe('proposalKind', () => {
  it('asks about a substitute chosen, only on a line that asks for approval', () => {
    const t = applyItemCommand(missingCall, { type: 'replacement', barcode: '4600000000001', match: substitute });
    expect(proposalKind(asking(), missingCall, t)).toBe('replacement');
    expect(proposalKind(asking({ approvalRequired: false }), missingCall, t)).toBeNull();
    expect(proposalKind(null, missingCall, t)).toBeNull();
  });

  it('asks about a new discrepancy: a partial quantity, a confirmed different count, a weight outside the tolerance', () => {
    const partial = applyItemCommand(piece(), { type: 'piece_quantity', quantity: 2000n });
    expect(proposalKind(asking(), piece(), partial)).toBe('quantity');
    const confirmedCount = applyItemCommand(piece(), { type: 'manual_pick', quantity: 2000n, confirm: true });
    expect(proposalKind(asking(), piece(), confirmedCount)).toBe('quantity');
    const heavy = applyItemCommand(weight(), { type: 'weight', weight: 1400n, barcode: null, match: null });
    expect(proposalKind(asking(), weight(), heavy)).toBe('weight');
  });

  it('does not ask when nothing differs from the order, or nothing changed', () => {
    const full = applyItemCommand(piece(), { type: 'piece_quantity', quantity: 3000n });
    expect(proposalKind(asking(), piece(), full)).toBeNull();
    const within = applyItemCommand(weight(), { type: 'weight', weight: 1050n, barcode: null, match: null });
    expect(proposalKind(asking(), weight(), within)).toBeNull();
    const waiting = piece({ state: 'clarified', clarificationKind: 'quantity_mismatch', actual: 2000n, confirmed: 2000n });
    const same = applyItemCommand(waiting, { type: 'piece_quantity', quantity: 2000n });
    expect(proposalKind(asking(), waiting, same)).toBeNull();
  });
});

describe('a pending proposal', () => {
  it('blocks commands on its item except those that take it back', () => {
    for (const command of ['scan', 'weight', 'piece_quantity', 'manual_pick', 'confirm', 'resolve', 'replacement'] as const)
      expect(pendingApprovalRefusal('pending', command)).toBe('APPROVAL_PENDING');
    expect(pendingApprovalRefusal('pending', 'missing')).toBeNull();
    expect(pendingApprovalRefusal('pending', 'reopen')).toBeNull();
    expect(pendingApprovalRefusal('approved', 'confirm')).toBeNull();
    expect(pendingApprovalRefusal(null, 'scan')).toBeNull();
  });

  it('is withdrawn by a command let through that changed the item', () => {
    const picked = piece({ state: 'picked', actual: 3000n, hasReplacement: true });
    const t = applyItemCommand(picked, { type: 'missing', action: 'remove' });
    expect(withdrawsProposal('pending', t)).toBe(true);
    expect(withdrawsProposal('approved', t)).toBe(false);
  });
});

describe('decidedItem', () => {
  it('approval confirms a discrepancy waiting for it and leaves anything else as it is', () => {
    const waiting = piece({ state: 'clarified', clarificationKind: 'quantity_mismatch', actual: 2000n, confirmed: 2000n });
    expect(decidedItem(waiting, 'quantity', 'approve')).toEqual({
      next: { ...waiting, state: 'picked', clarificationKind: null },
      replacement: 'keep',
    });
    const replaced = piece({ state: 'picked', actual: 3000n, hasReplacement: true });
    expect(decidedItem(replaced, 'replacement', 'approve')).toEqual({ next: replaced, replacement: 'keep' });
  });

  it('rejection of a replacement takes the substitute back: missing again, to replace or remove', () => {
    const replaced = piece({ state: 'awaiting_quantity', actual: 1000n, hasReplacement: true, pickSource: 'scan' });
    const { next, replacement } = decidedItem(replaced, 'replacement', 'reject');
    expect(replacement).toBe('clear');
    expect(next).toMatchObject({ state: 'missing', missingAction: 'call', actual: null, hasReplacement: false, pickSource: null });
  });

  it('rejection of a quantity or weight sends the line to be removed', () => {
    const heavy = weight({ state: 'clarified', clarificationKind: 'weight_mismatch', actual: 1400n, confirmed: 1400n });
    expect(decidedItem(heavy, 'weight', 'reject').next).toMatchObject({
      state: 'missing',
      missingAction: 'remove',
      actual: null,
      confirmed: null,
    });
  });

  it('proposes the ordered quantity for a replacement and the recorded one otherwise', () => {
    expect(proposedQuantity('replacement', piece({ actual: 1000n }))).toBe(3000n);
    expect(proposedQuantity('quantity', piece({ actual: 2000n }))).toBe(2000n);
  });
});

describe('decisionOutcome', () => {
  const pending = { status: 'pending', decidedBy: null, sessionOpen: true } as const;
  it('applies an answer to a pending proposal of an open session', () => {
    expect(decisionOutcome(pending, 'approve')).toBe('apply');
    expect(decisionOutcome({ ...pending, sessionOpen: false }, 'approve')).toBe('APPROVAL_WITHDRAWN');
  });

  it('says nothing changes for the same answer again, and refuses every other late answer by why it is late', () => {
    expect(decisionOutcome({ status: 'approved', decidedBy: 'customer', sessionOpen: true }, 'approve')).toBe('unchanged');
    expect(decisionOutcome({ status: 'rejected', decidedBy: 'customer', sessionOpen: true }, 'reject')).toBe('unchanged');
    expect(decisionOutcome({ status: 'approved', decidedBy: 'customer', sessionOpen: true }, 'reject')).toBe('APPROVAL_ALREADY_DECIDED');
    expect(decisionOutcome({ status: 'approved', decidedBy: 'timeout', sessionOpen: true }, 'approve')).toBe('APPROVAL_ALREADY_DECIDED');
    expect(decisionOutcome({ status: 'approved', decidedBy: 'picking_finished', sessionOpen: false }, 'approve')).toBe('PICKING_FINISHED');
    expect(decisionOutcome({ status: 'withdrawn', decidedBy: 'picker', sessionOpen: true }, 'approve')).toBe('APPROVAL_WITHDRAWN');
    expect(decisionOutcome({ status: 'withdrawn', decidedBy: 'picking_cancelled', sessionOpen: false }, 'reject')).toBe(
      'APPROVAL_WITHDRAWN',
    );
  });
});
