// The one mapper of each picking resource from its rows to the contract's shape: the signed-in
// picker, sessions, items, stores, slots, queue cards and history as the picker app sees them, and
// the order's picking result as the customer sees it.
import type { components } from '../../generated/api.test.js';
import { formatDecimal } from '../../domain/money/decimal.js';
import { currentItemIndex, currentLineTotal, isResolved, stateKey, type ItemFacts } from '../../domain/picking/items.js';
import { kopecks, lineTotal, money, normalizeMoney } from '../../domain/money/money.js';
import { pickingResult, type PickingResultView, type ResultItemInput } from '../../domain/picking/result.js';
import { summaryRates } from '../../domain/picking/stats.js';
import type { HistoryRow, HistoryTotals } from '../../db/queries/picking/history.js';
import { itemFacts, type ItemFactsRow, type ItemRow, type ReplacementOption } from '../../db/queries/picking/items.js';
import { type QueueRow } from '../../db/queries/picking/queue.js';
import { type SessionHead } from '../../db/queries/picking/sessions.js';

type Schemas = components['schemas'];
export type PickingSessionView = Schemas['PickingSessionSchema'];
export type PickingSessionHeaderView = Schemas['PickingSessionHeaderSchema'];
export type PickingItemView = Schemas['PickingItemSchema'];
export type PickerStoreView = Schemas['PickerStoreSchema'];
export type PickerSlotView = Schemas['PickerSlotSchema'];
type Lang = 'ru' | 'en';

const quantity = (q: bigint) => formatDecimal(q, 3);

export function toPickerStore(
  s: { id: string; name_ru: string; name_en: string; address_ru: string | null; address_en: string | null; timezone: string },
  lang: Lang,
): PickerStoreView {
  return {
    id: s.id,
    name: lang === 'ru' ? s.name_ru : s.name_en,
    address: lang === 'ru' ? s.address_ru : s.address_en,
    timezone: s.timezone,
  };
}

/** The columns of a row that joins its store. */
interface StoreColumns {
  store_id: string;
  store_name_ru: string;
  store_name_en: string;
  store_address_ru: string | null;
  store_address_en: string | null;
  store_timezone: string;
}

const storeOf = (r: StoreColumns, lang: Lang): PickerStoreView =>
  toPickerStore(
    {
      id: r.store_id,
      name_ru: r.store_name_ru,
      name_en: r.store_name_en,
      address_ru: r.store_address_ru,
      address_en: r.store_address_en,
      timezone: r.store_timezone,
    },
    lang,
  );

/** The order's slot; null for express orders and orders without one. */
export function toPickerSlot(o: {
  is_express: boolean;
  slot_id: string | null;
  slot_date: string | null;
  slot_start: string | null;
  slot_end: string | null;
  slot_starts_at: Date | null;
  slot_ends_at: Date | null;
}): PickerSlotView | null {
  if (o.is_express || !o.slot_id || !o.slot_date || !o.slot_start || !o.slot_end || !o.slot_starts_at || !o.slot_ends_at) return null;
  return {
    id: o.slot_id,
    date: o.slot_date,
    start_time: o.slot_start.slice(0, 8),
    end_time: o.slot_end.slice(0, 8),
    starts_at: o.slot_starts_at.toISOString(),
    ends_at: o.slot_ends_at.toISOString(),
  };
}

/** Price the item is charged at: the replacement's once one is chosen. */
export const chargedPrice = (r: ItemRow): bigint => kopecks(r.replacement_unit_price ?? r.unit_price);

/** The item's contribution to the current total (what `current_line_total` stores). */
export const itemLineTotal = (r: ItemRow, f: ItemFacts = itemFacts(r)): bigint => currentLineTotal(f, chargedPrice(r));

