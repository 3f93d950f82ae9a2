// The commands on a session as a whole: adding a product, cancelling, finishing, and
// acknowledging a session the order's cancellation closed.
import { insertTotes } from '../../db/queries/picking/batches.js';
import { findStoreInventory } from '../../db/queries/picking/catalog.js';
import { insertItems, itemFacts, loadItems, nextItemPosition } from '../../db/queries/picking/items.js';
import { acknowledgeCancellation, findLatestSessionOfPicker, findSessionHead, isOrderOfPicker } from '../../db/queries/picking/sessions.js';
import { itemsOutsideTotes } from '../../domain/picking/batching.js';
import { addedQuantityProblem, isResolved } from '../../domain/picking/items.js';
import { actionMessage } from '../../domain/picking/messages.js';
import type { AppDeps } from '../deps.js';
import { settleApprovalsAtFinish } from './approvals.js';
import { notFound } from '../errors.js';
import { fingerprintOf, withIdempotency } from '../idempotency.js';
import { finishSession, releaseSession } from './lifecycle.js';
import { addedItem } from './new-items.js';
import {
  actionAnswer,
  actionOutput,
  actionScope,
  commitSessionChange,
  refusal,
  runPickerCommand,
  sessionView,
  type BodyOf,
  type CommandRequest,
  type PickerAction,
  type PickerCommand,
  type PickingActionView,
} from './runner.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'config'>;
type OrderPath = { order_id: string };
type ActionReply = { status: 200; body: PickingActionView };

/** Why an added quantity is refused (422 QUANTITY_INVALID), also before the command runs. */
export const ADDED_QUANTITY_INVALID = 'The quantity must be above 0 and at most 999.999 (999 pieces), with at most three decimals';

/** Adds a product of the session's store (`quantity` in thousandths, already checked to be in range). */
export function addItem(
  deps: Deps,
  cmd: PickerCommand,
  request: CommandRequest<OrderPath, BodyOf<'addPickingItem'>>,
  quantity: bigint,
): Promise<ActionReply> {
  return runPickerCommand(deps, cmd, request, async (s) => {
    const inventory = await findStoreInventory(s.trx, s.head.store_id, request.body.inventory_id);
    if (!inventory)
      throw refusal(422, 'INVENTORY_NOT_FOUND', "This inventory_id is not a product sold in the session's store", await s.view());
    const problem = addedQuantityProblem(quantity, inventory.weight_based);
    if (problem) {
      const detail = problem === 'QUANTITY_NOT_INTEGER' ? 'A piece product is added in whole pieces' : ADDED_QUANTITY_INVALID;
      throw refusal(422, problem, detail, await s.view());
    }
    if (s.head.added_items_count >= s.head.max_added_items) {
      throw refusal(409, 'ADDED_ITEMS_LIMIT', `A session may gain at most ${s.head.max_added_items} items`, await s.view());
    }
    if (s.items.some((i) => i.product_id === inventory.product_id || i.replacement_product_id === inventory.product_id)) {
      throw refusal(
        409,
        'PRODUCT_ALREADY_IN_SESSION',
        'This product is already an item of the session; change that item instead',
        await s.view(),
      );
    }
    const [row] = await insertItems(s.trx, s.head.id, [
      addedItem(inventory, quantity, nextItemPosition(s.items), deps.config.picking.weightTolerancePercent),
    ]);
    s.items.push(row!);
    // In a batch, an added product of a class the order has no tote for gets one, so it can be placed.
    if (s.head.batch_id !== null) {
      for (const t of await insertTotes(s.trx, s.head.id, s.head.store_id, [row!.temperature_class])) {
        s.head.totes.push({
          tote_id: t.id,
          temperature_class: t.temperature_class,
          label: null,
          bound_at: null,
          released_at: null,
          items_count: 0,
        });
      }
    }
    await commitSessionChange(s, 1);
    return {
      status: 200 as const,
      body: actionOutput('ok', true, actionMessage('ok', cmd.lang, { command: 'add' }), await s.answer(row!)),
    };
  });
}

/** The picker gives the order up: the session is released and the order goes back to the queue. */
export function cancelPicking(
  deps: Deps,
  cmd: PickerCommand,
  request: CommandRequest<OrderPath, BodyOf<'cancelPicking'>>,
): Promise<ActionReply> {
  return runPickerCommand(deps, cmd, request, async (s) => {
    await releaseSession(s.trx, s.order.id, s.head, s.items, { source: 'picker_cancel', reason: request.body?.reason ?? null }, s.now);
    const head = (await findSessionHead(s.trx, s.head.id))!;
    const answer = await actionAnswer(s.trx, head, s.items, null, s.pickerId, cmd.lang, s.full);
    return { status: 200 as const, body: actionOutput('ok', true, actionMessage('ok', cmd.lang, { command: 'cancel' }), answer) };
  });
}

/**
 * Completes the session once every item is resolved (409 NOT_READY_TO_FINISH lists those that are
 * not) and, in a batch, every picked item is in a tote (409 ITEMS_NOT_IN_TOTES).
 */
export function finishPicking(
  deps: Deps,
  cmd: PickerCommand,
  request: CommandRequest<OrderPath, BodyOf<'finishPicking'>>,
): Promise<ActionReply> {
  return runPickerCommand(deps, cmd, request, async (s) => {
    // Proposals the customer has not answered stand as made; a rejection can no longer come.
    await settleApprovalsAtFinish(s.trx, s.head.id, s.items, s.now);
    const unresolved = s.items.filter((i) => !isResolved(itemFacts(i)));
    if (unresolved.length) {
      throw refusal(409, 'NOT_READY_TO_FINISH', `${unresolved.length} item(s) are not resolved yet`, await s.view(), {
        unresolved_item_ids: unresolved.map((i) => i.id),
      });
    }
    // A batch's orders are handed off in their totes: every picked item must be in one.
    const outside = s.head.batch_id === null ? [] : itemsOutsideTotes(s.items);
    if (outside.length) {
      throw refusal(409, 'ITEMS_NOT_IN_TOTES', `${outside.length} picked item(s) are not in a tote yet`, await s.view(), {
        unresolved_item_ids: outside,
      });
    }
    await finishSession(s);
    const head = (await findSessionHead(s.trx, s.head.id))!;
    const answer = await actionAnswer(s.trx, head, s.items, null, s.pickerId, cmd.lang, s.full);
    return { status: 200 as const, body: actionOutput('ok', true, actionMessage('ok', cmd.lang, { command: 'finish' }), answer) };
  });
}

/** The picker has seen that the order's cancellation closed their session: it leaves their current session. */
export function acknowledgePickingCancellation(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  action: PickerAction,
  path: OrderPath,
): Promise<{ status: 204; body: undefined }> {
  const { pickerId, lang } = action;
  const orderId = path.order_id;
  return withIdempotency(deps, actionScope(action), fingerprintOf(path), async (trx) => {
    if (!(await isOrderOfPicker(trx, orderId, pickerId))) throw notFound('No order with this id in your stores');
    const head = await findLatestSessionOfPicker(trx, orderId, pickerId);
    if (!head) throw notFound('You have no picking session of this order');
    if (head.closure_source !== 'order_cancelled') {
      const view = await sessionView(trx, head, await loadItems(trx, head.id), pickerId, lang);
      throw refusal(409, 'SESSION_NOT_CANCELLED', "This session was not closed by the order's cancellation", view);
    }
    await acknowledgeCancellation(trx, head.id);
    return { status: 204 as const, body: undefined };
  });
}
