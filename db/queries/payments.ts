// Query functions of the Payments area: bank invoices of an order, and the provider commands
// (courier requests and withdrawals, bank refunds and invoice cancellations) that follow a
// committed change and are sent by the background worker.
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import type { BankInvoiceStatus, ProviderCommandKind } from '../tables/payments.js';

const INVOICE_COLUMNS = [
  'id',
  'order_id',
  'provider',
  'provider_ref',
  'status',
  'amount',
  'currency',
  'link',
  'created_at',
  'expires_at',
  'settled_at',
] as const;

/** The order's open invoice, if any (at most one: a partial unique index). */
export function findOpenInvoice(db: Executor, orderId: string) {
  return db
    .selectFrom('bank_invoices')
    .select(INVOICE_COLUMNS)
    .where('order_id', '=', orderId)
    .where('status', '=', 'open')
    .executeTakeFirst();
}

export type InvoiceRow = NonNullable<Awaited<ReturnType<typeof findOpenInvoice>>>;

export function findInvoice(db: Executor, invoiceId: string) {
  return db.selectFrom('bank_invoices').select(INVOICE_COLUMNS).where('id', '=', invoiceId).executeTakeFirst();
}

export async function insertInvoice(
  db: Executor,
  invoice: {
    id: string;
    order_id: string;
    provider: string;
    provider_ref: string;
    amount: string;
    currency: string;
    link: string;
    expires_at: Date;
  },
): Promise<InvoiceRow> {
  return db
    .insertInto('bank_invoices')
    .values({ ...invoice, status: 'open' })
    .returning(INVOICE_COLUMNS)
    .executeTakeFirstOrThrow();
}

/**
 * Ends an open invoice (paid, failed, expired, cancelled); returns it, or undefined when it was
 * not open. `bankWordPending`: closed here before the bank's final word, which the worker is
 * to ask for at once (see withdrawInvoice).
 */
export function closeInvoice(
  db: Executor,
  invoiceId: string,
  status: Exclude<BankInvoiceStatus, 'open' | 'surplus'>,
  options: { bankWordPending?: boolean } = {},
) {
  return db
    .updateTable('bank_invoices')
    .set({
      status,
      settled_at: status === 'paid' || status === 'failed' ? sql<Date>`now()` : null,
      updated_at: sql<Date>`now()`,
      ...(options.bankWordPending ? { bank_word_pending: true, next_check_at: sql<Date>`now()` } : {}),
    })
    .where('id', '=', invoiceId)
    .where('status', '=', 'open')
    .returning(INVOICE_COLUMNS)
    .executeTakeFirst();
}

// ---- a real bank's invoices, settled by asking the bank (the orders worker) ----

/**
 * Invoices of a real bank that are open or await its final word, whose next check is due,
 * oldest due first (ids and orders).
 */
export function findInvoicesDueForCheck(db: Executor, limit: number) {
  return db
    .selectFrom('bank_invoices')
    .select(['id', 'order_id'])
    .where('provider', '<>', 'sandbox')
    .where((eb) => eb.or([eb('status', '=', 'open'), eb('bank_word_pending', '=', true)]))
    .where('next_check_at', '<=', sql<Date>`now()`)
    .orderBy('next_check_at')
    .limit(limit)
    .execute();
}

/**
 * The invoice, locked, if it is still open or awaiting the bank's word, and due for a check.
 * Taken after its order's lock (the order of locks of every invoice writer); another instance
 * that checked it first leaves it not due.
 */
export function lockInvoiceDueForCheck(db: Executor, invoiceId: string) {
  return db
    .selectFrom('bank_invoices')
    .select([...INVOICE_COLUMNS, 'bank_word_pending'])
    .where('id', '=', invoiceId)
    .where((eb) => eb.or([eb('status', '=', 'open'), eb('bank_word_pending', '=', true)]))
    .where('next_check_at', '<=', sql<Date>`now()`)
    .forUpdate()
    .executeTakeFirst();
}

