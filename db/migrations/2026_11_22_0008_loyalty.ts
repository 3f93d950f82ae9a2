// Frozen migration: never edit after it has landed; add a new one instead.
// Loyalty, in two parts that never share a row:
//   1. loyalty_ledger_*: the local loyalty ledger, i.e. what a customer data platform (CDP) holds:
//      programs and levels, loyalty customers, accounts, cards, point operations and in-store
//      receipts. Only the local provider implementation (platform/providers/loyalty/local.ts) reads
//      and writes them; with the HTTP provider they stay empty.
//   2. loyalty_wallets and what hangs off it: this service's own record of each customer's wallet
//      (a mirror of the provider kept in step by background jobs), the job queue, the mirrors of
//      purchases and transactions, and the exactly-once accruals of completed online orders.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // ---- the local ledger (provider side) ---------------------------------------------------------
  // One sequence numbers every ledger identifier (customers, accounts, cards, operations), as a
  // provider hands out opaque ids.
  await sql`CREATE SEQUENCE loyalty_ledger_ids START WITH 100001`.execute(db);

  await db.schema
    .createTable('loyalty_ledger_programs')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // Turnover counted for the tier: purchases of the last `period_days` days.
    .addColumn('period_days', 'integer', (c) =>
      c
        .notNull()
        .defaultTo(365)
        .check(sql`period_days > 0`),
    )
    .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`CREATE UNIQUE INDEX loyalty_ledger_programs_one_default ON loyalty_ledger_programs (is_default) WHERE is_default`.execute(db);

  await db.schema
    .createTable('loyalty_ledger_levels')
    .addColumn('id', 'integer', (c) => c.primaryKey())
    .addColumn('program_id', 'integer', (c) => c.notNull().references('loyalty_ledger_programs.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull().check(sql`position >= 1`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('boundary', 'numeric(12, 2)', (c) => c.notNull().check(sql`boundary >= 0`))
    // Points per rouble of goods, in percent (5.00 = 5 points per 100 roubles).
    .addColumn('accrual_percent', 'numeric(5, 2)', (c) => c.notNull().check(sql`accrual_percent >= 0 AND accrual_percent <= 100`))
    .addColumn('range_label', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addUniqueConstraint('loyalty_ledger_levels_position', ['program_id', 'position'])
    .addUniqueConstraint('loyalty_ledger_levels_boundary', ['program_id', 'boundary'])
    .execute();

  await db.schema
    .createTable('loyalty_ledger_customers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('phone', 'text', (c) => c.notNull().unique())
    .addColumn('program_id', 'integer', (c) => c.notNull().references('loyalty_ledger_programs.id'))
    // The card shown in the app and presented at the till.
    .addColumn('main_card_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('loyalty_ledger_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('customer_id', 'text', (c) => c.notNull().references('loyalty_ledger_customers.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('bonus', 'promo')`))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('balance', 'numeric(12, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addUniqueConstraint('loyalty_ledger_accounts_kind', ['customer_id', 'kind'])
    .execute();

  await db.schema
    .createTable('loyalty_ledger_cards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('card_number', 'text', (c) =>
      c
        .notNull()
        .unique()
        .check(sql`card_number ~ '^[0-9]{6,19}$'`),
    )
    // NULL: no registered holder (a plastic card used at the till without registration, or stock).
    .addColumn('customer_id', 'text', (c) => c.references('loyalty_ledger_customers.id'))
    .addColumn('is_virtual', 'boolean', (c) => c.notNull())
    // NULL: a physical card from stock that was never issued to anybody.
    .addColumn('issued_at', 'timestamptz')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('is_blocked', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('block_reason', 'text')
    // Points collected on an unregistered card; they join the holder's bonus account on linking.
    .addColumn('balance', 'numeric(12, 2)', (c) => c.notNull().defaultTo(0))
    // Idempotency key of the request that issued or registered the card (replace, link-physical).
    .addColumn('issue_key', 'text', (c) => c.unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('loyalty_ledger_cards_virtual_issued', sql`NOT is_virtual OR issued_at IS NOT NULL`)
    .execute();
  await sql`CREATE INDEX loyalty_ledger_cards_customer ON loyalty_ledger_cards (customer_id)`.execute(db);

  await db.schema
    .createTable('loyalty_ledger_operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('customer_id', 'text', (c) => c.notNull().references('loyalty_ledger_customers.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (c) => c.notNull().references('loyalty_ledger_accounts.id'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type IN ('accrual', 'redemption', 'expiry', 'adjustment')`))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('posted')
        .check(sql`status IN ('pending', 'posted', 'cancelled')`),
    )
    .addColumn('amount', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('balance_after', 'numeric(12, 2)')
    // The purchase amount an accrual was given for: the turnover that decides the tier.
    .addColumn('purchase_amount', 'numeric(12, 2)')
    .addColumn('order_id', 'uuid')
    .addColumn('purchase_id', 'text')
    .addColumn('shop_name', 'text')
    .addColumn('comment', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('available_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    // Retried requests (accrual of an order, points of a linked card) are applied once.
    .addColumn('idempotency_key', 'text', (c) => c.unique())
    .execute();
  await sql`CREATE INDEX loyalty_ledger_operations_customer ON loyalty_ledger_operations (customer_id, created_at DESC, id DESC)`.execute(
    db,
  );

  await db.schema
    .createTable('loyalty_ledger_receipts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('customer_id', 'text', (c) => c.notNull().references('loyalty_ledger_customers.id').onDelete('cascade'))
    .addColumn('card_id', 'text', (c) => c.references('loyalty_ledger_cards.id'))
    .addColumn('shop_name', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('total', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('bonus_accrual', 'numeric(12, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('positions', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('discounts', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
  await sql`CREATE INDEX loyalty_ledger_receipts_customer ON loyalty_ledger_receipts (customer_id, occurred_at DESC)`.execute(db);

  // ---- this service's wallets -------------------------------------------------------------------
  await db.schema
    .createTable('loyalty_wallets')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // One wallet per customer: concurrent create/link calls end with one row.
    .addColumn('customer_id', 'uuid', (c) => c.notNull().unique().references('customers.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN ('pending', 'ready', 'error')`))
    // The loyalty customer at the provider; NULL until provisioning (or a link) succeeded.
    .addColumn('provider_customer_id', 'text')
    .addColumn('main_card_id', 'text')
    // The customer's choice (accounts/switch); everything else below mirrors the provider.
    .addColumn('active_account_id', 'text')
    .addColumn('accounts', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('cards', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('loyalty_status', 'jsonb')
    // The current tier's rate, used by the discount preview and the accrual of completed orders.
    .addColumn('tier_accrual_percent', 'numeric(5, 2)')
    .addColumn('last_synced_at', 'timestamptz')
    .addColumn('last_error_code', 'text')
    .addColumn('last_error_at', 'timestamptz')
    .addColumn('last_error_attempts', 'integer')
    // Attempts of the synchronization now running (grows poll_after_seconds while pending).
    .addColumn('sync_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Rises with every change of the mirrored data, so a slow job never overwrites newer data.
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('purchases_synced_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Work for the background worker: provisioning, re-syncs, commands whose provider answer did not
  // come in time (re-sent with the same idempotency key), and the push of accruals. Workers claim
  // rows with FOR UPDATE SKIP LOCKED and a lease, so several instances never run one job twice at
  // the same time and a crashed worker's job is taken over when its lease ends.
  await db.schema
    .createTable('loyalty_jobs')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('wallet_id', 'uuid', (c) => c.notNull().references('loyalty_wallets.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('provision', 'sync', 'command', 'accrual')`))
    .addColumn('payload', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('queued')
        .check(sql`state IN ('queued', 'done', 'failed')`),
    )
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('lease_until', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await sql`CREATE INDEX loyalty_jobs_due ON loyalty_jobs (run_at, id) WHERE state = 'queued'`.execute(db);
  // At most one open provisioning/re-sync per wallet: repeated triggers collapse into it.
  await sql`CREATE UNIQUE INDEX loyalty_jobs_one_sync ON loyalty_jobs (wallet_id) WHERE state = 'queued' AND kind IN ('provision', 'sync')`.execute(
    db,
  );

  // Points for completed online orders. The primary key is the exactly-once guarantee: however
  // many workers scan the same completed order, one row is inserted.
  await db.schema
    .createTable('loyalty_accruals')
    .addColumn('order_id', 'uuid', (c) => c.primaryKey().references('orders.id').onDelete('cascade'))
    .addColumn('customer_id', 'uuid', (c) => c.notNull())
    .addColumn('wallet_id', 'uuid', (c) => c.references('loyalty_wallets.id').onDelete('set null'))
    // Why the order earned what it did: `accrued`, or no points because the customer had no
    // linked wallet or the main card was blocked when the order completed.
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome IN ('accrued', 'no_wallet', 'card_blocked')`))
    // orders.final_total minus delivery: the goods actually paid for after picking.
    .addColumn('base_amount', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('points', 'numeric(12, 2)', (c) => c.notNull().check(sql`points >= 0`))
    .addColumn('accrual_percent', 'numeric(5, 2)')
    .addColumn('tier_label', 'text')
    .addColumn('provider_operation_id', 'text')
    .addColumn('posted_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX loyalty_accruals_customer ON loyalty_accruals (customer_id, created_at DESC)`.execute(db);
  // The worker looks every second for recently completed orders without an accrual; this keeps
  // that scan proportional to the recent completions, not to all orders ever placed.
  await sql`CREATE INDEX loyalty_orders_completed ON orders (completed_at) WHERE status = 'completed'`.execute(db);

  // In-store purchases reported by the provider, refreshed when older than 5 minutes.
  await db.schema
    .createTable('loyalty_purchase_mirror')
    .addColumn('wallet_id', 'uuid', (c) => c.notNull().references('loyalty_wallets.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('shop_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('total', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('bonus_accrual', 'numeric(12, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('items_count', 'integer', (c) => c.notNull().defaultTo(0))
    // NULL until the detail was read once.
    .addColumn('positions', 'jsonb')
    .addColumn('discounts', 'jsonb')
    .addColumn('fetched_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('loyalty_purchase_mirror_pk', ['wallet_id', 'id'])
    .execute();

  // Point movements read from the provider: what GET transactions serves when the provider is down.
  await db.schema
    .createTable('loyalty_transaction_mirror')
    .addColumn('wallet_id', 'uuid', (c) => c.notNull().references('loyalty_wallets.id').onDelete('cascade'))
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('amount', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('balance_after', 'numeric(12, 2)')
    .addColumn('account_id', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('available_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz')
    .addColumn('order_id', 'uuid')
    .addColumn('purchase_id', 'text')
    .addColumn('shop_name', 'text')
    .addColumn('comment', 'text')
    .addColumn('fetched_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('loyalty_transaction_mirror_pk', ['wallet_id', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS loyalty_orders_completed`.execute(db);
  for (const t of [
    'loyalty_transaction_mirror',
    'loyalty_purchase_mirror',
    'loyalty_accruals',
    'loyalty_jobs',
    'loyalty_wallets',
    'loyalty_ledger_receipts',
    'loyalty_ledger_operations',
    'loyalty_ledger_cards',
    'loyalty_ledger_accounts',
    'loyalty_ledger_customers',
    'loyalty_ledger_levels',
    'loyalty_ledger_programs',
  ]) {
    await db.schema.dropTable(t).execute();
  }
  await sql`DROP SEQUENCE loyalty_ledger_ids`.execute(db);
}
