// Tables of the orders migration (0005).
import type { ColumnType, Generated } from 'kysely';
import type { OrderStatus, PaymentStatus, PickingResultState, TrackingState } from '../../domain/orders/vocabulary.js';
import type { Decimal, Timestamp } from './types.js';

export type { OrderStatus, PaymentStatus, PickingResultState, TrackingState };

export interface OrdersTable {
  id: Generated<string>;
  no: ColumnType<number, never, never>;
  customer_id: string;
  store_id: string;
  type: 'delivery' | 'pickup';
  payment_method: 'cash' | 'online';
  status: OrderStatus;
  status_comment: string | null;
  /** Code of why the order entered its status (rendered per language); null when none. */
  status_reason: string | null;
  payment_status: PaymentStatus;
  absence_action: Generated<'remove' | 'call'>;
  comment: string | null;
  change_amount: Decimal | null;
  address_line: string;
  delivery_lon: number | null;
  delivery_lat: number | null;
  entrance: string | null;
  floor: string | null;
  apartment: string | null;
  intercom: string | null;
  courier_comment: string | null;
  delivery_zone_id: string | null;
  is_express: Generated<boolean>;
  express_minutes: number | null;
  slot_id: string | null;
  slot_date: string | null;
  slot_start: string | null;
  slot_end: string | null;
  slot_starts_at: Timestamp | null;
  slot_ends_at: Timestamp | null;
  payment_due_at: Timestamp | null;
  goods_total: Decimal;
  delivery_cost: ColumnType<string, string | number | undefined, string | number>;
  total_price: Decimal;
  final_total: Decimal | null;
  items_count: number;
  picking_result_state: Generated<PickingResultState>;
  has_picking_changes: Generated<boolean>;
  picking_completed_at: Timestamp | null;
  /** Totes the picked order is handed over in (batch picking); NULL otherwise. */
  tote_count: Generated<number | null>;
  order_version: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
  completed_at: Timestamp | null;
  cancelled_at: Timestamp | null;
  cancellation_reason: string | null;
}

export interface OrderItemsTable {
  id: ColumnType<number, never, never>;
  order_id: string;
  line_no: number;
  product_id: string;
  unit_id: string;
  inventory_id: string | null;
  name_ru: string;
  name_en: string;
  unit_name_ru: string;
  unit_name_en: string;
  image: string | null;
  barcode: string | null;
  plu_code: string | null;
  weight_based: Generated<boolean>;
  weight: ColumnType<string, string | number | undefined, string | number>;
  quantity: Decimal;
  unit_price: Decimal;
  old_price: Decimal | null;
  line_total: Decimal;
}

export interface OrderStatusHistoryTable {
  id: ColumnType<number, never, never>;
  order_id: string;
  status: OrderStatus;
  reason: string | null;
  comment: string | null;
  occurred_at: Timestamp;
}

export interface OrderDeliveriesTable {
  order_id: string;
  tracking_state: Generated<TrackingState>;
  tracking_comment: string | null;
  courier_name: string | null;
  courier_phone: string | null;
  courier_transport: 'foot' | 'bicycle' | 'scooter' | 'car' | null;
  /** [[lon, lat], ...]; written as JSON text. */
  courier_route: ColumnType<[number, number][] | null, string | null, string | null>;
  courier_request_ref: string | null;
  courier_lon: number | null;
  courier_lat: number | null;
  courier_location_at: Timestamp | null;
  eta: Timestamp | null;
  /** When the orders worker last asked the courier service about this delivery (COURIER_STATUS_CHECK_SECONDS). */
  courier_checked_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface OrderTrackingHistoryTable {
  id: ColumnType<number, never, never>;
  order_id: string;
  state: TrackingState;
  comment: string | null;
  occurred_at: Timestamp;
}

export interface OrdersTables {
  orders: OrdersTable;
  order_items: OrderItemsTable;
  order_status_history: OrderStatusHistoryTable;
  order_deliveries: OrderDeliveriesTable;
  order_tracking_history: OrderTrackingHistoryTable;
}
