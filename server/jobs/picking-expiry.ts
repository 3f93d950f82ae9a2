// Open picking sessions without an applied change for PICKING_SESSION_IDLE_MINUTES (4 hours by
// default) are closed as `expired` and their orders go back to the queue (spec: "Status moves in
// full"). Runs on every instance; each session is expired in its own transaction under the
// order's and the session's locks, re-checked there, so two instances never expire one twice and
// a command that lands first keeps its session alive.
// The same sweep announces the slot orders that entered the picker queue's horizon since the last
// one (announceOrdersEnteringQueue), so the pickers' queue screens re-read in time.
import type { Database } from '../../db/connection.js';
import { isBatchActive } from '../../db/queries/picking/batches.js';
import { loadItems } from '../../db/queries/picking/items.js';
import { announceOrdersEnteringQueue } from '../../db/queries/picking/queue.js';
import { findIdleSessions, lockCommandSession, lockOrder } from '../../db/queries/picking/sessions.js';
import { releaseSession } from '../../services/picking/lifecycle.js';
import type { Clock } from '../../platform/clock.js';
import type { AppDeps } from '../../services/deps.js';
import { scheduleJob, type ScheduledJob } from './scheduler.js';

/** Expires the idle sessions now; returns how many were closed. */
export async function expireIdleSessions(db: Database, idleMinutes: number, clock: Clock): Promise<number> {
  let expired = 0;
  for (const candidate of await findIdleSessions(db, idleMinutes)) {
    const done = await db.transaction().execute(async (trx) => {
      // The order first (the lock order of every picking path), whatever stores the picker has now.
      const head = (await lockOrder(trx, candidate.order_id))
        ? await lockCommandSession(trx, candidate.order_id, candidate.picker_id)
        : undefined;
      // Unchanged since it was found idle (by the database's clock): no command landed meanwhile.
      const stillIdle =
        head?.id === candidate.id &&
        (head.status === 'active' || head.status === 'ready_to_finish') &&
        head.updated_at.getTime() === candidate.updated_at.getTime();
      if (!head || !stillIdle) return false;
      if (head.batch_id !== null && (await isBatchActive(trx, head.batch_id, idleMinutes))) return false;
      await releaseSession(trx, head.order_id, head, await loadItems(trx, head.id), { source: 'expired', reason: null }, clock.now());
      return true;
    });
    if (done) expired++;
  }
  return expired;
}

/** One sweep: idle sessions expired (unless sessions never expire), then the orders entering the queue announced. */
export async function sweepPicking(
  deps: Pick<AppDeps, 'db' | 'config' | 'log' | 'clock'>,
): Promise<{ expired: number; announced: number }> {
  const { sessionIdleMinutes, queueHorizonHours } = deps.config.picking;
  const expired = sessionIdleMinutes > 0 ? await expireIdleSessions(deps.db, sessionIdleMinutes, deps.clock) : 0;
  const announced = await deps.db.transaction().execute((trx) => announceOrdersEnteringQueue(trx, queueHorizonHours));
  return { expired, announced };
}

/** Starts the periodic sweep (PICKING_EXPIRY_SWEEP_SECONDS, 0: none); stop() waits for the pass in progress. */
export function startPickingExpiry(deps: Pick<AppDeps, 'db' | 'config' | 'log' | 'telemetry' | 'clock'>): ScheduledJob {
  return scheduleJob(deps, {
    name: 'picking-sweep',
    intervalMs: deps.config.picking.expirySweepSeconds * 1000,
    pass: () => sweepPicking(deps),
    describe: ({ expired }) => (expired ? { level: 'info', fields: { expired } } : undefined),
  });
}
