// Tables of the customer-decides migration (2026_12_03_0701): a replacement preference per order
// line, the customer's approvals of pickers' proposals, and each store's window to answer them.
import type { ColumnType, Generated } from 'kysely';
import type { Decimal, Timestamp } from './types.js';

export type ReplacementPolicy = 'no_replacement' | 'picker_choice' | 'named_products';
export type ApprovalKind = 'replacement' | 'quantity' | 'weight';
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'withdrawn';
export type ApprovalDecider = 'customer' | 'timeout' | 'picking_finished' | 'picker' | 'picking_cancelled';

/** A line's replacement preference as a picking item keeps it, the named products' names included. */
export interface ItemPreference {
  policy: ReplacementPolicy;
  products: { product_id: string; name_ru: string; name_en: string }[];
  approval_required: boolean;
}

declare module './orders.js' {
  interface OrderItemsTable {
    /** NULL: the order's absence_action applies to the line. */
    replacement_policy: ReplacementPolicy | null;
    /** Most preferred first; empty unless the policy is named_products. */
    replacement_product_ids: ColumnType<string[], string[] | undefined, string[]>;
    replacement_approval: Generated<boolean>;
  }
}

declare module './picking.js' {
  interface PickingItemsTable {
    /** The line's preference as picking started (NULL: the order's absence_action; added items). */
    replacement_preference: ColumnType<ItemPreference | null, string | null | undefined, string | null>;
    /** The item's latest approval (item_approvals), as the picker sees it. */
    approval_id: ColumnType<number | null, number | null | undefined, number | null>;
    approval_kind: ApprovalKind | null;
    approval_status: ApprovalStatus | null;
    approval_decided_by: ApprovalDecider | null;
    approval_requested_at: Timestamp | null;
    approval_expires_at: Timestamp | null;
    approval_decided_at: Timestamp | null;
  }
}

declare module './foundation.js' {
  interface StoresTable {
    approval_window_seconds: Generated<number>;
  }
}

export interface ItemApprovalsTable {
  id: ColumnType<number, never, never>;
  order_id: string;
  order_item_id: number;
  session_id: number;
  picking_item_id: number;
  kind: ApprovalKind;
  status: Generated<ApprovalStatus>;
  decided_by: ApprovalDecider | null;
  proposed_product_id: string | null;
  proposed_name_ru: string;
  proposed_name_en: string;
  proposed_image: string | null;
  proposed_unit_price: Decimal;
  proposed_quantity: Decimal;
  proposed_line_total: Decimal;
  requested_at: ColumnType<Date, Date | string | undefined, Date | string>;
  expires_at: Timestamp;
  decided_at: Timestamp | null;
}

export interface ApprovalsTables {
  item_approvals: ItemApprovalsTable;
}
