// Batch picking's use cases: propose and take a batch, read it and its walk, bind a tote, place a
// picked item into its tote. Every order of a batch keeps its own session; a batch only groups
// them, so every single-order command works on them unchanged.
import { pickerStores } from '../../db/queries/accounts.js';
import {
  batchSessions,
  batchWalkItems,
  bindTote,
  findBatchOfPicker,
  findOpenBatchOfPicker,
  findOpenToteByLabel,
  insertBatch,
  insertTotes,
  findToteOfBatch,
  lockTote,
  orderLocations,
  placeItemInTote,
  totesOfSessions,
  type BatchRow,
  type ToteRow,
  type WalkItemRow,
} from '../../db/queries/picking/batches.js';
import type { Executor } from '../../db/executor.js';
import { itemFacts } from '../../db/queries/picking/items.js';
import { listQueue } from '../../db/queries/picking/queue.js';
import {
  findCurrentSession,
  findLatestSessionOfOrder,
  lockOrder,
  lockOrderOfPicker,
  lockPicker,
  type LockedOrder,
} from '../../db/queries/picking/sessions.js';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import {
  holdsGoods,
  proposeBatch,
  stopKey,
  toteFit,
  totesNeeded,
  walkStops,
  type BatchCandidate,
  type Stop,
} from '../../domain/picking/batching.js';
import { isResolved } from '../../domain/picking/items.js';
import type { components } from '../../generated/api.test.js';
import type { AppDeps } from '../deps.js';
import { forbidden, notFound } from '../errors.js';
import { fingerprintOf, withIdempotency } from '../idempotency.js';
import { toPickingItem, toPickingSessionHeader } from '../presenters/picking.js';
import { openSession } from './start.js';
import {
  actionScope,
  commitSessionChange,
  refusal,
  runPickerCommand,
  type CommandRequest,
  type Lang,
  type PickerAction,
  type PickerCommand,
} from './runner.js';

type Schemas = components['schemas'];
export type PickingBatchView = Schemas['PickingBatchSchema'];
export type PickingToteView = Schemas['PickingToteSchema'];
type StopView = Schemas['PickingBatchStopSchema'];

/** Queue cards a proposal weighs at most (the queue's own page). */
const PROPOSAL_CANDIDATES = 200;

const dueOf = (deps: Pick<AppDeps, 'config'>) => ({
  slotLeadMinutes: deps.config.picking.slotPickLeadMinutes,
  expressMinutes: deps.config.picking.expressPickMinutes,
});

// ---------------------------------------------------------------------------------------------
// Proposal