/** Schedules the next check; `answered` when the bank gave its word this time. */
export async function scheduleInvoiceCheck(db: Executor, invoiceId: string, afterSeconds: number, answered: boolean): Promise<void> {
  await db
    .updateTable('bank_invoices')
    .set({
      next_check_at: sql<Date>`now() + make_interval(secs => ${afterSeconds})`,
      ...(answered ? { checked_at: sql<Date>`now()` } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', invoiceId)
    .execute();
}

/**
 * Records the bank's final word on an invoice closed here before it: nothing more to ask, and
 * when the bank took a payment on it, `paid` (the order takes it) or `surplus` (given back).
 */
export async function recordBankWord(db: Executor, invoiceId: string, paidAs: 'paid' | 'surplus' | null): Promise<void> {
  await db
    .updateTable('bank_invoices')
    .set({ bank_word_pending: false, updated_at: sql<Date>`now()`, ...(paidAs ? { status: paidAs, settled_at: sql<Date>`now()` } : {}) })
    .where('id', '=', invoiceId)
    .execute();
}

/**
 * The paid invoices of an order, first paid first: the order's payment, then the payment of a
 * difference it was picked for above that (finishSession). Refunds return money of these.
 */
export function findPaidInvoices(db: Executor, orderId: string) {
  return db
    .selectFrom('bank_invoices')
    .select(INVOICE_COLUMNS)
    .where('order_id', '=', orderId)
    .where('status', '=', 'paid')
    .orderBy('settled_at')
    .orderBy('id')
    .execute();
}

/** What the bank has already returned of the order's payment as picking differences (roubles, text). */
export async function refundedDifferences(db: Executor, orderId: string): Promise<string> {
  const { rows } = await sql<{ total: string }>`
    SELECT coalesce(sum((payload->>'amount')::numeric), 0)::numeric(12, 2)::text AS total FROM provider_commands
    WHERE order_id = ${orderId} AND kind = 'bank.refund' AND state = 'done' AND payload ? 'amount' AND NOT payload ? 'moot'`.execute(db);
  return rows[0]!.total;
}

/**
 * What of the order's payment goes back to the card as differences (roubles, text): every
 * difference refund asked for - done, under way, or given up to staff - but none left moot. What
 * the order has been paid is its paid invoices less this.
 */
export async function differencesReturned(db: Executor, orderId: string): Promise<string> {
  const { rows } = await sql<{ total: string }>`
    SELECT coalesce(sum((payload->>'amount')::numeric), 0)::numeric(12, 2)::text AS total FROM provider_commands
    WHERE order_id = ${orderId} AND kind = 'bank.refund' AND payload ? 'amount' AND NOT payload ? 'moot'`.execute(db);
  return rows[0]!.total;
}

/** A picking difference's refund left to the order's whole refund (nothing was asked of the bank). */
export async function markDifferenceRefundMoot(db: Executor, commandId: number): Promise<void> {
  await sql`UPDATE provider_commands SET payload = payload || '{"moot": true}'::jsonb WHERE id = ${commandId}`.execute(db);
}

/** Whether a picking difference's refund of the order other than `exceptId` is still to be done. */
export async function hasPendingDifferenceRefund(db: Executor, orderId: string, exceptId: number): Promise<boolean> {
  const row = await db
    .selectFrom('provider_commands')
    .select('id')
    .where('order_id', '=', orderId)
    .where('kind', '=', 'bank.refund')
    .where('state', '=', 'pending')
    .where('id', '<>', exceptId)
    .where(sql<boolean>`payload ? 'amount'`)
    .executeTakeFirst();
  return row !== undefined;
}

// ------------------------------------------------------------------------------------------------
// Provider commands

export async function enqueueProviderCommand(
  db: Executor,
  kind: ProviderCommandKind,
  orderId: string,
  payload: Record<string, unknown> = {},
): Promise<void> {
  await db
    .insertInto('provider_commands')
    .values({ kind, order_id: orderId, payload: JSON.stringify(payload) })
    .execute();
}

/** Due commands, oldest first, locked for this worker; other instances skip them. */
export function claimDueProviderCommands(db: Executor, limit: number) {
  return db
    .selectFrom('provider_commands')
    .select(['id', 'kind', 'order_id', 'payload', 'attempts'])
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .orderBy('next_attempt_at')
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

export type ProviderCommandRow = Awaited<ReturnType<typeof claimDueProviderCommands>>[number];

export async function finishProviderCommand(
  db: Executor,
  id: number,
  outcome: { state: 'done' } | { state: 'failed'; error: string } | { state: 'pending'; error: string; delaySeconds: number },
): Promise<void> {
  await db
    .updateTable('provider_commands')
    .set((eb) => ({
      state: outcome.state,
      attempts: eb('attempts', '+', 1),
      last_error: outcome.state === 'done' ? null : outcome.error,
      done_at: outcome.state === 'done' ? sql<Date>`now()` : null,
      next_attempt_at: outcome.state === 'pending' ? sql<Date>`now() + make_interval(secs => ${outcome.delaySeconds})` : sql<Date>`now()`,
    }))
    .where('id', '=', id)
    .execute();
}
