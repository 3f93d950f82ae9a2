// How a command on one item of the session runs: read the session, let the item state machine
// (domain/picking/items.ts) decide, write the change with its answer in one statement, and start
// again when the session moved on in between. No transaction stays open while the command is
// decided: the write applies only if the session is still at the version that was read.
import { findStoreProductByCode, type StoreProductRow } from '../../db/queries/picking/catalog.js';
import { toPickerCatalogProduct } from '../presenters/picker-catalog.js';
import {
  changedItemColumns,
  readItemCommand,
  writeItemCommand,
  type CommandRead,
  type ItemCommandWrite,
} from '../../db/queries/picking/commands.js';
import type { IdempotencyScope } from '../../db/queries/idempotency.js';
import { isOrderOfPicker, type SessionHead } from '../../db/queries/picking/sessions.js';
import { itemFacts, loadItems, type ItemFactsRow, type ItemRow, type ReplacementData } from '../../db/queries/picking/items.js';
import type { Executor } from '../../db/executor.js';
import { formatDecimal } from '../../domain/money/decimal.js';
import { kopecks, money } from '../../domain/money/money.js';
import { labelWeight, readScannedCode, type ScannedCode } from '../../domain/codes/scale-label.js';
import {
  applyItemCommand,
  currentLineTotal,
  openSessionStatus,
  type ItemCommand,
  type ItemFacts,
  type RefusalCode,
  type ScanMatch,
} from '../../domain/picking/items.js';
import { actionMessage, type MessageFacts } from '../../domain/picking/messages.js';
import { pendingApprovalRefusal, proposalKind, replacementRefusal, withdrawsProposal } from '../../domain/picking/approvals.js';
import { requestedColumns, settledColumns, type ItemApprovalColumns } from '../../db/queries/picking/approvals.js';
import { linePreference, proposal } from './proposals.js';
import type { AppDeps } from '../deps.js';
import { notFound, statusOf } from '../errors.js';
import { IDEMPOTENCY_TTL_SECONDS, settleFailedAction, settleTakenKey, storeRefusal } from '../idempotency.js';
import { chargedPrice, toPickingResult } from '../presenters/picking.js';
import { serializeBody } from '../stored-body.js';
import {
  actionOutput,
  actionScope,
  checkCommandTarget,
  commandFingerprint,
  deltaAnswer,
  fullAnswer,
  refusal,
  sessionView,
  type CommandRequest,
  type Lang,
  type PickerCommand,
  type PickingActionView,
} from './runner.js';

/** An item command's path: the order and the item of its session. */
export interface ItemPath {
  order_id: string;
  item_id: number;
}

/** A barcode a command sent, read and looked up in the session's store. */
export interface ScannedBarcode {
  barcode: string;
  code: ScannedCode;
  /** The product it names in the store, and whether it was found by a scale label's PLU. */
  found: { row: StoreProductRow; byLabel: boolean } | undefined;
}

/** What an item command's preparation sees: the session as read, outside any transaction. */
export interface ItemScope {
  db: Executor;
  pickerId: number;
  lang: Lang;
  head: SessionHead;
}

export interface PreparedCommand {
  command: ItemCommand;
  scanned?: ScannedBarcode;
  /** Which scan-log entry the barcode makes. */
  log?: 'scan' | 'replacement' | 'weight';
  replacement?: ReplacementData;
}

export type ItemReply = { status: 200; body: PickingActionView };

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

/** What the customer sees of one item; a change of it is announced as `order.changed`. */
export const customerView = (r: ItemRow) => JSON.stringify(toPickingResult([r], 'en', true).items);

/** Attempts of an item command whose session moved on between its read and its write. */
const ITEM_COMMAND_ATTEMPTS = 5;

/**
 * Runs an item command (db/queries/picking/commands.ts holds its two statements): one statement
 * reads the session with its items and whether the key has a record; the state machine runs here
 * (a sent barcode is looked up first); one statement writes the change, the events and the key's
 * record with its answer, if the session is still at the version read and no other request of
 * the key wrote its record first - otherwise it is read again and the command decided again (a
 * stale X-Expected-Version then answers 409 VERSION_CONFLICT), or the other request's answer
 * replayed. Refusals store their answer as any command's do.
 */
