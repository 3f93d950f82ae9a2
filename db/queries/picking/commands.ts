// The item command's two statements, so that a command costs at most three round trips with the
// auth session check:
//
//   1. readItemCommand: reads the session the command addresses and whether its Idempotency-Key
//      already has a record, in one statement that writes and locks nothing.
//   2. writeItemCommand: applies the change in one statement (data-modifying CTEs, one implicit
//      transaction): the order row locked first (the lock order of every picking writer: order,
//      then session), the session's version raised only if it is still the version read and the
//      session still open (optimistic concurrency: the caller re-reads and tries again when not),
//      the item, the `session.changed` outbox row, the scan log, the customer's `order.changed`
//      when their view changed, and the key's record with its answer - all or nothing.
//
// The key's record is written only with the effect, never before it: a process that dies between
// the two statements leaves nothing behind (the claim-first protocol it replaces left an
// `in_progress` record that blocked retries for IdempotencyOptions.staleSeconds). Two requests of
// one key meet at the write: the session's version lets one through, and the key's primary key
// refuses the other's record, so its statement writes nothing and its caller reads again, finds
// the record and replays it.
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { completeIdempotencyKeySql, insertCompletedIdempotencyKeySql, type StoredAnswer, type IdempotencyScope } from '../idempotency.js';
import { outboxInsertSql, pickerPayloadSql } from '../outbox.js';
import { compiledOnce } from '../../compiled-once.js';
import { isUniqueViolationOf } from '../../errors.js';
import type { Executor } from '../../executor.js';
import { PICKING_ITEM_COLUMNS, PICKING_SESSION_COLUMNS } from '../../columns.js';
import type { SessionStatus } from '../../tables/picking.js';
import type { ItemFacts } from '../../../domain/picking/items.js';
import { approvalRequestedInsertSql, orderChangedInsertSql, type ApprovalRequestedData } from '../order-events.js';
import type { OrderChange } from '../outbox.js';
import { approvalInsertSql, approvalWithdrawSql, type ApprovalRequest, type ItemApprovalColumns } from './approvals.js';
import { ITEM_FACT_COLUMNS, itemChangeColumns, quantityText, type ItemFactsRow, type ItemRow, type ReplacementData } from './items.js';
import { isOpen, isPickersOrder, sessionHeads, type SessionHead } from './sessions.js';

/** What the command needs of the order besides the session head's columns. */
const ORDER_COLUMNS = ['order_type', 'payment_status', 'goods_total', 'delivery_cost', 'customer_id', 'mine'] as const;
/** Columns sessionHeads adds to the session's own (keep in step with it). */
const HEAD_EXTRA_COLUMNS = [
  'order_no',
  'is_express',
  'absence_action',
  'customer_comment',
  'fulfillment_type',
  'payment_method',
  'order_status',
  'slot_id',
  'slot_date',
  'slot_start',
  'slot_end',
  'customer_phone',
  'store_name_ru',
  'store_name_en',
  'store_address_ru',
  'store_address_en',
  'store_timezone',
  'picker_login',
  'picker_display_name',
  'slot_starts_at',
  'slot_ends_at',
  'totes',
] as const;
const HEAD_COLUMNS = [...PICKING_SESSION_COLUMNS, ...HEAD_EXTRA_COLUMNS, ...ORDER_COLUMNS];

export type CommandHead = SessionHead & {
  order_type: 'delivery' | 'pickup';
  payment_status: string;
  goods_total: string;
  delivery_cost: string;
  customer_id: string;
  /** Whether the order is the caller's to command (isPickersOrder). */
  mine: boolean;
};

/** The session a command addresses (lockCommandSession's choice), unlocked, with the order's columns. */
function commandHead(db: Executor, orderId: string, pickerId: number) {
  return sessionHeads(db)
    .select([
      'o.type as order_type',
      'o.payment_status',
      'o.goods_total',
      'o.delivery_cost',
      'o.customer_id',
      isPickersOrder(pickerId).as('mine'),
    ])
    .where('s.order_id', '=', orderId)
    .where((eb) => eb.or([eb('s.picker_id', '=', pickerId), eb(isOpen, '=', true)]))
    .orderBy(isOpen, 'desc')
    .orderBy('s.id', 'desc')
    .limit(1);
}

