// Tables of the loyalty migrations: the local ledger (loyalty_ledger_*, provider side) and
// this service's wallets, jobs, mirrors and accruals. Numeric columns are decimal strings.
import type { ColumnType, Generated } from 'kysely';
import type { TierStatus } from '../../domain/loyalty/tiers.js';
import type { Decimal, Json, Timestamp } from './types.js';

export type WalletStatus = 'pending' | 'ready' | 'error';
export type LoyaltyJobKind = 'provision' | 'sync' | 'command' | 'accrual' | 'erase';
export type LoyaltyTransactionType = 'accrual' | 'redemption' | 'expiry' | 'adjustment';
export type LoyaltyTransactionStatus = 'pending' | 'posted' | 'cancelled';
export type AccrualOutcome = 'accrued' | 'no_wallet' | 'card_blocked';

/** A jsonb column written as JSON text and read parsed, with a default on insert. */
type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;

/** An account as mirrored in loyalty_wallets.accounts (the provider's data). */
export interface MirroredAccount {
  id: string;
  title: string;
  description: string;
  balance: string;
  is_active: boolean;
}

/** A card as mirrored in loyalty_wallets.cards (the provider's data). */
export interface MirroredCard {
  id: string;
  title: string;
  card_number: string;
  is_virtual: boolean;
  is_active: boolean;
  is_blocked: boolean;
  /** `lost`, `stolen`, `damaged`, `other`, `provider`, or null for a block without a reason. */
  block_reason: string | null;
  qrcode: { original: string; listing: string; detail: string } | null;
}

/** LoyaltyStatusSchema as stored at the last synchronization: the tier rule's result (labels come from the provider). */
export type StoredLoyaltyStatus = TierStatus;

export interface StoredPosition {
  name: string;
  code: string;
  quantity: number;
  price: string;
  amount: string;
  discount: string;
}

export interface StoredDiscount {
  name: string;
  amount: string;
}

/** A card command as sent to the provider, kept on its job so it can be re-sent with the same key. */
export type StoredWalletCommand =
  | { type: 'block'; card_id: string; reason: string | null; key: string }
  | { type: 'unblock'; card_id: string; key: string }
  | { type: 'link'; card_number: string; key: string }
  | { type: 'link_physical'; card_number: string; key: string }
  | { type: 'replace'; card_id: string; key: string };

/** What loyalty_jobs.payload holds for each kind of job. */
export interface LoyaltyJobPayloads {
  provision: Record<string, never>;
  sync: Record<string, never>;
  command: StoredWalletCommand;
  /** Without `completed_at` the provider is given the time the accrual was recorded. */
  accrual: { order_id: string; completed_at?: string };
  erase: { provider_customer_id: string };
}

// ---- the local ledger -------------------------------------------------------------------------

export interface LoyaltyLedgerProgramsTable {
  id: number;
  name: string;
  period_days: Generated<number>;
  is_default: Generated<boolean>;
}

export interface LoyaltyLedgerLevelsTable {
  id: number;
  program_id: number;
  position: number;
  name: string;
  boundary: Decimal;
  accrual_percent: Decimal;
  range_label: Generated<string>;
  description: Generated<string>;
}

export interface LoyaltyLedgerCustomersTable {
  id: string;
  phone: string;
  program_id: number;
  main_card_id: string | null;
  created_at: Timestamp;
}

export interface LoyaltyLedgerAccountsTable {
  id: string;
  customer_id: string;
  kind: 'bonus' | 'promo';
  title: string;
  description: Generated<string>;
  balance: ColumnType<string, string | number | undefined, string | number>;
  is_active: Generated<boolean>;
}

export interface LoyaltyLedgerCardsTable {
  id: string;
  card_number: string;
  customer_id: string | null;
  is_virtual: boolean;
  issued_at: Timestamp | null;
  is_active: Generated<boolean>;
  is_blocked: Generated<boolean>;
  block_reason: string | null;
  balance: ColumnType<string, string | number | undefined, string | number>;
  issue_key: string | null;
  created_at: Timestamp;
}

