// Frozen migration: never edit after it has landed; add a new one instead.
// A customer's cancel that has to wait for an assigned courier (`cancellation_requested`) ends
// the order's picking at once, as the spec's order table says ("On entering
// `cancellation_requested`: an open picking session is closed with `order_cancelled`, the store
// no longer hands the order to a courier"). Until now only `cancelled` closed the session: the
// picker could go on and finish, moving the order to `picked` and losing the customer's cancel.
// The queue hears `order_cancelled` for it too (it said `order_completed`).
import { sql, type Kysely } from 'kysely';

/**
 * The trigger function of migration 0007, with the statuses that end an open picking session
 * (and tell the queue `order_cancelled`) as the one thing that differs between up and down.
 */
const statusTrigger = (endingStatuses: string[]) => {
  const ending = sql.raw(endingStatuses.map((s) => `'${s}'`).join(', '));
  return sql`
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
        WHEN old_status IN ('confirmed', 'picking') AND NEW.status IN (${ending}) THEN 'order_cancelled'
        WHEN old_status = 'picking' THEN 'order_completed'
        WHEN old_status = 'confirmed' THEN 'order_updated'
        ELSE NULL END;
      IF reason IS NOT NULL THEN
        eid := gen_random_uuid();
        INSERT INTO outbox_events (event_id, type, store_id, order_id, payload)
        VALUES (eid, 'picker.queue.changed', NEW.store_id, NEW.id, jsonb_build_object(
          'audience', jsonb_build_object('store_id', NEW.store_id),
          'event', jsonb_build_object('event_id', eid, 'kind', 'queue.changed', 'occurred_at', now(),
            'store_id', NEW.store_id, 'order_id', NEW.id, 'reason', reason)));
      END IF;
      IF NEW.status IN (${ending}) THEN
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
          INSERT INTO outbox_events (event_id, type, store_id, order_id, payload)
          VALUES (eid, 'picker.order.cancelled', closed.store_id, NEW.id, jsonb_build_object(
            'audience', jsonb_build_object('picker_id', closed.picker_id),
            'event', jsonb_build_object('event_id', eid, 'kind', 'order.cancelled', 'occurred_at', now(),
              'store_id', closed.store_id, 'order_id', NEW.id, 'session_id', closed.id, 'version', closed.version,
              'cancellation_reason', NEW.cancellation_reason)));
          eid := gen_random_uuid();
          INSERT INTO outbox_events (event_id, type, store_id, order_id, payload)
          VALUES (eid, 'picker.session.changed', closed.store_id, NEW.id, jsonb_build_object(
            'audience', jsonb_build_object('picker_id', closed.picker_id),
            'event', jsonb_build_object('event_id', eid, 'kind', 'session.changed', 'occurred_at', now(),
              'store_id', closed.store_id, 'session_id', closed.id, 'order_id', NEW.id, 'picker_id', closed.picker_id,
              'version', closed.version, 'session_status', 'cancelled')));
        END LOOP;
      END IF;
      RETURN NULL;
    END $$`;
};

export async function up(db: Kysely<unknown>): Promise<void> {
  await statusTrigger(['cancelled', 'cancellation_requested']).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await statusTrigger(['cancelled']).execute(db);
}
