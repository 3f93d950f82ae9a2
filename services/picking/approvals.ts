// The customer's answer to what the picker proposes on a line that asks for it (the proposal is
// made by the item command, services/picking/proposals.ts): the customer's decision, the window
// passing, and the session finishing with proposals unanswered. A decision is written on the order's and the session's row locks, so
// it and the picker's next command on the session run one after the other, each on the version
// line of the session and of the order.
import type { Transaction } from 'kysely';
import {
  lockApproval,
  pendingApprovalsOfSession,
  settleApprovalRow,
  settledColumns,
  writeDecision,
  type ItemApprovalColumns,
  type LockedApproval,
} from '../../db/queries/picking/approvals.js';
import { itemChangeColumns, itemFacts, loadItems, updateItem, type ItemRow } from '../../db/queries/picking/items.js';
import { lockOrderRowOfCustomer } from '../../db/queries/orders.js';
import { lockOrder } from '../../db/queries/picking/sessions.js';
import type { Executor } from '../../db/executor.js';
import type { DB } from '../../db/schema.js';
import { kopecks } from '../../domain/money/money.js';
import { decidedItem, decisionOutcome, FALLBACK_DECISION, type ApprovalKind, type Decision } from '../../domain/picking/approvals.js';
import type { AppDeps } from '../deps.js';
import { conflict, notFound } from '../errors.js';
import { fingerprintOf, withIdempotency } from '../idempotency.js';
import { orderDetail } from '../orders.js';
import { chargedPrice } from '../presenters/picking.js';
import { itemChange } from './item-command.js';

type Lang = 'ru' | 'en';

/** The item after a decision: its new facts and columns (with the approval's copy), and the session's status and total with it. */
function decidedChange(items: readonly ItemRow[], item: ItemRow, kind: ApprovalKind, decision: Decision, approval: ItemApprovalColumns) {
  const { next, replacement } = decidedItem(itemFacts(item), kind, decision);
  const price = replacement === 'clear' ? kopecks(item.unit_price) : chargedPrice(item);
  const change = itemChange(items, item.id, next, price, replacement, approval);
  return { change, columns: { ...itemChangeColumns(next, change.currentLineTotal, replacement), ...approval } };
}

/**
 * Settles one pending approval on its locked session, in one statement (writeDecision): the
 * approval's row, the item, the session's version with `session.changed` and
 * `item.approval.decided` for the picker, the order's version with `order.changed` for the
 * customer (`picking_result` too when the line changed).
 */
async function settle(trx: Transaction<DB>, approval: LockedApproval, decision: Decision, decidedBy: 'customer' | 'timeout', now: Date) {
  const items = await loadItems(trx, approval.session_id);
  const item = items.find((i) => i.id === approval.picking_item_id)!;
  const status = decision === 'approve' ? 'approved' : 'rejected';
  const { change, columns } = decidedChange(items, item, approval.kind, decision, settledColumns(status, decidedBy, now));
  const lineChanged = decision === 'reject' || change.facts.state !== item.state;
  await writeDecision(trx, {
    approvalId: approval.id,
    status,
    decidedBy,
    at: now,
    item: { id: item.id, columns },
    session: {
      id: approval.session_id,
      orderId: approval.order_id,
      storeId: approval.store_id,
      pickerId: approval.picker_id,
      status: change.status,
      currentTotal: change.currentTotal,
    },
    orderChanges: lineChanged ? ['approval', 'picking_result'] : ['approval'],
  });
}

/**
 * The customer's answer to a proposal (POST .../approvals/{approval_id}/decision), answered with
 * the order as it is after it. The same answer again changes nothing; an approval settled
 * otherwise, withdrawn by the picker, or settled when the picker finished is refused (409).
 */
