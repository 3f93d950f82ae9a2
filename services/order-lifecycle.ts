// The moves of an order after checkout, shared by the customer's commands, the QA simulators and
// the background worker: cancelling (at once or queued behind a courier), courier-service events,
// bank settlement, the payment deadline and the courier request. Each function runs inside the
// caller's transaction on a locked order row, applies the state machines of domain/, writes
// the follow-up provider commands, and records exactly one event for the change.
import { releaseDeliverySlot, releasePickupSlot } from '../db/queries/logistics.js';
import { recordOrderChange, type OrderChange, type TrackingChange } from '../db/queries/order-events.js';
import {
  lockOrder,
  moveCourier,
  returnStock,
  setOrderStatus,
  updateDelivery,
  updateOrder,
  wasEverPicked,
  type OrderRow,
} from '../db/queries/orders.js';
import {
  closeInvoice,
  enqueueProviderCommand,
  findOpenInvoice,
  findPaidInvoices,
  recordBankWord,
  type InvoiceRow,
} from '../db/queries/payments.js';
import { returnPickedStock, settleCollectedDifference } from '../db/queries/picking/order-effects.js';
import type { Updateable } from 'kysely';
import type { Executor } from '../db/executor.js';
import type { DB } from '../db/schema.js';
import type { OrderStatus, TrackingState } from '../db/tables/orders.js';
import { conflict } from './errors.js';
import type { CourierStatus } from '../platform/providers/courier/types.js';
import { amountDue } from '../domain/orders/bank-invoice.js';
import {
  decideTrackingMove,
  deliveryEta,
  hasCourier,
  hasLiveMarker,
  planStatusReplay,
  type TrackingDecision,
} from '../domain/orders/delivery-tracking.js';
import { kopecks } from '../domain/money/money.js';
import { canMove, decideCancellation } from '../domain/orders/status.js';
import { trackingDisplayTexts, type StatusReason } from '../domain/texts/orders.js';
import { paymentFacts } from './presenters/orders.js';

/** A programming error, not a client's: the state machines were bypassed. */
function assertMove(from: OrderStatus, to: OrderStatus): void {
  if (!canMove(from, to)) throw new Error(`order status cannot move from ${from} to ${to}`);
}

/** The tracking part of an event, from the delivery before and after the change. */
function trackingChange(
  o: OrderRow,
  previous: TrackingState,
  next: { state: TrackingState; comment: string | null; eta: Date | null },
): TrackingChange {
  const eta = deliveryEta(next.state, {
    courierEta: next.eta,
    createdAt: o.created_at,
    expressMinutes: o.is_express ? o.express_minutes : null,
    slotEndsAt: o.slot_ends_at,
  });
  return {
    previous_state: previous,
    state: next.state,
    comment: next.comment,
    eta: eta ? eta.toISOString() : null,
    display: trackingDisplayTexts(next.state),
  };
}

/** Courier fields cleared when a delivery has no courier any more. */
const NO_COURIER = {
  courier_name: null,
  courier_phone: null,
  courier_transport: null,
  courier_lon: null,
  courier_lat: null,
  courier_location_at: null,
  courier_route: null,
  eta: null,
} as const;

export interface CancelEffects {
  /** The delivery moved to `cancelled` with the purchase. */
  tracking: TrackingChange | null;
  /** The payment state changed too (a refund started). */
  payment: boolean;
}

/**
 * Enters `cancelled` (OrderStatusValueEnum: "On entering cancelled"): stock and the slot go back,
 * an open invoice is cancelled, a paid order is refunded, a courier request not yet taken is
 * withdrawn. `courierSettled`: the delivery is already ending by the caller's move.
 * `stockReturned`: the caller has already put the stock back (a picking that took nothing).
 */
