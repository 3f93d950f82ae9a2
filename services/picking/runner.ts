// The path a picker command on the caller's open session takes (spec: "Rules common to picker
// commands"): the handler has already checked the caller (401) and the Idempotency-Key (422);
// here come idempotency replay or conflict -> lookups (404) -> X-Expected-Version (409
// VERSION_CONFLICT) -> the command's state rules (409) -> the effect, raising the session's
// version by one. runPickerCommand does all of it in one transaction that holds the order's and
// the session's row locks, so two such commands on one session run one after the other. Item
// commands take the path of item-command.ts instead, which holds no lock while it decides.
import type { Transaction } from 'kysely';
import type { Executor } from '../../db/executor.js';
import { recordSessionChanged } from '../../db/queries/picking/events.js';
import {
  itemFacts,
  loadItems,
  replacementOptions,
  type ItemFactsRow,
  type ItemRow,
  type ReplacementOption,
} from '../../db/queries/picking/items.js';
import {
  bumpSession,
  lockCommandSession,
  lockOrderOfPicker,
  type LockedOrder,
  type SessionHead,
} from '../../db/queries/picking/sessions.js';
import type { PickerCatalogProduct } from '../presenters/picker-catalog.js';
import type { DB } from '../../db/schema.js';
import type { components, operations } from '../../generated/api.test.js';
import type { OperationId } from '../../generated/operations.js';
import { money, kopecks } from '../../domain/money/money.js';
import { openSessionStatus, type ItemOutcome } from '../../domain/picking/items.js';
import type { AppDeps } from '../deps.js';
import { AppError, notFound, type CodeWithStatus, type StatusOf } from '../errors.js';
import { fingerprintOf, withIdempotency, type StoredReply } from '../idempotency.js';
import {
  itemsWantingOptions,
  toPickingItem,
  toPickingSession,
  toPickingSessionHeader,
  type PickingSessionView,
} from '../presenters/picking.js';

export type Lang = 'ru' | 'en';

/** A retry-safe request of a picker: who sends it, for which operation, under which Idempotency-Key. */
export interface PickerAction {
  pickerId: number;
  operationId: string;
  /** The Idempotency-Key, a UUID in lower case. */
  key: string;
  lang: Lang;
}

/** A picker command on a session: an action that may also pin the version and ask for the whole session. */
export interface PickerCommand extends PickerAction {
  /** X-Expected-Version when sent: the command is refused unless the session is at it. */
  expectedVersion: number | undefined;
  /** Whether the answer carries the whole session (`Prefer: return=representation`), else the delta. */
  fullSession: boolean;
}

/** The JSON body an operation declares (undefined when the body is optional and absent). */
export type BodyOf<K extends OperationId> = operations[K] extends { requestBody: { content: { 'application/json': infer B } } }
  ? B
  : operations[K] extends { requestBody?: { content: { 'application/json': infer B } } }
    ? B | undefined
    : undefined;

/** A command's path and body as sent: what makes two requests of one key "the same action". */
export interface CommandRequest<P, B> {
  path: P;
  body: B;
}

/** The idempotency record's scope of an action: one key of one picker on one operation. */
export const actionScope = (a: PickerAction) => ({ principal: `picker:${a.pickerId}`, operationId: a.operationId, key: a.key });

/** The fingerprint of a command's request (the expected version is part of the action). */
export const commandFingerprint = (cmd: PickerCommand, request: CommandRequest<unknown, unknown>) =>
  fingerprintOf(request.path, request.body ?? null, cmd.expectedVersion ?? null);

/** The session as the caller sees it (with replacement options of the items that offer them). */
export async function sessionView(
  db: Executor,
  head: SessionHead,
  items: readonly ItemRow[],
  viewerId: number,
  lang: Lang,
): Promise<PickingSessionView> {
  const wanting = itemsWantingOptions(items);
  const options = wanting.length ? await replacementOptions(db, head.store_id, lang, wanting) : new Map<number, ReplacementOption[]>();
  return toPickingSession(head, items, options, viewerId, lang);
}

/** A refused picker command: 409/422 with the current session (PickerErrorResponse). */
export function refusal<C extends CodeWithStatus<409 | 422>>(
  status: StatusOf<C>,
  code: C,
  detail: string,
  session: PickingSessionView | null,
  extra: Record<string, unknown> = {},
): AppError {
  return new AppError(status, code, detail, { extra: { session, retry_after_seconds: null, ...extra } });
}

export interface CommandScope {
  trx: Transaction<DB>;
  pickerId: number;
  lang: Lang;
  order: LockedOrder;
  /** The caller's open session, as locked. */
  head: SessionHead;
  items: ItemRow[];
  /** When the command runs (deps.clock). */
  now: Date;
  /** Whether the caller asked for the whole session in the answer (else the delta). */
  full: boolean;
  /** The session view as it is now (for refusals). */
  view(): Promise<PickingSessionView>;
  /** The session part of the answer as it is now: the whole session, or its header and the item changed. */
  answer(item: ItemRow | null): Promise<ActionAnswer>;
}

export type PickingActionView = components['schemas']['PickingActionOutput'];

/** What a successful command answers of the session (PickingActionOutput `representation`, `session`, `item`). */
export interface ActionAnswer {
  representation: 'delta' | 'full';
  session: PickingActionView['session'];
  item: PickingActionView['item'];
}

/**
 * The session part of a command's answer. Full: the session with every item (replacement
 * options of all that offer them). Delta: its header and the one item the command acted on (its
 * options only), which keeps the answer small however many items the session has.
 */
