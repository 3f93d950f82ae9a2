// The courier delivery state machine and what each state shows.
import { describe, expect, it } from 'vitest';
import {
  canTrackingMove,
  decideTrackingMove,
  deliveryEta,
  hasCourier,
  hasLiveMarker,
  planStatusReplay,
  trackingPath,
} from '../../domain/orders/delivery-tracking.js';

const purchase = (status: Parameters<typeof decideTrackingMove>[2]['status'], wasPicked = false) => ({ status, wasPicked });

describe('delivery moves', () => {
  it('follows the transition table', () => {
    expect(canTrackingMove('pending', 'searching_courier')).toBe(true);
    expect(canTrackingMove('courier_assigned', 'searching_courier')).toBe(true);
    expect(canTrackingMove('en_route', 'returning')).toBe(true);
    expect(canTrackingMove('returned', 'searching_courier')).toBe(true);
    expect(canTrackingMove('pending', 'en_route')).toBe(false);
    expect(canTrackingMove('delivered', 'cancelled')).toBe(false);
    expect(canTrackingMove('returning', 'cancelled')).toBe(false);
  });

  it('repeating the state is allowed and changes nothing else', () => {
    expect(decideTrackingMove('en_route', 'en_route', purchase('en_route'))).toEqual({ ok: true, kind: 'same', purchase: null });
  });

  it('lets the courier collect only a picked order, moving the purchase en route', () => {
    expect(decideTrackingMove('courier_at_store', 'en_route', purchase('picking'))).toEqual({
      ok: false,
      code: 'ORDER_NOT_READY_FOR_COURIER',
    });
    expect(decideTrackingMove('courier_at_store', 'en_route', purchase('picked', true))).toEqual({
      ok: true,
      kind: 'move',
      purchase: { to: 'en_route', reason: null },
    });
    expect(decideTrackingMove('courier_at_store', 'en_route', purchase('cancellation_requested', true))).toEqual({
      ok: true,
      kind: 'move',
      purchase: { to: 'en_route', reason: 'cancellation_too_late' },
    });
    expect(decideTrackingMove('courier_at_store', 'en_route', purchase('cancellation_requested', false))).toEqual({
      ok: false,
      code: 'ORDER_NOT_READY_FOR_COURIER',
    });
  });

  it('completes the purchase on delivery and ends a queued cancellation when the courier is withdrawn', () => {
    expect(decideTrackingMove('arrived', 'delivered', purchase('en_route'))).toMatchObject({ purchase: { to: 'completed' } });
    expect(decideTrackingMove('courier_assigned', 'cancelled', purchase('cancellation_requested'))).toMatchObject({
      purchase: { to: 'cancelled', reason: 'courier_withdrawn' },
    });
  });

  it('never cancels the purchase when only the courier request is cancelled (rule 3)', () => {
    expect(decideTrackingMove('searching_courier', 'cancelled', purchase('confirmed'))).toEqual({ ok: true, kind: 'move', purchase: null });
    expect(decideTrackingMove('courier_at_store', 'cancelled', purchase('picked', true))).toEqual({
      ok: true,
      kind: 'move',
      purchase: null,
    });
  });

  it('puts the purchase back to picked when a delivery fails after the courier collected it', () => {
    const back = { ok: true, kind: 'move', purchase: { to: 'picked', reason: 'delivery_failed' } };
    expect(decideTrackingMove('returning', 'returned', purchase('en_route', true))).toEqual(back);
    expect(decideTrackingMove('en_route', 'cancelled', purchase('en_route', true))).toEqual(back);
    expect(decideTrackingMove('arrived', 'cancelled', purchase('en_route', true))).toEqual(back);
    // On the way back the goods are still with the courier: the purchase waits.
    expect(decideTrackingMove('en_route', 'returning', purchase('en_route', true))).toEqual({ ok: true, kind: 'move', purchase: null });
    // Once back, a new courier can collect it again.
    expect(decideTrackingMove('courier_at_store', 'en_route', purchase('picked', true))).toMatchObject({
      ok: true,
      purchase: { to: 'en_route' },
    });
  });

  it('re-dispatches only an open purchase', () => {
    expect(decideTrackingMove('cancelled', 'searching_courier', purchase('cancelled'))).toEqual({ ok: false, code: 'ORDER_CLOSED' });
    expect(decideTrackingMove('returned', 'searching_courier', purchase('completed'))).toEqual({ ok: false, code: 'ORDER_CLOSED' });
    expect(decideTrackingMove('returned', 'searching_courier', purchase('picked', true))).toMatchObject({ ok: true, kind: 'move' });
  });

  it('refuses moves outside the table', () => {
    expect(decideTrackingMove('pending', 'delivered', purchase('confirmed'))).toEqual({
      ok: false,
      code: 'DELIVERY_TRANSITION_NOT_ALLOWED',
    });
  });
});

