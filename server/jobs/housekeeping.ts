// Periodic clean-up of records whose purpose has passed: expired idempotency keys (kept 24 h),
// counted events past every limit window, old one-time codes (and the plain codes of TEST phones),
// sign-in sessions that ended long ago, and the delivery machinery's rows: outbox events past
// any catch-up or push (a week), and finished push deliveries, provider commands and loyalty
// jobs (kept a month for support questions). Runs on every instance; each statement is
// idempotent, and the high-volume tables are deleted in batches so no run holds long locks.
import { sql, type RawBuilder } from 'kysely';
import type { Database } from '../../db/connection.js';
import { deleteExpiredIdempotencyKeys } from '../../db/queries/idempotency.js';
import type { Logger } from '../../platform/logger.js';
import { scheduleJob, type ScheduledJob } from './scheduler.js';
import { noTelemetry, type Telemetry } from '../../platform/telemetry.js';

const EVERY_MS = 10 * 60_000;
/** Rows deleted per statement from the tables that grow with traffic. */
const BATCH = 5_000;

/** Deletes, in one bounded batch, the rows of `table` matching `where` (by row address: any key shape). */
async function deleteBatch(db: Database, table: string, where: RawBuilder<unknown>): Promise<number> {
  const r = await sql`
    DELETE FROM ${sql.table(table)} WHERE ctid = ANY (ARRAY(
      SELECT ctid FROM ${sql.table(table)} WHERE ${where} LIMIT ${BATCH}))`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

export async function runHousekeeping(db: Database): Promise<Record<string, number>> {
  const count = (r: { numDeletedRows: bigint }) => Number(r.numDeletedRows);
  return {
    idempotency_keys: await deleteExpiredIdempotencyKeys(db),
    rate_events: count(
      await db
        .deleteFrom('rate_events')
        .where('occurred_at', '<', sql<Date>`now() - interval '1 day'`)
        .executeTakeFirst(),
    ),
    otp_codes: count(
      await db
        .deleteFrom('otp_codes')
        .where('created_at', '<', sql<Date>`now() - interval '1 day'`)
        .executeTakeFirst(),
    ),
    auth_sessions: count(
      await db
        .deleteFrom('auth_sessions')
        .where((eb) =>
          eb.or([
            eb('expires_at', '<', sql<Date>`now() - interval '30 days'`),
            eb('revoked_at', '<', sql<Date>`now() - interval '30 days'`),
          ]),
        )
        .executeTakeFirst(),
    ),
    recovery_tokens: count(
      await db
        .deleteFrom('recovery_tokens')
        .where('expires_at', '<', sql<Date>`now() - interval '1 day'`)
        .executeTakeFirst(),
    ),
    // A socket catches up minutes, a push about a week-old change would mislead: a week is ample.
    outbox_events: await deleteBatch(db, 'outbox_events', sql`created_at < now() - interval '7 days'`),
    push_deliveries: await deleteBatch(db, 'push_deliveries', sql`state <> 'pending' AND created_at < now() - interval '30 days'`),
    provider_commands: await deleteBatch(db, 'provider_commands', sql`state <> 'pending' AND created_at < now() - interval '30 days'`),
    loyalty_jobs: await deleteBatch(db, 'loyalty_jobs', sql`state <> 'queued' AND created_at < now() - interval '30 days'`),
  };
}

/** Starts the periodic clean-up (every EVERY_MS); stop() waits for the pass in progress. */
export function startHousekeeping(db: Database, log: Logger, telemetry: Telemetry = noTelemetry): ScheduledJob {
  return scheduleJob(
    { log, telemetry },
    {
      name: 'housekeeping',
      intervalMs: EVERY_MS,
      pass: () => runHousekeeping(db),
      describe: (deleted) => ({ level: 'debug', fields: { deleted } }),
    },
  );
}