export interface CommandRead {
  /** Whether the key already has a record (a replay, a conflict or a takeover: services/idempotency.ts). */
  taken: boolean;
  head: CommandHead | null;
  /** The item the command addresses, whole; null when the session has no item of that id. */
  item: ItemRow | null;
  /** Every item of the session in position order, as far as their facts go. */
  items: ItemFactsRow[];
  /** Every item whole, when the read was asked for them (the caller wants the whole session back). */
  wholeItems: ItemRow[] | null;
}

/** Item fact columns of type numeric: sent through JSON as text, so their digits stay as PostgreSQL writes them. */
const DECIMAL_FACT_COLUMNS: ReadonlySet<string> = new Set([
  'ordered_quantity',
  'actual_quantity',
  'confirmed_quantity',
  'tolerance_percent',
  'current_line_total',
]);

type ReadValues = {
  orderId: string;
  pickerId: number;
  itemId: number;
  principal: string;
  operationId: string;
  key: string;
};

/**
 * The read statement of one shape: the addressed item whole and the facts of every item as one
 * JSON array (one row), or every item whole (one row per item in position order, the head's
 * columns repeated). Built once per shape (compiledOnce).
 */
function readStatement(wholeItems: boolean) {
  return compiledOnce<ReadValues, Record<string, unknown>>((db, v) => {
    const head = sql`h AS (${commandHead(db, v.orderId, v.pickerId)})`;
    const columns = sql`EXISTS (SELECT 1 FROM idempotency_keys WHERE principal = ${v.principal} AND operation_id = ${v.operationId} AND key = ${v.key}) AS taken,
      ${sql.join(HEAD_COLUMNS.map((c) => sql.ref(`h.${c}`)))},
      ${sql.join(PICKING_ITEM_COLUMNS.map((c) => sql`${sql.ref(`i.${c}`)} AS ${sql.ref(`item_${c}`)}`))}`;
    if (wholeItems) {
      return sql`WITH ${head} SELECT ${columns}
        FROM (SELECT 1) one LEFT JOIN h ON true LEFT JOIN picking_items i ON i.session_id = h.id
        ORDER BY i.position`;
    }
    const factColumns = sql.join(
      ITEM_FACT_COLUMNS.map((c) => (DECIMAL_FACT_COLUMNS.has(c) ? sql`${sql.ref(`f.${c}`)}::text AS ${sql.ref(c)}` : sql.ref(`f.${c}`))),
    );
    return sql`WITH ${head} SELECT ${columns},
        (SELECT json_agg(facts ORDER BY facts.position) FROM (SELECT ${factColumns} FROM picking_items f WHERE f.session_id = h.id) facts) AS facts
      FROM (SELECT 1) one LEFT JOIN h ON true LEFT JOIN picking_items i ON i.session_id = h.id AND i.id = ${v.itemId}`;
  });
}

const READ_FACTS = readStatement(false);
const READ_WHOLE = readStatement(true);

const headOf = (row: Record<string, unknown>) =>
  row.id === null ? null : (Object.fromEntries(HEAD_COLUMNS.map((c) => [c, row[c]])) as CommandHead);
const itemOf = (row: Record<string, unknown>) => Object.fromEntries(PICKING_ITEM_COLUMNS.map((c) => [c, row[`item_${c}`]])) as ItemRow;

/**
 * One statement: the session the command addresses, and whether the key has a record. By
 * default it reads the addressed item whole and the facts of every item - a fifth of the fields
 * of the whole session, which the delta answer does not need; with `wholeItems` it reads every
 * item whole.
 */