export async function enterCancelled(
  trx: Executor,
  o: OrderRow,
  reason: StatusReason,
  now: Date,
  options: { courierSettled?: boolean; stockReturned?: boolean } = {},
): Promise<CancelEffects> {
  assertMove(o.status, 'cancelled');
  const stopsPicking = o.picking_result_state === 'pending' || o.picking_result_state === 'in_progress';
  await setOrderStatus(
    trx,
    o.id,
    'cancelled',
    { reason },
    {
      cancelled_at: now,
      cancellation_reason: reason,
      ...(stopsPicking ? { picking_result_state: 'cancelled' as const } : {}),
    },
  );
  // A picked order holds what its session took; one not picked (yet) holds its ordered lines.
  if (!options.stockReturned) {
    if (o.picking_result_state === 'completed') await returnPickedStock(trx, o.id);
    else await returnStock(trx, o.id);
  }
  if (o.type === 'delivery') await releaseDeliverySlot(trx, o.id);
  else await releasePickupSlot(trx, o.id);

  const open = await findOpenInvoice(trx, o.id);
  if (open) await withdrawInvoice(trx, o.id, open, 'cancelled');
  let payment = false;
  // Paid - or awaiting only the difference it was picked for above what was paid (finishSession).
  const differenceDue = o.payment_status === 'awaiting' && (await findPaidInvoices(trx, o.id)).length > 0;
  if (o.payment_status === 'paid' || differenceDue) {
    await updateOrder(trx, o.id, { payment_status: 'refund_pending' });
    await enqueueProviderCommand(trx, 'bank.refund', o.id, {});
    if (differenceDue) await settleCollectedDifference(trx, o.id, 'not_required');
    payment = true;
  }

  // A courier not yet under way is withdrawn with the order (the store's cancellations, such as
  // nothing picked, do not wait for it as a customer's cancel does): no live courier is left
  // on a cancelled order. Later states belong to a collected order, which only the courier
  // service's own events cancel (courierSettled).
  let tracking: TrackingChange | null = null;
  const from = o.tracking_state;
  const notUnderWay = from === 'pending' || from === 'searching_courier' || from === 'courier_assigned' || from === 'courier_at_store';
  if (o.type === 'delivery' && !options.courierSettled && notUnderWay) {
    await updateDelivery(
      trx,
      o.id,
      { tracking_state: 'cancelled', tracking_comment: null, ...NO_COURIER },
      { state: 'cancelled', comment: null },
    );
    if (from !== 'pending') await enqueueProviderCommand(trx, 'courier.withdraw', o.id, { ref: o.courier_request_ref });
    tracking = trackingChange(o, from, { state: 'cancelled', comment: null, eta: null });
  }
  return { tracking, payment };
}

/** POST /api/orders/{order_id}/cancel on a locked order: cancelled at once, or queued behind an assigned courier. */
export async function cancelByCustomer(trx: Executor, o: OrderRow, now: Date): Promise<void> {
  const decision = decideCancellation(o.status, o.type === 'delivery' ? o.tracking_state : null);
  if (!decision.ok) {
    throw conflict(
      decision.code,
      decision.code === 'ORDER_ALREADY_CANCELLED' ? 'The order is already cancelled' : 'The order can no longer be cancelled; re-read it',
    );
  }
  if (decision.next === 'cancellation_requested') {
    assertMove(o.status, 'cancellation_requested');
    await setOrderStatus(trx, o.id, 'cancellation_requested', { reason: 'cancellation_queued' });
    await enqueueProviderCommand(trx, 'courier.withdraw', o.id, { ref: o.courier_request_ref });
    await recordOrderChange(trx, o.id, ['status', 'can_cancel'], { now });
    return;
  }
  const effects = await enterCancelled(trx, o, 'cancelled_by_customer', now);
  const changes: OrderChange[] = ['status', 'can_cancel', ...(effects.payment ? (['payment'] as const) : [])];
  await recordOrderChange(trx, o.id, changes, { now, ...(effects.tracking ? { tracking: effects.tracking } : {}) });
}

/**
 * A pickup order still waiting at the store a day after its slot ended is cancelled: what was
 * picked goes back to the shelves and a paid order is refunded; the customer is told.
 */