/** A batch for the store's waiting orders (nothing reserved). */
export async function proposePickingBatch(
  deps: Pick<AppDeps, 'db' | 'config'>,
  pickerId: number,
  storeId: string,
  maxOrders: number | undefined,
): Promise<Schemas['PickingBatchProposalSchema']> {
  const { db } = deps;
  const cfg = deps.config.picking;
  const stores = await pickerStores(db, pickerId);
  if (!stores.some((s) => s.id === storeId)) throw forbidden('STORE_NOT_ASSIGNED', 'You do not work in this store');
  const queue = await listQueue(db, {
    storeId,
    horizonHours: cfg.queueHorizonHours,
    slotLeadMinutes: cfg.slotPickLeadMinutes,
    expressMinutes: cfg.expressPickMinutes,
    limit: PROPOSAL_CANDIDATES,
  });
  const waiting = queue.filter((r) => r.session_id === null);
  const stopsOf = new Map<string, Set<string>>();
  const locationsOf = new Map<string, Set<string>>();
  const orderIds = waiting.map((w) => w.order_id);
  for (const line of await orderLocations(db, storeId, orderIds)) {
    const stops = stopsOf.get(line.order_id) ?? new Set<string>();
    stops.add(stopKey({ id: line.id, sequence: line.location_sequence, productId: line.product_id }));
    stopsOf.set(line.order_id, stops);
    if (line.location_sequence === null) continue;
    const locations = locationsOf.get(line.order_id) ?? new Set<string>();
    locations.add(line.location_sequence);
    locationsOf.set(line.order_id, locations);
  }
  const candidates: BatchCandidate[] = waiting.map((w) => ({
    orderId: w.order_id,
    isExpress: w.is_express,
    dueAt: w.pick_deadline,
    linesCount: w.items_count,
    locations: [...(locationsOf.get(w.order_id) ?? [])],
  }));
  const limits = {
    maxOrders: Math.min(maxOrders ?? cfg.batch.maxOrders, cfg.batch.maxOrders),
    maxLines: cfg.batch.maxLines,
    dueWindowMinutes: cfg.batch.dueWindowMinutes,
  };
  const chosen = proposeBatch(candidates, limits);
  const byId = new Map(waiting.map((w) => [w.order_id, w]));
  const stopSets = chosen.map((c) => stopsOf.get(c.candidate.orderId) ?? new Set<string>());
  return {
    store_id: storeId,
    max_orders: limits.maxOrders,
    max_lines: limits.maxLines,
    orders: chosen.map((c) => {
      const row = byId.get(c.candidate.orderId)!;
      return {
        order_id: row.order_id,
        order_number: String(row.no),
        is_express: row.is_express,
        due_at: row.pick_deadline.toISOString(),
        lines_count: row.items_count,
        shared_locations_count: c.sharedLocations,
      };
    }),
    lines_count: chosen.reduce((n, c) => n + c.candidate.linesCount, 0),
    stops_count: new Set(stopSets.flatMap((set) => [...set])).size,
    separate_stops_count: stopSets.reduce((n, set) => n + set.size, 0),
  };
}

// ---------------------------------------------------------------------------------------------
// Taking a batch

/**
 * Takes the orders as one batch of the caller: each gets its session (exactly as a start) and
 * its totes. All or nothing, in one transaction; the orders are locked in id order, so two
 * pickers taking overlapping batches wait for each other instead of deadlocking, and the later
 * finds the shared order busy.
 */
export function takePickingBatch(
  deps: Pick<AppDeps, 'db' | 'clock' | 'config'>,
  action: PickerAction,
  body: { order_ids: string[] },
): Promise<{ status: 200; body: PickingBatchView }> {
  const { pickerId } = action;
  const cfg = deps.config.picking.batch;
  // UUIDs compare in lower case: one order sent twice in two cases is one order, locked in one order.
  const orderIds = [...new Set(body.order_ids.map((id) => id.toLowerCase()))].sort();
  return withIdempotency(deps, actionScope(action), fingerprintOf(orderIds), async (trx) => {
    if (orderIds.length > cfg.maxOrders) {
      throw refusal(422, 'BATCH_TOO_LARGE', `A batch takes at most ${cfg.maxOrders} orders`, null);
    }
    await lockPicker(trx, pickerId);
    const current = await findCurrentSession(trx, pickerId);
    if (current) {
      throw refusal(
        409,
        'PICKER_HAS_ACTIVE_SESSION',
        `You already have a current session (order ${current.order_no}); finish, cancel or acknowledge it first`,
        null,
      );
    }
    const orders: LockedOrder[] = [];
    for (const orderId of orderIds) {
      const order = await lockOrderOfPicker(trx, orderId, pickerId);
      if (!order) throw notFound('No order with this id in your stores');
      const refuse = (status: 409, code: 'order_cancelled' | 'ORDER_BUSY' | 'ORDER_NOT_PICKABLE', detail: string) =>
        refusal(status, code, detail, null, { order_id: orderId });
      if (order.status === 'cancelled' || order.status === 'cancellation_requested') {
        throw refuse(409, 'order_cancelled', `Order ${order.no} was cancelled`);
      }
      const open = await findLatestSessionOfOrder(trx, orderId);
      if (open && (open.status === 'active' || open.status === 'ready_to_finish')) {
        throw refuse(409, 'ORDER_BUSY', `Order ${order.no} is being picked by ${open.picker_display_name}`);
      }
      if (order.status !== 'confirmed') {
        throw refuse(409, 'ORDER_NOT_PICKABLE', `Order ${order.no} is not waiting for picking (it is ${order.status})`);
      }
      orders.push(order);
    }
    const storeId = orders[0]!.store_id;
    if (orders.some((o) => o.store_id !== storeId)) {
      throw refusal(422, 'BATCH_STORES_DIFFER', 'The orders of a batch must be of one store', null);
    }
    const batch = await insertBatch(trx, { pickerId, storeId });
    let lines = 0;
    for (const order of orders) {
      const { head, items } = await openSession(deps, trx, order, pickerId, batch.id);
      lines += items.length;
      await insertTotes(trx, head.id, storeId, totesNeeded(items.map((i) => i.temperature_class)));
    }
    // The cap is on merging: one order alone is never too large to walk.
    if (lines > cfg.maxLines && orders.length > 1) {
      throw refusal(422, 'BATCH_TOO_LARGE', `A batch takes at most ${cfg.maxLines} lines; these orders have ${lines}`, null);
    }
    return { status: 200 as const, body: await batchView(trx, deps, batch) };
  });
}

