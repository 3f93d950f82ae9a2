// Frozen migration: never edit after it has landed; add a new one instead.
// Stored answers of retry-safe commands of 1 KB and more (a picker command's answer is its whole
// session, tens of kilobytes of JSON) are kept gzipped, about a sixth of the size, and they are
// the bytes sent to a client that accepts gzip (server/http/responses.ts): compressed once for both. Every
// picker command writes one and keeps it 24 hours, so the table, its WAL and its TOAST writes
// shrink by as much. The bytes are already compressed: EXTERNAL storage keeps PostgreSQL from
// trying again. Small answers stay readable JSON in response_body.
//
// Rolling deploys: for the minutes both run, an instance older than this one that replays such a
// record (a retry reaching it) answers its status with a null body, as it reads response_body
// only. Deploy this in a quiet hour, or accept that a retry in that window shows no session.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE idempotency_keys ADD COLUMN response_gzip bytea`.execute(db);
  await sql`ALTER TABLE idempotency_keys ALTER COLUMN response_gzip SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Answers only kept gzipped cannot be replayed by the older code: those keys are forgotten
  // (their actions are done; a retry would act again, as with an expired key).
  await sql`DELETE FROM idempotency_keys WHERE response_gzip IS NOT NULL`.execute(db);
  await sql`ALTER TABLE idempotency_keys DROP COLUMN response_gzip`.execute(db);
}
