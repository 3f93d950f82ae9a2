// Frozen migration: never edit after it has landed; add a new one instead.
// The database's own events go through one SQL function, outbox_emit, as the service's go through
// db/queries/outbox.ts: the order-status trigger (picking_order_status_changed) no longer spells
// out the outbox's INSERT three times. The trigger is otherwise that of migration 0015 unchanged:
// the same events, in the same order, with the same payloads.
import { sql, type Kysely } from 'kysely';
import { up as cancelRequestEndsPicking } from './2026_11_23_0015_cancel_request_ends_picking.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The envelope columns of db/queries/outbox.ts (OUTBOX_ENVELOPE_COLUMNS), in their order.
  await sql`
    CREATE FUNCTION outbox_emit(event_id uuid, type text, customer_id uuid, store_id uuid, order_id uuid, payload jsonb)
    RETURNS void LANGUAGE sql AS $$
      INSERT INTO outbox_events (event_id, type, customer_id, store_id, order_id, payload) VALUES ($1, $2, $3, $4, $5, $6)
    $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION picking_order_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      old_status text := CASE WHEN TG_OP = 'INSERT' THEN NULL ELSE OLD.status END;
      reason text;
      closed record;
      eid uuid;
    BEGIN
      IF old_status IS NOT DISTINCT FROM NEW.status THEN
        RETURN NULL;
      END IF;
      reason := CASE
        WHEN NEW.status = 'confirmed' AND old_status = 'picking' THEN 'order_released'
        WHEN NEW.status = 'confirmed' THEN 'order_added'
        WHEN NEW.status = 'picking' THEN 'order_started'
        WHEN old_status IN ('confirmed', 'picking') AND NEW.status IN ('cancelled', 'cancellation_requested') THEN 'order_cancelled'
        WHEN old_status = 'picking' THEN 'order_completed'
        WHEN old_status = 'confirmed' THEN 'order_updated'
        ELSE NULL END;
      IF reason IS NOT NULL THEN
        eid := gen_random_uuid();
        PERFORM outbox_emit(eid, 'picker.queue.changed', NULL, NEW.store_id, NEW.id, jsonb_build_object(
          'audience', jsonb_build_object('store_id', NEW.store_id),
          'event', jsonb_build_object('event_id', eid, 'kind', 'queue.changed', 'occurred_at', now(),
            'store_id', NEW.store_id, 'order_id', NEW.id, 'reason', reason)));
      END IF;
      IF NEW.status IN ('cancelled', 'cancellation_requested') THEN
        FOR closed IN
          UPDATE picking_sessions s
          SET status = 'cancelled', closure_source = 'order_cancelled', version = s.version + 1,
              cancellation_reason = NEW.cancellation_reason, final_total = s.current_total,
              cancel_after_resolved_items = (SELECT count(*) FROM picking_items i WHERE i.session_id = s.id AND i.is_resolved),
              closed_at = now(), updated_at = now()
          WHERE s.order_id = NEW.id AND s.status IN ('active', 'ready_to_finish')
          RETURNING s.id, s.picker_id, s.store_id, s.version
        LOOP
          eid := gen_random_uuid();
          PERFORM outbox_emit(eid, 'picker.order.cancelled', NULL, closed.store_id, NEW.id, jsonb_build_object(
            'audience', jsonb_build_object('picker_id', closed.picker_id),
            'event', jsonb_build_object('event_id', eid, 'kind', 'order.cancelled', 'occurred_at', now(),
              'store_id', closed.store_id, 'order_id', NEW.id, 'session_id', closed.id, 'version', closed.version,
              'cancellation_reason', NEW.cancellation_reason)));
          eid := gen_random_uuid();
          PERFORM outbox_emit(eid, 'picker.session.changed', NULL, closed.store_id, NEW.id, jsonb_build_object(
            'audience', jsonb_build_object('picker_id', closed.picker_id),
            'event', jsonb_build_object('event_id', eid, 'kind', 'session.changed', 'occurred_at', now(),
              'store_id', closed.store_id, 'session_id', closed.id, 'order_id', NEW.id, 'picker_id', closed.picker_id,
              'version', closed.version, 'session_status', 'cancelled')));
        END LOOP;
      END IF;
      RETURN NULL;
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // The trigger as migration 0015 left it (its own INSERTs), then the function it no longer calls.
  await cancelRequestEndsPicking(db);
  await sql`DROP FUNCTION IF EXISTS outbox_emit(uuid, text, uuid, uuid, uuid, jsonb)`.execute(db);
}
