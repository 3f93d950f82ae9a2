// The picker's own-session event (`session.changed`), written to the outbox in the caller's
// transaction like every event.
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
