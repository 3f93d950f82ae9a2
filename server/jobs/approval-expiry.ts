// Proposals the customer left unanswered past their store's window stand as made (the line's
// fallback): each is settled in its own transaction on the order's and the session's locks and
// re-checked there, so an answer that lands first wins and two instances never settle one twice.
import { dueApprovals } from '../../db/queries/picking/approvals.js';
import { settleExpiredApproval } from '../../services/picking/approvals.js';
import type { AppDeps } from '../../services/deps.js';
import { scheduleJob, type ScheduledJob } from './scheduler.js';

/** Settles the proposals whose window has passed; returns how many were settled. */
export async function settleExpiredApprovals(deps: Pick<AppDeps, 'db' | 'clock'>, limit = 100): Promise<number> {
  let settled = 0;
  for (const due of await dueApprovals(deps.db, deps.clock.now(), limit)) {
    if (await settleExpiredApproval(deps, due.id, due.order_id)) settled++;
  }
  return settled;
}

/** Starts the periodic settlement (PICKING_APPROVAL_SWEEP_SECONDS, 0: none); stop() waits for the pass in progress. */
export function startApprovalExpiry(deps: Pick<AppDeps, 'db' | 'config' | 'log' | 'telemetry' | 'clock'>): ScheduledJob {
  return scheduleJob(deps, {
    name: 'approval-sweep',
    intervalMs: deps.config.picking.approvalSweepSeconds * 1000,
    pass: () => settleExpiredApprovals(deps),
    describe: (settled) => (settled ? { level: 'info', fields: { settled } } : undefined),
  });
}