// ---------------------------------------------------------------------------------------------
// Reads

export async function currentBatch(deps: Pick<AppDeps, 'db' | 'config'>, pickerId: number): Promise<PickingBatchView> {
  const batch = await findOpenBatchOfPicker(deps.db, pickerId);
  if (!batch) throw notFound('You have no open batch');
  return batchView(deps.db, deps, batch);
}

export async function batchOfPicker(deps: Pick<AppDeps, 'db' | 'config'>, pickerId: number, batchId: number): Promise<PickingBatchView> {
  return batchView(deps.db, deps, await requireBatch(deps.db, pickerId, batchId));
}

export async function batchPickList(
  deps: Pick<AppDeps, 'db'>,
  pickerId: number,
  batchId: number,
  lang: Lang,
): Promise<Schemas['PickingBatchPickListSchema']> {
  const batch = await requireBatch(deps.db, pickerId, batchId);
  const walk = await loadWalk(deps.db, batch.id);
  return { batch_id: batch.id, stops: walk.stops.map((s, i) => toStop(s, i, lang)) };
}

/** The first stop with work left, and the counts: the handheld's small answer. */
export async function nextBatchStop(
  deps: Pick<AppDeps, 'db'>,
  pickerId: number,
  batchId: number,
  lang: Lang,
): Promise<Schemas['PickingBatchNextStopSchema']> {
  const batch = await requireBatch(deps.db, pickerId, batchId);
  const walk = await loadWalk(deps.db, batch.id);
  const remaining = walk.stops.map((s, i) => ({ s, i })).filter(({ s }) => s.lines.some(isLeft));
  const next = remaining[0];
  return {
    batch_id: batch.id,
    status: walk.open ? 'open' : 'closed',
    stops_count: walk.stops.length,
    remaining_stops_count: remaining.length,
    remaining_items_count: walk.stops.reduce((n, s) => n + s.lines.filter(isLeft).length, 0),
    stop: next ? toStop(next.s, next.i, lang) : null,
  };
}

async function requireBatch(db: Executor, pickerId: number, batchId: number): Promise<BatchRow> {
  const batch = await findBatchOfPicker(db, batchId, pickerId);
  if (!batch) throw notFound('You have no batch with this id');
  return batch;
}

type WalkLineRow = WalkItemRow & { itemId: number; orderId: string; productId: string; sequence: string | null };

/** The batch's walk over its orders still in it, with whether any of its sessions is open. */
async function loadWalk(db: Executor, batchId: number): Promise<{ stops: Stop<WalkLineRow>[]; open: boolean }> {
  const rows = await batchWalkItems(db, batchId);
  const orderRank = new Map<string, number>();
  for (const r of rows) if (!orderRank.has(r.order_id)) orderRank.set(r.order_id, r.session_id);
  const lines: WalkLineRow[] = rows.map((r) => ({
    ...r,
    itemId: r.id,
    orderId: r.order_id,
    productId: r.product_id,
    sequence: r.location_sequence,
  }));
  return {
    stops: walkStops(lines, (orderId) => orderRank.get(orderId) ?? 0),
    open: rows.some((r) => r.session_status === 'active' || r.session_status === 'ready_to_finish'),
  };
}