describe('what a state shows', () => {
  it('drops the live marker when cancelled, returning or returned (rule 2)', () => {
    for (const s of ['courier_assigned', 'courier_at_store', 'en_route', 'arrived'] as const) expect(hasLiveMarker(s), s).toBe(true);
    for (const s of ['pending', 'searching_courier', 'delivered', 'cancelled', 'returning', 'returned'] as const)
      expect(hasLiveMarker(s), s).toBe(false);
    expect(hasCourier('cancelled')).toBe(false);
    expect(hasCourier('returning')).toBe(true);
  });

  it('takes the eta from the courier service, else the express promise or the slot end', () => {
    const createdAt = new Date('2025-03-14T07:00:00Z');
    const slotEndsAt = new Date('2025-03-14T12:00:00Z');
    const courierEta = new Date('2025-03-14T07:40:00Z');
    expect(deliveryEta('pending', { courierEta: null, createdAt, expressMinutes: 45, slotEndsAt: null })).toEqual(
      new Date('2025-03-14T07:45:00Z'),
    );
    expect(deliveryEta('searching_courier', { courierEta: null, createdAt, expressMinutes: null, slotEndsAt })).toEqual(slotEndsAt);
    expect(deliveryEta('en_route', { courierEta, createdAt, expressMinutes: 45, slotEndsAt: null })).toEqual(courierEta);
    expect(deliveryEta('returning', { courierEta, createdAt, expressMinutes: 45, slotEndsAt: null })).toBeNull();
  });
});

describe('trackingPath and planStatusReplay (following a courier service by its status answers)', () => {
  it('replays the states a delivery went through since the last question, shortest first', () => {
    expect(trackingPath('searching_courier', 'searching_courier')).toEqual([]);
    expect(trackingPath('searching_courier', 'courier_assigned')).toEqual(['courier_assigned']);
    expect(trackingPath('searching_courier', 'delivered')).toEqual([
      'courier_assigned',
      'courier_at_store',
      'en_route',
      'arrived',
      'delivered',
    ]);
    expect(trackingPath('en_route', 'returned')).toEqual(['returning', 'returned']);
    expect(trackingPath('delivered', 'en_route')).toBeNull();
    // Never through a cancellation or a new search: the courier service re-searching is not a
    // cancelled delivery plus a second courier.
    expect(trackingPath('courier_at_store', 'searching_courier')).toBeNull();
    expect(trackingPath('en_route', 'courier_assigned')).toBeNull();
    expect(trackingPath('courier_assigned', 'searching_courier')).toEqual(['searching_courier']);
  });

  it('judges every replayed move with the purchase as the moves before left it, all or nothing', () => {
    expect(planStatusReplay('courier_assigned', 'delivered', { status: 'picked', wasPicked: true })).toEqual({
      ok: true,
      steps: ['courier_at_store', 'en_route', 'arrived', 'delivered'],
    });
    // Not picked yet: the courier cannot have collected it.
    expect(planStatusReplay('courier_assigned', 'delivered', { status: 'picking', wasPicked: false })).toEqual({
      ok: false,
      code: 'ORDER_NOT_READY_FOR_COURIER',
    });
    expect(planStatusReplay('delivered', 'searching_courier', { status: 'completed', wasPicked: true })).toEqual({
      ok: false,
      code: 'DELIVERY_TRANSITION_NOT_ALLOWED',
    });
    expect(planStatusReplay('arrived', 'arrived', { status: 'en_route', wasPicked: true })).toEqual({ ok: true, steps: [] });
  });
});
