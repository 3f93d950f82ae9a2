// Row -> API mappers of the Orders area, one per resource: the status, the delivery with its
// tracking, the pickup slot, order lines, the listing, detail and roadmaps. Texts follow the
// reader's language; money and quantities are written as decimal strings at their scale.
import type { components } from '../../generated/api.test.js';
import type { OrderItemRow, OrderListRow, OrderRow } from '../../db/queries/orders.js';
import { normalizeDecimal } from '../../domain/money/decimal.js';
import { normalizeMoney, QUANTITY_SCALE } from '../../domain/money/money.js';
import { courierCallable, deliveryEta, hasCourier, hasLiveMarker } from '../../domain/orders/delivery-tracking.js';
import { localMoment } from '../../domain/time/local-time.js';
import { canCancel, roadmapSteps, type StatusEntry } from '../../domain/orders/status.js';
import { changeability } from '../../domain/orders/order-change.js';
import { statusComment, statusDisplay, trackingDisplay, type Lang } from '../../domain/texts/orders.js';
import { itemApprovalView, replacementPreferenceView, type ApprovalRow } from './approvals.js';

type Schemas = components['schemas'];
export type OrderDetail = Schemas['OrderDetailSchema'];
export type DeliveryInfo = Schemas['DeliveryInfoSchema'];
export type PickingResult = Schemas['PickingResultSchema'];

const quantity = (v: string) => normalizeDecimal(v, QUANTITY_SCALE);

/** The amount to pay: the ordered total until picking completes, then the picked total. */
export const payableTotal = (o: { total_price: string; final_total: string | null }) => normalizeMoney(o.final_total ?? o.total_price);

/** What the payment rules (amountDue) read of an order. */
export const paymentFacts = (o: OrderRow) => ({
  paymentMethod: o.payment_method,
  paymentStatus: o.payment_status,
  status: o.status,
  total: payableTotal(o),
});

/** Delivery orders show their address; pickup orders the store's, in the reader's language. */
const addressLine = (
  o: { type: 'delivery' | 'pickup'; address_line: string; store_address_ru: string | null; store_address_en: string | null },
  lang: Lang,
) => (o.type === 'pickup' ? ((lang === 'ru' ? o.store_address_ru : o.store_address_en) ?? o.address_line) : o.address_line);

export function orderStatusView(
  o: Pick<OrderRow, 'status' | 'type' | 'status_reason' | 'status_comment'>,
  lang: Lang,
): Schemas['OrderStatusSchema'] {
  return {
    display: statusDisplay(o.status, o.type, lang),
    value: o.status,
    comment: statusComment(o.status_reason, o.status_comment, lang),
  };
}

/** "HH:MM:SS+03:00" of an instant in the store's zone. */
const localTime = (instant: Date, timezone: string) => {
  const m = localMoment(instant, timezone);
  return `${m.time}${m.offset}`;
};

export function pickupView(o: OrderRow): Schemas['PickupInfoSchema'] | null {
  if (o.type !== 'pickup' || !o.slot_date || !o.slot_starts_at || !o.slot_ends_at) return null;
  return {
    date: o.slot_date,
    start_time: localTime(o.slot_starts_at, o.store_timezone),
    end_time: localTime(o.slot_ends_at, o.store_timezone),
  };
}

export function deliveryView(o: OrderRow, lang: Lang, refreshSeconds: number): DeliveryInfo | null {
  // No delivery row, or the address was erased with the customer's account: nothing to show.
  if (o.type !== 'delivery' || !o.tracking_state || o.delivery_lon === null || o.delivery_lat === null) return null;
  const state = o.tracking_state;
  const live = hasLiveMarker(state);
  const location = live && o.courier_lon !== null && o.courier_lat !== null ? { lon: o.courier_lon, lat: o.courier_lat } : null;
  const eta = deliveryEta(state, {
    courierEta: o.courier_eta,
    createdAt: o.created_at,
    expressMinutes: o.is_express ? o.express_minutes : null,
    slotEndsAt: o.slot_ends_at,
  });
  return {
    address_line: o.address_line,
    location: { lon: o.delivery_lon, lat: o.delivery_lat },
    entrance: o.entrance,
    floor: o.floor,
    apartment: o.apartment,
    intercom: o.intercom,
    comment: o.courier_comment,
    is_express: o.is_express,
    window:
      !o.is_express && o.slot_date && o.slot_starts_at && o.slot_ends_at
        ? {
            slot_id: o.slot_id,
            date: o.slot_date,
            start_time: localTime(o.slot_starts_at, o.store_timezone),
            end_time: localTime(o.slot_ends_at, o.store_timezone),
          }
        : null,
    price: normalizeMoney(o.delivery_cost),
    eta: eta ? eta.toISOString() : null,
    tracking: {
      state,
      display: trackingDisplay(state, lang),
      comment: o.tracking_comment ?? null,
      updated_at: (o.tracking_updated_at ?? o.updated_at).toISOString(),
    },
    courier:
      hasCourier(state) && o.courier_name
        ? {
            name: o.courier_name,
            phone: courierCallable(state) ? o.courier_phone : null,
            transport: o.courier_transport,
            location,
            location_updated_at: location && o.courier_location_at ? o.courier_location_at.toISOString() : null,
            route: location && o.courier_route?.length ? o.courier_route.map(([lon, lat]) => ({ lon, lat })) : null,
          }
        : null,
    refresh_after_seconds: location ? refreshSeconds : null,
  };
}