const factsOf = (r: WalkItemRow) => ({
  state: r.state,
  clarificationKind: r.clarification_kind,
  actual: r.actual_quantity === null ? null : parseDecimal(r.actual_quantity, 3),
});

/** A line with work left: its session is open, and it is unresolved or holds goods not yet in a tote. */
const isLeft = (r: WalkItemRow): boolean =>
  (r.session_status === 'active' || r.session_status === 'ready_to_finish') &&
  (!isResolved(factsOf(r)) || (holdsGoods(factsOf(r)) && r.tote_id === null));

function toStop(stop: Stop<WalkLineRow>, index: number, lang: Lang): StopView {
  const first = stop.lines[0]!;
  return {
    stop_index: index,
    product_id: first.product_id,
    name: lang === 'ru' ? first.name_ru : first.name_en,
    image_url: first.image_url,
    barcode: first.barcode,
    plu_code: first.plu_code,
    is_weight_based: first.is_weight_based,
    location: {
      aisle: first.location_aisle,
      section: first.location_section,
      shelf: first.location_shelf,
      sequence: first.location_sequence,
      temperature_class: first.temperature_class,
    },
    lines: stop.lines.map((l) => ({
      order_id: l.order_id,
      order_number: String(l.order_no),
      session_id: l.session_id,
      item_id: l.id,
      state: l.state,
      is_resolved: l.is_resolved,
      ordered_quantity: formatDecimal(parseDecimal(l.ordered_quantity, 3)!, 3),
      unit: lang === 'ru' ? l.unit_ru : l.unit_en,
      tote_id: l.own_tote_id,
      tote_label: l.own_tote_label,
      in_tote: l.tote_id !== null && holdsGoods(factsOf(l)),
    })),
  };
}

/** The batch as its picker sees it: its orders' sessions and totes, and the walk's counts. */
async function batchView(db: Executor, deps: Pick<AppDeps, 'config'>, batch: BatchRow): Promise<PickingBatchView> {
  const sessions = await batchSessions(db, batch.id, dueOf(deps));
  const [totes, walk] = await Promise.all([
    totesOfSessions(
      db,
      sessions.map((s) => s.id),
    ),
    loadWalk(db, batch.id),
  ]);
  return {
    batch_id: batch.id,
    store_id: batch.store_id,
    status: sessions.some((s) => s.status === 'active' || s.status === 'ready_to_finish') ? 'open' : 'closed',
    created_at: batch.created_at.toISOString(),
    orders: sessions.map((s) => ({
      order_id: s.order_id,
      order_number: String(s.order_no),
      session_id: s.id,
      session_status: s.status,
      version: s.version,
      closure_source: s.closure_source,
      is_express: s.is_express,
      due_at: s.due_at.toISOString(),
      fulfillment_type: s.fulfillment_type,
      items_count: s.items_count,
      resolved_items_count: s.resolved_items_count,
      totes: totes.filter((t) => t.session_id === s.id).map(toToteView),
    })),
    stops_count: walk.stops.length,
    remaining_stops_count: walk.stops.filter((s) => s.lines.some(isLeft)).length,
  };
}

function toToteView(t: ToteRow): PickingToteView {
  return {
    tote_id: t.id,
    order_id: t.order_id,
    temperature_class: t.temperature_class,
    label: t.label,
    bound_at: t.bound_at?.toISOString() ?? null,
    released_at: t.released_at?.toISOString() ?? null,
    items_count: t.items_count,
  };
}

// ---------------------------------------------------------------------------------------------
// Totes

