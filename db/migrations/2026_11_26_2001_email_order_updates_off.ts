// Frozen migration: never edit after it has landed; add a new one instead.
// UserPreferences says a customer is created with `email_order_updates` false (order emails need
// an opt-in like any other channel the customer did not ask for), but the accounts migration gave
// the column the default true: every new customer was opted in to order emails.
// Rows whose preferences were never changed since the customer was created (the row's
// `updated_at` is the customer's `created_at`: both are the now() of the sign-in transaction)
// carry that default, not a choice, and are switched off too; a row the customer has patched
// keeps what they chose.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE customer_preferences ALTER COLUMN email_order_updates SET DEFAULT false`.execute(db);
  await sql`
    UPDATE customer_preferences p SET email_order_updates = false
      FROM customers c
     WHERE c.id = p.customer_id AND p.email_order_updates AND p.updated_at <= c.created_at`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE customer_preferences ALTER COLUMN email_order_updates SET DEFAULT true`.execute(db);
}