export async function itemCommand(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  cmd: PickerCommand,
  request: CommandRequest<ItemPath, unknown>,
  command: MessageFacts['command'],
  prepare: (s: ItemScope, item: ItemRow, facts: ItemFacts) => Promise<PreparedCommand>,
): Promise<ItemReply> {
  const { path } = request;
  // Path parameters arrive as text; the contract has already checked this one is an integer >= 1.
  const itemId = Number(path.item_id);
  const { pickerId, lang } = cmd;
  const db = deps.db;
  const scope = actionScope(cmd);
  const fingerprint = commandFingerprint(cmd, request);
  // The items are read whole only when the answer is to carry them all (Prefer: return=representation).
  const wholeItems = cmd.fullSession;
  const readSession = () => readItemCommand(db, path.order_id, pickerId, { itemId, scope, wholeItems });
  const record = { scope, fingerprint, held: false };
  let read = await readSession();
  for (let attempt = 1; ; attempt++) {
    if (read.taken && !record.held) {
      // Outside the try below: a replay, IDEMPOTENCY_CONFLICT or IDEMPOTENCY_IN_PROGRESS is the
      // record's own answer, not an outcome of this request to store.
      const taken = await settleTakenKey<ItemReply>(db, scope, fingerprint, deps.clock.now());
      if (taken.replay) return taken.replay;
      // The record had expired or was abandoned: this request now holds it (in progress).
      record.held = true;
      read = await readSession();
    }
    try {
      const reply = await decideItemCommand(deps, lang, read, {
        orderId: path.order_id,
        itemId,
        pickerId,
        expected: cmd.expectedVersion,
        key: record,
        command,
        prepare,
      });
      if (reply) return reply;
      if (attempt === ITEM_COMMAND_ATTEMPTS) {
        const again = await readItemCommand(db, path.order_id, pickerId, { itemId, scope, wholeItems: true });
        const view = again.head ? await sessionView(db, again.head, again.wholeItems!, pickerId, lang) : null;
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
async function decideItemCommand(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  lang: Lang,
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
  const db = deps.db;
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
  const waiting = pendingApprovalRefusal(before.approval_status, p.command.type);
  if (waiting) throw refusal(409, waiting, LINE_REFUSALS[waiting], await view());
  const t = applyItemCommand(facts, p.command);
  // The state machine says why it refuses; the table of statuses says how that answers.
  if (!t.ok) throw refusal(statusOf(t.code), t.code, REFUSALS[t.code], await view());
  const preference = linePreference(before);
  const unwanted = replacementRefusal(preference, p.command.type, t.replacement === 'set' ? p.replacement!.product_id : null);
  if (unwanted) throw refusal(409, unwanted, LINE_REFUSALS[unwanted], await view());

  const at = deps.clock.now();
  let change: ItemCommandWrite['change'] = null;
  let after = before;
  let headAfter: SessionHead = head;
  let itemsAfter: readonly ItemFactsRow[] = items;
  let wholeItemsAfter = read.wholeItems;
  let approval: ItemCommandWrite['approval'] = null;
  if (t.applied) {
    const price =
      t.replacement === 'set'
        ? kopecks(p.replacement!.unit_price)
        : t.replacement === 'clear'
          ? kopecks(before.unit_price)
          : chargedPrice(before);
    const kind = proposalKind(preference, facts, t);
    if (kind) approval = await proposal(db, { head, item: before, kind, next: t.next, price, replacement: p.replacement, at });
    else if (withdrawsProposal(before.approval_status, t)) approval = { withdraw: before.approval_id! };
    const approvalColumns = !approval
      ? null
      : 'request' in approval
        ? requestedColumns(approval.request)
        : settledColumns('withdrawn', 'picker', at);
    change = itemChange(
      items,
      before.id,
      t.next,
      price,
      t.replacement === 'set' ? { set: p.replacement! } : t.replacement,
      approvalColumns,
    );
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
    orderChanges: [
      ...(t.applied && customerView(before) !== customerView(after) ? (['picking_result'] as const) : []),
      ...(approval ? (['approval'] as const) : []),
    ],
    approval,
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
  approval: ItemApprovalColumns | null = null,
): NonNullable<ItemCommandWrite['change']> {
  const lineTotal = currentLineTotal(next, price);
  const total = items.reduce((sum, i) => sum + (i.id === itemId ? lineTotal : kopecks(i.current_line_total)), 0n);
  return {
    itemId,
    facts: next,
    currentLineTotal: money(lineTotal),
    replacement,
    status: openSessionStatus(items.map((i) => (i.id === itemId ? next : itemFacts(i)))),
    currentTotal: money(total),
    approval,
  };
}

/** Refusals of the line's preference and of a proposal waiting for the customer. */
const LINE_REFUSALS: Record<'APPROVAL_PENDING' | 'REPLACEMENT_NOT_WANTED' | 'REPLACEMENT_NOT_NAMED', string> = {
  APPROVAL_PENDING: 'The customer has not answered the proposal on this item yet; go on with other items (missing or reopen take it back)',
  REPLACEMENT_NOT_WANTED: 'The customer wants no replacement for this line: mark it missing with remove',
  REPLACEMENT_NOT_NAMED: 'The customer accepts only the products named in replacement_preference for this line',
};

const REFUSALS: Record<RefusalCode, string> = {
  ITEM_STATE_CONFLICT: "The item's state does not allow this command; re-read the session",
  ITEM_IS_WEIGHT_BASED: 'This is a weight item: record its weight instead',
  ITEM_NOT_WEIGHT_BASED: 'This is a piece item: record its quantity instead',
  CONFIRMED_QUANTITY_MISMATCH: 'The value differs from the recorded discrepancy (confirmed_quantity); re-read and ask again',
  QUANTITY_ABOVE_ORDERED: 'The quantity is above the ordered quantity',
  CONFIRMED_QUANTITY_REQUIRED: 'Send the confirmed value: quantity for a piece item, quantity_kg for a weight item',
};
