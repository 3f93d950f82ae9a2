// Frozen migration: never edit after it has landed; add a new one instead.
// Batch picking: where each product stands in a store (aisle, section, shelf and a sortable key of
// the store's route) and the temperature it is kept at; batches that group several orders' picking
// sessions for one walk of one picker; and totes, one per order and temperature class, that the
// picked goods go into and that are handed off with the order.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('inventories')
    .addColumn('location_aisle', 'text')
    .addColumn('location_section', 'text')
    .addColumn('location_shelf', 'text')
    // Sorts in the order a picker walks the store; NULL (not located yet) walks last.
    .addColumn('location_sequence', 'text')
    .addColumn('temperature_class', 'text', (c) =>
      c
        .notNull()
        .defaultTo('ambient')
        .check(sql`temperature_class IN ('ambient', 'chilled', 'frozen')`),
    )
    .execute();

  await db.schema
    .createTable('picking_batches')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('picker_id', 'integer', (c) => c.notNull().references('pickers.id'))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX picking_batches_picker ON picking_batches (picker_id, id DESC)`.execute(db);

  // A session taken as part of a batch. Its items, version, events and closure are those of any
  // session; the batch only groups them.
  await db.schema
    .alterTable('picking_sessions')
    .addColumn('batch_id', 'integer', (c) => c.references('picking_batches.id'))
    .execute();
  await sql`CREATE INDEX picking_sessions_batch ON picking_sessions (batch_id) WHERE batch_id IS NOT NULL`.execute(db);
  // A picker holds either one current session of their own or the sessions of one batch; the
  // sessions of a batch are current together, so the one-current rule applies outside batches.
  await sql`DROP INDEX picking_sessions_one_current_per_picker`.execute(db);
  await sql`CREATE UNIQUE INDEX picking_sessions_one_current_per_picker ON picking_sessions (picker_id)
    WHERE batch_id IS NULL AND (status IN ('active', 'ready_to_finish') OR (closure_source = 'order_cancelled' AND cancellation_acknowledged_at IS NULL))`.execute(
    db,
  );

  await db.schema
    .createTable('picking_totes')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('session_id', 'integer', (c) => c.notNull().references('picking_sessions.id').onDelete('cascade'))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id'))
    .addColumn('temperature_class', 'text', (c) => c.notNull().check(sql`temperature_class IN ('ambient', 'chilled', 'frozen')`))
    // The label scanned from the physical tote; NULL until the picker binds one.
    .addColumn('label', 'text')
    .addColumn('bound_at', 'timestamptz')
    // Set when the session closes: the label may then be bound again for another order.
    .addColumn('released_at', 'timestamptz')
    .addCheckConstraint('picking_totes_bound', sql`(label IS NULL) = (bound_at IS NULL)`)
    .addUniqueConstraint('picking_totes_one_per_class', ['session_id', 'temperature_class'])
    .execute();
  // One physical tote holds one order's goods at a time in a store.
  await sql`CREATE UNIQUE INDEX picking_totes_label_in_use ON picking_totes (store_id, label)
    WHERE label IS NOT NULL AND released_at IS NULL`.execute(db);

  // Where a picked item went. Not indexed, so a command's update of the item stays a HOT update.
  await db.schema
    .alterTable('picking_items')
    .addColumn('tote_id', 'bigint', (c) => c.references('picking_totes.id'))
    // The store location and temperature class of the item's product, copied at start like its name.
    .addColumn('location_aisle', 'text')
    .addColumn('location_section', 'text')
    .addColumn('location_shelf', 'text')
    .addColumn('location_sequence', 'text')
    .addColumn('temperature_class', 'text', (c) =>
      c
        .notNull()
        .defaultTo('ambient')
        .check(sql`temperature_class IN ('ambient', 'chilled', 'frozen')`),
    )
    .execute();

  // The totes a picked order is handed over in (customer's order, courier); NULL when not picked into totes.
  await db.schema
    .alterTable('orders')
    .addColumn('tote_count', 'integer', (c) => c.check(sql`tote_count >= 1`))
    .execute();

  // Whatever closes a session (finish, the picker's cancel, expiry, the order's cancellation),
  // its totes' labels are free again.
  await sql`
    CREATE FUNCTION picking_totes_release() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE picking_totes SET released_at = now() WHERE session_id = NEW.id AND released_at IS NULL;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER picking_totes_release AFTER UPDATE OF status ON picking_sessions
    FOR EACH ROW WHEN (OLD.status IN ('active', 'ready_to_finish') AND NEW.status NOT IN ('active', 'ready_to_finish'))
    EXECUTE FUNCTION picking_totes_release()`.execute(db);
}
