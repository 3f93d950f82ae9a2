// Frozen migration: never edit after it has landed; add a new one instead.
// A real bank's invoice that this service closed before the bank's final word (its clock expired
// it and a new one was issued, or its order was cancelled) may still have been paid at the bank
// in the meantime. The orders worker keeps asking the bank about such an invoice until the bank
// gives a final answer; a payment it reports is taken by the order when the order still awaits
// one, and otherwise returned to the customer (status `surplus`, command `bank.refund_surplus`).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE bank_invoices ADD COLUMN bank_word_pending boolean NOT NULL DEFAULT false`.execute(db);
  await sql`ALTER TABLE bank_invoices DROP CONSTRAINT bank_invoices_status_check`.execute(db);
  await sql`ALTER TABLE bank_invoices ADD CONSTRAINT bank_invoices_status_check
    CHECK (status IN ('open', 'paid', 'failed', 'expired', 'cancelled', 'surplus'))`.execute(db);
  await sql`ALTER TABLE provider_commands DROP CONSTRAINT provider_commands_kind_check`.execute(db);
  await sql`ALTER TABLE provider_commands ADD CONSTRAINT provider_commands_kind_check
    CHECK (kind IN ('courier.request', 'courier.withdraw', 'bank.refund', 'bank.cancel_invoice', 'bank.refund_surplus'))`.execute(db);
  // The worker's question now: invoices of a real bank that are open or await the bank's final
  // word, and are due for a check.
  await sql`DROP INDEX bank_invoices_to_check`.execute(db);
  await sql`CREATE INDEX bank_invoices_to_check ON bank_invoices (next_check_at)
    WHERE provider <> 'sandbox' AND (status = 'open' OR bank_word_pending)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX bank_invoices_to_check`.execute(db);
  await sql`CREATE INDEX bank_invoices_to_check ON bank_invoices (next_check_at) WHERE status = 'open' AND provider <> 'sandbox'`.execute(
    db,
  );
  await sql`DELETE FROM provider_commands WHERE kind = 'bank.refund_surplus'`.execute(db);
  await sql`ALTER TABLE provider_commands DROP CONSTRAINT provider_commands_kind_check`.execute(db);
  await sql`ALTER TABLE provider_commands ADD CONSTRAINT provider_commands_kind_check
    CHECK (kind IN ('courier.request', 'courier.withdraw', 'bank.refund', 'bank.cancel_invoice'))`.execute(db);
  // Not 'paid': a second paid invoice would be taken for the order's own payment by a refund.
  await sql`UPDATE bank_invoices SET status = 'cancelled' WHERE status = 'surplus'`.execute(db);
  await sql`ALTER TABLE bank_invoices DROP CONSTRAINT bank_invoices_status_check`.execute(db);
  await sql`ALTER TABLE bank_invoices ADD CONSTRAINT bank_invoices_status_check
    CHECK (status IN ('open', 'paid', 'failed', 'expired', 'cancelled'))`.execute(db);
  await sql`ALTER TABLE bank_invoices DROP COLUMN bank_word_pending`.execute(db);
}