/** What an order line shows beside its own row: its latest approval, and the names of the products its preference names. */
export interface LineExtras {
  /** The latest approval of each line, by the line's id. */
  approvals: ReadonlyMap<number, ApprovalRow>;
  /** Names of the products the lines' preferences name, by product id (a product gone from the catalog is absent). */
  names: ReadonlyMap<string, { name_ru: string; name_en: string }>;
}

export function orderItemView(i: OrderItemRow, lang: Lang, extras: LineExtras): Schemas['OrderItemSchema'] {
  const approval = extras.approvals.get(i.id);
  return {
    id: i.id,
    unit_name: lang === 'ru' ? i.unit_name_ru : i.unit_name_en,
    name: lang === 'ru' ? i.name_ru : i.name_en,
    weight: quantity(i.weight),
    unit_price: normalizeMoney(i.unit_price),
    quantity: quantity(i.quantity),
    product_id: i.product_id,
    unit_id: i.unit_id,
    image: i.image,
    old_price: i.old_price === null ? null : normalizeMoney(i.old_price),
    replacement: replacementPreferenceView(i, extras.names, lang),
    approval: approval ? itemApprovalView(approval, lang) : null,
  };
}

/** Whether the customer may change the order's lines now (OrderDetailSchema `can_change`). */
export const canChange = (o: Pick<OrderRow, 'status' | 'picking_started'>): boolean =>
  changeability(o.status, o.picking_started) === 'changeable';

export function orderListingView(o: OrderListRow, lang: Lang): Schemas['OrdersListingSchema'] {
  return {
    id: o.id,
    no: o.no,
    type: o.type,
    address_line: addressLine(o, lang),
    created_at: o.created_at.toISOString(),
    total_price: payableTotal(o),
    picking_result_state: o.picking_result_state,
    has_picking_changes: o.has_picking_changes,
  };
}

export function orderRoadmapView(o: OrderRow, lang: Lang): Schemas['OrderRoadmapSchema'] {
  return {
    no: o.no,
    type: o.type,
    status: orderStatusView(o, lang),
    total_price: payableTotal(o),
    items_count: o.items_count,
    picking_result_state: o.picking_result_state,
    has_picking_changes: o.has_picking_changes,
  };
}

export function orderRoadmapDetailView(
  o: OrderRow,
  history: readonly StatusEntry[],
  amountDue: string | null,
  lang: Lang,
  refreshSeconds: number,
): Schemas['DetailOrderRoadmapSchema'] {
  return {
    ...orderRoadmapView(o, lang),
    id: o.id,
    order_version: o.order_version,
    created_at: o.created_at.toISOString(),
    updated_at: o.updated_at.toISOString(),
    address_line: addressLine(o, lang),
    payment_method: o.payment_method,
    payment_status: o.payment_status,
    amount_due: amountDue,
    can_cancel: canCancel(o.status),
    steps: roadmapSteps({ type: o.type, paymentMethod: o.payment_method, status: o.status }, history, lang),
    delivery: deliveryView(o, lang, refreshSeconds),
    pickup: pickupView(o),
  };
}

/** Nothing picked yet: the result the spec describes for `pending`. */
export const emptyPickingResult = (state: OrderRow['picking_result_state']): PickingResult => ({
  state,
  summary: { removed: 0, changed: 0, unchanged: 0 },
  items: [],
  completed_at: null,
});

export function orderDetailView(
  o: OrderRow,
  items: readonly OrderItemRow[],
  pickingResult: PickingResult,
  lang: Lang,
  refreshSeconds: number,
  extras: LineExtras,
): OrderDetail {
  return {
    id: o.id,
    no: o.no,
    type: o.type,
    address_line: addressLine(o, lang),
    created_at: o.created_at.toISOString(),
    total_price: payableTotal(o),
    items: items.map((i) => orderItemView(i, lang, extras)),
    status: orderStatusView(o, lang),
    picking_result: pickingResult,
    picking_result_state: o.picking_result_state,
    has_picking_changes: o.has_picking_changes,
    tote_count: o.tote_count,
    delivery: deliveryView(o, lang, refreshSeconds),
    pickup: pickupView(o),
    comment: o.comment,
    can_cancel: canCancel(o.status),
    can_change: canChange(o),
    order_version: o.order_version,
  };
}

export const historyEntries = (
  rows: readonly { status: OrderRow['status']; reason: string | null; comment: string | null; occurred_at: Date }[],
): StatusEntry[] => rows.map((r) => ({ status: r.status, at: r.occurred_at, reason: r.reason, comment: r.comment }));
