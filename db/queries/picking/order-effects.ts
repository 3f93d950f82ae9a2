// What picking does to the order and the shelves: the order's status and picking fields, the bank
// reconciliation of a completed session, stock taken and given back.
import { sql } from 'kysely';
import { formatDecimal } from '../../../domain/money/decimal.js';
import { takenQuantity } from '../../../domain/picking/items.js';
import type { Executor } from '../../executor.js';
import type { OrderStatus, PickingResultState } from '../../tables/orders.js';
import { lockInventoryRows } from '../orders.js';
import { itemFacts, loadItems } from './items.js';

/**
 * Settles the pending difference of the order's completed session that the customer was to pay
 * (finishSession): `completed` once paid, `not_required` when the order was cancelled instead.
 */
export async function settleCollectedDifference(db: Executor, orderId: string, status: 'completed' | 'not_required'): Promise<void> {
  await db
    .updateTable('picking_sessions')
    .set({ reconciliation_status: status, updated_at: sql<Date>`now()` })
    .where('order_id', '=', orderId)
    .where('status', '=', 'completed')
    .where('reconciliation_status', '=', 'pending')
    .execute();
}

/**
 * Gives back what the order's completed session took off the shelves (each picked item's
 * quantity, of its replacement when it has one; added items too): the stock of a picked order
 * that is cancelled. Its ordered lines no longer hold stock once the session completed
 * (finishSession returned what was not taken). Rows are locked in id order first.
 */
export async function returnPickedStock(db: Executor, orderId: string): Promise<void> {
  const session = await db
    .selectFrom('picking_sessions')
    .select('id')
    .where('order_id', '=', orderId)
    .where('status', '=', 'completed')
    .executeTakeFirst();
  if (!session) return;
  const taken = (await loadItems(db, session.id))
    .map((item) => ({ inventoryId: item.replacement_inventory_id ?? item.inventory_id, quantity: takenQuantity(itemFacts(item)) }))
    .filter((t) => t.quantity > 0n);
  await lockInventoryRows(
    db,
    taken.map((t) => t.inventoryId),
  );
  for (const t of taken) await adjustStock(db, t.inventoryId, formatDecimal(t.quantity, 3));
}

/** Moves the order's status (and picking fields) and records the move in its history. */
export async function setOrderPickingStatus(
  db: Executor,
  orderId: string,
  change: {
    status: OrderStatus;
    pickingResultState: PickingResultState;
    /** Reason code of the move (rendered per language by the orders area) and a free-text fallback. */
    reason?: string | null;
    comment?: string | null;
    finalTotal?: string | null;
    hasPickingChanges?: boolean;
    pickingCompleted?: boolean;
    cancellationReason?: string;
  },
): Promise<void> {
  await db
    .updateTable('orders')
    .set({
      status: change.status,
      status_reason: change.reason ?? null,
      status_comment: change.comment ?? null,
      picking_result_state: change.pickingResultState,
      ...(change.finalTotal !== undefined ? { final_total: change.finalTotal } : {}),
      ...(change.hasPickingChanges !== undefined ? { has_picking_changes: change.hasPickingChanges } : {}),
      ...(change.pickingCompleted ? { picking_completed_at: sql<Date>`now()` } : {}),
      ...(change.status === 'cancelled' ? { cancelled_at: sql<Date>`now()`, cancellation_reason: change.cancellationReason ?? null } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', orderId)
    .execute();
  await db
    .insertInto('order_status_history')
    .values({ order_id: orderId, status: change.status, reason: change.reason ?? null, comment: change.comment ?? null })
    .execute();
}

/**
 * Changes an inventory row's stock by `delta` - pieces, or kilograms for a weight row, which is
 * converted to the row's unit (a 100 g row counts tenths of a kg). Positive gives stock back.
 * Stock never goes below zero (the goods were on the shelf; the count was short) and a row whose
 * stock was never reported stays unreported.
 */
export async function adjustStock(db: Executor, inventoryId: string, delta: string): Promise<void> {
  await sql`
    UPDATE inventories i
    SET stock = greatest(i.stock + round(${delta}::numeric / CASE WHEN u.kind = 'weight' THEN u.ratio ELSE 1 END, 3), 0), updated_at = now()
    FROM measurement_units u
    WHERE u.id = i.unit_id AND i.id = ${inventoryId} AND i.stock IS NOT NULL`.execute(db);
}
