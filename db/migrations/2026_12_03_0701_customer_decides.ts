// Frozen migration: never edit after it has landed; add a new one instead.
// The customer decides, live: a replacement preference per order line, the customer's approvals of
// what pickers propose on those lines, and the window a store gives the customer to answer.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('order_items')
    // NULL: the order's absence_action applies to the line.
    .addColumn('replacement_policy', 'text', (c) =>
      c.check(sql`replacement_policy IN ('no_replacement', 'picker_choice', 'named_products')`),
    )
    // Most preferred first; empty unless the policy is named_products.
    .addColumn('replacement_product_ids', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'`))
    .addColumn('replacement_approval', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`ALTER TABLE order_items ADD CONSTRAINT order_items_replacement_named
    CHECK ((replacement_policy IS NOT DISTINCT FROM 'named_products') = (cardinality(replacement_product_ids) BETWEEN 1 AND 3))`.execute(
    db,
  );

  // The picker's copy of the line's preference (fixed when picking starts, as the line's other
  // data is) and of the item's latest approval, written with item_approvals in one statement, so
  // that every read of items has them without a join.
  await db.schema
    .alterTable('picking_items')
    // {policy, products: [{product_id, name_ru, name_en}], approval_required}; NULL: the order's absence_action.
    .addColumn('replacement_preference', 'jsonb')
    .addColumn('approval_id', 'bigint')
    .addColumn('approval_kind', 'text', (c) => c.check(sql`approval_kind IN ('replacement', 'quantity', 'weight')`))
    .addColumn('approval_status', 'text', (c) => c.check(sql`approval_status IN ('pending', 'approved', 'rejected', 'withdrawn')`))
    .addColumn('approval_decided_by', 'text', (c) =>
      c.check(sql`approval_decided_by IN ('customer', 'timeout', 'picking_finished', 'picker', 'picking_cancelled')`),
    )
    .addColumn('approval_requested_at', 'timestamptz')
    .addColumn('approval_expires_at', 'timestamptz')
    .addColumn('approval_decided_at', 'timestamptz')
    .execute();

  await db.schema
    .alterTable('stores')
    // How long the customer has to answer a proposal before it stands.
    .addColumn('approval_window_seconds', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(300)
        .check(sql`approval_window_seconds BETWEEN 30 AND 3600`),
    )
    .execute();

  await db.schema
    .createTable('item_approvals')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('order_item_id', 'bigint', (c) => c.notNull().references('order_items.id').onDelete('cascade'))
    .addColumn('session_id', 'integer', (c) => c.notNull().references('picking_sessions.id').onDelete('cascade'))
    .addColumn('picking_item_id', 'bigint', (c) => c.notNull().references('picking_items.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('replacement', 'quantity', 'weight')`))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`status IN ('pending', 'approved', 'rejected', 'withdrawn')`),
    )
    .addColumn('decided_by', 'text', (c) =>
      c.check(sql`decided_by IN ('customer', 'timeout', 'picking_finished', 'picker', 'picking_cancelled')`),
    )
    // What the customer was shown: the proposal as it stood when requested.
    .addColumn('proposed_product_id', 'uuid')
    .addColumn('proposed_name_ru', 'text', (c) => c.notNull())
    .addColumn('proposed_name_en', 'text', (c) => c.notNull())
    .addColumn('proposed_image', 'text')
    .addColumn('proposed_unit_price', sql`numeric(12,2)`, (c) => c.notNull())
    .addColumn('proposed_quantity', sql`numeric(12,3)`, (c) => c.notNull())
    .addColumn('proposed_line_total', sql`numeric(12,2)`, (c) => c.notNull())
    .addColumn('requested_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('decided_at', 'timestamptz')
    .addCheckConstraint(
      'item_approvals_decided',
      sql`(status = 'pending') = (decided_at IS NULL) AND (status = 'pending') = (decided_by IS NULL)`,
    )
    .execute();
  await sql`CREATE UNIQUE INDEX item_approvals_one_pending ON item_approvals (picking_item_id) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX item_approvals_due ON item_approvals (expires_at) WHERE status = 'pending'`.execute(db);
  await sql`CREATE INDEX item_approvals_order ON item_approvals (order_id, order_item_id, id DESC)`.execute(db);
  await sql`CREATE INDEX item_approvals_session ON item_approvals (session_id) WHERE status = 'pending'`.execute(db);

  // A session that closes without finishing (the picker's cancel, expiry, the order's
  // cancellation) takes its unanswered proposals back, whichever path closed it.
  await sql`
    CREATE FUNCTION item_approvals_withdraw() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE item_approvals SET status = 'withdrawn', decided_by = 'picking_cancelled', decided_at = now()
      WHERE session_id = NEW.id AND status = 'pending';
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER item_approvals_withdraw AFTER UPDATE OF status ON picking_sessions
    FOR EACH ROW WHEN (OLD.status IN ('active', 'ready_to_finish') AND NEW.status = 'cancelled')
    EXECUTE FUNCTION item_approvals_withdraw()`.execute(db);
}