export function toPickingItem(r: ItemRow, lang: Lang, options: readonly ReplacementOption[] = []): PickingItemView {
  const f = itemFacts(r);
  const unit = lang === 'ru' ? r.unit_ru : r.unit_en;
  return {
    item_id: r.id,
    product_id: r.product_id,
    inventory_id: r.inventory_id,
    unit_id: r.unit_id,
    name: lang === 'ru' ? r.name_ru : r.name_en,
    image_url: r.image_url,
    barcode: r.barcode,
    plu_code: r.plu_code,
    unit,
    is_weight_based: r.is_weight_based,
    ordered_quantity: quantity(f.ordered),
    actual_quantity: f.actual === null ? null : quantity(f.actual),
    confirmed_quantity: f.confirmed === null ? null : quantity(f.confirmed),
    unit_price: normalizeMoney(r.unit_price),
    ordered_line_total: r.is_added ? '0.00' : money(lineTotal(f.ordered, kopecks(r.unit_price))),
    current_line_total: normalizeMoney(r.current_line_total),
    state: r.state,
    clarification_kind: r.clarification_kind,
    is_resolved: isResolved(f),
    missing_action: r.missing_action,
    is_added: r.is_added,
    pick_source: r.pick_source,
    last_scanned_barcode: r.last_scanned_barcode,
    tolerance: f.tolerance
      ? {
          percent: formatDecimal(f.tolerance.percentTenths, 1),
          min_quantity: quantity(f.tolerance.min),
          max_quantity: quantity(f.tolerance.max),
        }
      : null,
    replacement_options: r.state === 'missing' && r.missing_action === 'call' ? [...options] : [],
    replacement:
      r.replacement_product_id && r.replacement_inventory_id && r.replacement_unit_price && r.replacement_chosen_at
        ? {
            inventory_id: r.replacement_inventory_id,
            product_id: r.replacement_product_id,
            name: (lang === 'ru' ? r.replacement_name_ru : r.replacement_name_en) ?? '',
            barcode: r.replacement_barcode,
            plu_code: r.replacement_plu_code,
            image_url: r.replacement_image_url,
            unit: (lang === 'ru' ? r.replacement_unit_ru : r.replacement_unit_en) ?? unit,
            unit_price: normalizeMoney(r.replacement_unit_price),
            is_weight_based: r.is_weight_based,
            chosen_at: r.replacement_chosen_at.toISOString(),
          }
        : null,
    updated_at: r.updated_at.toISOString(),
    location: {
      aisle: r.location_aisle,
      section: r.location_section,
      shelf: r.location_shelf,
      sequence: r.location_sequence,
      temperature_class: r.temperature_class,
    },
    tote_id: r.tote_id,
    replacement_preference: r.replacement_preference && {
      policy: r.replacement_preference.policy,
      products: r.replacement_preference.products.map((n) => ({ product_id: n.product_id, name: lang === 'ru' ? n.name_ru : n.name_en })),
      approval_required: r.replacement_preference.approval_required,
    },
    approval:
      r.approval_id !== null && r.approval_kind && r.approval_status && r.approval_requested_at && r.approval_expires_at
        ? {
            approval_id: r.approval_id,
            kind: r.approval_kind,
            status: r.approval_status,
            decided_by: r.approval_decided_by,
            requested_at: r.approval_requested_at.toISOString(),
            expires_at: r.approval_expires_at.toISOString(),
            decided_at: r.approval_decided_at?.toISOString() ?? null,
          }
        : null,
  };
}

/**
 * Items that offer replacement options (missing, the customer to be called), except lines whose
 * customer wants no replacement; a line naming its replacements is offered those alone.
 */
export const itemsWantingOptions = (items: readonly ItemRow[]) =>
  items
    .filter((i) => i.state === 'missing' && i.missing_action === 'call' && i.replacement_preference?.policy !== 'no_replacement')
    .map((i) => ({
      itemId: i.id,
      productId: i.product_id,
      isWeightBased: i.is_weight_based,
      unitPrice: i.unit_price,
      named: i.replacement_preference?.policy === 'named_products' ? i.replacement_preference.products.map((n) => n.product_id) : null,
    }));

