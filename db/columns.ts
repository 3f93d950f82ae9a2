// Every column of a hot table, named. A statement whose result is `*` or `t.*` is never prepared
// (db/connection.ts: a prepared star breaks once a rolling deploy's migration adds a column), so
// PostgreSQL parses and plans it on every execution; the picker's item commands read and write
// whole item and session rows several times each, and naming the columns lets those statements
// be prepared once per connection. The lists are checked against the table types: a column added
// to a table's interface and not here fails to compile.
import type { PickingItemsTable, PickingSessionsTable } from './tables/picking.js';

type Complete<T, C extends readonly (keyof T)[]> = Exclude<keyof T, C[number]> extends never ? C : { missing: Exclude<keyof T, C[number]> };

/** `columns` when it names every column of T; a compile error naming the missing ones otherwise. */
const allColumnsOf =
  <T>() =>
  <const C extends readonly (keyof T & string)[]>(columns: C & Complete<T, C>): C =>
    columns;

/** The columns as `alias.column` references (a joined or CTE-named table). */
export const qualified = <A extends string, C extends string>(alias: A, columns: readonly C[]) =>
  columns.map((c): `${A}.${C}` => `${alias}.${c}`);

export const PICKING_ITEM_COLUMNS = allColumnsOf<PickingItemsTable>()([
  'id',
  'session_id',
  'position',
  'order_item_id',
  'product_id',
  'inventory_id',
  'unit_id',
  'name_ru',
  'name_en',
  'image_url',
  'barcode',
  'plu_code',
  'unit_ru',
  'unit_en',
  'is_weight_based',
  'ordered_quantity',
  'unit_price',
  'tolerance_percent',
  'state',
  'clarification_kind',
  'missing_action',
  'is_resolved',
  'actual_quantity',
  'confirmed_quantity',
  'pick_source',
  'last_scanned_barcode',
  'label_plu',
  'is_added',
  'replacement_product_id',
  'replacement_inventory_id',
  'replacement_unit_id',
  'replacement_name_ru',
  'replacement_name_en',
  'replacement_barcode',
  'replacement_plu_code',
  'replacement_image_url',
  'replacement_unit_ru',
  'replacement_unit_en',
  'replacement_unit_price',
  'replacement_chosen_at',
  'current_line_total',
  'updated_at',
  'tote_id',
  'location_aisle',
  'location_section',
  'location_shelf',
  'location_sequence',
  'temperature_class',
  'replacement_preference',
  'approval_id',
  'approval_kind',
  'approval_status',
  'approval_decided_by',
  'approval_requested_at',
  'approval_expires_at',
  'approval_decided_at',
]);

export const PICKING_SESSION_COLUMNS = allColumnsOf<PickingSessionsTable>()([
  'id',
  'order_id',
  'picker_id',
  'store_id',
  'status',
  'closure_source',
  'version',
  'max_added_items',
  'added_items_count',
  'original_total',
  'current_total',
  'final_total',
  'reconciliation_status',
  'cancellation_reason',
  'cancel_after_resolved_items',
  'cancellation_acknowledged_at',
  'started_at',
  'updated_at',
  'closed_at',
  'batch_id',
]);
