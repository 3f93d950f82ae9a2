// Periodic clean-up of records whose purpose has passed: expired idempotency keys (kept 24 h),
// counted events past every limit window, old one-time codes (and the plain codes of TEST phones),
// and sign-in sessions that ended long ago. Runs on every instance; each statement is idempotent.
import { sql } from 'kysely';
import type { Database } from '../db/connection.js';
import { deleteExpiredIdempotencyKeys } from '../db/queries/idempotency.js';
import type { Logger } from './logger.js';

const EVERY_MS = 10 * 60_000;

export async function runHousekeeping(db: Database): Promise<Record<string, number>> {
  const count = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
  return {
    idempotency_keys: await deleteExpiredIdempotencyKeys(db),
    rate_events: count(await db.deleteFrom('rate_events').where('occurred_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst()),
    otp_codes: count(await db.deleteFrom('otp_codes').where('created_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst()),
    auth_sessions: count(
      await db
        .deleteFrom('auth_sessions')
        .where((eb) => eb.or([eb('expires_at', '<', sql<Date>`now() - interval '30 days'`), eb('revoked_at', '<', sql<Date>`now() - interval '30 days'`)]))
        .executeTakeFirst(),
    ),
    recovery_tokens: count(await db.deleteFrom('recovery_tokens').where('expires_at', '<', sql<Date>`now() - interval '1 day'`).executeTakeFirst()),
  };
}

/** Starts the periodic clean-up; the returned function stops it. */
export function startHousekeeping(db: Database, log: Logger): () => void {
  const timer = setInterval(() => {
    runHousekeeping(db).then(
      (deleted) => log.debug('housekeeping', { deleted }),
      (err) => log.warn('housekeeping failed', { err: (err as Error).message }),
    );
  }, EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