export async function cancelUncollected(trx: Executor, o: OrderRow, now: Date): Promise<boolean> {
  if (o.status !== 'ready_for_pickup') return false;
  const effects = await enterCancelled(trx, o, 'not_collected', now);
  await recordOrderChange(trx, o.id, ['status', 'can_cancel', ...(effects.payment ? (['payment'] as const) : [])], { notify: true, now });
  return true;
}

/** Online orders unpaid when their payment window closes are cancelled ("not paid in time"). */
export async function cancelUnpaid(trx: Executor, o: OrderRow, now: Date): Promise<boolean> {
  if ((o.status !== 'created' && o.status !== 'awaiting_payment') || o.payment_status !== 'awaiting') return false;
  const effects = await enterCancelled(trx, o, 'not_paid_in_time', now);
  await recordOrderChange(trx, o.id, ['status', 'can_cancel', 'payment'], { tracking: effects.tracking ?? undefined, notify: true, now });
  return true;
}

/** The server asks the courier service for a courier (scheduled: before the slot; express: at picking). */
export async function requestCourier(trx: Executor, o: OrderRow, now: Date): Promise<boolean> {
  if (o.type !== 'delivery' || o.tracking_state !== 'pending' || o.status === 'cancelled' || o.status === 'completed') return false;
  await updateDelivery(
    trx,
    o.id,
    { tracking_state: 'searching_courier', tracking_comment: null },
    { state: 'searching_courier', comment: null },
  );
  await enqueueProviderCommand(trx, 'courier.request', o.id, {});
  await recordOrderChange(trx, o.id, ['delivery'], {
    tracking: trackingChange(o, 'pending', { state: 'searching_courier', comment: null, eta: null }),
    now,
  });
  return true;
}

// ------------------------------------------------------------------------------------------------
// Courier-service events

export interface CourierEvent {
  state: TrackingState;
  /** Undefined: keep the comment when repeating the state, none when moving. */
  comment?: string | null;
  location?: { lon: number; lat: number } | null;
  /** Who took the request (with `courier_assigned`). */
  courier?: { name: string; phone: string | null; transport: 'foot' | 'bicycle' | 'scooter' | 'car' | null };
  /** The service's arrival estimate; undefined keeps the last one. */
  eta?: Date | null;
  route?: [number, number][] | null;
}

/** Events that the customer should hear about on the phone, not only in the open app. */
const PUSHED_STATES: readonly TrackingState[] = [
  'courier_assigned',
  'en_route',
  'arrived',
  'delivered',
  'cancelled',
  'returning',
  'returned',
];

/**
 * Applies one courier-service event to a locked delivery order, by the delivery state machine,
 * with its effect on the purchase (en_route, completed, the end of a queued cancellation).
 */
