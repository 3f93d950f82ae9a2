// How a picking session ends and what that does to its order: released (the picker's cancel or
// expiry) sends the order back to the queue; finished applies what was picked to the order, its
// stock and its payment.
import type { Transaction } from 'kysely';
import { recordOrderChange } from '../../db/queries/order-events.js';
import { lockInventoryRows, lockOrder as lockOrderRow, updateOrder } from '../../db/queries/orders.js';
import { enqueueProviderCommand } from '../../db/queries/payments.js';
import { recordSessionChanged } from '../../db/queries/picking/events.js';
import { itemFacts, type ItemRow } from '../../db/queries/picking/items.js';
import { adjustStock, setOrderPickingStatus } from '../../db/queries/picking/order-effects.js';
import { closeSession, type SessionHead } from '../../db/queries/picking/sessions.js';
import type { DB } from '../../db/schema.js';
import { formatDecimal } from '../../domain/money/decimal.js';
import { kopecks, money } from '../../domain/money/money.js';
import { differenceToCollect, differenceToRefund, isResolved, reconciliationStatus, takenQuantity } from '../../domain/picking/items.js';
import { handoffToteCount } from '../../domain/picking/batching.js';
import { enterCancelled, type CancelEffects } from '../order-lifecycle.js';
import { toPickingResult } from '../presenters/picking.js';
import type { CommandScope } from './runner.js';

/**
 * Closes an open session without finishing it (the picker's cancel, or expiry): its work is
 * discarded, the order goes back to the queue as `confirmed` (the next start begins a new
 * session from the order lines) and the customer sees picking as not started.
 */
export async function releaseSession(
  trx: Transaction<DB>,
  orderId: string,
  head: SessionHead,
  items: readonly ItemRow[],
  closure: { source: 'picker_cancel' | 'expired'; reason: string | null },
  now: Date,
): Promise<number> {
  const closed = await closeSession(trx, head.id, {
    status: 'cancelled',
    closureSource: closure.source,
    finalTotal: head.current_total,
    reconciliationStatus: null,
    cancellationReason: closure.reason,
    cancelAfterResolvedItems: items.filter((i) => isResolved(itemFacts(i))).length,
  });
  await setOrderPickingStatus(trx, orderId, { status: 'confirmed', pickingResultState: 'pending' });
  await recordOrderChange(trx, orderId, ['status', 'picking_result'], { now });
  await recordSessionChanged(trx, {
    sessionId: head.id,
    orderId,
    storeId: head.store_id,
    pickerId: head.picker_id,
    version: closed.version,
    status: 'cancelled',
    now,
  });
  return closed.version;
}

/**
 * Completes a ready session and applies its result to the order: the session closes with its
 * final total and reconciliation status; stock of what was not taken goes back (and what was
 * taken instead - replacements, additions, extra weight - comes off); the order moves to
 * `picked` or `ready_for_pickup` with its final total (goods as picked plus the delivery fee
 * fixed at checkout), or is cancelled when nothing could be picked; the customer hears of it.
 */
export async function finishSession(s: CommandScope): Promise<void> {
  const { trx, order, head, items } = s;
  const facts = items.map(itemFacts);
  const original = kopecks(head.original_total);
  const current = items.reduce((sum, i) => sum + kopecks(i.current_line_total), 0n);
  const anyPicked = facts.some((f) => f.state === 'picked');
  const closed = await closeSession(trx, head.id, {
    status: 'completed',
    closureSource: 'picker_finish',
    finalTotal: money(current),
    // Nothing picked: the order is cancelled and a paid one refunded whole, nothing to settle here.
    reconciliationStatus: anyPicked ? reconciliationStatus(order.payment_method, original, current) : 'not_required',
    cancellationReason: null,
    cancelAfterResolvedItems: null,
  });

  // Stock rows in id order before any is changed, as every writer of stock takes them.
  await lockInventoryRows(
    trx,
    items.flatMap((item) => (item.replacement_inventory_id ? [item.inventory_id, item.replacement_inventory_id] : [item.inventory_id])),
  );
  for (const [i, item] of items.entries()) {
    const f = facts[i];
    const taken = takenQuantity(f!);
    if (item.is_added) {
      if (taken) await adjustStock(trx, item.inventory_id, formatDecimal(-taken, 3));
      continue;
    }
    // Checkout reserved the ordered quantity of the line's product.
    const takenOfOrdered = item.replacement_inventory_id ? 0n : taken;
    if (takenOfOrdered !== f!.ordered) await adjustStock(trx, item.inventory_id, formatDecimal(f!.ordered - takenOfOrdered, 3));
    if (item.replacement_inventory_id && taken) await adjustStock(trx, item.replacement_inventory_id, formatDecimal(-taken, 3));
  }

  const result = toPickingResult(items, 'en', true);
  let cancelled: CancelEffects | null = null;
  if (anyPicked) {
    await setOrderPickingStatus(trx, order.id, {
      status: order.type === 'delivery' ? 'picked' : 'ready_for_pickup',
      pickingResultState: 'completed',
      finalTotal: money(current + kopecks(order.delivery_cost)),
      hasPickingChanges: result.hasChanges,
      pickingCompleted: true,
    });
    const totes = handoffToteCount(items);
    if (totes > 0) await updateOrder(trx, order.id, { tote_count: totes });
    // Less than paid: the orders worker asks the bank to return the difference, and the
    // session's reconciliation_status follows the bank's answer. More than paid: the order awaits
    // payment of the difference (no deadline: it is on its way), which the customer pays through a
    // new invoice (GET /api/payments/bank/{order_id}/invoice); that payment settles the session.
    const refund = differenceToRefund(order.payment_method, order.payment_status, original, current);
    if (refund !== null) await enqueueProviderCommand(trx, 'bank.refund', order.id, { amount: money(refund), session_id: head.id });
    if (differenceToCollect(order.payment_method, order.payment_status, original, current) !== null) {
      await updateOrder(trx, order.id, { payment_status: 'awaiting', payment_due_at: null });
    }
  } else {
    // Nothing to hand over: cancelled as any order is (a paid one refunded in full, the courier
    // withdrawn, the customer told). The stock went back above.
    await updateOrder(trx, order.id, {
      picking_result_state: 'completed',
      final_total: '0.00',
      has_picking_changes: true,
      picking_completed_at: s.now,
    });
    cancelled = await enterCancelled(trx, (await lockOrderRow(trx, order.id))!, 'nothing_picked', s.now, { stockReturned: true });
  }
  // One change, one version and one message (a cancelled delivery's is the tracking event).
  await recordOrderChange(trx, order.id, ['status', 'picking_result', 'payment'], {
    notify: true,
    tracking: cancelled?.tracking ?? undefined,
    now: s.now,
  });
  await recordSessionChanged(trx, {
    sessionId: head.id,
    orderId: order.id,
    storeId: head.store_id,
    pickerId: head.picker_id,
    version: closed.version,
    status: 'completed',
    now: s.now,
  });
}