export async function decideApproval(
  deps: Pick<AppDeps, 'db' | 'clock' | 'config'>,
  input: { customerId: string; orderId: string; approvalId: number; decision: Decision; lang: Lang; idempotencyKey: string | null },
): Promise<{ status: 200; body: Awaited<ReturnType<typeof orderDetail>> }> {
  const orderId = input.orderId.toLowerCase();
  const decide = async (trx: Transaction<DB>) => {
    if (!(await lockOrderRowOfCustomer(trx, orderId, input.customerId))) throw notFound('No order with this id');
    const locked = await lockApproval(trx, orderId, input.approvalId);
    if (!locked) throw notFound('No approval with this id in the order');
    const open = locked.session_status === 'active' || locked.session_status === 'ready_to_finish';
    const outcome = decisionOutcome({ status: locked.status, decidedBy: locked.decided_by, sessionOpen: open }, input.decision);
    if (outcome === 'apply') await settle(trx, locked, input.decision, 'customer', deps.clock.now());
    else if (outcome !== 'unchanged') throw conflict(outcome, DECISION_REFUSALS[outcome]);
  };
  const detail = (db: Executor) => orderDetail({ db, config: deps.config }, input.customerId, orderId, input.lang);
  if (!input.idempotencyKey) {
    // Read after the commit: the picker hears the decision without waiting for the customer's answer to be built.
    await deps.db.transaction().execute(decide);
    return { status: 200, body: await detail(deps.db) };
  }
  // A key's stored answer is the order as the decision's own transaction left it.
  const scope = { principal: `customer:${input.customerId}`, operationId: 'decideItemApproval', key: input.idempotencyKey };
  return withIdempotency(deps, scope, fingerprintOf(orderId, input.approvalId, input.decision), async (trx) => {
    await decide(trx);
    return { status: 200 as const, body: await detail(trx) };
  });
}

const DECISION_REFUSALS = {
  APPROVAL_ALREADY_DECIDED: 'This proposal was already settled; re-read the order to see how',
  APPROVAL_WITHDRAWN: 'The picker took this proposal back; re-read the order',
  PICKING_FINISHED: 'The picker has finished this order; the proposal stood as made',
} as const;

/**
 * Settles a proposal whose window has passed as its fallback (it stands), unless it was answered
 * or withdrawn meanwhile; one transaction per proposal, on the order's and the session's locks.
 * A proposal of a session that closed without finishing (cancelled, expired) is withdrawn.
 */
export async function settleExpiredApproval(deps: Pick<AppDeps, 'db' | 'clock'>, approvalId: number, orderId: string): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    await lockOrder(trx, orderId);
    const locked = await lockApproval(trx, orderId, approvalId);
    const now = deps.clock.now();
    if (!locked || locked.status !== 'pending' || locked.expires_at > now) return false;
    if (locked.session_status !== 'active' && locked.session_status !== 'ready_to_finish') {
      await settleApprovalRow(trx, locked.id, 'withdrawn', 'picking_cancelled', now);
      return true;
    }
    await settle(trx, locked, FALLBACK_DECISION, 'timeout', now);
    return true;
  });
}

/**
 * The session finishes with proposals unanswered: each stands as its fallback (decided by
 * `picking_finished`), on the finishing command's locks; a decision sent afterwards answers 409
 * PICKING_FINISHED. The finish's own version step and events announce the change. Returns
 * whether any was settled.
 */
export async function settleApprovalsAtFinish(trx: Transaction<DB>, sessionId: number, items: ItemRow[], now: Date): Promise<boolean> {
  const pending = await pendingApprovalsOfSession(trx, sessionId);
  for (const approval of pending) {
    const status = FALLBACK_DECISION === 'approve' ? 'approved' : 'rejected';
    await settleApprovalRow(trx, approval.id, status, 'picking_finished', now);
    const item = items.find((i) => i.id === approval.picking_item_id)!;
    const { columns } = decidedChange(items, item, approval.kind, FALLBACK_DECISION, settledColumns(status, 'picking_finished', now));
    items[items.indexOf(item)] = await updateItem(trx, item.id, columns);
  }
  return pending.length > 0;
}
