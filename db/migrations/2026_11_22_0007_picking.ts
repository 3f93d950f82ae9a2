// Frozen migration: never edit after it has landed; add a new one instead.
// Picking: sessions of pickers on orders, their items (the item state machine's
// persisted state), the scan log, and the trigger that keeps the picker queue and the sessions in
// step with the order's status, whoever changes it (checkout, payment, customer cancel, picking).
import { sql, type Kysely } from 'kysely';

const list = (values: string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));
const SESSION_STATUSES = ['active', 'ready_to_finish', 'completed', 'cancelled'];
const CLOSURE_SOURCES = ['none', 'picker_finish', 'picker_cancel', 'order_cancelled', 'expired'];
const ITEM_STATES = ['pending', 'awaiting_quantity', 'picked', 'missing', 'clarified'];
const CLARIFICATION_KINDS = ['removed', 'quantity_mismatch', 'weight_mismatch', 'store_transfer_shortage'];
const PICK_SOURCES = ['scan', 'scale_label', 'manual', 'weight'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('picking_sessions')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('picker_id', 'integer', (c) => c.notNull().references('pickers.id'))
    // The store whose goods, stock and prices the session uses (fixed at start).
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN (${list(SESSION_STATUSES)})`))
    .addColumn('closure_source', 'text', (c) =>
      c
        .notNull()
        .defaultTo('none')
        .check(sql`closure_source IN (${list(CLOSURE_SOURCES)})`),
    )
    .addColumn('version', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(1)
        .check(sql`version >= 1`),
    )
    .addColumn('max_added_items', 'integer', (c) => c.notNull().check(sql`max_added_items >= 0`))
    .addColumn('added_items_count', 'integer', (c) => c.notNull().defaultTo(0))
    // Goods totals: as ordered, and as picked so far (maintained by every applied command, so a
    // closure made by the database itself - the order's cancellation - can copy it).
    .addColumn('original_total', sql`numeric(12,2)`, (c) => c.notNull())
    .addColumn('current_total', sql`numeric(12,2)`, (c) => c.notNull())
    // current_total when the session closed (history, payment reconciliation).
    .addColumn('final_total', sql`numeric(12,2)`)
    .addColumn('reconciliation_status', 'text', (c) =>
      c.check(sql`reconciliation_status IN ('not_required', 'pending', 'completed', 'failed')`),
    )
    .addColumn('cancellation_reason', 'text')
    .addColumn('cancel_after_resolved_items', 'integer')
    // Set by POST cancelled/ack; until then an order-cancelled session stays the picker's current one.
    .addColumn('cancellation_acknowledged_at', 'timestamptz')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('closed_at', 'timestamptz')
    .addCheckConstraint('picking_sessions_open_has_no_closure', sql`(status IN ('active', 'ready_to_finish')) = (closure_source = 'none')`)
    .addCheckConstraint('picking_sessions_closed_at', sql`(closed_at IS NULL) = (closure_source = 'none')`)
    .addCheckConstraint('picking_sessions_added_limit', sql`added_items_count BETWEEN 0 AND max_added_items`)
    .execute();
  // Exactly one open session per order: two pickers starting one order cannot both succeed.
  await sql`CREATE UNIQUE INDEX picking_sessions_one_open_per_order ON picking_sessions (order_id)
    WHERE status IN ('active', 'ready_to_finish')`.execute(db);
  // At most one current session per picker: an open one, or one closed by the order's
  // cancellation that the picker has not acknowledged yet.
  await sql`CREATE UNIQUE INDEX picking_sessions_one_current_per_picker ON picking_sessions (picker_id)
    WHERE status IN ('active', 'ready_to_finish') OR (closure_source = 'order_cancelled' AND cancellation_acknowledged_at IS NULL)`.execute(
    db,
  );
  await sql`CREATE INDEX picking_sessions_order ON picking_sessions (order_id, id DESC)`.execute(db);
  await sql`CREATE INDEX picking_sessions_history ON picking_sessions (picker_id, closed_at DESC, id DESC) WHERE closed_at IS NOT NULL`.execute(
    db,
  );
  await sql`CREATE INDEX picking_sessions_idle ON picking_sessions (updated_at) WHERE status IN ('active', 'ready_to_finish')`.execute(db);

  await db.schema
    .createTable('picking_items')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('session_id', 'integer', (c) => c.notNull().references('picking_sessions.id').onDelete('cascade'))
    // Walking order in the store, fixed at start; added items follow.
    .addColumn('position', 'integer', (c) => c.notNull())
    // The order line picked; NULL for an item the picker added.
    .addColumn('order_item_id', 'bigint', (c) => c.references('order_items.id'))
    .addColumn('product_id', 'uuid', (c) => c.notNull())
    .addColumn('inventory_id', 'uuid', (c) => c.notNull())
    .addColumn('unit_id', 'uuid', (c) => c.notNull())
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('image_url', 'text')
    .addColumn('barcode', 'text')
    .addColumn('plu_code', 'text')
    .addColumn('unit_ru', 'text', (c) => c.notNull())
    .addColumn('unit_en', 'text', (c) => c.notNull())
    .addColumn('is_weight_based', 'boolean', (c) => c.notNull())
    // Weight items are picked and priced in kg whatever unit the line was ordered in (a line of
    // 5 x 100 g is 0.500 kg at the price per kg); piece items keep the line's unit.
    .addColumn('ordered_quantity', sql`numeric(12,3)`, (c) => c.notNull().check(sql`ordered_quantity > 0`))
    .addColumn('unit_price', sql`numeric(12,2)`, (c) => c.notNull().check(sql`unit_price >= 0`))
    // Allowed weight deviation of a weight item in percent, fixed at start (NULL for pieces).
    .addColumn('tolerance_percent', sql`numeric(4,1)`)
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state IN (${list(ITEM_STATES)})`))
    .addColumn('clarification_kind', 'text', (c) => c.check(sql`clarification_kind IN (${list(CLARIFICATION_KINDS)})`))
    .addColumn('missing_action', 'text', (c) => c.check(sql`missing_action IN ('call', 'remove')`))
    // Written from the state machine's definition (domain/picking/items.ts) with every
    // change, so SQL (the cancellation trigger, history) never re-derives it.
    .addColumn('is_resolved', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('actual_quantity', sql`numeric(12,3)`, (c) => c.check(sql`actual_quantity > 0`))
    .addColumn('confirmed_quantity', sql`numeric(12,3)`, (c) => c.check(sql`confirmed_quantity > 0`))
    .addColumn('pick_source', 'text', (c) => c.check(sql`pick_source IN (${list(PICK_SOURCES)})`))
    .addColumn('last_scanned_barcode', 'text')
    // PLU read from the scale label that weighed the item (history's `plu_code`).
    .addColumn('label_plu', 'text')
    .addColumn('is_added', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('replacement_product_id', 'uuid')
    .addColumn('replacement_inventory_id', 'uuid')
    .addColumn('replacement_unit_id', 'uuid')
    .addColumn('replacement_name_ru', 'text')
    .addColumn('replacement_name_en', 'text')
    .addColumn('replacement_barcode', 'text')
    .addColumn('replacement_plu_code', 'text')
    .addColumn('replacement_image_url', 'text')
    .addColumn('replacement_unit_ru', 'text')
    .addColumn('replacement_unit_en', 'text')
    .addColumn('replacement_unit_price', sql`numeric(12,2)`)
    .addColumn('replacement_chosen_at', 'timestamptz')
    .addColumn('current_line_total', sql`numeric(12,2)`, (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('picking_items_kind', sql`(state = 'clarified') = (clarification_kind IS NOT NULL)`)
    .addCheckConstraint('picking_items_added', sql`is_added = (order_item_id IS NULL)`)
    .addCheckConstraint(
      'picking_items_replacement',
      sql`num_nulls(replacement_product_id, replacement_inventory_id, replacement_unit_id, replacement_name_ru, replacement_name_en, replacement_unit_price, replacement_chosen_at) IN (0, 7)`,
    )
    .addUniqueConstraint('picking_items_position', ['session_id', 'position'])
    .execute();

  // Every barcode read by a scan, replacement or weight command, whatever its outcome (audit).
  await db.schema
    .createTable('picking_scans')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('session_id', 'integer', (c) => c.notNull().references('picking_sessions.id').onDelete('cascade'))
    .addColumn('item_id', 'bigint', (c) => c.notNull().references('picking_items.id').onDelete('cascade'))
    .addColumn('picker_id', 'integer', (c) => c.notNull())
    .addColumn('command', 'text', (c) => c.notNull().check(sql`command IN ('scan', 'replacement', 'weight')`))
    .addColumn('barcode', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('scanned_product_id', 'uuid')
    .addColumn('label_weight', sql`numeric(12,3)`)
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX picking_scans_session ON picking_scans (session_id, id)`.execute(db);

  // The order's status decides the picker queue, and a cancelled order ends its picking. Doing
  // both here means every writer of orders.status (checkout, payment, the customer's cancel, an
  // operator, picking itself) keeps the queue and the sessions right, in its own transaction.
  //   - the queue learns about a card arriving, starting, going back, finishing or cancelled
  //     (`queue.changed` to the pickers of the store);
  //   - cancelling an order closes its open session (`order_cancelled`, version + 1, the totals
  //     and resolved count of that moment) and tells its picker (`order.cancelled`,
  //     `session.changed`); the picker's next command answers 409 `order_cancelled`.
  // Picker events go through the outbox like every event; their type starts with `picker.` and
  // the payload names the audience (a store's pickers or one picker) and the event itself.
  await sql`
    CREATE FUNCTION picking_order_status_changed() RETURNS trigger LANGUAGE plpgsql AS $$
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
        WHEN old_status IN ('confirmed', 'picking') AND NEW.status = 'cancelled' THEN 'order_cancelled'
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
      IF NEW.status = 'cancelled' THEN
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
    END $$`.execute(db);
  await sql`CREATE TRIGGER orders_picking_status AFTER INSERT OR UPDATE OF status ON orders
    FOR EACH ROW EXECUTE FUNCTION picking_order_status_changed()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS orders_picking_status ON orders`.execute(db);
  await sql`DROP FUNCTION IF EXISTS picking_order_status_changed()`.execute(db);
  for (const t of ['picking_scans', 'picking_items', 'picking_sessions']) await db.schema.dropTable(t).execute();
}
