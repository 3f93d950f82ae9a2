// Starting to pick an order: a new session built from the order's lines, or the caller's own open
// session of it resumed. Retry-safe under the Idempotency-Key, in one transaction that holds the
// picker's and the order's row locks, so one picker never opens two sessions and two pickers
// never open one order.
import { recordOrderChange } from '../../db/queries/order-events.js';
import { recordSessionChanged } from '../../db/queries/picking/events.js';
import { insertItems, loadItems, orderLinesForPicking, type ItemRow } from '../../db/queries/picking/items.js';
import { setOrderPickingStatus } from '../../db/queries/picking/order-effects.js';
import {
  findCurrentSession,
  findLatestSessionOfOrder,
  findLatestSessionOfPicker,
  findSessionHead,
  insertSession,
  lockOrderOfPicker,
  lockPicker,
  type LockedOrder,
  type SessionHead,
} from '../../db/queries/picking/sessions.js';
import type { Executor } from '../../db/executor.js';
import { kopecks, money } from '../../domain/money/money.js';
import { openSessionStatus } from '../../domain/picking/items.js';
import type { AppDeps } from '../deps.js';
import { notFound } from '../errors.js';
import { fingerprintOf, withIdempotency } from '../idempotency.js';
import type { PickingSessionView } from '../presenters/picking.js';
import { factsOfNew, itemForLine } from './new-items.js';
import { actionScope, refusal, sessionView, type PickerAction } from './runner.js';

/**
 * Starts (or resumes) picking the order for the caller. Refused with 409 when the order is
 * cancelled, picked by someone else or not waiting for picking, or when the caller already has
 * another current session.
 */
export function startPicking(
  deps: Pick<AppDeps, 'db' | 'clock' | 'config'>,
  action: PickerAction,
  path: { order_id: string },
): Promise<{ status: 200; body: PickingSessionView }> {
  const { pickerId, lang } = action;
  const orderId = path.order_id;
  return withIdempotency(deps, actionScope(action), fingerprintOf(path), async (trx) => {
    await lockPicker(trx, pickerId);
    const order = await lockOrderOfPicker(trx, orderId, pickerId);
    if (!order) throw notFound('No order with this id in your stores');
    const current = await findCurrentSession(trx, pickerId);
    const currentView = async () => (current ? sessionView(trx, current, await loadItems(trx, current.id), pickerId, lang) : null);
    // Resume: the caller's open session of this order is returned as it is.
    if (current && current.order_id === orderId && (current.status === 'active' || current.status === 'ready_to_finish')) {
      return { status: 200 as const, body: (await currentView())! };
    }
    // A cancellation queued behind a courier has already closed the order's session (order table).
    if (order.status === 'cancelled' || order.status === 'cancellation_requested') {
      const latest = await findLatestSessionOfPicker(trx, orderId, pickerId);
      const view = latest ? await sessionView(trx, latest, await loadItems(trx, latest.id), pickerId, lang) : null;
      throw refusal(409, 'order_cancelled', `Order ${order.no} was cancelled`, view);
    }
    const open = await findLatestSessionOfOrder(trx, orderId);
    if (open && (open.status === 'active' || open.status === 'ready_to_finish')) {
      throw refusal(409, 'ORDER_BUSY', `Order ${order.no} is being picked by ${open.picker_display_name}`, null);
    }
    if (current) {
      throw refusal(
        409,
        'PICKER_HAS_ACTIVE_SESSION',
        `You already have a current session (order ${current.order_no}); finish, cancel or acknowledge it first`,
        await currentView(),
      );
    }
    if (order.status !== 'confirmed')
      throw refusal(409, 'ORDER_NOT_PICKABLE', `Order ${order.no} is not waiting for picking (it is ${order.status})`, null);

    const { head, items } = await openSession(deps, trx, order, pickerId);
    return { status: 200 as const, body: await sessionView(trx, head, items, pickerId, lang) };
  });
}

/**
 * A new session of a locked order waiting for picking: its items from the order's lines in the
 * store's walking order, the order in `picking`, and the events of both. The one way a session
 * opens, alone or in a batch.
 */
export async function openSession(
  deps: Pick<AppDeps, 'clock' | 'config'>,
  trx: Executor,
  order: LockedOrder,
  pickerId: number,
  batchId?: number,
): Promise<{ head: SessionHead; items: ItemRow[] }> {
  const orderId = order.id;
  const lines = await orderLinesForPicking(trx, orderId, order.store_id);
  const newItems = lines.map((line, i) => itemForLine(line, i + 1, deps.config.picking.weightTolerancePercent));
  const facts = newItems.map((n) => factsOfNew(n));
  const currentTotal = newItems.reduce((sum, n) => sum + kopecks(String(n.current_line_total)), 0n);
  const sessionId = await insertSession(trx, {
    orderId,
    pickerId,
    storeId: order.store_id,
    status: openSessionStatus(facts),
    maxAddedItems: deps.config.picking.maxAddedItems,
    originalTotal: order.goods_total,
    currentTotal: money(currentTotal),
    batchId,
  });
  const items = await insertItems(trx, sessionId, newItems);
  await setOrderPickingStatus(trx, orderId, { status: 'picking', pickingResultState: 'in_progress' });
  await recordOrderChange(trx, orderId, ['status', 'picking_result'], { notify: true, now: deps.clock.now() });
  const head = (await findSessionHead(trx, sessionId))!;
  await recordSessionChanged(trx, {
    sessionId,
    orderId,
    storeId: head.store_id,
    pickerId,
    version: head.version,
    status: head.status,
    now: deps.clock.now(),
  });
  return { head, items };
}