export async function applyCourierEvent(
  trx: Executor,
  o: OrderRow,
  e: CourierEvent,
  now: Date,
  options: { quiet?: boolean } = {},
): Promise<void> {
  if (o.type !== 'delivery' || !o.tracking_state) throw conflict('ORDER_HAS_NO_DELIVERY', 'A pickup order has no courier delivery');
  const from = o.tracking_state;
  const decision = decideTrackingMove(from, e.state, { status: o.status, wasPicked: await wasEverPicked(trx, o.id) });
  if (!decision.ok) {
    const detail = {
      DELIVERY_TRANSITION_NOT_ALLOWED: `The delivery cannot move from ${from} to ${e.state}`,
      ORDER_NOT_READY_FOR_COURIER: 'The courier can collect the order only once it is picked',
      ORDER_CLOSED: 'The order is finished; its delivery cannot be dispatched again',
    }[decision.code];
    throw conflict(decision.code, detail);
  }

  if (decision.kind === 'same') {
    if (hasLiveMarker(from)) await moveCourier(trx, o.id, { location: e.location, eta: e.eta, route: e.route });
    const comment = e.comment === undefined ? o.tracking_comment : e.comment;
    if (comment !== o.tracking_comment) {
      await updateDelivery(trx, o.id, { tracking_comment: comment }, null);
      await recordOrderChange(trx, o.id, ['delivery'], {
        tracking: trackingChange(o, from, { state: from, comment, eta: o.courier_eta }),
        notify: true,
        now,
      });
    }
    return;
  }

  const comment = e.comment ?? null;
  let courier: Updateable<DB['order_deliveries']>;
  if (!hasCourier(e.state) || e.state === 'searching_courier') {
    courier = { ...NO_COURIER };
  } else {
    const marker = hasLiveMarker(e.state);
    const location = marker
      ? (e.location ?? (o.courier_lon !== null && o.courier_lat !== null ? { lon: o.courier_lon, lat: o.courier_lat } : null))
      : null;
    courier = {
      ...(e.courier ? { courier_name: e.courier.name, courier_phone: e.courier.phone, courier_transport: e.courier.transport } : {}),
      courier_lon: location?.lon ?? null,
      courier_lat: location?.lat ?? null,
      courier_location_at: location ? (e.location ? now : o.courier_location_at) : null,
      courier_route: marker && e.route ? JSON.stringify(e.route) : null,
      eta:
        e.state === 'delivered' || e.state === 'returning' || e.state === 'returned' ? null : e.eta === undefined ? o.courier_eta : e.eta,
    };
  }
  await updateDelivery(trx, o.id, { tracking_state: e.state, tracking_comment: comment, ...courier }, { state: e.state, comment });
  const eta = (courier.eta ?? null) as Date | null;

  const changes: OrderChange[] = ['delivery'];
  if (decision.purchase) {
    const to = decision.purchase.to;
    if (to === 'cancelled') {
      const effects = await enterCancelled(trx, o, 'courier_withdrawn', now, { courierSettled: true });
      changes.push('status', 'can_cancel', ...(effects.payment ? (['payment'] as const) : []));
    } else {
      assertMove(o.status, to);
      await setOrderStatus(trx, o.id, to, { reason: decision.purchase.reason }, to === 'completed' ? { completed_at: now } : {});
      changes.push('status');
      // Out of a queued cancellation, or back to `picked` after a failed delivery (cancellable again).
      if (o.status === 'cancellation_requested' || to === 'picked') changes.push('can_cancel');
    }
  }
  if (e.state === 'searching_courier' && (from === 'cancelled' || from === 'returned')) {
    // The store dispatches the delivery again: a new request goes to the courier service.
    await enqueueProviderCommand(trx, 'courier.request', o.id, {});
  }
  await recordOrderChange(trx, o.id, changes, {
    tracking: trackingChange(o, from, { state: e.state, comment, eta }),
    notify: !options.quiet && PUSHED_STATES.includes(e.state),
    now,
  });
}

type TrackingRefusal = Extract<TrackingDecision, { ok: false }>['code'];

/**
 * What a courier service answered about a delivery it was asked about (the orders worker
 * follows an `http` service this way): the states it went through since the last question are
 * replayed in order, the last with the answer's details; only the last may notify the customer,
 * so a courier found already on the way is one push, not four. An answer the delivery's state
 * machine refuses changes nothing and is returned as the refusal's code.
 */
export async function followCourierStatus(
  trx: Executor,
  o: OrderRow,
  status: CourierStatus,
  now: Date,
): Promise<'applied' | TrackingRefusal> {
  if (o.type !== 'delivery' || !o.tracking_state) return 'DELIVERY_TRANSITION_NOT_ALLOWED';
  const plan = planStatusReplay(o.tracking_state, status.state, { status: o.status, wasPicked: await wasEverPicked(trx, o.id) });
  if (!plan.ok) return plan.code;
  // An answer without a comment keeps the one shown (the service says nothing new about it).
  const details: CourierEvent = {
    state: status.state,
    comment: status.comment ?? undefined,
    location: status.location,
    courier: status.courier ?? undefined,
    eta: status.eta,
    route: status.route,
  };
  if (!plan.steps.length) {
    await applyCourierEvent(trx, o, details, now);
    return 'applied';
  }
  let current = o;
  for (const [i, state] of plan.steps.entries()) {
    const last = i === plan.steps.length - 1;
    await applyCourierEvent(trx, current, last ? details : { state, courier: status.courier ?? undefined }, now, { quiet: !last });
    if (!last) current = (await lockOrder(trx, o.id))!;
  }
  return 'applied';
}