export async function readItemCommand(
  db: Executor,
  orderId: string,
  pickerId: number,
  opts: { itemId: number; scope: IdempotencyScope; wholeItems: boolean },
): Promise<CommandRead> {
  const { itemId, scope } = opts;
  const { rows } = await (opts.wholeItems ? READ_WHOLE : READ_FACTS)(db, {
    orderId,
    pickerId,
    itemId,
    principal: scope.principal,
    operationId: scope.operationId,
    key: scope.key,
  });
  const first = rows[0]!;
  const head = headOf(first);
  const taken = first.taken as boolean;
  if (opts.wholeItems) {
    const items = head ? rows.filter((r) => r.item_id !== null).map(itemOf) : [];
    return { taken, head, item: items.find((i) => i.id === itemId) ?? null, items, wholeItems: items };
  }
  return {
    taken,
    head,
    item: head && first.item_id !== null ? itemOf(first) : null,
    items: head ? ((first.facts as ItemFactsRow[] | null) ?? []) : [],
    wholeItems: null,
  };
}

export interface ItemCommandWrite {
  orderId: string;
  session: { id: number; storeId: string; pickerId: number };
  /** The version read: the change applies only if the session is still at it (and open). */
  version: number;
  /** The time of the change (the session's and the item's `updated_at`): the answer was built with it. */
  at: Date;
  /** The item's new state; null when the command changed nothing (only the scan log and the answer are written). */
  change: {
    itemId: number;
    facts: ItemFacts;
    currentLineTotal: string;
    replacement: { set: ReplacementData } | 'clear' | 'keep';
    status: SessionStatus;
    currentTotal: string;
    /** The item's copy of its latest approval, when the command proposes or withdraws one. */
    approval: ItemApprovalColumns | null;
  } | null;
  /** A proposal for the customer's approval the command makes, or the pending one it withdraws. */
  approval: { request: ApprovalRequest; event: ApprovalRequestedData } | { withdraw: number } | null;
  scan: {
    itemId: number;
    command: 'scan' | 'replacement' | 'weight';
    barcode: string;
    outcome: string;
    productId: string | null;
    labelWeight: bigint | null;
  } | null;
  /** What changed for the customer (`order.changed`), if anything: their picking result, an approval. */
  orderChanges: OrderChange[];
  answer: {
    scope: IdempotencyScope;
    fingerprint: string;
    ttlSeconds: number;
    status: number;
    stored: StoredAnswer;
    /** The caller holds the key's record (it took over an expired or abandoned one): completed, not inserted. */
    held: boolean;
  };
}

/** The item columns of a change, as written and as the row then reads (recorded at `at`). */
export function changedItemColumns(change: NonNullable<ItemCommandWrite['change']>, at: Date) {
  const columns = itemChangeColumns(change.facts, change.currentLineTotal, change.replacement);
  return {
    ...columns,
    ...change.approval,
    updated_at: at,
    ...(change.replacement !== 'keep' && change.replacement !== 'clear' ? { replacement_chosen_at: at } : {}),
  };
}

/**
 * The command's effect in one statement. Returns false when the session moved on since it was
 * read (another change, its cancellation or expiry), or when another request of the key wrote
 * the key's record first: nothing was written, not even the answer.
 */
