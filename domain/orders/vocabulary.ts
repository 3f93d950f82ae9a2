// The states an order and its parts can be in, as the interface spec names them (its status and
// transition tables). The database stores these strings as they are (db/tables/orders.ts).
export type OrderStatus =
  | 'created'
  | 'awaiting_payment'
  | 'confirmed'
  | 'picking'
  | 'picked'
  | 'ready_for_pickup'
  | 'en_route'
  | 'completed'
  | 'cancellation_requested'
  | 'cancelled';
export type TrackingState =
  | 'pending'
  | 'searching_courier'
  | 'courier_assigned'
  | 'courier_at_store'
  | 'en_route'
  | 'arrived'
  | 'delivered'
  | 'cancelled'
  | 'returning'
  | 'returned';
export type PaymentStatus = 'not_required' | 'awaiting' | 'paid' | 'refund_pending' | 'refunded';
export type PickingResultState = 'pending' | 'in_progress' | 'completed' | 'cancelled';
export type BankInvoiceStatus = 'open' | 'paid' | 'failed' | 'expired' | 'cancelled' | 'surplus';
