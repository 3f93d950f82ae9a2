// Frozen migration: never edit after it has landed; add a new one instead.
// Every picker item command updates one session row and one item row. Those updates can be heap-only (HOT: no index entries written, the
// old version pruned in place) when no indexed column changes and the row's page has room:
//   - picking_sessions_idle indexed `updated_at`, which every command changes, so no session update
//     was ever HOT. The idle-expiry sweep finds open sessions through the partial index of open
//     sessions (picking_sessions_one_open_per_order: the same predicate) and filters the few there
//     are by time, so the index is dropped.
//   - a session's items are inserted together and fill their pages (fillfactor 100), so the first
//     update of an item found no room and moved the row, with new index entries. Pages of both
//     tables keep a fifth free from now on (fillfactor applies to pages written from here).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS picking_sessions_idle`.execute(db);
  await sql`ALTER TABLE picking_sessions SET (fillfactor = 80)`.execute(db);
  await sql`ALTER TABLE picking_items SET (fillfactor = 80)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE picking_items RESET (fillfactor)`.execute(db);
  await sql`ALTER TABLE picking_sessions RESET (fillfactor)`.execute(db);
  await sql`CREATE INDEX picking_sessions_idle ON picking_sessions (updated_at) WHERE status IN ('active', 'ready_to_finish')`.execute(db);
}
