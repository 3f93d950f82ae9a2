// The background worker of orders. Every instance runs one; they share the work through
// `FOR UPDATE SKIP LOCKED`, so a row is handled by exactly one instance at a time and a crashed
// instance's rows are taken by the others (nothing is marked done before its effect commits).
// One pass runs each job below in order, each in its own transaction(s):
//   1. push-fan-out.ts       outbox events -> one push delivery per customer or picker device;
//   2. push-sending.ts       due deliveries -> the push provider, with retries and backoff;
//   3. provider-commands.ts  courier requests and withdrawals, bank refunds and cancellations;
//   4. bank-invoices.ts      a real bank's open invoices, settled by its word;
//   5. order-deadlines.ts    unpaid online orders and uncollected pickups cancelled;
//   6. courier-dispatch.ts   deliveries whose courier should be requested now;
//   7. courier-tracking.ts   deliveries under way at a real courier service, followed.
import type { AppDeps } from '../../services/deps.js';
import { scheduleJob, type ScheduledJob } from './scheduler.js';
import { checkBankInvoices } from './bank-invoices.js';
import { dispatchCouriers } from './courier-dispatch.js';
import { followCourierDeliveries } from './courier-tracking.js';
import { cancelUncollectedPickups, cancelUnpaidOrders } from './order-deadlines.js';
import { runProviderCommands } from './provider-commands.js';
import { fanOutPushes } from './push-fan-out.js';
import { sendPushes } from './push-sending.js';

export interface WorkerTick {
  pushEvents: number;
  pushesSent: number;
  commands: number;
  invoicesSettled: number;
  unpaidCancelled: number;
  uncollectedCancelled: number;
  couriersRequested: number;
  deliveriesFollowed: number;
  /** A push job stopped after PUSH_BATCHES_PER_PASS full batches: more is waiting. */
  pushesWaiting: boolean;
}

/**
 * Batches of a push job one pass may run: a job that found a full batch runs again at once, so a
 * rush's backlog (an order entering a store's queue is a push to each of its idle pickers) drains
 * at the database's and provider's pace instead of one batch per interval, while the jobs after it
 * still get their turn every PUSH_BATCHES_PER_PASS batches (the next pass then starts at once).
 */
export const PUSH_BATCHES_PER_PASS = 10;

/** Runs `batch` until it takes less than a full batch or PUSH_BATCHES_PER_PASS batches ran. */
async function whileFull(
  batchSize: number,
  batch: () => Promise<{ taken: number; done: number }>,
): Promise<{ done: number; waiting: boolean }> {
  let done = 0;
  for (let i = 0; i < PUSH_BATCHES_PER_PASS; i++) {
    const result = await batch();
    done += result.done;
    if (result.taken < batchSize) return { done, waiting: false };
  }
  return { done, waiting: true };
}

/** One pass of every task (also what the tests drive directly). */
export async function runOrderWorkerOnce(deps: AppDeps): Promise<WorkerTick> {
  const { batchSize } = deps.config.orders.worker;
  const fannedOut = await whileFull(batchSize, async () => {
    const taken = await fanOutPushes(deps);
    return { taken, done: taken };
  });
  const sending = await whileFull(batchSize, async () => {
    const { taken, sent } = await sendPushes(deps);
    return { taken, done: sent };
  });
  return {
    pushEvents: fannedOut.done,
    pushesSent: sending.done,
    commands: await runProviderCommands(deps),
    // Before the deadline: an invoice paid at the bank confirms its order instead.
    invoicesSettled: await checkBankInvoices(deps),
    unpaidCancelled: await cancelUnpaidOrders(deps),
    uncollectedCancelled: await cancelUncollectedPickups(deps),
    couriersRequested: await dispatchCouriers(deps),
    deliveriesFollowed: await followCourierDeliveries(deps),
    pushesWaiting: fannedOut.waiting || sending.waiting,
  };
}

/** Starts the periodic worker (ORDER_WORKER_*); stop() waits for the pass in progress. */
export function startOrderWorker(deps: AppDeps): ScheduledJob {
  const { enabled, intervalMs } = deps.config.orders.worker;
  return scheduleJob(deps, {
    name: 'order-worker',
    enabled,
    intervalMs,
    pass: () => runOrderWorkerOnce(deps),
    describe: (tick) => (Object.values(tick).some((n) => Number(n) > 0) ? { level: 'debug', fields: { ...tick } } : undefined),
    again: (tick) => tick.pushesWaiting,
  });
}
