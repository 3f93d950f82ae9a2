// The customer's say over a line while it is picked: which replacements its preference allows,
// which of the picker's changes go to the customer for approval, and what an answer does to the
// item. Pure: facts in, facts out; the use cases write them.
import type { ErrorCode } from '../errors.js';
import type { ItemCommand, ItemFacts, ReplacementEffect, Transition } from './items.js';

export type ReplacementPolicy = 'no_replacement' | 'picker_choice' | 'named_products';
export type ApprovalKind = 'replacement' | 'quantity' | 'weight';
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'withdrawn';
export type ApprovalDecider = 'customer' | 'timeout' | 'picking_finished' | 'picker' | 'picking_cancelled';
export type Decision = 'approve' | 'reject';

/** A line's preference as the rules read it. */
export interface LinePreference {
  policy: ReplacementPolicy;
  /** The named products, most preferred first (named_products only). */
  productIds: readonly string[];
  approvalRequired: boolean;
}

/** Commands that take a pending proposal back, and so are let through while it waits for the customer. */
const WITHDRAWING: ReadonlySet<ItemCommand['type']> = new Set(['missing', 'reopen']);

/** A command on an item whose proposal waits for the customer: refused, unless it takes the proposal back. */
export function pendingApprovalRefusal(status: ApprovalStatus | null, command: ItemCommand['type']): 'APPROVAL_PENDING' | null {
  return status === 'pending' && !WITHDRAWING.has(command) ? 'APPROVAL_PENDING' : null;
}

/** Whether a command on an item withdraws its pending proposal (it was let through and changed the item). */
export const withdrawsProposal = (status: ApprovalStatus | null, transition: Transition): boolean =>
  status === 'pending' && transition.ok && transition.applied;

/**
 * The line's refusal of a replacement command, checked after the item's own rules: a line that
 * wants no replacement refuses any; a line naming its replacements refuses a substitute it does
 * not name. `substituteId` is the product the command would set (null when it sets none).
 */
export function replacementRefusal(
  preference: LinePreference | null,
  command: ItemCommand['type'],
  substituteId: string | null,
): Extract<ErrorCode, 'REPLACEMENT_NOT_WANTED' | 'REPLACEMENT_NOT_NAMED'> | null {
  if (command !== 'replacement' || !preference) return null;
  if (preference.policy === 'no_replacement') return 'REPLACEMENT_NOT_WANTED';
  if (preference.policy === 'named_products' && substituteId !== null && !preference.productIds.includes(substituteId)) {
    return 'REPLACEMENT_NOT_NAMED';
  }
  return null;
}

/**
 * What, if anything, a transition proposes to the customer on a line that asks for approval: a
 * substitute chosen, or a new discrepancy recorded (a quantity or weight other than ordered).
 */
export function proposalKind(preference: LinePreference | null, before: ItemFacts, t: Transition): ApprovalKind | null {
  if (!preference?.approvalRequired || !t.ok || !t.applied) return null;
  if (t.replacement === 'set') return 'replacement';
  const discrepancy = t.next.confirmed !== null && t.next.confirmed !== before.confirmed && t.next.actual !== null;
  if (!discrepancy) return null;
  return t.next.isWeightBased ? 'weight' : 'quantity';
}

/** The quantity the customer is asked about: the ordered one for a replacement, the recorded one otherwise. */
export const proposedQuantity = (kind: ApprovalKind, item: ItemFacts): bigint =>
  kind === 'replacement' ? item.ordered : (item.actual ?? item.ordered);

/** What a proposal left unanswered comes to (its window passed, or the session finished): it stands. */
export const FALLBACK_DECISION: Decision = 'approve';

/**
 * The item after an answer. Approval: a discrepancy waiting for confirmation is confirmed (picked,
 * its actual value kept); anything else stands as it is. Rejection of a replacement: the
 * substitute is taken back and the line is missing again (to replace with another named product
 * or remove); rejection of a quantity or weight: the line is to be removed.
 */
export function decidedItem(
  f: ItemFacts,
  kind: ApprovalKind,
  decision: Decision,
): { next: ItemFacts; replacement: Exclude<ReplacementEffect, 'set'> } {
  if (decision === 'approve') {
    const waiting = f.state === 'clarified' && (f.clarificationKind === 'quantity_mismatch' || f.clarificationKind === 'weight_mismatch');
    return { next: waiting ? { ...f, state: 'picked', clarificationKind: null } : f, replacement: 'keep' };
  }
  const next: ItemFacts = {
    ...f,
    state: 'missing',
    clarificationKind: null,
    missingAction: kind === 'replacement' ? 'call' : 'remove',
    actual: null,
    confirmed: null,
    pickSource: null,
    labelPlu: null,
    hasReplacement: false,
  };
  return { next, replacement: f.hasReplacement ? 'clear' : 'keep' };
}

/** The answer a decision gets from an approval as it stands: apply it, say it is already so, or refuse. */
export function decisionOutcome(
  approval: { status: ApprovalStatus; decidedBy: ApprovalDecider | null; sessionOpen: boolean },
  decision: Decision,
): 'apply' | 'unchanged' | Extract<ErrorCode, 'APPROVAL_ALREADY_DECIDED' | 'APPROVAL_WITHDRAWN' | 'PICKING_FINISHED'> {
  if (approval.status === 'pending') return approval.sessionOpen ? 'apply' : 'APPROVAL_WITHDRAWN';
  if (approval.status === 'withdrawn') return 'APPROVAL_WITHDRAWN';
  if (approval.decidedBy === 'picking_finished') return 'PICKING_FINISHED';
  const same = (approval.status === 'approved') === (decision === 'approve');
  return approval.decidedBy === 'customer' && same ? 'unchanged' : 'APPROVAL_ALREADY_DECIDED';
}
