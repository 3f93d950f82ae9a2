// Frozen migration: never edit after it has landed; add a new one instead.
// The orders worker cancels pickup orders not collected a day after their slot ended (the spec's
// order table); this index lets it find them every pass without reading all orders.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX orders_awaiting_collection ON orders (slot_ends_at) WHERE status = 'ready_for_pickup'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX orders_awaiting_collection`.execute(db);
}
