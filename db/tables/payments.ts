// Tables of the payments migration (2026_11_22_0006): bank invoices, push deliveries, provider
// commands, and the push progress column it adds to the foundation's outbox.
import type { ColumnType, Generated } from 'kysely';
import type { BankInvoiceStatus } from '../../domain/orders/vocabulary.js';
import type { Decimal, Timestamp } from './types.js';

export type { BankInvoiceStatus };

declare module './foundation.js' {
  interface OutboxEventsTable {
    /** When the event was fanned out to push deliveries; null while pending (or never needed). */
    pushed_at: Timestamp | null;
  }
}

/**
 * `surplus` (migration 2026_11_22_0013): paid at the bank after this service had closed the
 * invoice, when its order no longer needed the payment; the money goes back (bank.refund_surplus).
 */
export type PushDeliveryState = 'pending' | 'sent' | 'failed' | 'stale_token' | 'skipped';
export type ProviderCommandKind = 'courier.request' | 'courier.withdraw' | 'bank.refund' | 'bank.cancel_invoice' | 'bank.refund_surplus';

export interface BankInvoicesTable {
  id: string;
  order_id: string;
  provider: string;
  provider_ref: string;
  status: BankInvoiceStatus;
  amount: Decimal;
  currency: string;
  link: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  settled_at: Timestamp | null;
  updated_at: Timestamp;
  /** When a real bank last answered about the invoice (the orders worker asks); null: never. */
  checked_at: Timestamp | null;
  /** When the worker asks the bank next (open invoices of a real bank, and those awaiting its word). */
  next_check_at: Timestamp;
  /**
   * Closed here (expired by this service's clock, or its order cancelled) before a real bank's
   * final word on it: the worker asks the bank until it gives one (migration 2026_11_22_0013).
   */
  bank_word_pending: Generated<boolean>;
}

export interface PushDeliveriesTable {
  notification_id: string;
  device_id: string;
  event_id: string;
  /** The recipient: a customer's or a picker's installation (exactly one is set). */
  customer_id: string | null;
  picker_id: number | null;
  order_id: string | null;
  title: string;
  body: string;
  data: ColumnType<Record<string, string>, string, string>;
  state: Generated<PushDeliveryState>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: Timestamp | null;
  /** The order the deliveries were made in (the sender goes by it). */
  seq: ColumnType<string, never, never>;
}

export interface ProviderCommandsTable {
  id: Generated<number>;
  kind: ProviderCommandKind;
  order_id: string;
  payload: ColumnType<Record<string, unknown>, string | undefined, string>;
  state: Generated<'pending' | 'done' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp;
  last_error: string | null;
  created_at: Timestamp;
  done_at: Timestamp | null;
}

export interface PaymentsTables {
  bank_invoices: BankInvoicesTable;
  push_deliveries: PushDeliveriesTable;
  provider_commands: ProviderCommandsTable;
}