export interface LoyaltyLedgerOperationsTable {
  id: string;
  customer_id: string;
  account_id: string;
  type: LoyaltyTransactionType;
  status: ColumnType<LoyaltyTransactionStatus, LoyaltyTransactionStatus | undefined, LoyaltyTransactionStatus>;
  amount: Decimal;
  balance_after: Decimal | null;
  purchase_amount: Decimal | null;
  order_id: string | null;
  purchase_id: string | null;
  shop_name: string | null;
  comment: string | null;
  created_at: Timestamp;
  available_at: Timestamp | null;
  expires_at: Timestamp | null;
  idempotency_key: string | null;
}

export interface LoyaltyLedgerReceiptsTable {
  id: string;
  customer_id: string;
  card_id: string | null;
  shop_name: string;
  occurred_at: Timestamp;
  total: Decimal;
  bonus_accrual: ColumnType<string, string | number | undefined, string | number>;
  positions: JsonWithDefault<StoredPosition[]>;
  discounts: JsonWithDefault<StoredDiscount[]>;
}

// ---- this service ---------------------------------------------------------------------------------

export interface LoyaltyWalletsTable {
  id: Generated<string>;
  customer_id: string;
  status: WalletStatus;
  provider_customer_id: string | null;
  main_card_id: string | null;
  active_account_id: string | null;
  accounts: JsonWithDefault<MirroredAccount[]>;
  cards: JsonWithDefault<MirroredCard[]>;
  loyalty_status: Json<StoredLoyaltyStatus> | null;
  tier_accrual_percent: Decimal | null;
  last_synced_at: Timestamp | null;
  last_error_code: string | null;
  last_error_at: Timestamp | null;
  last_error_attempts: number | null;
  sync_attempts: Generated<number>;
  revision: Generated<number>;
  purchases_synced_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface LoyaltyJobsTable {
  id: ColumnType<number, never, never>;
  wallet_id: string;
  kind: LoyaltyJobKind;
  payload: JsonWithDefault<LoyaltyJobPayloads[LoyaltyJobKind]>;
  state: ColumnType<'queued' | 'done' | 'failed', 'queued' | 'done' | 'failed' | undefined, 'queued' | 'done' | 'failed'>;
  attempts: Generated<number>;
  run_at: Timestamp;
  lease_until: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface LoyaltyAccrualsTable {
  order_id: string;
  customer_id: string;
  wallet_id: string | null;
  outcome: AccrualOutcome;
  base_amount: Decimal;
  points: Decimal;
  accrual_percent: Decimal | null;
  tier_label: string | null;
  provider_operation_id: string | null;
  posted_at: Timestamp | null;
  created_at: Timestamp;
}

export interface LoyaltyPurchaseMirrorTable {
  wallet_id: string;
  id: string;
  occurred_at: Timestamp;
  shop_name: Generated<string>;
  total: Decimal;
  bonus_accrual: ColumnType<string, string | number | undefined, string | number>;
  items_count: Generated<number>;
  positions: ColumnType<StoredPosition[] | null, string | null | undefined, string | null>;
  discounts: ColumnType<StoredDiscount[] | null, string | null | undefined, string | null>;
  fetched_at: Timestamp;
}

export interface LoyaltyTransactionMirrorTable {
  wallet_id: string;
  id: string;
  type: LoyaltyTransactionType;
  status: LoyaltyTransactionStatus;
  amount: Decimal;
  balance_after: Decimal | null;
  account_id: string | null;
  created_at: Timestamp;
  available_at: Timestamp | null;
  expires_at: Timestamp | null;
  order_id: string | null;
  purchase_id: string | null;
  shop_name: string | null;
  comment: string | null;
  fetched_at: Timestamp;
}

export interface LoyaltyTables {
  loyalty_ledger_programs: LoyaltyLedgerProgramsTable;
  loyalty_ledger_levels: LoyaltyLedgerLevelsTable;
  loyalty_ledger_customers: LoyaltyLedgerCustomersTable;
  loyalty_ledger_accounts: LoyaltyLedgerAccountsTable;
  loyalty_ledger_cards: LoyaltyLedgerCardsTable;
  loyalty_ledger_operations: LoyaltyLedgerOperationsTable;
  loyalty_ledger_receipts: LoyaltyLedgerReceiptsTable;
  loyalty_wallets: LoyaltyWalletsTable;
  loyalty_jobs: LoyaltyJobsTable;
  loyalty_accruals: LoyaltyAccrualsTable;
  loyalty_purchase_mirror: LoyaltyPurchaseMirrorTable;
  loyalty_transaction_mirror: LoyaltyTransactionMirrorTable;
}