export async function writeItemCommand(db: Executor, w: ItemCommandWrite): Promise<boolean> {
  const { scope, status, stored, fingerprint, ttlSeconds } = w.answer;
  const ctes: RawBuilder<unknown>[] = [];
  // Every write below waits for `s`: nothing happens when the session is not as it was read.
  const applied = w.change !== null;
  const guard = applied ? sql<boolean>`EXISTS (SELECT 1 FROM s)` : sql<boolean>`true`;
  if (w.change) {
    const c = w.change;
    const columns = changedItemColumns(c, w.at);
    const eventId = randomUUID();
    ctes.push(sql`o AS (SELECT id FROM orders WHERE id = ${w.orderId} FOR NO KEY UPDATE)`);
    ctes.push(sql`s AS (
      UPDATE picking_sessions SET version = version + 1, status = ${c.status}, current_total = ${c.currentTotal}, updated_at = ${w.at}
      WHERE id = ${w.session.id} AND version = ${w.version} AND status IN ('active', 'ready_to_finish') AND EXISTS (SELECT 1 FROM o)
      RETURNING version, status)`);
    ctes.push(sql`item AS (
      UPDATE picking_items SET ${sql.join(Object.entries(columns).map(([k, v]) => sql`${sql.ref(k)} = ${v}`))}
      WHERE id = ${c.itemId} AND session_id = ${w.session.id} AND ${guard}
      RETURNING id)`);
    // picker.session.changed, built from the updated session: its new version and status.
    const session = w.session;
    const event = outboxInsertSql(
      {
        type: 'picker.session.changed',
        event_id: sql`${eventId}::uuid`,
        store_id: sql`${session.storeId}::uuid`,
        order_id: sql`${w.orderId}::uuid`,
        payload: pickerPayloadSql(
          'session.changed',
          { picker_id: sql`${session.pickerId}::int` },
          {
            event_id: sql`${eventId}::uuid`,
            occurred_at: sql`now()`,
            store_id: sql`${session.storeId}::uuid`,
            session_id: sql`${session.id}::int`,
            order_id: sql`${w.orderId}::uuid`,
            picker_id: sql`${session.pickerId}::int`,
            version: sql`s.version`,
            session_status: sql`s.status`,
          },
        ),
      },
      sql`FROM s`,
    );
    ctes.push(sql`event AS (${event})`);
    if (w.approval && 'request' in w.approval) ctes.push(sql`approval AS (${approvalInsertSql(w.approval.request, guard)})`);
    if (w.approval && 'withdraw' in w.approval) ctes.push(sql`approval AS (${approvalWithdrawSql(w.approval.withdraw, w.at, guard)})`);
    if (w.orderChanges.length) {
      // recordOrderChange's `order.changed` (db/queries/order-events.ts) without a push: the order's
      // version + 1 and the envelope with the new version and status; a proposal's
      // `order.approval.requested` (with its push) follows it at the same version.
      ctes.push(sql`oc AS (
        UPDATE orders SET order_version = order_version + 1, updated_at = now() WHERE id = ${w.orderId} AND ${guard}
        RETURNING order_version, customer_id, store_id, status, no)`);
      ctes.push(sql`order_event AS (${orderChangedInsertSql(w.orderId, w.orderChanges, w.at, 'oc')} RETURNING id)`);
      if (w.approval && 'request' in w.approval) {
        ctes.push(sql`approval_event AS (${approvalRequestedInsertSql(w.orderId, w.approval.event, w.at, 'oc', 'order_event')})`);
      }
    }
  }
  if (w.scan) {
    const l = w.scan;
    ctes.push(sql`scan AS (
      INSERT INTO picking_scans (session_id, item_id, picker_id, command, barcode, outcome, scanned_product_id, label_weight)
      SELECT ${w.session.id}, ${l.itemId}, ${w.session.pickerId}, ${l.command}, ${l.barcode}, ${l.outcome}, ${l.productId}::uuid,
             ${l.labelWeight === null ? null : quantityText(l.labelWeight)}::numeric
      WHERE ${guard})`);
  }
  ctes.push(
    sql`answer AS (${
      w.answer.held
        ? completeIdempotencyKeySql(scope, status, stored, { when: guard, returning: true })
        : // No ON CONFLICT: a record written meanwhile by another request of the key fails the
          // whole statement (23505), so none of the effects above are kept.
          insertCompletedIdempotencyKeySql(scope, fingerprint, ttlSeconds, status, stored, { when: guard, onConflict: 'fail' })
    })`,
  );
  try {
    const { rows } = await sql<{ applied: boolean }>`
      WITH ${sql.join(ctes, sql`, `)}
      SELECT EXISTS (SELECT 1 FROM answer) AS applied`.execute(db);
    return rows[0]!.applied;
  } catch (err) {
    if (isUniqueViolationOf(err, 'idempotency_keys_pk')) return false;
    throw err;
  }
}
