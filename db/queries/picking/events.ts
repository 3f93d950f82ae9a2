// The picker's own-session events (`session.changed`, `item.approval.decided`), written to the
// outbox in the caller's transaction like every event.
import { randomUUID } from 'node:crypto';
import type { Executor } from '../../executor.js';
import type { SessionStatus } from '../../tables/picking.js';
import { writeOutboxEvent, type PickerEvent } from '../outbox.js';

/** The picker's own-session event (`session.changed`), through the outbox like every event. */
export async function recordSessionChanged(
  db: Executor,
  s: { sessionId: number; orderId: string; storeId: string; pickerId: number; version: number; status: SessionStatus; now: Date },
): Promise<void> {
  const eventId = randomUUID();
  const event: PickerEvent<'session.changed'> = {
    event_id: eventId,
    kind: 'session.changed',
    occurred_at: s.now.toISOString(),
    store_id: s.storeId,
    session_id: s.sessionId,
    order_id: s.orderId,
    picker_id: s.pickerId,
    version: s.version,
    session_status: s.status,
  };
  await writeOutboxEvent(
    db,
    'picker.session.changed',
    { audience: { picker_id: s.pickerId }, event },
    { store_id: s.storeId, order_id: s.orderId },
  );
}

/** The customer's answer to the picker's proposal (or the window passing), for the picker's devices. */
export async function recordApprovalDecided(
  db: Executor,
  d: {
    sessionId: number;
    orderId: string;
    storeId: string;
    pickerId: number;
    itemId: number;
    approvalId: number;
    status: 'approved' | 'rejected';
    decidedBy: 'customer' | 'timeout';
    version: number;
    sessionStatus: SessionStatus;
    now: Date;
  },
): Promise<void> {
  const event: PickerEvent<'item.approval.decided'> = {
    event_id: randomUUID(),
    kind: 'item.approval.decided',
    occurred_at: d.now.toISOString(),
    store_id: d.storeId,
    session_id: d.sessionId,
    order_id: d.orderId,
    picker_id: d.pickerId,
    item_id: d.itemId,
    approval_id: d.approvalId,
    status: d.status,
    decided_by: d.decidedBy,
    version: d.version,
    session_status: d.sessionStatus,
  };
  await writeOutboxEvent(
    db,
    'picker.item.approval.decided',
    { audience: { picker_id: d.pickerId }, event },
    { store_id: d.storeId, order_id: d.orderId },
  );
}