/** The session without its items (PickingSessionHeaderSchema): a picker command's delta answer. */
export function toPickingSessionHeader(
  head: SessionHead,
  items: readonly ItemFactsRow[],
  viewerPickerId: number,
  lang: Lang,
): PickingSessionHeaderView {
  const closed = head.status === 'completed' || head.status === 'cancelled';
  const original = kopecks(head.original_total);
  const current = kopecks(head.final_total ?? head.current_total);
  return {
    session_id: head.id,
    order_id: head.order_id,
    order_number: String(head.order_no),
    is_express: head.is_express,
    current_item_index: currentItemIndex(items.map((i) => itemFacts(i))),
    is_locked: closed || head.picker_id !== viewerPickerId,
    is_cancelled: head.status === 'cancelled',
    is_completed: head.status === 'completed',
    session_status: head.status,
    version: head.version,
    updated_at: head.updated_at.toISOString(),
    closure_source: head.closure_source,
    absence_preference: head.absence_action,
    customer_comment: head.customer_comment ?? '',
    customer_phone: head.customer_phone ?? '',
    max_added_items: head.max_added_items,
    added_items_count: head.added_items_count,
    payment_summary: {
      original_total: money(original),
      current_total: money(current),
      difference: money(current - original),
      reconciliation_status: head.reconciliation_status,
    },
    store: storeOf(head, lang),
    fulfillment_type: head.fulfillment_type,
    cancellation_reason: head.cancellation_reason,
    cancel_after_resolved_items: head.cancel_after_resolved_items,
    slot: toPickerSlot(head),
    batch_id: head.batch_id,
    totes: head.totes.map((t) => ({
      ...t,
      order_id: head.order_id,
      bound_at: isoOrNull(t.bound_at),
      released_at: isoOrNull(t.released_at),
    })),
  };
}

/** A timestamp read inside JSON (PostgreSQL's text form) as the contract's ISO 8601 form. */
const isoOrNull = (t: string | null): string | null => (t === null ? null : new Date(t).toISOString());

/** The whole session: its header and its items (with the replacement options of those offering them). */
export function toPickingSession(
  head: SessionHead,
  items: readonly ItemRow[],
  options: ReadonlyMap<number, ReplacementOption[]>,
  viewerPickerId: number,
  lang: Lang,
): PickingSessionView {
  return {
    ...toPickingSessionHeader(head, items, viewerPickerId, lang),
    items: items.map((i) => toPickingItem(i, lang, options.get(i.id))),
  };
}

export type OrderPickingResultView = Schemas['PickingResultSchema'];

/** The picking result an order's detail shows once picking has started (PickingResultSchema). */
export function toOrderPickingResult(
  state: OrderPickingResultView['state'],
  items: readonly ItemRow[],
  completedAt: Date | null,
  lang: Lang,
): OrderPickingResultView {
  const result = toPickingResult(items, lang, state === 'completed');
  // Only the schema's fields: the view's internal `hasChanges` is the order's `has_picking_changes`.
  return { state, summary: result.summary, items: result.items, completed_at: completedAt ? completedAt.toISOString() : null };
}

/** The customer's picking result from the items of the order's session. */
export function toPickingResult(items: readonly ItemRow[], lang: Lang, completed: boolean): PickingResultView {
  const inputs: ResultItemInput[] = items.map((r) => ({
    id: r.id,
    position: r.position,
    isAdded: r.is_added,
    facts: itemFacts(r),
    ordered: {
      name: lang === 'ru' ? r.name_ru : r.name_en,
      productId: r.product_id,
      unitId: r.unit_id,
      image: r.image_url,
      barcode: r.barcode,
      pluCode: r.plu_code,
      unit: lang === 'ru' ? r.unit_ru : r.unit_en,
      priceKopecks: kopecks(r.unit_price),
    },
    replacement:
      r.replacement_product_id && r.replacement_unit_price
        ? {
            name: (lang === 'ru' ? r.replacement_name_ru : r.replacement_name_en) ?? '',
            productId: r.replacement_product_id,
            unitId: r.replacement_unit_id,
            image: r.replacement_image_url,
            barcode: r.replacement_barcode,
            pluCode: r.replacement_plu_code,
            unit: (lang === 'ru' ? r.replacement_unit_ru : r.replacement_unit_en) ?? (lang === 'ru' ? r.unit_ru : r.unit_en),
            priceKopecks: kopecks(r.replacement_unit_price),
          }
        : null,
  }));
  return pickingResult(inputs, lang, completed);
}

