// Frozen migration: never edit after it has landed; add a new one instead.
// Payments and the outbound side of orders: bank invoices, push deliveries per device (fed from
// the outbox), and the commands to outbound providers (courier requests and withdrawals, bank
// refunds and invoice cancellations) that a background worker sends with retries.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bank_invoices')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    // Which adapter issued it (`sandbox`, `http`): settling is the word of that bank only.
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_ref', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('open', 'paid', 'failed', 'expired', 'cancelled')`))
    .addColumn('amount', 'numeric(12, 2)', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('link', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('settled_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // At most one payable invoice per order, whatever races: concurrent issuers collide here.
  await sql`CREATE UNIQUE INDEX bank_invoices_one_open ON bank_invoices (order_id) WHERE status = 'open'`.execute(db);
  await sql`CREATE INDEX bank_invoices_order ON bank_invoices (order_id, created_at DESC)`.execute(db);

  // Which outbox events still have to be fanned out to push devices.
  await sql`ALTER TABLE outbox_events ADD COLUMN pushed_at timestamptz`.execute(db);
  await sql`CREATE INDEX outbox_events_push_pending ON outbox_events (id)
    WHERE pushed_at IS NULL AND (payload->>'notification_id') IS NOT NULL`.execute(db);

  // One push notification to one device. The token is read from push_devices when sending, so
  // a rotated token is used and a removed installation is skipped.
  await db.schema
    .createTable('push_deliveries')
    .addColumn('notification_id', 'uuid', (c) => c.notNull())
    .addColumn('device_id', 'uuid', (c) => c.notNull())
    .addColumn('event_id', 'uuid', (c) => c.notNull())
    .addColumn('customer_id', 'uuid', (c) => c.notNull())
    .addColumn('order_id', 'uuid')
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .addColumn('state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`state IN ('pending', 'sent', 'failed', 'stale_token', 'skipped')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .addPrimaryKeyConstraint('push_deliveries_pk', ['notification_id', 'device_id'])
    .execute();
  await sql`CREATE INDEX push_deliveries_due ON push_deliveries (next_attempt_at) WHERE state = 'pending'`.execute(db);

  // Calls to outbound providers that follow a committed change. Written in the change's
  // transaction, sent after commit by the worker, retried with backoff until accepted.
  await db.schema
    .createTable('provider_commands')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) =>
      c.notNull().check(sql`kind IN ('courier.request', 'courier.withdraw', 'bank.refund', 'bank.cancel_invoice')`),
    )
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('payload', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`state IN ('pending', 'done', 'failed')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('done_at', 'timestamptz')
    .execute();
  await sql`CREATE INDEX provider_commands_due ON provider_commands (next_attempt_at) WHERE state = 'pending'`.execute(db);
  await sql`CREATE INDEX provider_commands_order ON provider_commands (order_id)`.execute(db);

  // The worker's scans: unpaid online orders by deadline, deliveries still waiting for a courier.
  await sql`CREATE INDEX orders_payment_due ON orders (payment_due_at) WHERE status IN ('created', 'awaiting_payment')`.execute(db);
  await sql`CREATE INDEX order_deliveries_pending ON order_deliveries (order_id) WHERE tracking_state = 'pending'`.execute(db);
  // Account deletion asks whether a customer has an unfinished order.
  await sql`CREATE INDEX orders_customer_unfinished ON orders (customer_id) WHERE status NOT IN ('completed', 'cancelled')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS orders_customer_unfinished`.execute(db);
  await sql`DROP INDEX IF EXISTS order_deliveries_pending`.execute(db);
  await sql`DROP INDEX IF EXISTS orders_payment_due`.execute(db);
  await db.schema.dropTable('provider_commands').execute();
  await db.schema.dropTable('push_deliveries').execute();
  await sql`DROP INDEX IF EXISTS outbox_events_push_pending`.execute(db);
  await sql`ALTER TABLE outbox_events DROP COLUMN IF EXISTS pushed_at`.execute(db);
  await db.schema.dropTable('bank_invoices').execute();
}
