// The path every picker command takes (spec: "Rules common to picker commands"):
//   authentication (401, before the handler) -> the Idempotency-Key (422) -> idempotency replay
//   or conflict -> lookups (404) -> X-Expected-Version (409 VERSION_CONFLICT) -> the command's
//   state rules (409) -> the effect, raising the session's version by one.
// All of it in one transaction that holds the order's and the session's row locks, so two
// commands on one session run one after the other and the second sees the first's result.
import type { Transaction } from 'kysely';
import type { Database } from '../db/connection.js';
import { recordOrderChange } from '../db/queries/order-events.js';
import { lockInventoryRows, lockOrder as lockOrderRow, updateOrder } from '../db/queries/orders.js';
import { enqueueProviderCommand } from '../db/queries/payments.js';
import { recordSessionChanged } from '../db/queries/picking/events.js';
import {
  itemFacts,
  loadItems,
  replacementOptions,
  type ItemFactsRow,
  type ItemRow,
  type NewItem,
  type OrderLineForPicking,
  type ReplacementData,
  type ReplacementOption,
} from '../db/queries/picking/items.js';
import { adjustStock, setOrderPickingStatus } from '../db/queries/picking/order-effects.js';
import {
  bumpSession,
  closeSession,
  isOrderOfPicker,
  lockCommandSession,
  lockOrderOfPicker,
  type LockedOrder,
  type SessionHead,
} from '../db/queries/picking/sessions.js';
import {
  findStoreProductByCode,
  pricePerKg,
  toPickerCatalogProduct,
  type PickerCatalogProduct,
  type StoreProductRow,
} from '../db/queries/picking/catalog.js';
import {
  chargedPrice,
  itemsWantingOptions,
  toPickingItem,
  toPickingResult,
  toPickingSession,
  toPickingSessionHeader,
  type PickingSessionView,
} from './presenters/picking.js';
import type { DB } from '../db/schema.js';
import type { components } from '../generated/api.test.js';
import { AppError, notFound, statusOf, unprocessable, type CodeWithStatus, type StatusOf } from './errors.js';
import { declaredHeader, type OperationsWithHeader, type RequestContext } from '../server/handler-types.js';
import {
  fingerprintOf,
  IDEMPOTENCY_TTL_SECONDS,
  settleFailedAction,
  settleTakenKey,
  storeRefusal,
  withIdempotency,
} from './idempotency.js';
import { serializeBody } from './stored-body.js';
import {
  changedItemColumns,
  readItemCommand,
  writeItemCommand,
  type CommandRead,
  type ItemCommandWrite,
} from '../db/queries/picking/commands.js';
import type { IdempotencyScope } from '../db/queries/idempotency.js';
import type { Executor } from '../db/executor.js';
import { formatDecimal, parseDecimal } from '../domain/money/decimal.js';
import { lineTotal } from '../domain/money/money.js';
import { labelWeight, readScannedCode, type ScannedCode } from '../domain/codes/scale-label.js';
import {
  applyItemCommand,
  currentLineTotal,
  isResolved,
  openSessionStatus,
  differenceToCollect,
  takenQuantity,
  differenceToRefund,
  reconciliationStatus,
  UNIT,
  type ItemCommand,
  type ItemFacts,
  type ItemOutcome,
  type RefusalCode,
  type ScanMatch,
} from '../domain/picking/items.js';
import { actionMessage, type MessageFacts } from '../domain/picking/messages.js';
import { enterCancelled, type CancelEffects } from './order-lifecycle.js';
import { pickerIdOf } from '../handlers/support/principal.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Lang = 'ru' | 'en';

/** The picker commands: the operations that declare Idempotency-Key, X-Expected-Version and Prefer. */
export type PickerCommandOperation = OperationsWithHeader<'idempotency-key'> &
  OperationsWithHeader<'x-expected-version'> &
  OperationsWithHeader<'prefer'>;

/** The UUID Idempotency-Key every picker command requires (checked here: the header schema is optional). */
export function commandKey<K extends OperationsWithHeader<'idempotency-key'>>(ctx: RequestContext<K>): string {
  const key = declaredHeader(ctx, 'idempotency-key')?.trim();
  if (!key) throw unprocessable('IDEMPOTENCY_KEY_REQUIRED', 'Picker commands need an Idempotency-Key header (a UUID, new for each action)');
  if (!UUID.test(key)) throw unprocessable('IDEMPOTENCY_KEY_INVALID', 'The Idempotency-Key of a picker command must be a UUID');
  return key.toLowerCase();
}