// ---------------------------------------------------------------------------------------------
// The signed-in picker

export type PickerUserView = Schemas['PickerUserSchema'];
export type PickerRefreshView = Schemas['PickerRefreshOutput'];

/** The picker with the stores they work in and their current session, if any. */
export function toPickerUser(
  picker: { id: number; login: string; display_name: string; is_active: boolean; default_store_id: string | null },
  stores: readonly Parameters<typeof toPickerStore>[0][],
  current: { id: number; order_id: string } | undefined,
  lang: Lang,
): PickerUserView {
  return {
    id: picker.id,
    login: picker.login,
    display_name: picker.display_name,
    is_active: picker.is_active,
    stores: stores.map((s) => toPickerStore(s, lang)),
    default_store_id: picker.default_store_id,
    active_session_id: current?.id ?? null,
    active_order_id: current?.order_id ?? null,
  };
}

/** A token pair as the picker app receives it, with the lifetimes of its tokens in seconds. */
export function toPickerTokens(
  pair: { access: string; refresh: string },
  expiresIn: { access: number; refresh: number },
): PickerRefreshView {
  return {
    access: pair.access,
    refresh: pair.refresh,
    token_type: 'Bearer',
    access_expires_in: expiresIn.access,
    refresh_expires_in: expiresIn.refresh,
  };
}

// ---------------------------------------------------------------------------------------------
// History

export type PickerHistorySessionView = Schemas['PickerHistorySessionSchema'];
export type PickerHistoryItemView = Schemas['PickerHistoryItemSchema'];
type ResolutionType = NonNullable<PickerHistoryItemView['resolution_type']>;

/** How a resolved item was settled; null for an unsettled one (cancelled sessions keep any state). */
export function resolutionType(f: ItemFacts, hasReplacement: boolean): ResolutionType | null {
  switch (stateKey(f)) {
    case 'picked':
      if (hasReplacement) return 'replaced';
      if (f.confirmed !== null) return f.isWeightBased ? 'weight_confirmed' : 'quantity_confirmed';
      return 'picked';
    case 'clarified/removed':
      return 'removed';
    case 'clarified/store_transfer_shortage':
      return 'store_transfer_shortage';
    default:
      return null;
  }
}

export function toHistoryItem(r: ItemRow, lang: Lang, settled: boolean): PickerHistoryItemView {
  const f = itemFacts(r);
  const key = stateKey(f);
  const replaced = r.replacement_product_id !== null;
  const originalName = lang === 'ru' ? r.name_ru : r.name_en;
  return {
    item_id: String(r.id),
    source: r.pick_source ?? 'none',
    original_name: originalName,
    final_name: replaced ? ((lang === 'ru' ? r.replacement_name_ru : r.replacement_name_en) ?? originalName) : originalName,
    barcode: r.last_scanned_barcode ?? '',
    state: key,
    required_quantity: quantity(f.ordered),
    actual_quantity: quantity(f.actual ?? 0n),
    original_unit_price: normalizeMoney(r.unit_price),
    final_unit_price: money(chargedPrice(r)),
    is_added: r.is_added,
    is_removed: key === 'clarified/removed' || key === 'clarified/store_transfer_shortage',
    original_image_url: r.image_url,
    final_image_url: replaced ? r.replacement_image_url : r.image_url,
    original_plu_code: r.plu_code,
    final_plu_code: replaced ? r.replacement_plu_code : r.plu_code,
    plu_code: r.pick_source === 'scale_label' ? r.label_plu : null,
    resolution_type: settled ? resolutionType(f, replaced) : null,
    original_barcode: r.barcode ?? '',
    final_barcode: (replaced ? r.replacement_barcode : r.barcode) ?? '',
  };
}

