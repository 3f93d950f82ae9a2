// The courier delivery state machine (OrderDeliveryTrackingStateEnum in spec/components/orders.yaml),
// independent of the purchase status: which moves exist, which purchase moves they cause, and
// what the customer sees in each state (courier, live marker, eta).
import type { OrderStatus, TrackingState } from './vocabulary.js';
import type { StatusReason } from '../texts/orders.js';

const MOVES: Readonly<Record<TrackingState, readonly TrackingState[]>> = {
  pending: ['searching_courier', 'cancelled'],
  searching_courier: ['courier_assigned', 'cancelled'],
  courier_assigned: ['searching_courier', 'courier_at_store', 'cancelled'],
  courier_at_store: ['en_route', 'cancelled'],
  en_route: ['arrived', 'returning', 'cancelled'],
  arrived: ['delivered', 'returning', 'cancelled'],
  delivered: [],
  cancelled: ['searching_courier'],
  returning: ['returned'],
  returned: ['searching_courier'],
};

export const canTrackingMove = (from: TrackingState, to: TrackingState): boolean => MOVES[from].includes(to);

export const isTrackingState = (value: string): value is TrackingState => Object.hasOwn(MOVES, value);

/** States a replay may pass through: a delivery under way. Never a cancellation or a new search. */
const REPLAYABLE: ReadonlySet<TrackingState> = new Set(['courier_assigned', 'courier_at_store', 'en_route', 'arrived', 'returning']);

/**
 * The moves that lead from `from` to `to`, shortest first (`to` last); [] when they are equal,
 * null when no chain of moves leads there. A courier service asked for its status says only
 * where a delivery is now: the states it went through since the last question are replayed,
 * passing only through states of a delivery under way. A chain through `cancelled` or a new
 * search would invent events (and request a second courier), so such an answer is refused.
 */
export function trackingPath(from: TrackingState, to: TrackingState): TrackingState[] | null {
  if (from === to) return [];
  const cameFrom = new Map<TrackingState, TrackingState>([[from, from]]);
  const queue: TrackingState[] = [from];
  while (queue.length) {
    const state = queue.shift()!;
    for (const next of MOVES[state]) {
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, state);
      if (next === to) {
        const path: TrackingState[] = [to];
        for (let s = state; s !== from; s = cameFrom.get(s)!) path.unshift(s);
        return path;
      }
      if (REPLAYABLE.has(next)) queue.push(next);
    }
  }
  return null;
}

export interface PurchaseFacts {
  status: OrderStatus;
  /** Whether the purchase has ever been `picked` (the goods were ready for a courier). */
  wasPicked: boolean;
}

export type TrackingDecision =
  | {
      ok: true;
      /** `same`: the current state again (comment or courier position only). */
      kind: 'same' | 'move';
      /** The purchase move this delivery move causes, if any. */
      purchase: { to: OrderStatus; reason: StatusReason | null } | null;
    }
  | { ok: false; code: 'DELIVERY_TRANSITION_NOT_ALLOWED' | 'ORDER_NOT_READY_FOR_COURIER' | 'ORDER_CLOSED' };

/** Whether a courier-service event moving `from` -> `to` applies, and its effect on the purchase. */
export function decideTrackingMove(from: TrackingState, to: TrackingState, purchase: PurchaseFacts): TrackingDecision {
  if (from === to) return { ok: true, kind: 'same', purchase: null };
  if (!canTrackingMove(from, to)) return { ok: false, code: 'DELIVERY_TRANSITION_NOT_ALLOWED' };
  const closed = purchase.status === 'cancelled' || purchase.status === 'completed';
  if (to === 'searching_courier' && (from === 'cancelled' || from === 'returned') && closed) return { ok: false, code: 'ORDER_CLOSED' };
  if (to === 'en_route') {
    const collectable = purchase.status === 'picked' || (purchase.status === 'cancellation_requested' && purchase.wasPicked);
    if (!collectable) return { ok: false, code: 'ORDER_NOT_READY_FOR_COURIER' };
    return {
      ok: true,
      kind: 'move',
      purchase: { to: 'en_route', reason: purchase.status === 'cancellation_requested' ? 'cancellation_too_late' : null },
    };
  }
  if (to === 'delivered' && purchase.status === 'en_route') return { ok: true, kind: 'move', purchase: { to: 'completed', reason: null } };
  if (to === 'cancelled' && purchase.status === 'cancellation_requested') {
    return { ok: true, kind: 'move', purchase: { to: 'cancelled', reason: 'courier_withdrawn' } };
  }
  // The delivery failed after the courier collected the goods: once they are back at the store
  // (`returned`), or the request is withdrawn from a courier who had them (`cancelled` from
  // `en_route`/`arrived`), the purchase is assembled and waiting again - `picked` - so the store
  // can dispatch it again (a new courier collects it: `en_route` needs `picked`) and the customer
  // can cancel it (refunded in full when paid online).
  if ((to === 'returned' || to === 'cancelled') && purchase.status === 'en_route') {
    return { ok: true, kind: 'move', purchase: { to: 'picked', reason: 'delivery_failed' } };
  }
  return { ok: true, kind: 'move', purchase: null };
}

/**
 * The moves a status answer replays (trackingPath), each judged with the purchase as the moves
 * before it left it; the refusal of the first that does not apply, if any. All or nothing: a
 * delivery is never left half way to what the courier service said.
 */
export function planStatusReplay(
  from: TrackingState,
  to: TrackingState,
  purchase: PurchaseFacts,
): { ok: true; steps: TrackingState[] } | { ok: false; code: Extract<TrackingDecision, { ok: false }>['code'] } {
  const path = trackingPath(from, to);
  if (path === null) return { ok: false, code: 'DELIVERY_TRANSITION_NOT_ALLOWED' };
  let state = from;
  let status = purchase.status;
  for (const next of path) {
    const decision = decideTrackingMove(state, next, { status, wasPicked: purchase.wasPicked });
    if (!decision.ok) return decision;
    if (decision.purchase) status = decision.purchase.to;
    state = next;
  }
  return { ok: true, steps: path };
}

/** States in which a courier is known (OrderCourierSchema present). */
export const hasCourier = (state: TrackingState): boolean =>
  state === 'courier_assigned' ||
  state === 'courier_at_store' ||
  state === 'en_route' ||
  state === 'arrived' ||
  state === 'delivered' ||
  state === 'returning' ||
  state === 'returned';

/** States that show the live courier marker (location and route). */
export const hasLiveMarker = (state: TrackingState): boolean =>
  state === 'courier_assigned' || state === 'courier_at_store' || state === 'en_route' || state === 'arrived';

/** States after which no arrival is expected (eta null). */
export const hasNoEta = (state: TrackingState): boolean =>
  state === 'delivered' || state === 'cancelled' || state === 'returning' || state === 'returned';

/** States in which the courier's phone may be called. */
export const courierCallable = (state: TrackingState): boolean => hasLiveMarker(state) || state === 'returning';

/**
 * The expected arrival at the address: the courier service's estimate once a courier is
 * assigned, before that the express promise or the end of the slot; none once the delivery ended.
 */
export function deliveryEta(
  state: TrackingState,
  facts: { courierEta: Date | null; createdAt: Date; expressMinutes: number | null; slotEndsAt: Date | null },
): Date | null {
  if (hasNoEta(state)) return null;
  if (hasCourier(state) && facts.courierEta) return facts.courierEta;
  if (facts.expressMinutes !== null) return new Date(facts.createdAt.getTime() + facts.expressMinutes * 60_000);
  return facts.slotEndsAt;
}
