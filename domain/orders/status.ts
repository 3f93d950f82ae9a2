// The purchase state machine of an order (OrderStatusValueEnum in spec/components/orders.yaml):
// which moves exist, when the customer may cancel and what a cancellation does, and the
// progress line of the roadmap. Plain values in, plain values out.
import type { OrderStatus, TrackingState } from './vocabulary.js';
import { statusComment, statusDisplay, type Lang } from '../texts/orders.js';

/** A pickup order not collected this long after its slot ended is cancelled (the spec's order table). */
export const PICKUP_COLLECTION_HOURS = 24;

export const FINISHED_STATUSES: readonly OrderStatus[] = ['completed', 'cancelled'];
const CANCELLABLE: readonly OrderStatus[] = ['created', 'awaiting_payment', 'confirmed', 'picking', 'picked', 'ready_for_pickup'];

/** Every legal move (from -> to), as the spec's transition table lists them. */
const MOVES: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  created: ['confirmed', 'awaiting_payment', 'cancelled', 'cancellation_requested'],
  awaiting_payment: ['confirmed', 'cancelled', 'cancellation_requested'],
  confirmed: ['picking', 'cancelled', 'cancellation_requested'],
  picking: ['confirmed', 'picked', 'ready_for_pickup', 'cancelled', 'cancellation_requested'],
  picked: ['en_route', 'cancelled', 'cancellation_requested'],
  ready_for_pickup: ['completed', 'cancelled', 'cancellation_requested'],
  // Back to `picked` when the delivery failed and the goods came back to the store.
  en_route: ['completed', 'cancelled', 'picked'],
  completed: [],
  cancellation_requested: ['cancelled', 'en_route'],
  cancelled: [],
};

export const canMove = (from: OrderStatus, to: OrderStatus): boolean => MOVES[from].includes(to);
export const canCancel = (status: OrderStatus): boolean => CANCELLABLE.includes(status);
export const isFinished = (status: OrderStatus): boolean => FINISHED_STATUSES.includes(status);

export type CancellationDecision =
  | { ok: true; next: 'cancelled' }
  /** A courier is on its way to the store: the purchase waits for the courier service. */
  | { ok: true; next: 'cancellation_requested' }
  | { ok: false; code: 'ORDER_ALREADY_CANCELLED' | 'ORDER_NOT_CANCELLABLE' };

/** What a customer's cancel does, given the purchase status and the delivery state (null for pickup). */
export function decideCancellation(status: OrderStatus, tracking: TrackingState | null): CancellationDecision {
  if (status === 'cancelled') return { ok: false, code: 'ORDER_ALREADY_CANCELLED' };
  if (!canCancel(status)) return { ok: false, code: 'ORDER_NOT_CANCELLABLE' };
  if (tracking === 'courier_assigned' || tracking === 'courier_at_store') return { ok: true, next: 'cancellation_requested' };
  return { ok: true, next: 'cancelled' };
}

// ------------------------------------------------------------------------------------------------
// Roadmap progress line (DetailOrderRoadmapSchema `steps`)

export interface StatusEntry {
  status: OrderStatus;
  at: Date;
  reason: string | null;
  comment: string | null;
}

export interface RoadmapStep {
  value: OrderStatus;
  display: string;
  state: 'done' | 'current' | 'upcoming';
  at: string | null;
  comment: string | null;
}

/** The statuses an order of this kind is expected to pass, in order. */
export function expectedPath(type: 'delivery' | 'pickup', paymentMethod: 'cash' | 'online'): OrderStatus[] {
  return [
    'created',
    ...(paymentMethod === 'online' ? (['awaiting_payment'] as const) : []),
    'confirmed',
    'picking',
    type === 'delivery' ? 'picked' : 'ready_for_pickup',
    ...(type === 'delivery' ? (['en_route'] as const) : []),
    'completed',
  ];
}

/**
 * The progress line: the expected path with the statuses passed `done`, the current one
 * `current` and the rest `upcoming`; a status entered several times shows its latest entry.
 * While cancelling or cancelled, the passed steps are followed by that status and nothing else.
 */
export function roadmapSteps(
  order: { type: 'delivery' | 'pickup'; paymentMethod: 'cash' | 'online'; status: OrderStatus },
  history: readonly StatusEntry[],
  lang: Lang,
): RoadmapStep[] {
  const latest = new Map<OrderStatus, StatusEntry>();
  for (const entry of history) {
    const seen = latest.get(entry.status);
    if (!seen || seen.at.getTime() <= entry.at.getTime()) latest.set(entry.status, entry);
  }
  const step = (value: OrderStatus, state: RoadmapStep['state']): RoadmapStep => {
    const entry = state === 'upcoming' ? undefined : latest.get(value);
    return {
      value,
      display: statusDisplay(value, order.type, lang),
      state,
      at: entry ? entry.at.toISOString() : null,
      comment: entry ? statusComment(entry.reason, entry.comment, lang) : null,
    };
  };
  const path = expectedPath(order.type, order.paymentMethod);
  if (order.status === 'cancellation_requested' || order.status === 'cancelled') {
    const passed = path.filter((s) => latest.has(s)).map((s) => step(s, 'done'));
    if (order.status === 'cancelled' && latest.has('cancellation_requested')) passed.push(step('cancellation_requested', 'done'));
    return [...passed, step(order.status, 'current')];
  }
  const current = path.indexOf(order.status);
  return path.map((s, i) => step(s, i < current ? 'done' : i === current ? 'current' : 'upcoming'));
}
