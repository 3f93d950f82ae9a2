// What the picker app and the customer's order read of picking: the queue of a store, a session
// as it is now, and the picking result an order's detail shows.
import { pickerStores } from '../../db/queries/accounts.js';
import type { Executor } from '../../db/executor.js';
import type { OrderRow } from '../../db/queries/orders.js';
import { loadItems } from '../../db/queries/picking/items.js';
import { listQueue } from '../../db/queries/picking/queue.js';
import {
  findCurrentSession,
  findCurrentSessionRef,
  findLatestSessionOfOrder,
  isOrderOfPicker,
  latestSessionIdOfOrder,
} from '../../db/queries/picking/sessions.js';
import type { AppDeps } from '../deps.js';
import { forbidden, notFound } from '../errors.js';
import { emptyPickingResult, type PickingResult } from '../presenters/orders.js';
import { toOrderPickingResult, toQueueCard, type PickerOrderView, type PickingSessionView } from '../presenters/picking.js';
import { sessionView, type Lang } from './runner.js';

/** Cards in one queue answer (the contract: "at most 200"). */
const QUEUE_LIMIT = 200;

/** The orders of a store the picker works in that wait for picking or are being picked. */
export async function pickerQueue(
  deps: Pick<AppDeps, 'db' | 'config'>,
  pickerId: number,
  storeId: string,
  lang: Lang,
): Promise<PickerOrderView[]> {
  const { db } = deps;
  const stores = await pickerStores(db, pickerId);
  if (!stores.some((s) => s.id === storeId)) throw forbidden('STORE_NOT_ASSIGNED', 'You do not work in this store');
  const cfg = deps.config.picking;
  const [rows, current] = await Promise.all([
    listQueue(db, {
      storeId,
      horizonHours: cfg.queueHorizonHours,
      slotLeadMinutes: cfg.slotPickLeadMinutes,
      expressMinutes: cfg.expressPickMinutes,
      limit: QUEUE_LIMIT,
    }),
    findCurrentSessionRef(db, pickerId),
  ]);
  return rows.map((r) => toQueueCard(r, pickerId, current?.id ?? null, lang));
}

/** The latest session of an order of the picker's stores, whoever picks it. */
export async function orderSession(db: Executor, pickerId: number, orderId: string, lang: Lang): Promise<PickingSessionView> {
  if (!(await isOrderOfPicker(db, orderId, pickerId))) throw notFound('No order with this id in your stores');
  const head = await findLatestSessionOfOrder(db, orderId);
  if (!head) throw notFound('The order has not been started yet');
  return sessionView(db, head, await loadItems(db, head.id), pickerId, lang);
}

/** The picker's current session, or null when they have none. */
export async function currentSession(db: Executor, pickerId: number, lang: Lang): Promise<PickingSessionView | null> {
  const head = await findCurrentSession(db, pickerId);
  return head ? sessionView(db, head, await loadItems(db, head.id), pickerId, lang) : null;
}

/** What the picker collected for the order so far, or the empty result before picking starts. */
export async function latestPickingResult(db: Executor, o: OrderRow, lang: Lang): Promise<PickingResult> {
  if (o.picking_result_state === 'pending') return emptyPickingResult('pending');
  const sessionId = await latestSessionIdOfOrder(db, o.id);
  if (sessionId === null) return emptyPickingResult(o.picking_result_state);
  return toOrderPickingResult(o.picking_result_state, await loadItems(db, sessionId), o.picking_completed_at, lang);
}
