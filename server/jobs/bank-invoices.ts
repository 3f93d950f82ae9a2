// A real bank's open invoices (order worker, job 4): asked about and settled by its answer; those
// closed here before its final word are asked until it gives one (a late payment is taken or refunded).
import { lockOrder } from '../../db/queries/orders.js';
import {
  closeInvoice,
  findInvoicesDueForCheck,
  lockInvoiceDueForCheck,
  recordBankWord,
  scheduleInvoiceCheck,
} from '../../db/queries/payments.js';
import { settleInvoice, takeLatePayment } from '../../services/order-lifecycle.js';
import type { AppDeps } from '../../services/deps.js';
import type { InvoiceOutcome } from '../../platform/providers/bank/types.js';

/** How long after its expiry a closed invoice waits for the bank's final word (then: support). */
const BANK_WORD_WAIT_MS = 24 * 3600 * 1000;

/**
 * Asks a real bank about its open invoices and settles them by its word, as a notification
 * would (the sandbox's are settled by its QA operation). Each in its own transaction, the order
 * locked before the invoice as the invoice handler does; a question the bank does not answer is
 * asked again `statusCheckSeconds` later. The answer's wait is bounded by BANK_TIMEOUT_MS.
 *
 * An invoice closed here before the bank's final word (expired by this service's clock and
 * replaced, or its order cancelled) is asked about the same way until the bank says how it
 * ended: a payment the bank took on it is taken by the order or refunded (takeLatePayment).
 * A bank that still calls it pending a day after it expired is given up on, loudly: support
 * settles it by hand.
 */
export async function checkBankInvoices(deps: AppDeps): Promise<number> {
  const bank = deps.bank;
  const { statusCheckSeconds } = deps.config.orders.bank;
  let settled = 0;
  for (const due of await findInvoicesDueForCheck(deps.db, deps.config.orders.worker.batchSize)) {
    settled += await deps.db.transaction().execute(async (trx) => {
      const o = await lockOrder(trx, due.order_id);
      const invoice = o ? await lockInvoiceDueForCheck(trx, due.id) : undefined;
      if (!o || !invoice) return 0;
      let outcome: InvoiceOutcome | null = null;
      // An invoice of a bank this instance is not configured for is left to one that is.
      if (invoice.provider === bank.name) {
        try {
          outcome = await bank.invoiceStatus({ invoiceId: invoice.id, providerRef: invoice.provider_ref });
        } catch (err) {
          deps.log.warn('bank invoice status unknown; will ask again', {
            invoice_id: invoice.id,
            order_id: o.id,
            err: (err as Error).message,
          });
        }
      }
      await scheduleInvoiceCheck(trx, invoice.id, statusCheckSeconds, outcome !== null);
      if (invoice.status !== 'open') {
        if (outcome === null || outcome === 'open') {
          if (deps.clock.nowMs() - invoice.expires_at.getTime() < BANK_WORD_WAIT_MS) return 0;
          deps.log.error('the bank gave no final word on a closed invoice; stopped asking', { invoice_id: invoice.id, order_id: o.id });
          await recordBankWord(trx, invoice.id, null);
          return 0;
        }
        if (outcome !== 'paid') {
          await recordBankWord(trx, invoice.id, null);
          return 1;
        }
        const taken = await takeLatePayment(trx, o, invoice, deps.clock.now());
        deps.log.warn('the bank took a payment on an invoice closed here', { invoice_id: invoice.id, order_id: o.id, outcome: taken });
        return 1;
      }
      if (outcome === null || outcome === 'open') return 0;
      if (outcome === 'expired') await closeInvoice(trx, invoice.id, 'expired');
      else await settleInvoice(trx, o, invoice.id, outcome, deps.clock.now());
      return 1;
    });
  }
  return settled;
}
