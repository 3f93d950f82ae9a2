// Provider commands (order worker, job 3): courier requests and withdrawals, bank refunds and
// invoice cancellations that follow a committed change, sent and retried with backoff.
import { sql } from 'kysely';
import { findStoreForOrder, lockOrder, updateDelivery, updateOrder } from '../../db/queries/orders.js';
import { recordOrderChange } from '../../db/queries/order-events.js';
import {
  claimDueProviderCommands,
  findInvoice,
  findPaidInvoices,
  hasPendingDifferenceRefund,
  markDifferenceRefundMoot,
  finishProviderCommand,
  refundedDifferences,
  type ProviderCommandRow,
} from '../../db/queries/payments.js';
import { setReconciliationStatus } from '../../db/queries/picking/sessions.js';
import type { Executor } from '../../db/executor.js';
import { wholeRefunds } from '../../domain/orders/bank-invoice.js';
import { afterFailure } from '../../domain/time/retry-schedule.js';
import type { AppDeps } from '../../services/deps.js';
import { BankRefusedError } from '../../platform/providers/bank/index.js';
import { CourierRefusedError } from '../../platform/providers/courier/index.js';

/** Provider commands are retried for about a day (backoff capped at an hour) before giving up. */
const COMMAND_MAX_ATTEMPTS = 30;

const COMMAND_RETRY_BASE_SECONDS = 5;

/**
 * The difference a `bank.refund` returns - of a picking session (finishSession, `session_id`) or of
 * a change of the lines before picking (none) - or null for a whole refund (no `amount`).
 */
function partialRefundOf(cmd: ProviderCommandRow): { amount: string; sessionId: number | null } | null {
  const p = cmd.payload as { amount?: unknown; session_id?: unknown };
  if (cmd.kind !== 'bank.refund' || typeof p.amount !== 'string') return null;
  return { amount: p.amount, sessionId: typeof p.session_id === 'number' ? p.session_id : null };
}