export function actionAnswer(
  db: Executor,
  head: SessionHead,
  items: readonly ItemRow[],
  item: ItemRow | null,
  viewerId: number,
  lang: Lang,
  full: boolean,
): Promise<ActionAnswer> {
  return full ? fullAnswer(db, head, items, item, viewerId, lang) : deltaAnswer(db, head, items, item, viewerId, lang);
}

/** The whole session, and the item acted on as it appears in it. */
export async function fullAnswer(
  db: Executor,
  head: SessionHead,
  items: readonly ItemRow[],
  item: ItemRow | null,
  viewerId: number,
  lang: Lang,
): Promise<ActionAnswer> {
  const session = await sessionView(db, head, items, viewerId, lang);
  return { representation: 'full', session, item: item ? (session.items[items.indexOf(item)] ?? toPickingItem(item, lang)) : null };
}

/** The session's header (which needs only the facts of the items) and the item acted on. */
export async function deltaAnswer(
  db: Executor,
  head: SessionHead,
  items: readonly ItemFactsRow[],
  item: ItemRow | null,
  viewerId: number,
  lang: Lang,
): Promise<ActionAnswer> {
  const wanting = item ? itemsWantingOptions([item]) : [];
  const options = wanting.length ? await replacementOptions(db, head.store_id, lang, wanting) : new Map<number, ReplacementOption[]>();
  return {
    representation: 'delta',
    session: toPickingSessionHeader(head, items, viewerId, lang),
    item: item ? toPickingItem(item, lang, options.get(item.id)) : null,
  };
}

export function actionOutput(
  status: ItemOutcome,
  applied: boolean,
  message: string,
  answer: ActionAnswer,
  scanned: PickerCatalogProduct | null = null,
  labelWeightKg: string | null = null,
): PickingActionView {
  return {
    status,
    applied,
    message,
    representation: answer.representation,
    session: answer.session,
    item: answer.item,
    scanned_product: scanned,
    label_weight_kg: labelWeightKg,
  };
}

/** Runs a session command (not an item's) of the caller on their open session of the order. */
export async function runPickerCommand<R extends StoredReply>(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  cmd: PickerCommand,
  request: CommandRequest<{ order_id: string }, unknown>,
  action: (scope: CommandScope) => Promise<R>,
): Promise<R> {
  const { pickerId, lang, fullSession: full } = cmd;
  const orderId = request.path.order_id;
  return withIdempotency(deps, actionScope(cmd), commandFingerprint(cmd, request), async (trx) => {
    const order = await lockOrderOfPicker(trx, orderId, pickerId);
    if (!order) throw notFound('No order with this id in your stores');
    const head = await lockCommandSession(trx, orderId, pickerId);
    if (!head) throw notFound('You have no picking session of this order');
    const items = await loadItems(trx, head.id);
    const view = () => sessionView(trx, head, items, pickerId, lang);
    const answer = (item: ItemRow | null) => actionAnswer(trx, head, items, item, pickerId, lang, full);
    await checkCommandTarget(head, items, null, pickerId, cmd.expectedVersion, view);
    return action({ trx, pickerId, lang, order, head, items, now: deps.clock.now(), full, view, answer });
  });
}

/**
 * The checks every command makes of the session it addresses, in the contract's order: open and
 * the caller's (409 ORDER_BUSY, order_cancelled, SESSION_CLOSED), the item (404), then
 * X-Expected-Version (409 VERSION_CONFLICT). Refusals carry the whole session.
 */
export async function checkCommandTarget(
  head: SessionHead,
  items: readonly ItemFactsRow[],
  itemId: number | null,
  pickerId: number,
  expected: number | undefined,
  view: () => Promise<PickingSessionView>,
): Promise<void> {
  if (head.status === 'active' || head.status === 'ready_to_finish') {
    if (head.picker_id !== pickerId) {
      throw refusal(409, 'ORDER_BUSY', `Order ${head.order_no} is being picked by ${head.picker_display_name}`, null);
    }
  } else if (head.closure_source === 'order_cancelled') {
    throw refusal(409, 'order_cancelled', `Order ${head.order_no} was cancelled; acknowledge it with POST cancelled/ack`, await view());
  } else {
    throw refusal(409, 'SESSION_CLOSED', `The picking session of order ${head.order_no} is ${head.status}`, await view());
  }
  if (itemId !== null && !items.some((i) => i.id === itemId)) throw notFound('No item with this id in the session');
  if (expected !== undefined && expected !== head.version) {
    throw refusal(409, 'VERSION_CONFLICT', `The session is at version ${head.version}, not ${expected}; re-read it`, await view());
  }
}

/**
 * Records an applied change of the session after its items changed: the derived status and
 * total, version + 1, and `session.changed` for the picker's devices. Updates `head` in place.
 */
export async function commitSessionChange(scope: CommandScope, addedItems?: number): Promise<void> {
  const { trx, head, items } = scope;
  const total = money(items.reduce((sum, i) => sum + kopecks(i.current_line_total), 0n));
  const status = openSessionStatus(items.map(itemFacts));
  const bumped = await bumpSession(trx, head.id, { status, currentTotal: total, addedItems });
  Object.assign(head, {
    version: bumped.version,
    updated_at: bumped.updated_at,
    status: bumped.status,
    current_total: total,
    added_items_count: bumped.added_items_count,
  });
  await recordSessionChanged(trx, {
    sessionId: head.id,
    orderId: head.order_id,
    storeId: head.store_id,
    pickerId: head.picker_id,
    version: bumped.version,
    status: bumped.status,
    now: scope.now,
  });
}
