// Frozen migration: never edit after it has landed; add a new one instead.
// Account deletion asks the loyalty provider to erase the customer's data (spec: "a deletion
// request for the customer's data is sent to the loyalty provider through the outbox (retried
// until accepted)"): a loyalty job of its own kind, retried like an accrual.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE loyalty_jobs DROP CONSTRAINT loyalty_jobs_kind_check`.execute(db);
  await sql`ALTER TABLE loyalty_jobs ADD CONSTRAINT loyalty_jobs_kind_check CHECK (kind IN ('provision', 'sync', 'command', 'accrual', 'erase'))`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM loyalty_jobs WHERE kind = 'erase'`.execute(db);
  await sql`ALTER TABLE loyalty_jobs DROP CONSTRAINT loyalty_jobs_kind_check`.execute(db);
  await sql`ALTER TABLE loyalty_jobs ADD CONSTRAINT loyalty_jobs_kind_check CHECK (kind IN ('provision', 'sync', 'command', 'accrual'))`.execute(
    db,
  );
}
