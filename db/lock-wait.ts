// Locks a request may rightly wait for longer than the request pool's lock_timeout: the ones that
// serialise a person's own concurrent attempts (sign-in attempts on one phone, the SMS send of one
// phone's code), held by a request of the same kind for as long as its work takes. Every other
// statement of the transaction keeps the short limit, so a table locked by someone else is still
// a quick 503.
import { sql } from 'kysely';
import type { Executor } from './executor.js';

/**
 * Runs `take` (the statement taking the lock) with the transaction's `lock_timeout` raised to
 * `waitMs`, then sets it back. Both settings are the transaction's own (`set_config(..., true)` is
 * SET LOCAL), so they hold behind a transaction-mode pooler; a failure rolls back both.
 */
export async function waitingLongerForLock<T>(trx: Executor, waitMs: number, take: () => Promise<T>): Promise<T> {
  const { rows } = await sql<{ previous: string }>`
    SELECT current_setting('lock_timeout') AS previous, set_config('lock_timeout', ${`${Math.round(waitMs)}ms`}, true)`.execute(trx);
  const taken = await take();
  await sql`SELECT set_config('lock_timeout', ${rows[0]!.previous}, true)`.execute(trx);
  return taken;
}
