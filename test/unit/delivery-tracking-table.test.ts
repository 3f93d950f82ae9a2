// The courier delivery state machine's whole table and what every state shows
// (domain/orders/delivery-tracking.ts), and the purchase moves a delivery move does not cause.
import { describe, expect, it } from 'vitest';
import {
  canTrackingMove,
  courierCallable,
  decideTrackingMove,
  deliveryEta,
  hasCourier,
  hasLiveMarker,
  hasNoEta,
  isTrackingState,
} from '../../domain/orders/delivery-tracking.js';
import type { OrderStatus, TrackingState } from '../../domain/orders/vocabulary.js';

/** OrderDeliveryTrackingStateEnum's transition table in the spec. */
const TABLE: Record<TrackingState, TrackingState[]> = {
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
const STATES = Object.keys(TABLE) as TrackingState[];
const purchase = (status: OrderStatus, wasPicked = false) => ({ status, wasPicked });

describe('the delivery transition table', () => {
  it('allows exactly the moves the spec lists, from every state to every state', () => {
    for (const from of STATES)
      for (const to of STATES) expect(canTrackingMove(from, to), `${from} -> ${to}`).toBe(TABLE[from].includes(to));
  });

  it('knows its own states only', () => {
    for (const s of STATES) expect(isTrackingState(s), s).toBe(true);
    for (const s of ['lost', '', 'toString', 'DELIVERED']) expect(isTrackingState(s), s).toBe(false);
  });
});

describe('what each delivery state shows', () => {
  const showing = (rule: (s: TrackingState) => boolean) => STATES.filter(rule);

  it('knows the courier from assignment on, until the delivery is cancelled', () => {
    expect(showing(hasCourier)).toEqual([
      'courier_assigned',
      'courier_at_store',
      'en_route',
      'arrived',
      'delivered',
      'returning',
      'returned',
    ]);
  });

  it('shows the live marker while the courier heads to the store or the customer', () => {
    expect(showing(hasLiveMarker)).toEqual(['courier_assigned', 'courier_at_store', 'en_route', 'arrived']);
  });

  it('expects no arrival once delivered, cancelled or on the way back', () => {
    expect(showing(hasNoEta)).toEqual(['delivered', 'cancelled', 'returning', 'returned']);
  });

  it('lets the customer call the courier while the marker shows and while returning', () => {
    expect(showing(courierCallable)).toEqual(['courier_assigned', 'courier_at_store', 'en_route', 'arrived', 'returning']);
  });

  it('ignores a courier estimate sent before a courier is assigned', () => {
    const createdAt = new Date('2025-03-14T07:00:00Z');
    const courierEta = new Date('2025-03-14T07:40:00Z');
    const slotEndsAt = new Date('2025-03-14T12:00:00Z');
    expect(deliveryEta('searching_courier', { courierEta, createdAt, expressMinutes: null, slotEndsAt })).toEqual(slotEndsAt);
    expect(deliveryEta('courier_assigned', { courierEta, createdAt, expressMinutes: null, slotEndsAt })).toEqual(courierEta);
    expect(deliveryEta('courier_assigned', { courierEta: null, createdAt, expressMinutes: null, slotEndsAt })).toEqual(slotEndsAt);
  });
});

describe('purchase moves caused by delivery moves', () => {
  it('searches a new courier for a closed purchase only when it is not a re-dispatch', () => {
    expect(decideTrackingMove('courier_assigned', 'searching_courier', purchase('completed'))).toEqual({
      ok: true,
      kind: 'move',
      purchase: null,
    });
    expect(decideTrackingMove('cancelled', 'searching_courier', purchase('cancelled'))).toEqual({ ok: false, code: 'ORDER_CLOSED' });
    expect(decideTrackingMove('returned', 'searching_courier', purchase('completed'))).toEqual({ ok: false, code: 'ORDER_CLOSED' });
  });

  it('does not let the courier collect goods picked once but no longer waiting', () => {
    expect(decideTrackingMove('courier_at_store', 'en_route', purchase('confirmed', true))).toEqual({
      ok: false,
      code: 'ORDER_NOT_READY_FOR_COURIER',
    });
  });

  it('completes only a purchase that is en route', () => {
    expect(decideTrackingMove('arrived', 'delivered', purchase('en_route'))).toEqual({
      ok: true,
      kind: 'move',
      purchase: { to: 'completed', reason: null },
    });
    expect(decideTrackingMove('arrived', 'delivered', purchase('completed'))).toEqual({ ok: true, kind: 'move', purchase: null });
  });

  it('cancels a purchase waiting for it only when the courier request is cancelled', () => {
    expect(decideTrackingMove('courier_assigned', 'cancelled', purchase('cancellation_requested'))).toEqual({
      ok: true,
      kind: 'move',
      purchase: { to: 'cancelled', reason: 'courier_withdrawn' },
    });
    expect(decideTrackingMove('courier_assigned', 'courier_at_store', purchase('cancellation_requested'))).toEqual({
      ok: true,
      kind: 'move',
      purchase: null,
    });
  });
});
