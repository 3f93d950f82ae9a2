// Frozen migration: never edit after it has landed; add a new one instead.
// The stored answer of a retry-safe command is written by every command and read only when the
// same key comes again. Kept as the JSON text the service wrote (json, not jsonb: no conversion
// into the binary form, which nothing queries) and uncompressed (a picker command's answer is
// the whole session, tens of kilobytes; compressing it cost more than the rest of the write).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE json USING response_body::json`.execute(db);
  await sql`ALTER TABLE idempotency_keys ALTER COLUMN response_body SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE idempotency_keys ALTER COLUMN response_body SET STORAGE EXTENDED`.execute(db);
  await sql`ALTER TABLE idempotency_keys ALTER COLUMN response_body TYPE jsonb USING response_body::jsonb`.execute(db);
}
