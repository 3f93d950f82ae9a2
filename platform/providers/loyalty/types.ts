// The loyalty provider (customer data platform, CDP) behind a small interface. Two
// implementations: the local ledger in PostgreSQL (local.ts, the default, which makes the
// embedded service complete) and an HTTP adapter for a real CDP (cdp-http.ts). The service keeps
// its own wallet record in step with the provider; nothing here knows about HTTP answers of ours.
import type { ProviderTransaction } from '../../../domain/loyalty/ledger.js';

/** Re-exported: providers report transactions in the ledger shape the service mirrors. */
export type { ProviderTransaction };

export interface ProviderQrcode {
  original: string;
  listing: string;
  detail: string;
}

export interface ProviderCard {
  id: string;
  card_number: string;
  title: string;
  is_virtual: boolean;
  is_active: boolean;
  is_blocked: boolean;
  /** Why the card is blocked (`lost`, `stolen`, `damaged`, `other`, `provider`); null when not or without reason. */
  block_reason: string | null;
  qrcode: ProviderQrcode | null;
}

export interface ProviderAccount {
  id: string;
  title: string;
  description: string;
  /** Decimal string. */
  balance: string;
  is_active: boolean;
}

export interface ProviderTier {
  id: number | null;
  order: number | null;
  name: string;
  boundary: string | null;
  /** Points per 100 roubles at this tier, decimal string; null when the provider does not say. */
  accrual_percent: string | null;
}

/** Everything the provider knows about one loyalty customer. */
export interface ProviderCustomer {
  id: string;
  program_id: number | null;
  program_name: string;
  main_card_id: string | null;
  accounts: ProviderAccount[];
  cards: ProviderCard[];
  current_tier: ProviderTier | null;
  next_tier: ProviderTier | null;
  /** Turnover counted for the tier, roubles decimal string. */
  total_turnover: string;
  /** Points of the latest accrual, decimal string. */
  last_purchase_points: string;
}

export interface ProviderLevel {
  id: number | null;
  order: number;
  name: string;
  boundary: string;
  clients_count: number | null;
  range_label: string;
  description: string;
  accrual_percent: string | null;
}

export interface ProviderProgram {
  id: number;
  name: string;
  levels: ProviderLevel[];
}

/** A card looked up by number (no customer data of its holder besides the holder's id). */
export interface ProviderCardLookup {
  id: string;
  card_number: string;
  is_virtual: boolean;
  /** False for a physical card from stock that was never issued. */
  issued: boolean;
  holder_id: string | null;
  is_blocked: boolean;
  /** Points on the card itself (an unregistered card), decimal string. */
  balance: string;
}

export interface ProviderPosition {
  name: string;
  code: string;
  quantity: number;
  price: string;
  amount: string;
  discount: string;
}

export interface ProviderDiscount {
  name: string;
  amount: string;
}

export interface ProviderPurchase {
  id: string;
  /** ISO 8601 date-time. */
  date: string;
  shop_name: string;
  total: string;
  bonus_accrual: string;
  items_count: number;
}

export interface ProviderPurchaseDetail extends ProviderPurchase {
  positions: ProviderPosition[];
  discounts: ProviderDiscount[];
}

export interface AccrualRequest {
  customerId: string;
  orderId: string;
  /** The goods amount the points were computed on (turnover for the tier), decimal string. */
  purchaseAmount: string;
  /** Whole points, decimal string. */
  points: string;
  /** When the order was completed (ISO 8601). */
  occurredAt: string;
  idempotencyKey: string;
}

export interface LoyaltyProvider {
  readonly name: 'local' | 'cdp';
  /** The loyalty customer registered with this phone, or null. */
  findCustomerId(phone: string): Promise<string | null>;
  /** Finds or creates the loyalty customer of the phone and makes sure it has an active virtual card. */
  provisionCustomer(input: { phone: string; idempotencyKey: string }): Promise<ProviderCustomer>;
  getCustomer(customerId: string): Promise<ProviderCustomer>;
  listPrograms(): Promise<ProviderProgram[]>;
  lookupCard(cardNumber: string): Promise<ProviderCardLookup | null>;
  /** Registers an issued card to the customer (found or created by phone when `customerId` is null). */
  linkCard(input: { customerId: string | null; phone: string; cardNumber: string; idempotencyKey: string }): Promise<ProviderCustomer>;
  /** Issues a never-issued physical card to the customer; it becomes the main card, the previous one is retired. */
  issuePhysicalCard(input: {
    customerId: string | null;
    phone: string;
    cardNumber: string;
    idempotencyKey: string;
  }): Promise<ProviderCustomer>;
  blockCard(input: { customerId: string; cardId: string; reason: string | null; idempotencyKey: string }): Promise<ProviderCustomer>;
  unblockCard(input: { customerId: string; cardId: string; idempotencyKey: string }): Promise<ProviderCustomer>;
  /** Issues a new virtual card as main card and retires (and blocks) the previous main card. */
  replaceCard(input: { customerId: string; cardId: string; idempotencyKey: string }): Promise<ProviderCustomer>;
  listPurchases(customerId: string): Promise<ProviderPurchase[]>;
  getPurchase(customerId: string, purchaseId: string): Promise<ProviderPurchaseDetail | null>;
  listTransactions(customerId: string, page: { offset: number; limit: number }): Promise<{ items: ProviderTransaction[]; count: number }>;
  recordAccrual(input: AccrualRequest): Promise<{ operation_id: string }>;
  /**
   * Erases the customer's personal data (account deletion): the phone no longer finds it and its
   * cards are blocked; the ledger stays for accounting. Idempotent; an unknown customer is done.
   */
  eraseCustomer(input: { customerId: string; idempotencyKey: string }): Promise<void>;
  /** Releases connections the provider holds. */
  close(): Promise<void>;
}

/**
 * A provider call that failed.
 * - `unavailable`: no usable answer (network error, 5xx, 429, a read that timed out or answered
 *   garbage); nothing was done, as far as we can tell.
 * - `unknown`: a command whose answer did not come in time or could not be read: the provider may
 *   or may not have applied it; it is re-sent later with the same idempotency key.
 * - `rejected`: the provider answered and refused; `code` says why (see REJECTION_CODES).
 */
export class LoyaltyProviderError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'unknown' | 'rejected',
    message: string,
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'LoyaltyProviderError';
  }
}

/** Refusal codes both implementations use. */
export const REJECTION_CODES = [
  'card_not_found',
  'card_owned_by_another_customer',
  'card_blocked',
  'card_not_issued',
  'card_already_issued',
  'unblock_not_allowed',
  'customer_not_found',
  'customer_rejected',
  'card_issue_failed',
] as const;
export type RejectionCode = (typeof REJECTION_CODES)[number];

export const rejected = (code: RejectionCode, message: string) => new LoyaltyProviderError('rejected', message, code);
