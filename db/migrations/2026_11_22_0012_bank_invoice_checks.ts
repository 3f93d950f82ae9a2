// Frozen migration: never edit after it has landed; add a new one instead.
// A real bank's invoices are settled by asking the bank (the orders worker), not by a
// notification: when it last answered about an invoice, and when to ask next.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE bank_invoices ADD COLUMN checked_at timestamptz`.execute(db);
  await sql`ALTER TABLE bank_invoices ADD COLUMN next_check_at timestamptz NOT NULL DEFAULT now()`.execute(db);
  // The worker's question: open invoices of a real bank that are due for a check.
  await sql`CREATE INDEX bank_invoices_to_check ON bank_invoices (next_check_at) WHERE status = 'open' AND provider <> 'sandbox'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX bank_invoices_to_check`.execute(db);
  await sql`ALTER TABLE bank_invoices DROP COLUMN next_check_at`.execute(db);
  await sql`ALTER TABLE bank_invoices DROP COLUMN checked_at`.execute(db);
}