export function toHistorySession(r: HistoryRow, lang: Lang): PickerHistorySessionView {
  return {
    session_id: r.session_id,
    order_id: r.order_id,
    order_number: String(r.order_no),
    picker_id: r.picker_id,
    picker_login: r.picker_login,
    picker_display_name: r.picker_display_name,
    session_status: r.status,
    closure_source: r.closure_source,
    started_at: r.started_at.toISOString(),
    completed_at: r.closed_at.toISOString(),
    duration_seconds: durationSeconds(r),
    is_express: r.is_express,
    fulfillment_type: r.fulfillment_type,
    store: storeOf(r, lang),
    slot: toPickerSlot(r),
    items_count: r.items_count,
    picked_items_count: r.picked_items_count,
    changed_items_count: r.changed_items_count,
    removed_items_count: r.removed_items_count,
    added_items_count: r.added_items_count,
    original_total: normalizeMoney(r.original_total),
    final_total: normalizeMoney(r.final_total),
  };
}

export type PickerHistorySessionDetailView = Schemas['PickerHistorySessionDetailSchema'];

/** A closed session of the picker with its items (settled only when the session completed). */
export function toHistorySessionDetail(row: HistoryRow, items: readonly ItemRow[], lang: Lang): PickerHistorySessionDetailView {
  const settled = row.status === 'completed';
  return {
    session_id: row.session_id,
    order_id: row.order_id,
    order_number: String(row.order_no),
    session_status: row.status,
    completed_at: row.closed_at.toISOString(),
    duration_seconds: durationSeconds(row),
    items: items.map((i) => toHistoryItem(i, lang, settled)),
    store: storeOf(row, lang),
    fulfillment_type: row.fulfillment_type,
    slot: toPickerSlot(row),
  };
}

export type PickerHistorySummaryView = Schemas['PickerHistorySummarySchema'];

/** The totals of the picker's closed sessions in a period, echoing the period as it was asked for. */
export function toHistorySummary(
  t: HistoryTotals,
  period: { started_at: string | null; ended_at: string | null },
  rates: Schemas['PickerPickingRatesSchema'],
): PickerHistorySummaryView {
  return {
    started_at: period.started_at,
    ended_at: period.ended_at,
    sessions_count: t.sessions_count,
    completed_sessions_count: t.completed_sessions_count,
    cancelled_sessions_count: t.cancelled_sessions_count,
    items_count: t.items_count,
    picked_items_count: t.picked_items_count,
    changed_items_count: t.changed_items_count,
    replaced_items_count: t.replaced_items_count,
    removed_items_count: t.removed_items_count,
    added_items_count: t.added_items_count,
    total_duration_seconds: t.total_duration_seconds,
    ...summaryRates(t),
    completed_total: normalizeMoney(t.completed_total),
    rates,
  };
}

export const durationSeconds = (r: { started_at: Date; closed_at: Date }): number =>
  Math.max(0, Math.floor((r.closed_at.getTime() - r.started_at.getTime()) / 1000));

// ---------------------------------------------------------------------------------------------
// Queue

export type PickerOrderView = Schemas['PickerOrderSchema'];

/** A queue card for the caller (`is_mine`, `can_start` depend on who reads it). */
export function toQueueCard(r: QueueRow, viewerId: number, viewerCurrentSessionId: number | null, lang: Lang): PickerOrderView {
  const inProgress = r.session_id !== null;
  const mine = inProgress && r.picker_id === viewerId;
  return {
    order_id: r.order_id,
    order_number: String(r.no),
    created_at: r.created_at.toISOString(),
    is_express: r.is_express,
    fulfillment_type: r.type,
    slot: toPickerSlot(r),
    pick_deadline: r.pick_deadline.toISOString(),
    items_count: r.items_count,
    has_weight_items: r.has_weight_items,
    total: normalizeMoney(r.goods_total),
    customer_comment: r.comment ?? '',
    absence_preference: r.absence_action,
    store: storeOf(r, lang),
    queue_status: inProgress ? 'in_progress' : 'waiting',
    session_id: r.session_id,
    picker: inProgress && r.picker_id !== null ? { id: r.picker_id, display_name: r.picker_display_name ?? '' } : null,
    is_mine: mine,
    // Start succeeds for a waiting order when the caller has no current session, and resumes the caller's own.
    can_start: mine || (!inProgress && viewerCurrentSessionId === null),
  };
}
