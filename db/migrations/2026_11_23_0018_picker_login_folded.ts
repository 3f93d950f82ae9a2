// Frozen migration: never edit after it has landed; add a new one instead.
// The contract compares a picker's login case-insensitively after trimming spaces
// (PickerLoginInput). Sign-in looks the login up by lower(login); this index serves that lookup
// and keeps two logins that differ only in case from ever both existing.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE UNIQUE INDEX pickers_login_folded ON pickers (lower(login))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX pickers_login_folded`.execute(db);
}
