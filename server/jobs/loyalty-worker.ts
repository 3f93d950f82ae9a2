// The loyalty background worker: provisions wallets (pending -> ready/error), re-syncs them,
// re-sends card commands whose provider answer did not come in time, and credits completed
// orders. It runs on every instance; several instances share the work safely: jobs are claimed
// with FOR UPDATE SKIP LOCKED and a lease (db/queries/loyalty.ts), and each order is credited
// once by the primary key of loyalty_accruals.
//
// Accrual is decoupled from the order code: the worker reads orders that reached `completed`
// (delivered, or collected at the store) and have no accrual yet. `completed` and not `picked`,
// because points are earned by a purchase that actually took place: an order can still be
// cancelled after picking (not collected, refused at the door), and the contract says points are
// credited once the order is completed. The base is the picked total actually paid for goods:
// orders.final_total minus the delivery cost (never the ordered total).
import {
  claimDueJobs,
  completedOrdersWithoutAccrual,
  customerPhone,
  enqueueJob,
  findAccrual,
  findWallet,
  findWalletById,
  finishJob,
  insertAccrual,
  lockCustomerLoyalty,
  markAccrualPosted,
  mirrorTransactions,
  retryJobAt,
  updateWallet,
  type JobRow,
  type WalletRow,
} from '../../db/queries/loyalty.js';
import { formatDecimal } from '../../domain/money/decimal.js';
import { kopecks, money } from '../../domain/money/money.js';
import { loyaltyAccrualFor } from '../../domain/loyalty/accrual.js';
import { MAX_SYNC_ATTEMPTS, retryDelaySeconds } from '../../domain/loyalty/wallet.js';
import { isLinked, memberOf, sendCommand, writeSnapshotIfCurrent } from '../../services/loyalty/wallet.js';
import type { AppDeps } from '../../services/deps.js';
import { scheduleJob, type ScheduledJob } from './scheduler.js';
import { LoyaltyProviderError } from '../../platform/providers/loyalty/index.js';

const JOBS_PER_ROUND = 10;
const ORDERS_PER_ROUND = 50;
/** Transactions copied to the local mirror at each synchronization. */
const MIRRORED_TRANSACTIONS = 100;
/** Longest wait between two attempts to deliver an accrual to the provider. */
const MAX_ACCRUAL_RETRY_SECONDS = 3600;

/** Credits completed orders that have no accrual record yet; returns how many it recorded. */
export async function creditCompletedOrders(deps: AppDeps): Promise<number> {
  const orders = await completedOrdersWithoutAccrual(deps.db, ORDERS_PER_ROUND);
  let recorded = 0;
  for (const order of orders) {
    const delivery = kopecks(order.delivery_cost);
    const paid = kopecks(order.final_total);
    const base = money(paid > delivery ? paid - delivery : 0n);
    await deps.db.transaction().execute(async (trx) => {
      const wallet = await findWallet(trx, order.customer_id);
      const member = memberOf(wallet);
      const result = loyaltyAccrualFor(base, member);
      const inserted = await insertAccrual(trx, {
        order_id: order.id,
        customer_id: order.customer_id,
        wallet_id: wallet?.id ?? null,
        outcome: result.outcome,
        base_amount: base,
        // Whole points, written with the column's two decimals.
        points: formatDecimal(result.points * 100n, 2),
        accrual_percent: result.accrualPercent,
        tier_label: member?.tierLabel ?? null,
      });
      if (!inserted) return;
      recorded++;
      if (wallet && result.points > 0n)
        await enqueueJob(trx, wallet.id, 'accrual', { order_id: order.id, completed_at: order.completed_at.toISOString() });
    });
  }
  return recorded;
}

/** Reads the provider's view of a linked wallet and writes it (unless newer data came meanwhile). */
async function refresh(deps: AppDeps, wallet: WalletRow): Promise<void> {
  const { provider } = deps.loyalty;
  const customer = await provider.getCustomer(wallet.provider_customer_id!);
  await writeSnapshotIfCurrent(deps, wallet.id, wallet.customer_id, wallet.revision, customer);
  // The transactions mirror serves GET transactions when the provider is down; best effort.
  try {
    const page = await provider.listTransactions(customer.id, { offset: 0, limit: MIRRORED_TRANSACTIONS });
    await mirrorTransactions(deps.db, wallet.id, page.items);
  } catch (err) {
    if (!(err instanceof LoyaltyProviderError)) throw err;
  }
}

