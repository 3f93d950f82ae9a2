// A transaction of the loyalty ledger as every provider reports it (the wallet's history,
// LoyaltyTransactionSchema of the spec once mapped), kept as this service mirrors it.
export interface ProviderTransaction {
  id: string;
  type: 'accrual' | 'redemption' | 'expiry' | 'adjustment';
  status: 'pending' | 'posted' | 'cancelled';
  amount: string;
  balance_after: string | null;
  account_id: string | null;
  created_at: string;
  available_at: string | null;
  expires_at: string | null;
  order_id: string | null;
  purchase_id: string | null;
  shop_name: string | null;
  comment: string | null;
}
