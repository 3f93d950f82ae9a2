// Tables of the picking migrations (2026_11_22_0007, 2026_12_02_1801): sessions, their items, the
// scan log, batches and totes.
import type { ColumnType, Generated } from 'kysely';
import type { TemperatureClass } from '../../domain/picking/batching.js';
import type { Decimal, Timestamp } from './types.js';

export type { TemperatureClass };

export type SessionStatus = 'active' | 'ready_to_finish' | 'completed' | 'cancelled';
export type ClosureSource = 'none' | 'picker_finish' | 'picker_cancel' | 'order_cancelled' | 'expired';
export type ReconciliationStatus = 'not_required' | 'pending' | 'completed' | 'failed';

export interface PickingSessionsTable {
  id: ColumnType<number, never, never>;
  order_id: string;
  picker_id: number;
  store_id: string;
  status: SessionStatus;
  closure_source: Generated<ClosureSource>;
  version: Generated<number>;
  max_added_items: number;
  added_items_count: Generated<number>;
  original_total: Decimal;
  current_total: Decimal;
  final_total: Decimal | null;
  reconciliation_status: ReconciliationStatus | null;
  cancellation_reason: string | null;
  cancel_after_resolved_items: number | null;
  cancellation_acknowledged_at: Timestamp | null;
  started_at: Timestamp;
  updated_at: Timestamp;
  closed_at: Timestamp | null;
  /** The batch the session was taken in; NULL for a session started on its own. */
  batch_id: number | null;
}

export interface PickingItemsTable {
  id: ColumnType<number, never, never>;
  session_id: number;
  position: number;
  order_item_id: number | null;
  product_id: string;
  inventory_id: string;
  unit_id: string;
  name_ru: string;
  name_en: string;
  image_url: string | null;
  barcode: string | null;
  plu_code: string | null;
  unit_ru: string;
  unit_en: string;
  is_weight_based: boolean;
  ordered_quantity: Decimal;
  unit_price: Decimal;
  tolerance_percent: Decimal | null;
  state: 'pending' | 'awaiting_quantity' | 'picked' | 'missing' | 'clarified';
  clarification_kind: 'removed' | 'quantity_mismatch' | 'weight_mismatch' | 'store_transfer_shortage' | null;
  missing_action: 'call' | 'remove' | null;
  is_resolved: Generated<boolean>;
  actual_quantity: Decimal | null;
  confirmed_quantity: Decimal | null;
  pick_source: 'scan' | 'scale_label' | 'manual' | 'weight' | null;
  last_scanned_barcode: string | null;
  label_plu: string | null;
  is_added: Generated<boolean>;
  replacement_product_id: string | null;
  replacement_inventory_id: string | null;
  replacement_unit_id: string | null;
  replacement_name_ru: string | null;
  replacement_name_en: string | null;
  replacement_barcode: string | null;
  replacement_plu_code: string | null;
  replacement_image_url: string | null;
  replacement_unit_ru: string | null;
  replacement_unit_en: string | null;
  replacement_unit_price: Decimal | null;
  replacement_chosen_at: Timestamp | null;
  current_line_total: Decimal;
  updated_at: Timestamp;
  /** The tote the picked goods went into (batch picking). */
  tote_id: number | null;
  location_aisle: string | null;
  location_section: string | null;
  location_shelf: string | null;
  /** Sorts in the store's walking order; NULL walks last. */
  location_sequence: string | null;
  temperature_class: Generated<TemperatureClass>;
}

export interface PickingScansTable {
  id: ColumnType<number, never, never>;
  session_id: number;
  item_id: number;
  picker_id: number;
  command: 'scan' | 'replacement' | 'weight';
  barcode: string;
  outcome: string;
  scanned_product_id: string | null;
  label_weight: Decimal | null;
  created_at: Timestamp;
}

/** Where the queue-horizon sweep stopped (one row; migration 0021). */
export interface PickerQueueHorizonTable {
  id: number;
  swept_until: Timestamp;
}

export interface PickingBatchesTable {
  id: ColumnType<number, never, never>;
  picker_id: number;
  store_id: string;
  created_at: Timestamp;
}

export interface PickingTotesTable {
  id: ColumnType<number, never, never>;
  session_id: number;
  store_id: string;
  temperature_class: TemperatureClass;
  label: string | null;
  bound_at: Timestamp | null;
  released_at: Timestamp | null;
}

export interface PickingTables {
  picking_sessions: PickingSessionsTable;
  picking_items: PickingItemsTable;
  picking_scans: PickingScansTable;
  picker_queue_horizon: PickerQueueHorizonTable;
  picking_batches: PickingBatchesTable;
  picking_totes: PickingTotesTable;
}
