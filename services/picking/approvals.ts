// The customer's answer to what the picker proposes on a line that asks for it (the proposal is
// made by the item command, services/picking/proposals.ts): the customer's decision, the window
// passing, and the session finishing with proposals unanswered. A decision is written on the order's and the session's row locks, so
// it and the picker's next command on the session run one after the other, each on the version
// line of the session and of the order.
import type { Transaction } from 'kysely';
import {
  lockApproval,
  lockOrderOfCustomer,
  pendingApprovalsOfSession,
  settleApprovalRow,
  settledColumns,
  type ItemApprovalColumns,
} from '../../db/queries/picking/approvals.js';
import { recordApprovalDecided, recordSessionChanged } from '../../db/queries/picking/events.js';
import { itemChangeColumns, itemFacts, loadItems, type ItemRow } from '../../db/queries/picking/items.js';
import { bumpSession, findSessionHead, lockOrder } from '../../db/queries/picking/sessions.js';
import { recordOrderChange } from '../../db/queries/order-events.js';
import type { DB } from '../../db/schema.js';
import { kopecks } from '../../domain/money/money.js';
import { decidedItem, decisionOutcome, FALLBACK_DECISION, type ApprovalKind, type Decision } from '../../domain/picking/approvals.js';
import type { AppDeps } from '../deps.js';
import { conflict, notFound } from '../errors.js';
import { fingerprintOf, withIdempotency } from '../idempotency.js';
import { orderDetail } from '../orders.js';
import type { ApprovalRow } from '../presenters/approvals.js';
import { chargedPrice } from '../presenters/picking.js';
import { itemChange } from './item-command.js';

type Lang = 'ru' | 'en';

/** The decision's effect on the item: its new facts and line total, written with the approval's copy. */
async function writeDecidedItem(
  trx: Transaction<DB>,
  items: ItemRow[],
  item: ItemRow,
  kind: ApprovalKind,
  decision: Decision,
  columns: ItemApprovalColumns,
) {
  const { next, replacement } = decidedItem(itemFacts(item), kind, decision);
  const price = replacement === 'clear' ? kopecks(item.unit_price) : chargedPrice(item);
  const change = itemChange(items, item.id, next, price, replacement, columns);
  const written = { ...itemChangeColumns(next, change.currentLineTotal, replacement), ...columns };
  const row = await trx.updateTable('picking_items').set(written).where('id', '=', item.id).returningAll().executeTakeFirstOrThrow();
  items[items.indexOf(item)] = row;
  return change;
}

/**
 * Settles one pending approval on its locked session: the approval's row, the item, the session's
 * version and the events - `session.changed` and `item.approval.decided` for the picker,
 * `order.changed` for the customer (with `picking_result` when the line changed).
 */
async function settle(
  trx: Transaction<DB>,
  approval: ApprovalRow,
  decision: Decision,
  decidedBy: 'customer' | 'timeout',
  now: Date,
): Promise<void> {
  const head = (await findSessionHead(trx, approval.session_id))!;
  const items = await loadItems(trx, head.id);
  const item = items.find((i) => i.id === approval.picking_item_id)!;
  const status = decision === 'approve' ? 'approved' : 'rejected';
  await settleApprovalRow(trx, approval.id, status, decidedBy, now);
  const change = await writeDecidedItem(trx, items, item, approval.kind, decision, settledColumns(status, decidedBy, now));
  const bumped = await bumpSession(trx, head.id, { status: change.status, currentTotal: change.currentTotal });
  const session = { sessionId: head.id, orderId: head.order_id, storeId: head.store_id, pickerId: head.picker_id };
  await recordSessionChanged(trx, { ...session, version: bumped.version, status: bumped.status, now });
  await recordApprovalDecided(trx, {
    ...session,
    itemId: item.id,
    approvalId: approval.id,
    status,
    decidedBy,
    version: bumped.version,
    sessionStatus: bumped.status,
    now,
  });
  const lineChanged = decision === 'reject' || change.facts.state !== item.state;
  await recordOrderChange(trx, head.order_id, lineChanged ? ['approval', 'picking_result'] : ['approval'], { now });
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
    if (!(await lockOrderOfCustomer(trx, orderId, input.customerId))) throw notFound('No order with this id');
    const locked = await lockApproval(trx, orderId, input.approvalId);
    if (!locked) throw notFound('No approval with this id in the order');
    const { session_status: sessionStatus, ...approval } = locked;
    const open = sessionStatus === 'active' || sessionStatus === 'ready_to_finish';
    const outcome = decisionOutcome({ status: approval.status, decidedBy: approval.decided_by, sessionOpen: open }, input.decision);
    if (outcome === 'apply') await settle(trx, approval, input.decision, 'customer', deps.clock.now());
    else if (outcome !== 'unchanged') throw conflict(outcome, DECISION_REFUSALS[outcome]);
    return { status: 200 as const, body: await orderDetail({ db: trx, config: deps.config }, input.customerId, orderId, input.lang) };
  };
  if (!input.idempotencyKey) return deps.db.transaction().execute(decide);
  const scope = { principal: `customer:${input.customerId}`, operationId: 'decideItemApproval', key: input.idempotencyKey };
  return withIdempotency(deps, scope, fingerprintOf(orderId, input.approvalId, input.decision), decide);
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
    const { session_status: sessionStatus, ...approval } = locked;
    if (sessionStatus !== 'active' && sessionStatus !== 'ready_to_finish') {
      await settleApprovalRow(trx, approval.id, 'withdrawn', 'picking_cancelled', now);
      return true;
    }
    await settle(trx, approval, FALLBACK_DECISION, 'timeout', now);
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
    await writeDecidedItem(trx, items, item, approval.kind, FALLBACK_DECISION, settledColumns(status, 'picking_finished', now));
  }
  return pending.length > 0;
}