// ------------------------------------------------------------------------------------------------
// Bank settlement

/**
 * The bank's word on an open invoice of a locked order: `paid` confirms the order and records
 * the payment; `failed` only closes the invoice (a new GET of the invoice issues another one).
 */
export async function settleInvoice(
  trx: Executor,
  o: OrderRow,
  invoiceId: string,
  outcome: 'paid' | 'failed',
  now: Date,
): Promise<boolean> {
  const closed = await closeInvoice(trx, invoiceId, outcome);
  if (!closed) return false;
  if (outcome === 'failed') return true;
  await takePayment(trx, o, now);
  return true;
}

/**
 * Closes an open invoice here (`expired` by this service's clock, or `cancelled` with its
 * order) and withdraws it at the bank. The bank may have taken a payment on it a moment
 * before: a real bank's invoice then awaits the bank's final word, which the orders worker
 * asks for (see takeLatePayment).
 */
export async function withdrawInvoice(trx: Executor, orderId: string, invoice: InvoiceRow, status: 'expired' | 'cancelled'): Promise<void> {
  await closeInvoice(trx, invoice.id, status, { bankWordPending: invoice.provider !== 'sandbox' });
  await enqueueProviderCommand(trx, 'bank.cancel_invoice', orderId, { invoice_id: invoice.id, provider_ref: invoice.provider_ref });
}

/**
 * A payment the bank reports on an invoice closed here before its word (the locked order's).
 * An order that still awaits a payment of that amount - its own, or the difference it was picked
 * for above what was paid - takes it, as if the invoice had stayed open (another open invoice of
 * the order is withdrawn); otherwise (the order was cancelled, paid through a later invoice, or
 * now owes another amount) the invoice is a `surplus` and its whole amount goes back.
 */
export async function takeLatePayment(
  trx: Executor,
  o: OrderRow,
  invoice: { id: string; amount: string },
  now: Date,
): Promise<'taken' | 'surplus'> {
  const invoiceId = invoice.id;
  // The same rule as the order's "Pay" action (amountDue): awaited, and of that amount.
  const due = amountDue(paymentFacts(o), o.payment_status === 'awaiting' ? await findPaidInvoices(trx, o.id) : []);
  const awaiting = due !== null && kopecks(due) === kopecks(invoice.amount);
  if (!awaiting) {
    await recordBankWord(trx, invoiceId, 'surplus');
    await enqueueProviderCommand(trx, 'bank.refund_surplus', o.id, { invoice_id: invoiceId });
    return 'surplus';
  }
  await recordBankWord(trx, invoiceId, 'paid');
  const open = await findOpenInvoice(trx, o.id);
  if (open) await withdrawInvoice(trx, o.id, open, 'cancelled');
  await takePayment(trx, o, now);
  return 'taken';
}

/**
 * The order (locked) is paid: recorded, confirmed when it waited for it, and told. A payment
 * after picking is that of the difference the order was picked for above what was paid: it
 * settles the session's reconciliation.
 */
async function takePayment(trx: Executor, o: OrderRow, now: Date): Promise<void> {
  await updateOrder(trx, o.id, { payment_status: 'paid' });
  const changes: OrderChange[] = ['payment'];
  if (o.status === 'created' || o.status === 'awaiting_payment') {
    assertMove(o.status, 'confirmed');
    await setOrderStatus(trx, o.id, 'confirmed');
    changes.push('status');
  } else {
    await settleCollectedDifference(trx, o.id, 'completed');
  }
  await recordOrderChange(trx, o.id, changes, { notify: true, now });
}
