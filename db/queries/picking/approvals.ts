// The customer's approvals of pickers' proposals (item_approvals) and the item's copy of its latest
// one (picking_items.approval_*): the only writer of both. An item command writes a proposal or
// its withdrawal inside its own statement (the *Sql parts); a decision - the customer's, the
// window passing, or the session finishing - is written on the locked session.
import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../executor.js';
import type { ApprovalDecider, ApprovalKind, ApprovalStatus } from '../../tables/approvals.js';
import type { SessionStatus } from '../../tables/picking.js';
import { orderChangedInsertSql } from '../order-events.js';
import { outboxInsertSql, pickerPayloadSql, type OrderChange } from '../outbox.js';

/** A proposal as written: who it is for and what the customer is shown. */
export interface ApprovalRequest {
  id: number;
  orderId: string;
  orderItemId: number;
  sessionId: number;
  pickingItemId: number;
  kind: ApprovalKind;
  proposed: {
    productId: string | null;
    nameRu: string;
    nameEn: string;
    image: string | null;
    unitPrice: string;
    quantity: string;
    lineTotal: string;
  };
  requestedAt: Date;
  expiresAt: Date;
}

/**
 * An id for a new proposal and the store's window for answering it, in one round trip taken
 * only by commands that propose: the item command's answer names the approval before its one
 * write statement inserts it.
 */
export async function reserveApproval(db: Executor, storeId: string): Promise<{ id: number; windowSeconds: number }> {
  const { rows } = await sql<{ id: string; window_seconds: number }>`
    SELECT nextval(pg_get_serial_sequence('item_approvals', 'id')) AS id, approval_window_seconds AS window_seconds
    FROM stores WHERE id = ${storeId}`.execute(db);
  const row = rows[0];
  if (!row) throw new Error(`reserveApproval: no store ${storeId}`);
  return { id: Number(row.id), windowSeconds: row.window_seconds };
}

/** The INSERT of a proposal inside an item command's statement, written only when `guard` holds. */
export function approvalInsertSql(r: ApprovalRequest, guard: RawBuilder<boolean>): RawBuilder<unknown> {
  const p = r.proposed;
  return sql`INSERT INTO item_approvals (id, order_id, order_item_id, session_id, picking_item_id, kind,
      proposed_product_id, proposed_name_ru, proposed_name_en, proposed_image, proposed_unit_price, proposed_quantity,
      proposed_line_total, requested_at, expires_at)
    OVERRIDING SYSTEM VALUE
    SELECT ${r.id}::bigint, ${r.orderId}::uuid, ${r.orderItemId}::bigint, ${r.sessionId}::int, ${r.pickingItemId}::bigint, ${r.kind},
      ${p.productId}::uuid, ${p.nameRu}, ${p.nameEn}, ${p.image}, ${p.unitPrice}::numeric, ${p.quantity}::numeric,
      ${p.lineTotal}::numeric, ${r.requestedAt}::timestamptz, ${r.expiresAt}::timestamptz
    WHERE ${guard}
    RETURNING id`;
}

/** The withdrawal of a pending proposal by the picker inside an item command's statement. */
export function approvalWithdrawSql(approvalId: number, at: Date, guard: RawBuilder<boolean>): RawBuilder<unknown> {
  return sql`UPDATE item_approvals SET status = 'withdrawn', decided_by = 'picker', decided_at = ${at}::timestamptz
    WHERE id = ${approvalId}::bigint AND status = 'pending' AND ${guard}
    RETURNING id`;
}

/** The item's copy of its latest approval: the columns a proposal, a withdrawal or a decision writes. */
export type ItemApprovalColumns =
  | {
      approval_id: number;
      approval_kind: ApprovalKind;
      approval_status: 'pending';
      approval_decided_by: null;
      approval_requested_at: Date;
      approval_expires_at: Date;
      approval_decided_at: null;
    }
  | { approval_status: Exclude<ApprovalStatus, 'pending'>; approval_decided_by: ApprovalDecider; approval_decided_at: Date };

export const requestedColumns = (r: ApprovalRequest): ItemApprovalColumns => ({
  approval_id: r.id,
  approval_kind: r.kind,
  approval_status: 'pending',
  approval_decided_by: null,
  approval_requested_at: r.requestedAt,
  approval_expires_at: r.expiresAt,
  approval_decided_at: null,
});

export const settledColumns = (status: Exclude<ApprovalStatus, 'pending'>, decidedBy: ApprovalDecider, at: Date): ItemApprovalColumns => ({
  approval_status: status,
  approval_decided_by: decidedBy,
  approval_decided_at: at,
});

/** An approval of the order with its session, both locked: what a decision reads before it writes. */
export function lockApproval(db: Executor, orderId: string, approvalId: number) {
  return db
    .selectFrom('item_approvals as a')
    .innerJoin('picking_sessions as s', 's.id', 'a.session_id')
    .selectAll('a')
    .select(['s.status as session_status', 's.store_id', 's.picker_id'])
    .where('a.id', '=', approvalId)
    .where('a.order_id', '=', orderId)
    .forUpdate(['a', 's'])
    .executeTakeFirst();
}