/** Runs one command; true when done, false when the provider asked to come back later. */
async function runCommand(trx: Executor, deps: AppDeps, cmd: ProviderCommandRow): Promise<boolean> {
  const o = await lockOrder(trx, cmd.order_id);
  if (!o) return true; // the order is gone: nothing left to tell anyone
  const payload = cmd.payload as Record<string, string | null | undefined>;
  switch (cmd.kind) {
    case 'courier.request': {
      if (o.tracking_state !== 'searching_courier' || o.delivery_lon === null || o.delivery_lat === null) return true;
      const store = await findStoreForOrder(trx, o.store_id);
      const { ref } = await deps.courier.requestCourier({
        orderId: o.id,
        orderNo: o.no,
        storeId: o.store_id,
        pickup: { lon: store?.lon ?? o.store_lon, lat: store?.lat ?? o.store_lat },
        dropoff: { lon: o.delivery_lon, lat: o.delivery_lat },
        addressLine: o.address_line,
        isExpress: o.is_express,
        window:
          o.slot_starts_at && o.slot_ends_at ? { startsAt: o.slot_starts_at.toISOString(), endsAt: o.slot_ends_at.toISOString() } : null,
        toteCount: o.tote_count,
      });
      await updateDelivery(trx, o.id, { courier_request_ref: ref }, null);
      return true;
    }
    case 'courier.withdraw':
      await deps.courier.withdraw({ orderId: o.id, ref: payload.ref ?? o.courier_request_ref });
      return true;
    case 'bank.cancel_invoice':
      await deps.bank.cancelInvoice({ invoiceId: String(payload.invoice_id), providerRef: String(payload.provider_ref) });
      return true;
    case 'bank.refund_surplus': {
      // The whole of a payment the bank took on an invoice the order no longer needed.
      const invoice = await findInvoice(trx, String(payload.invoice_id));
      if (!invoice || invoice.status !== 'surplus') throw new BankRefusedError('the invoice is not a surplus payment');
      const result = await deps.bank.refund({
        refundId: `refund-${cmd.id}`,
        invoiceId: invoice.id,
        providerRef: invoice.provider_ref,
        amount: invoice.amount,
        currency: invoice.currency,
      });
      return result.status === 'succeeded';
    }
    case 'bank.refund': {
      // Whole (a cancelled paid order: what was not already returned) or the picking difference
      // of one session (`amount`; moot once the whole payment is being returned).
      const difference = partialRefundOf(cmd);
      // A difference not yet asked of the bank when the order stopped being paid (cancelled and
      // refunded whole) is moot: the whole refund returns it. One already asked is seen through.
      if (difference && o.payment_status !== 'paid' && cmd.attempts === 0) {
        await markDifferenceRefundMoot(trx, cmd.id);
        if (difference.sessionId !== null) await setReconciliationStatus(trx, difference.sessionId, 'not_required');
        return true;
      }
      if (!difference && o.payment_status !== 'refund_pending') return true;
      // A whole refund subtracts the differences already returned: it waits for those under way.
      if (!difference && (await hasPendingDifferenceRefund(trx, o.id, cmd.id))) return false;
      const paid = await findPaidInvoices(trx, o.id);
      if (!paid.length) throw new BankRefusedError('the order has no paid invoice to refund');
      // A difference goes back on the order's payment (an order picked for less paid no other);
      // a whole refund returns every paid invoice (the payment of a difference too).
      const refunds = difference
        ? [{ invoice: paid[0], amount: difference.amount }]
        : wholeRefunds(paid, await refundedDifferences(trx, o.id));
      let pending = false;
      for (const [n, { invoice, amount }] of refunds.entries()) {
        // One refund id per invoice and command: a command run again asks the bank the same.
        const result = await deps.bank.refund({
          refundId: n === 0 ? `refund-${cmd.id}` : `refund-${cmd.id}-${n}`,
          invoiceId: invoice!.id,
          providerRef: invoice!.provider_ref,
          amount,
          currency: invoice!.currency,
        });
        if (result.status === 'pending') pending = true;
      }
      if (pending) return false;
      if (difference) {
        if (difference.sessionId !== null) await setReconciliationStatus(trx, difference.sessionId, 'completed');
        await recordOrderChange(trx, o.id, ['payment'], { now: deps.clock.now() });
      } else {
        await updateOrder(trx, o.id, { payment_status: 'refunded' });
        await recordOrderChange(trx, o.id, ['payment'], { notify: true, now: deps.clock.now() });
      }
      return true;
    }
  }
}

export async function runProviderCommands(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = await claimDueProviderCommands(trx, deps.config.orders.worker.batchSize);
    for (const cmd of due) {
      // A savepoint per command: one failing command must not undo the others' effects.
      await sql`SAVEPOINT provider_command`.execute(trx);
      try {
        const done = await runCommand(trx, deps, cmd);
        await sql`RELEASE SAVEPOINT provider_command`.execute(trx);
        if (done) await finishProviderCommand(trx, cmd.id, { state: 'done' });
        else
          await finishProviderCommand(trx, cmd.id, {
            state: 'pending',
            error: 'the provider has not finished yet',
            delaySeconds: COMMAND_RETRY_BASE_SECONDS * 6,
          });
      } catch (err) {
        await sql`ROLLBACK TO SAVEPOINT provider_command`.execute(trx);
        const message = (err as Error).message;
        const refused = err instanceof BankRefusedError || err instanceof CourierRefusedError;
        const next = afterFailure(cmd.attempts + 1, COMMAND_MAX_ATTEMPTS, COMMAND_RETRY_BASE_SECONDS);
        if (refused || !next.retry) {
          deps.log.error('provider command given up', { command_id: cmd.id, kind: cmd.kind, order_id: cmd.order_id, err: message });
          await finishProviderCommand(trx, cmd.id, { state: 'failed', error: message });
          // The picker app and support see that staff must settle the difference by hand.
          const difference = partialRefundOf(cmd);
          if (difference?.sessionId != null) await setReconciliationStatus(trx, difference.sessionId, 'failed');
        } else {
          deps.log.warn('provider command failed; will retry', { command_id: cmd.id, kind: cmd.kind, err: message });
          await finishProviderCommand(trx, cmd.id, { state: 'pending', error: message, delaySeconds: next.delaySeconds });
        }
      }
    }
    return due.length;
  });
}
