// Frozen migration: never edit after it has landed; add a new one instead.
// A counted limit (per client IP on sign-in, per picker refresh family) was a transaction of six
// round trips holding the subject's advisory lock for four of them, so a burst from one address
// queued on the lock with a pooled connection each and the requests behind waited out the pool
// (503 instead of 429). count_rate_event does the lock, the count and the insert in one statement:
// the lock is held for the time of two index scans, and the connection for one round trip.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Returns NULL when the event was counted; else the occurred_at of the event whose ageing out of
  // the window frees a place (the max-th newest), from which the caller derives Retry-After.
  // VOLATILE, so the count after the lock sees every event committed by the holders before it.
  await sql`
    CREATE FUNCTION count_rate_event(p_subject text, p_max integer, p_since timestamptz, p_lock_wait_ms integer)
    RETURNS timestamptz LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      previous_wait text := current_setting('lock_timeout');
      blocking timestamptz;
    BEGIN
      PERFORM set_config('lock_timeout', p_lock_wait_ms || 'ms', true);
      PERFORM pg_advisory_xact_lock(hashtextextended(p_subject, 0));
      PERFORM set_config('lock_timeout', previous_wait, true);
      SELECT occurred_at INTO blocking FROM rate_events
        WHERE subject = p_subject AND occurred_at > p_since
        ORDER BY occurred_at DESC OFFSET p_max - 1 LIMIT 1;
      IF blocking IS NOT NULL THEN
        RETURN blocking;
      END IF;
      INSERT INTO rate_events (subject) VALUES (p_subject);
      RETURN NULL;
    END $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS count_rate_event(text, integer, timestamptz, integer)`.execute(db);
}