/** X-Expected-Version, already checked by the contract to be an integer >= 1; undefined when absent. */
export function expectedVersionOf<K extends OperationsWithHeader<'x-expected-version'>>(ctx: RequestContext<K>): number | undefined {
  const value = declaredHeader(ctx, 'x-expected-version');
  return value === undefined || value === '' ? undefined : Number(value);
}

/**
 * Whether the command's caller asked for the whole session (`Prefer: return=representation`,
 * RFC 7240); otherwise it answers the delta. Other preferences in the header are ignored.
 */
export function wantsFullSession<K extends OperationsWithHeader<'prefer'>>(ctx: RequestContext<K>): boolean {
  const text = declaredHeader(ctx, 'prefer');
  if (!text) return false;
  return text.split(',').some((p) => /^\s*return\s*=\s*"?representation"?\s*(;|$)/i.test(p));
}

/** The session as the caller sees it (with replacement options of the items that offer them). */
export async function sessionView(
  db: Transaction<DB> | Database,
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

/** What a successful command answers of the session (PickingActionOutput `representation`, `session`, `item`). */
export interface ActionAnswer {
  representation: 'delta' | 'full';
  session: PickingActionView['session'];
  item: PickingActionView['item'];
}

/**
 * The session part of a command's answer. Full: the session with every item (replacement
 * options of all that offer them). Delta: its header and the one item the command acted on (its
 * options only) - a few KB where the whole session of 40 items is 33.
 */
export function actionAnswer(
  db: Transaction<DB> | Database,
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
async function fullAnswer(
  db: Transaction<DB> | Database,
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
async function deltaAnswer(
  db: Transaction<DB> | Database,
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

/**
 * Runs a picker command on the caller's open session of the order. `itemId` names the item an
 * item command addresses (404 when it is not an item of the session).
 */
export async function runPickerCommand<K extends PickerCommandOperation, R extends { status: number; body: unknown }>(
  ctx: RequestContext<K>,
  orderId: string,
  itemId: number | null,
  action: (scope: CommandScope) => Promise<R>,
): Promise<R> {
  const pickerId = pickerIdOf(ctx);
  const key = commandKey(ctx);
  const expected = expectedVersionOf(ctx);
  const scope = { principal: `picker:${pickerId}`, operationId: ctx.operationId, key };
  return withIdempotency(ctx.deps, scope, fingerprintOf(ctx.path, ctx.body ?? null, expected ?? null), async (trx) => {
    const order = await lockOrderOfPicker(trx, orderId, pickerId);
    if (!order) throw notFound('No order with this id in your stores');
    const head = await lockCommandSession(trx, orderId, pickerId);
    if (!head) throw notFound('You have no picking session of this order');
    const items = await loadItems(trx, head.id);
    const view = () => sessionView(trx, head, items, pickerId, ctx.lang);
    const full = wantsFullSession(ctx);
    const answer = (item: ItemRow | null) => actionAnswer(trx, head, items, item, pickerId, ctx.lang, full);
    await checkCommandTarget(head, items, itemId, pickerId, expected, view);
    return action({ trx, pickerId, lang: ctx.lang, order, head, items, now: ctx.deps.clock.now(), full, view, answer });
  });
}

/**
 * The checks every command makes of the session it addresses, in the contract's order: open and
 * the caller's (409 ORDER_BUSY, order_cancelled, SESSION_CLOSED), the item (404), then
 * X-Expected-Version (409 VERSION_CONFLICT). Refusals carry the whole session.
 */
async function checkCommandTarget(
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
  const total = formatDecimal(
    items.reduce((sum, i) => sum + parseDecimal(i.current_line_total, 2)!, 0n),
    2,
  );
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

// ---------------------------------------------------------------------------------------------
// Item commands

export type PickingActionView = components['schemas']['PickingActionOutput'];

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

/** A barcode a command sent, read and looked up in the session's store. */
export interface ScannedBarcode {
  barcode: string;
  code: ScannedCode;
  /** The product it names in the store, and whether it was found by a scale label's PLU. */
  found: { row: StoreProductRow; byLabel: boolean } | undefined;
}

export async function lookUpBarcode(s: ItemScope, raw: string): Promise<ScannedBarcode> {
  const barcode = raw.trim();
  const code = readScannedCode(barcode);
  return { barcode, code, found: await findStoreProductByCode(s.db, s.head.store_id, code) };
}

export const scannedPlu = (code: ScannedCode): string | null => (code.kind === 'scale_label' ? code.plu : null);

/** How a scanned barcode relates to the product the item is picked as (the replacement once chosen). */
export function scanMatch(item: ItemRow, scanned: ScannedBarcode): ScanMatch {
  const found = scanned.found;
  if (!found) return { kind: 'unknown' };
  if (found.row.product_id !== (item.replacement_product_id ?? item.product_id)) return { kind: 'other_product' };
  return found.byLabel
    ? { kind: 'item_product', labelWeight: labelWeight(scanned.code), labelPlu: scannedPlu(scanned.code) }
    : { kind: 'item_product', labelWeight: null, labelPlu: null };
}

/** Kilograms in both languages: weight items are picked and priced per kg. */
export const KG = { ru: 'кг', en: 'kg' } as const;

/** The replacement recorded when a product is chosen as a substitute (priced per kg when weighed). */
export function replacementData(row: StoreProductRow): ReplacementData {
  return {
    product_id: row.product_id,
    inventory_id: row.inventory_id,
    unit_id: row.unit_id,
    name_ru: row.name_ru,
    name_en: row.name_en,
    barcode: row.barcode,
    plu_code: row.plu,
    image_url: row.image_listing,
    unit_ru: row.weight_based ? KG.ru : row.unit_ru,
    unit_en: row.weight_based ? KG.en : row.unit_en,
    unit_price: formatDecimal(row.weight_based ? pricePerKg(row.unit_price, row.unit_ratio) : parseDecimal(row.unit_price, 2)!, 2),
  };
}

export interface PreparedCommand {
  command: ItemCommand;
  scanned?: ScannedBarcode;
  /** Which scan-log entry the barcode makes. */
  log?: 'scan' | 'replacement' | 'weight';
  replacement?: ReplacementData;
}

/** What the customer sees of one item; a change of it is announced as `order.changed`. */
export const customerView = (r: ItemRow) => JSON.stringify(toPickingResult([r], 'en', true).items);

/** What an item command's preparation sees: the session as read, outside any transaction. */
export interface ItemScope {
  db: Executor;
  pickerId: number;
  lang: Lang;
  head: SessionHead;
}

/** Attempts of an item command whose session moved on between its read and its write. */
const ITEM_COMMAND_ATTEMPTS = 5;

type ItemReply = { status: 200; body: PickingActionView };

/**
 * An item command, in three round trips to PostgreSQL on its way (the auth session check, then
 * db/queries/picking/commands.ts): one statement reads the session with its items and whether
 * the key has a record; the state machine runs here (lookups of a sent barcode add one read); one
 * statement writes the change, the events and the key's record with its answer, if the session is
 * still at the version read and no other request of the key wrote its record first - otherwise
 * it is read again and the command decided again (a stale X-Expected-Version then answers 409
 * VERSION_CONFLICT), or the other request's answer replayed. Refusals store their answer as any
 * command's do.
 */
export async function itemCommand<K extends PickerCommandOperation>(
  ctx: RequestContext<K>,
  path: { order_id: string; item_id: number },
  command: MessageFacts['command'],
  prepare: (s: ItemScope, item: ItemRow, facts: ItemFacts) => Promise<PreparedCommand>,
): Promise<ItemReply> {
  // Path parameters arrive as text; the contract has already checked this one is an integer >= 1.
  const itemId = Number(path.item_id);
  const pickerId = pickerIdOf(ctx);
  const key = commandKey(ctx);
  const expected = expectedVersionOf(ctx);
  const db = ctx.deps.db;
  const scope = { principal: `picker:${pickerId}`, operationId: ctx.operationId, key };
  const fingerprint = fingerprintOf(ctx.path, ctx.body ?? null, expected ?? null);
  // The items are read whole only when the answer is to carry them all (Prefer: return=representation).
  const wholeItems = wantsFullSession(ctx);
  const readSession = () => readItemCommand(db, path.order_id, pickerId, { itemId, scope, wholeItems });
  const record = { scope, fingerprint, held: false };
  let read = await readSession();
  for (let attempt = 1; ; attempt++) {
    if (read.taken && !record.held) {
      // Outside the try below: a replay, IDEMPOTENCY_CONFLICT or IDEMPOTENCY_IN_PROGRESS is the
      // record's own answer, not an outcome of this request to store.
      const taken = await settleTakenKey<ItemReply>(db, scope, fingerprint, ctx.deps.clock.now());
      if (taken.replay) return taken.replay;
      // The record had expired or was abandoned: this request now holds it (in progress).
      record.held = true;
      read = await readSession();
    }
    try {
      const reply = await decideItemCommand(ctx, read, {
        orderId: path.order_id,
        itemId,
        pickerId,
        expected,
        key: record,
        command,
        prepare,
      });
      if (reply) return reply;
      if (attempt === ITEM_COMMAND_ATTEMPTS) {
        const again = await readItemCommand(db, path.order_id, pickerId, { itemId, scope, wholeItems: true });
        const view = again.head ? await sessionView(db, again.head, again.wholeItems!, pickerId, ctx.lang) : null;
        throw refusal(409, 'VERSION_CONFLICT', 'The session kept changing while the command was applied; re-read it', view);
      }
    } catch (err) {
      // A held record is completed with the refusal or released; otherwise the refusal is inserted
      // as the key's record (unless another request of the key wrote one meanwhile).
      if (record.held) await settleFailedAction(db, scope, err);
      else await storeRefusal(db, scope, fingerprint, err, { keepExisting: true });
      throw err;
    }
    read = await readSession();
  }
}

/** One attempt: the checks, the transition, the answer and the write; null when the session moved on since `read`. */
async function decideItemCommand<K extends PickerCommandOperation>(
  ctx: RequestContext<K>,
  read: CommandRead,
  c: {
    orderId: string;
    itemId: number;
    pickerId: number;
    expected: number | undefined;
    key: { scope: IdempotencyScope; fingerprint: string; held: boolean };
    command: MessageFacts['command'];
    prepare: (s: ItemScope, item: ItemRow, facts: ItemFacts) => Promise<PreparedCommand>;
  },
): Promise<ItemReply | null> {
  const db = ctx.deps.db;
  const lang = ctx.lang;
  const { head, items } = read;
  const orderId = c.orderId;
  if (!head || !head.mine) {
    if (head || !(await isOrderOfPicker(db, orderId, c.pickerId))) throw notFound('No order with this id in your stores');
    throw notFound('You have no picking session of this order');
  }
  // Refusals carry the whole session: when the read was not whole, it is read again whole (one
  // more round trip, on refusals only), head and items together so that they agree.
  const view = async () => {
    if (read.wholeItems) return sessionView(db, head, read.wholeItems, c.pickerId, lang);
    const again = await readItemCommand(db, orderId, c.pickerId, { itemId: c.itemId, scope: c.key.scope, wholeItems: true });
    return again.head
      ? sessionView(db, again.head, again.wholeItems!, c.pickerId, lang)
      : sessionView(db, head, await loadItems(db, head.id), c.pickerId, lang);
  };
  await checkCommandTarget(head, items, c.itemId, c.pickerId, c.expected, view);
  const index = items.findIndex((i) => i.id === c.itemId);
  const before = read.item!;
  const facts = itemFacts(before);
  const p = await c.prepare({ db, pickerId: c.pickerId, lang, head }, before, facts);
  const t = applyItemCommand(facts, p.command);
  // The state machine says why it refuses; the table of statuses says how that answers.
  if (!t.ok) throw refusal(statusOf(t.code), t.code, REFUSALS[t.code], await view());

  const at = ctx.deps.clock.now();
  let change: ItemCommandWrite['change'] = null;
  let after = before;
  let headAfter: SessionHead = head;
  let itemsAfter: readonly ItemFactsRow[] = items;
  let wholeItemsAfter = read.wholeItems;
  if (t.applied) {
    const price =
      t.replacement === 'set'
        ? parseDecimal(p.replacement!.unit_price, 2)!
        : t.replacement === 'clear'
          ? parseDecimal(before.unit_price, 2)!
          : chargedPrice(before);
    change = itemChange(items, before.id, t.next, price, t.replacement === 'set' ? { set: p.replacement! } : t.replacement);
    const total = change.currentTotal;
    // The rows as the write will leave them: the answer is stored by the same statement.
    after = { ...before, ...changedItemColumns(change, at) } as ItemRow;
    itemsAfter = items.map((i, n) => (n === index ? after : i));
    wholeItemsAfter = read.wholeItems && read.wholeItems.map((i, n) => (n === index ? after : i));
    headAfter = { ...head, version: head.version + 1, updated_at: at, status: change.status, current_total: total };
  }
  // The read carries whole items exactly when the caller asked for the whole session.
  const answer = wholeItemsAfter
    ? await fullAnswer(db, headAfter, wholeItemsAfter, after, c.pickerId, lang)
    : await deltaAnswer(db, headAfter, itemsAfter, after, c.pickerId, lang);
  const scanned = p.scanned?.found ? toPickerCatalogProduct(p.scanned.found.row, lang) : null;
  // The weight a scale label carried, when the code was read as a label (not as a product's own barcode).
  const labelKg = p.scanned && !(p.scanned.found && !p.scanned.found.byLabel) ? labelWeight(p.scanned.code) : null;
  const message = actionMessage(t.outcome, lang, {
    command: c.command,
    confirmed: t.next.confirmed,
    isWeightBased: before.is_weight_based,
    scannedName: scanned?.name ?? null,
  });
  const body = actionOutput(t.outcome, t.applied, message, answer, scanned, labelKg === null ? null : formatDecimal(labelKg, 3));
  const written = await writeItemCommand(db, {
    orderId: head.order_id,
    session: { id: head.id, storeId: head.store_id, pickerId: head.picker_id },
    version: head.version,
    at,
    change,
    scan:
      p.scanned && p.log
        ? {
            itemId: before.id,
            command: p.log,
            barcode: p.scanned.barcode,
            outcome: t.outcome,
            productId: p.scanned.found?.row.product_id ?? null,
            labelWeight: labelWeight(p.scanned.code),
          }
        : null,
    orderChanged: t.applied && customerView(before) !== customerView(after),
    // Written (and gzipped when large) once: stored, and sent as is (server/http/responses.ts).
    answer: {
      scope: c.key.scope,
      fingerprint: c.key.fingerprint,
      ttlSeconds: IDEMPOTENCY_TTL_SECONDS,
      held: c.key.held,
      status: 200,
      stored: await serializeBody(body),
    },
  });
  return written ? { status: 200, body } : null;
}

/**
 * The change an item command writes (writeItemCommand): the item's new facts and line total at
 * `price`, and the session's status and total with that item changed - derived from the facts of
 * every item as read, before the one write.
 */
export function itemChange(
  items: readonly ItemFactsRow[],
  itemId: number,
  next: ItemFacts,
  price: bigint,
  replacement: NonNullable<ItemCommandWrite['change']>['replacement'],
): NonNullable<ItemCommandWrite['change']> {
  const lineTotal = currentLineTotal(next, price);
  const total = items.reduce((sum, i) => sum + (i.id === itemId ? lineTotal : parseDecimal(i.current_line_total, 2)!), 0n);
  return {
    itemId,
    facts: next,
    currentLineTotal: formatDecimal(lineTotal, 2),
    replacement,
    status: openSessionStatus(items.map((i) => (i.id === itemId ? next : itemFacts(i)))),
    currentTotal: formatDecimal(total, 2),
  };
}

const REFUSALS: Record<RefusalCode, string> = {
  ITEM_STATE_CONFLICT: "The item's state does not allow this command; re-read the session",
  ITEM_IS_WEIGHT_BASED: 'This is a weight item: record its weight instead',
  ITEM_NOT_WEIGHT_BASED: 'This is a piece item: record its quantity instead',
  CONFIRMED_QUANTITY_MISMATCH: 'The value differs from the recorded discrepancy (confirmed_quantity); re-read and ask again',
  QUANTITY_ABOVE_ORDERED: 'The quantity is above the ordered quantity',
  CONFIRMED_QUANTITY_REQUIRED: 'Send the confirmed value: quantity for a piece item, quantity_kg for a weight item',
};

// ---------------------------------------------------------------------------------------------
// Starting and adding items

/** An order line as a new item of the session (weight lines in kg at the price per kg). */
export function itemForLine(line: OrderLineForPicking, position: number, tolerancePercent: string): NewItem {
  const isWeight = line.weight_based || line.unit_kind === 'weight';
  const ratio = isWeight && line.unit_ratio ? parseDecimal(line.unit_ratio, 3)! : UNIT;
  const quantity = parseDecimal(line.quantity, 3)!;
  const ordered = (quantity * ratio + UNIT / 2n) / UNIT;
  const price = isWeight ? pricePerKg(line.unit_price, line.unit_ratio ?? '1.000') : parseDecimal(line.unit_price, 2)!;
  // The store no longer sells the product: its goods could only have come from another store
  // and did not arrive - the line starts as a shortage (resolved, nothing to pay).
  const shortage = line.store_inventory_id === null;
  const inventoryId = line.store_inventory_id ?? line.inventory_id;
  if (!inventoryId) throw new Error(`order line ${line.id} has no inventory row to pick from`);
  const facts: ItemFacts = {
    state: shortage ? 'clarified' : 'pending',
    clarificationKind: shortage ? 'store_transfer_shortage' : null,
    missingAction: null,
    isWeightBased: isWeight,
    ordered,
    actual: null,
    confirmed: null,
    pickSource: null,
    lastScannedBarcode: null,
    labelPlu: null,
    hasReplacement: false,
    tolerance: null,
  };
  return {
    position,
    order_item_id: line.id,
    product_id: line.product_id,
    inventory_id: inventoryId,
    unit_id: line.unit_id,
    name_ru: line.name_ru,
    name_en: line.name_en,
    image_url: line.image ?? line.product_image,
    barcode: line.barcode ?? line.product_barcode,
    plu_code: line.plu_code ?? line.product_plu,
    unit_ru: isWeight ? KG.ru : line.unit_name_ru,
    unit_en: isWeight ? KG.en : line.unit_name_en,
    is_weight_based: isWeight,
    ordered_quantity: formatDecimal(ordered, 3),
    unit_price: formatDecimal(price, 2),
    tolerance_percent: isWeight ? tolerancePercent : null,
    state: facts.state,
    clarification_kind: facts.clarificationKind,
    is_resolved: isResolved(facts),
    is_added: false,
    current_line_total: formatDecimal(currentLineTotal(facts, price), 2),
  };
}

/** A product the picker adds (quantity in pieces, or kg for a weight product). */
export function addedItem(row: StoreProductRow, quantity: bigint, position: number, tolerancePercent: string): NewItem {
  const isWeight = row.weight_based;
  const price = isWeight ? pricePerKg(row.unit_price, row.unit_ratio) : parseDecimal(row.unit_price, 2)!;
  return {
    position,
    order_item_id: null,
    product_id: row.product_id,
    inventory_id: row.inventory_id,
    unit_id: row.unit_id,
    name_ru: row.name_ru,
    name_en: row.name_en,
    image_url: row.image_listing,
    barcode: row.barcode,
    plu_code: row.plu,
    unit_ru: isWeight ? KG.ru : row.unit_ru,
    unit_en: isWeight ? KG.en : row.unit_en,
    is_weight_based: isWeight,
    ordered_quantity: formatDecimal(quantity, 3),
    unit_price: formatDecimal(price, 2),
    tolerance_percent: isWeight ? tolerancePercent : null,
    state: 'pending',
    clarification_kind: null,
    is_resolved: false,
    is_added: true,
    current_line_total: formatDecimal(lineTotal(quantity, price), 2),
  };
}

/** The state machine's view of an item about to be inserted. */
export function factsOfNew(n: NewItem): Pick<ItemFacts, 'state' | 'clarificationKind'> {
  return { state: n.state, clarificationKind: n.clarification_kind ?? null };
}

// ---------------------------------------------------------------------------------------------
// Releasing and finishing

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
  const original = parseDecimal(head.original_total, 2)!;
  const current = items.reduce((sum, i) => sum + parseDecimal(i.current_line_total, 2)!, 0n);
  const anyPicked = facts.some((f) => f.state === 'picked');
  const closed = await closeSession(trx, head.id, {
    status: 'completed',
    closureSource: 'picker_finish',
    finalTotal: formatDecimal(current, 2),
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
      finalTotal: formatDecimal(current + parseDecimal(order.delivery_cost, 2)!, 2),
      hasPickingChanges: result.hasChanges,
      pickingCompleted: true,
    });
    // Less than paid: the orders worker asks the bank to return the difference, and the
    // session's reconciliation_status follows the bank's answer. More than paid: the order awaits
    // payment of the difference (no deadline: it is on its way), which the customer pays through a
    // new invoice (GET /api/payments/bank/{order_id}/invoice); that payment settles the session.
    const refund = differenceToRefund(order.payment_method, order.payment_status, original, current);
    if (refund !== null)
      await enqueueProviderCommand(trx, 'bank.refund', order.id, { amount: formatDecimal(refund, 2), session_id: head.id });
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