/** Binds a scanned label to one of the batch's totes (binding the same label again changes nothing). */
export function bindPickingTote(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  action: PickerAction,
  path: { batch_id: number; tote_id: number },
  body: { label: string },
): Promise<{ status: 200; body: PickingToteView }> {
  const label = body.label;
  return withIdempotency(deps, actionScope(action), fingerprintOf(path, label), async (trx) => {
    const batch = await findBatchOfPicker(trx, Number(path.batch_id), action.pickerId);
    if (!batch) throw notFound('You have no batch with this id');
    const found = await findToteOfBatch(trx, batch.id, Number(path.tote_id));
    if (!found) throw notFound('No tote with this id in the batch');
    await lockOrder(trx, found.order_id);
    const tote = (await lockTote(trx, found.id))!;
    if (tote.session_status !== 'active' && tote.session_status !== 'ready_to_finish') {
      throw refusal(409, 'SESSION_CLOSED', 'The order of this tote has left the batch or is finished', null);
    }
    if (tote.label === label) return { status: 200 as const, body: toToteView(tote) };
    if (tote.label !== null) throw refusal(409, 'TOTE_ALREADY_BOUND', `This tote already carries label ${tote.label}`, null);
    if (!(await bindTote(trx, tote, label))) {
      throw refusal(409, 'TOTE_LABEL_IN_USE', `Label ${label} is on another open tote of the store; take another tote`, null);
    }
    const bound = (await lockTote(trx, tote.id))!;
    return { status: 200 as const, body: toToteView(bound) };
  });
}

/**
 * Places a picked item into the tote with the scanned label: a command of the item's session
 * (same checks, version + 1, `session.changed`). A tote of another order or temperature class is
 * refused and nothing is recorded.
 */
export function placePickingItemInTote(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  cmd: PickerCommand,
  request: CommandRequest<{ order_id: string; item_id: number }, { tote_label: string }>,
): Promise<{ status: 200; body: Schemas['PickingTotePlacementOutput'] }> {
  const itemId = Number(request.path.item_id);
  return runPickerCommand(deps, cmd, request, async (scope) => {
    const { trx, head, items, lang } = scope;
    const item = items.find((i) => i.id === itemId);
    if (!item) throw notFound('No item with this id in the session');
    if (head.batch_id === null) {
      throw refusal(409, 'SESSION_NOT_IN_BATCH', `Order ${head.order_no} is not picked in a batch and has no totes`, await scope.view());
    }
    const tote = await findOpenToteByLabel(trx, head.store_id, request.body.tote_label);
    if (!tote)
      throw refusal(
        422,
        'TOTE_UNKNOWN',
        `No open tote of the store carries label ${request.body.tote_label}; bind it first`,
        await scope.view(),
      );
    const fit = toteFit(
      { sessionId: tote.session_id, temperatureClass: tote.temperature_class },
      { sessionId: head.id, temperatureClass: item.temperature_class },
    );
    if (fit === 'another_order') {
      throw refusal(
        409,
        'TOTE_OF_ANOTHER_ORDER',
        `Tote ${tote.label} holds another order; put the item into a tote of order ${head.order_no}`,
        await scope.view(),
        {
          tote_order_id: tote.order_id,
        },
      );
    }
    if (fit === 'another_temperature') {
      throw refusal(
        409,
        'TOTE_TEMPERATURE_MISMATCH',
        `Tote ${tote.label} is for ${tote.temperature_class} goods; this item is ${item.temperature_class}`,
        await scope.view(),
      );
    }
    if (!holdsGoods(itemFacts(item))) {
      throw refusal(409, 'ITEM_STATE_CONFLICT', 'The item holds no goods to place into a tote; pick it first', await scope.view());
    }
    const applied = item.tote_id !== tote.id;
    if (applied) {
      await placeItemInTote(trx, item.id, tote.id);
      item.tote_id = tote.id;
      item.updated_at = scope.now;
      await commitSessionChange(scope);
    }
    const placed = (await totesOfSessions(trx, [head.id])).find((t) => t.id === tote.id)!;
    head.totes = head.totes.map((t) => (t.tote_id === placed.id ? { ...t, items_count: placed.items_count } : t));
    return {
      status: 200 as const,
      body: {
        applied,
        tote: toToteView(placed),
        item: toPickingItem(item, lang),
        session: toPickingSessionHeader(head, items, cmd.pickerId, lang),
      },
    };
  });
}
