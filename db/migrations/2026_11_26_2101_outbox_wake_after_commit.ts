// Frozen migration: never edit after it has landed; add a new one instead.
// The outbox's wake-up leaves the writing transaction. A transaction that issued NOTIFY takes a
// database-wide lock at commit and holds it until its commit is flushed, so every committing
// writer of an event ran one at a time (scripts/bench-notify.ts measures it). The rows stay in
// the transaction; the insert trigger's NOTIFY goes. Every pool of the service wakes the feeds after a commit instead, with a short
// NOTIFY of its own outside the writing transaction (db/connection.ts), and the feeds read the
// outbox by id (server/realtime/outbox-feed.ts).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS outbox_events_notify ON outbox_events`.execute(db);
  await sql`DROP FUNCTION IF EXISTS outbox_notify()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('outbox_events', NEW.id::text);
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
    FOR EACH ROW EXECUTE FUNCTION outbox_notify()`.execute(db);
}