async function runJob(deps: AppDeps, job: JobRow): Promise<void> {
  const { provider } = deps.loyalty;
  const wallet = await findWalletById(deps.db, job.wallet_id);
  if (!wallet) return finishJob(deps.db, job.id, 'failed', 'wallet deleted');
  try {
    switch (job.kind) {
      case 'provision':
      case 'sync': {
        if (wallet.provider_customer_id) {
          await refresh(deps, wallet);
        } else {
          const phone = await customerPhone(deps.db, wallet.customer_id);
          if (!phone) return finishJob(deps.db, job.id, 'failed', 'customer deleted');
          const customer = await provider.provisionCustomer({ phone, idempotencyKey: `provision:${wallet.id}` });
          await writeSnapshotIfCurrent(deps, wallet.id, wallet.customer_id, wallet.revision, customer);
        }
        break;
      }
      case 'command': {
        const phone = (await customerPhone(deps.db, wallet.customer_id)) ?? '';
        const customer = await sendCommand(provider, job.payload, wallet.provider_customer_id, phone);
        await writeSnapshotIfCurrent(deps, wallet.id, wallet.customer_id, wallet.revision, customer);
        break;
      }
      case 'accrual': {
        const orderId = job.payload.order_id;
        const accrual = await findAccrual(deps.db, orderId);
        if (!accrual || accrual.posted_at) break;
        if (!wallet.provider_customer_id) return finishJob(deps.db, job.id, 'failed', 'wallet not linked');
        const { operation_id } = await provider.recordAccrual({
          customerId: wallet.provider_customer_id,
          orderId,
          purchaseAmount: accrual.base_amount,
          points: accrual.points,
          occurredAt: job.payload.completed_at ?? accrual.created_at.toISOString(),
          idempotencyKey: `accrual:${orderId}`,
        });
        await markAccrualPosted(deps.db, orderId, operation_id);
        // New balance and tier progress; a failure here leaves them to the next re-sync.
        await refresh(deps, wallet).catch((err) =>
          deps.log.warn('loyalty refresh after accrual failed', { wallet_id: wallet.id, err: (err as Error).message }),
        );
        break;
      }
      case 'erase': {
        // The account was deleted (unlinkDeletedCustomerWallet): its data goes at the provider too.
        await provider.eraseCustomer({ customerId: job.payload.provider_customer_id, idempotencyKey: `erase:${job.wallet_id}` });
        break;
      }
    }
    await finishJob(deps.db, job.id, 'done');
  } catch (err) {
    await jobFailed(deps, job, wallet, err);
  }
}

async function jobFailed(deps: AppDeps, job: JobRow, wallet: WalletRow, err: unknown): Promise<void> {
  const reason = err instanceof Error ? err.message : String(err);
  const permanent = err instanceof LoyaltyProviderError && err.kind === 'rejected';
  if (!(err instanceof LoyaltyProviderError)) deps.log.error('loyalty job failed unexpectedly', { job_id: job.id, kind: job.kind, err });
  const base = deps.config.loyalty.retryBaseSeconds;
  if (job.kind === 'accrual' || job.kind === 'erase') {
    // Points and an erasure must reach the provider eventually: retried until done (or refused).
    if (permanent) {
      const orderId = job.kind === 'accrual' ? job.payload.order_id : undefined;
      deps.log.error(`loyalty provider refused an ${job.kind}`, { job_id: job.id, order_id: orderId, reason });
      return finishJob(deps.db, job.id, 'failed', reason);
    }
    const wait = Math.min(retryDelaySeconds(job.attempts, base), MAX_ACCRUAL_RETRY_SECONDS);
    return retryJobAt(deps.db, job.id, new Date(deps.clock.nowMs() + wait * 1000), reason);
  }
  // A background re-sync of a settled wallet is not retried: the wallet shows `error` with its
  // last good data, and the next read after the re-sync interval tries again.
  const settledResync = job.kind === 'sync' && wallet.status !== 'pending' && isLinked(wallet);
  const exhausted = permanent || settledResync || job.attempts >= MAX_SYNC_ATTEMPTS;
  const code = !permanent ? 'PROVIDER_UNAVAILABLE' : err.code === 'card_issue_failed' ? 'CARD_ISSUE_FAILED' : 'PROVIDER_REJECTED';
  await deps.db.transaction().execute(async (trx) => {
    await lockCustomerLoyalty(trx, wallet.customer_id);
    const current = await findWalletById(trx, wallet.id);
    // Only the job that owns the wallet's state may change it (a newer command may have settled it).
    const owns = current && (current.status === 'pending' || current.revision === wallet.revision);
    if (exhausted) {
      if (owns)
        await updateWallet(trx, wallet.id, {
          status: 'error',
          last_error_code: code,
          last_error_at: deps.clock.now(),
          last_error_attempts: job.attempts,
          sync_attempts: 0,
        });
      await finishJob(trx, job.id, 'failed', reason);
    } else {
      if (owns) await updateWallet(trx, wallet.id, { sync_attempts: job.attempts });
      await retryJobAt(trx, job.id, new Date(deps.clock.nowMs() + retryDelaySeconds(job.attempts, base) * 1000), reason);
    }
  });
  deps.log.warn('loyalty job failed', { job_id: job.id, kind: job.kind, attempts: job.attempts, final: exhausted, reason });
}

/**
 * One pass of the worker, repeated while there is due work (bounded): credit completed orders,
 * then run the due jobs. Returns what it did (tests drive the worker through this).
 */
export async function runLoyaltyWorkerOnce(deps: AppDeps, maxRounds = 20): Promise<{ jobs: number; accruals: number }> {
  const lease = Math.ceil(deps.config.loyalty.commandTimeoutMs / 1000) * 3 + 30;
  let jobs = 0;
  let accruals = 0;
  for (let round = 0; round < maxRounds; round++) {
    const credited = await creditCompletedOrders(deps);
    const claimed = await claimDueJobs(deps.db, JOBS_PER_ROUND, lease);
    await Promise.all(claimed.map((job) => runJob(deps, job)));
    accruals += credited;
    jobs += claimed.length;
    if (credited === 0 && claimed.length === 0) break;
  }
  return { jobs, accruals };
}

/** Starts the periodic worker (LOYALTY_WORKER_*); stop() waits for the pass in progress. */
export function startLoyaltyWorker(deps: AppDeps): ScheduledJob {
  const { enabled, intervalMs } = deps.config.loyalty.worker;
  return scheduleJob(deps, { name: 'loyalty-worker', enabled, intervalMs, pass: () => runLoyaltyWorkerOnce(deps) });
}