export type LockedApproval = NonNullable<Awaited<ReturnType<typeof lockApproval>>>;

/** Records a decision on a pending approval. */
export async function settleApprovalRow(
  db: Executor,
  approvalId: number,
  status: Exclude<ApprovalStatus, 'pending'>,
  decidedBy: ApprovalDecider,
  at: Date,
): Promise<void> {
  await db
    .updateTable('item_approvals')
    .set({ status, decided_by: decidedBy, decided_at: at })
    .where('id', '=', approvalId)
    .where('status', '=', 'pending')
    .execute();
}

/** Pending approvals of a session (to settle when it finishes), oldest first. */
export function pendingApprovalsOfSession(db: Executor, sessionId: number) {
  return db
    .selectFrom('item_approvals')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('status', '=', 'pending')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Proposals whose window has passed, with their order (the job settles each on its own). */
export function dueApprovals(db: Executor, now: Date, limit: number) {
  return db
    .selectFrom('item_approvals')
    .select(['id', 'order_id'])
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
    .orderBy('expires_at')
    .limit(limit)
    .execute();
}

/** A decision on a pending approval as one statement writes it (writeDecision). */
export interface DecisionWrite {
  approvalId: number;
  status: 'approved' | 'rejected';
  decidedBy: 'customer' | 'timeout';
  at: Date;
  /** The item's columns after the decision: its facts and its copy of the approval. */
  item: { id: number; columns: Record<string, unknown> };
  session: { id: number; orderId: string; storeId: string; pickerId: number; status: SessionStatus; currentTotal: string };
  /** What the customer's `order.changed` says changed. */
  orderChanges: OrderChange[];
}

/**
 * A decision in one statement, on the order's and the session's locks the caller holds: the
 * approval, the item, the session's version + 1 with its `session.changed` and
 * `item.approval.decided` for the picker, and the order's version + 1 with its `order.changed`.
 * Returns the session's new version and status.
 */
export async function writeDecision(db: Executor, d: DecisionWrite): Promise<{ version: number; status: SessionStatus }> {
  const s = d.session;
  const picker = { picker_id: sql`${s.pickerId}::int` };
  const common = {
    occurred_at: sql`${d.at}::timestamptz`,
    store_id: sql`${s.storeId}::uuid`,
    session_id: sql`${s.id}::int`,
    order_id: sql`${s.orderId}::uuid`,
    picker_id: sql`${s.pickerId}::int`,
    version: sql`s.version`,
  };
  const changedId = randomUUID();
  const decidedId = randomUUID();
  const routing = { store_id: sql`${s.storeId}::uuid`, order_id: sql`${s.orderId}::uuid` };
  const changed = outboxInsertSql(
    {
      type: 'picker.session.changed',
      event_id: sql`${changedId}::uuid`,
      ...routing,
      payload: pickerPayloadSql('session.changed', picker, { event_id: sql`${changedId}::uuid`, ...common, session_status: sql`s.status` }),
    },
    sql`FROM s`,
  );
  const decided = outboxInsertSql(
    {
      type: 'picker.item.approval.decided',
      event_id: sql`${decidedId}::uuid`,
      ...routing,
      payload: pickerPayloadSql('item.approval.decided', picker, {
        event_id: sql`${decidedId}::uuid`,
        ...common,
        item_id: sql`${d.item.id}::bigint`,
        approval_id: sql`${d.approvalId}::bigint`,
        status: sql`${d.status}::text`,
        decided_by: sql`${d.decidedBy}::text`,
        session_status: sql`s.status`,
      }),
    },
    sql`FROM s`,
  );
  const { rows } = await sql<{ version: number; status: SessionStatus }>`
    WITH a AS (
      UPDATE item_approvals SET status = ${d.status}, decided_by = ${d.decidedBy}, decided_at = ${d.at}::timestamptz
      WHERE id = ${d.approvalId}::bigint AND status = 'pending' RETURNING id
    ), i AS (
      UPDATE picking_items SET ${sql.join(Object.entries(d.item.columns).map(([k, v]) => sql`${sql.ref(k)} = ${v}`))}
      WHERE id = ${d.item.id}::bigint RETURNING id
    ), s AS (
      UPDATE picking_sessions SET version = version + 1, status = ${s.status}, current_total = ${s.currentTotal}::numeric, updated_at = ${d.at}::timestamptz
      WHERE id = ${s.id}::int RETURNING version, status
    ), changed AS (${changed}), decided AS (${decided}), oc AS (
      UPDATE orders SET order_version = order_version + 1, updated_at = now() WHERE id = ${s.orderId}::uuid
      RETURNING order_version, customer_id, store_id, status
    ), order_event AS (${orderChangedInsertSql(s.orderId, d.orderChanges, d.at, 'oc')})
    SELECT s.version, s.status FROM s`.execute(db);
  return rows[0]!;
}
