// The purchase state machine: legal moves, cancellation decisions, the roadmap's progress line and
// the status comments shown to the customer.
import { describe, expect, it } from 'vitest';
import { canCancel, canMove, decideCancellation, expectedPath, roadmapSteps, type StatusEntry } from '../../domain/orders/status.js';
import { statusComment } from '../../domain/texts/orders.js';

describe('order status moves', () => {
  it('allows the moves of the spec table and nothing from a terminal state', () => {
    expect(canMove('created', 'confirmed')).toBe(true);
    expect(canMove('created', 'awaiting_payment')).toBe(true);
    expect(canMove('awaiting_payment', 'confirmed')).toBe(true);
    expect(canMove('picking', 'confirmed')).toBe(true);
    expect(canMove('picked', 'en_route')).toBe(true);
    expect(canMove('cancellation_requested', 'en_route')).toBe(true);
    expect(canMove('cancellation_requested', 'cancelled')).toBe(true);
    expect(canMove('confirmed', 'en_route')).toBe(false);
    expect(canMove('created', 'completed')).toBe(false);
    for (const to of ['created', 'confirmed', 'cancelled'] as const) {
      expect(canMove('completed', to)).toBe(false);
      expect(canMove('cancelled', to)).toBe(false);
    }
  });

  it('lets the customer cancel exactly the statuses of the spec', () => {
    const cancellable = ['created', 'awaiting_payment', 'confirmed', 'picking', 'picked', 'ready_for_pickup'] as const;
    for (const s of cancellable) expect(canCancel(s), s).toBe(true);
    for (const s of ['en_route', 'completed', 'cancellation_requested', 'cancelled'] as const) expect(canCancel(s), s).toBe(false);
  });
});

describe('decideCancellation', () => {
  it('cancels at once without an assigned courier', () => {
    for (const tracking of [null, 'pending', 'searching_courier', 'cancelled', 'returned'] as const) {
      expect(decideCancellation('confirmed', tracking), String(tracking)).toEqual({ ok: true, next: 'cancelled' });
    }
  });

  it('queues the cancellation while a courier is assigned or at the store', () => {
    expect(decideCancellation('picked', 'courier_assigned')).toEqual({ ok: true, next: 'cancellation_requested' });
    expect(decideCancellation('picking', 'courier_at_store')).toEqual({ ok: true, next: 'cancellation_requested' });
  });

  it('refuses with the spec codes', () => {
    expect(decideCancellation('cancelled', null)).toEqual({ ok: false, code: 'ORDER_ALREADY_CANCELLED' });
    expect(decideCancellation('en_route', 'en_route')).toEqual({ ok: false, code: 'ORDER_NOT_CANCELLABLE' });
    expect(decideCancellation('cancellation_requested', 'courier_assigned')).toEqual({ ok: false, code: 'ORDER_NOT_CANCELLABLE' });
    expect(decideCancellation('completed', 'delivered')).toEqual({ ok: false, code: 'ORDER_NOT_CANCELLABLE' });
  });
});

describe('roadmapSteps', () => {
  const at = (minute: number) => new Date(Date.UTC(2025, 2, 14, 7, minute));
  const entry = (status: StatusEntry['status'], minute: number, reason: string | null = null): StatusEntry => ({
    status,
    at: at(minute),
    reason,
    comment: null,
  });

  it('knows the expected path of each kind of order', () => {
    expect(expectedPath('delivery', 'online')).toEqual([
      'created',
      'awaiting_payment',
      'confirmed',
      'picking',
      'picked',
      'en_route',
      'completed',
    ]);
    expect(expectedPath('pickup', 'cash')).toEqual(['created', 'confirmed', 'picking', 'ready_for_pickup', 'completed']);
  });

  it('marks passed steps done with their latest time, one current step, the rest upcoming', () => {
    const history = [entry('created', 0), entry('confirmed', 1), entry('picking', 5), entry('confirmed', 6), entry('picking', 9)];
    const steps = roadmapSteps({ type: 'delivery', paymentMethod: 'cash', status: 'picking' }, history, 'en');
    expect(steps.map((s) => [s.value, s.state])).toEqual([
      ['created', 'done'],
      ['confirmed', 'done'],
      ['picking', 'current'],
      ['picked', 'upcoming'],
      ['en_route', 'upcoming'],
      ['completed', 'upcoming'],
    ]);
    expect(steps[1]!.at).toBe(at(6).toISOString());
    expect(steps[2]).toMatchObject({ display: 'Being picked', at: at(9).toISOString() });
    expect(steps[3]!.at).toBeNull();
  });

  it('ends the line with the cancellation and shows its reason in the reader language', () => {
    const history = [
      entry('created', 0),
      entry('confirmed', 1),
      entry('cancellation_requested', 3, 'cancellation_queued'),
      entry('cancelled', 4, 'courier_withdrawn'),
    ];
    const steps = roadmapSteps({ type: 'delivery', paymentMethod: 'cash', status: 'cancelled' }, history, 'ru');
    expect(steps.map((s) => [s.value, s.state])).toEqual([
      ['created', 'done'],
      ['confirmed', 'done'],
      ['cancellation_requested', 'done'],
      ['cancelled', 'current'],
    ]);
    expect(steps[3]).toMatchObject({ display: 'Отменён', comment: 'Отменён по вашей просьбе; курьер отозван.' });
  });

  it('continues the normal line after a cancellation came too late', () => {
    const history = [
      entry('created', 0),
      entry('confirmed', 1),
      entry('picking', 2),
      entry('picked', 3),
      entry('cancellation_requested', 4, 'cancellation_queued'),
      entry('en_route', 5, 'cancellation_too_late'),
    ];
    const steps = roadmapSteps({ type: 'delivery', paymentMethod: 'cash', status: 'en_route' }, history, 'en');
    expect(steps.map((s) => s.value)).not.toContain('cancellation_requested');
    expect(steps.find((s) => s.value === 'en_route')).toMatchObject({
      state: 'current',
      comment: 'The courier had already collected the order, so it could not be cancelled.',
    });
  });
});

describe('status comments', () => {
  it('words every reason the service records in both languages, and falls back to the stored comment', () => {
    expect(statusComment('nothing_picked', 'None of the ordered products could be picked', 'ru')).toBe(
      'Ни один из заказанных товаров не удалось собрать, поэтому заказ отменён.',
    );
    expect(statusComment('nothing_picked', null, 'en')).toMatch(/^None of the ordered products/);
    expect(statusComment('some_future_reason', 'As the operator wrote it', 'ru')).toBe('As the operator wrote it');
    expect(statusComment(null, null, 'en')).toBeNull();
  });
});
