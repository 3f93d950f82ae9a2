// Frozen migration: never edit after it has landed; add a new one instead.
// With a real courier service (COURIER_PROVIDER=http) the orders worker asks where each delivery
// under way is, every COURIER_STATUS_CHECK_SECONDS, and moves its tracking by the answer. Until
// now nothing moved such a delivery past `searching_courier` outside TEST's QA operation.
// `courier_checked_at` schedules the questions; the index finds the deliveries due.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE order_deliveries ADD COLUMN courier_checked_at timestamptz`.execute(db);
  await sql`CREATE INDEX order_deliveries_followed ON order_deliveries (courier_checked_at NULLS FIRST)
    WHERE courier_request_ref IS NOT NULL
      AND tracking_state IN ('searching_courier', 'courier_assigned', 'courier_at_store', 'en_route', 'arrived', 'returning')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX order_deliveries_followed`.execute(db);
  await sql`ALTER TABLE order_deliveries DROP COLUMN courier_checked_at`.execute(db);
}
