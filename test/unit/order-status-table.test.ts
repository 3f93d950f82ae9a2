// The purchase state machine's whole transition table and the roadmap's edge cases
// (domain/orders/status.ts): latest entries by time, steps moved back to, and the line of an order
// being cancelled.
import { describe, expect, it } from 'vitest';
import { canMove, FINISHED_STATUSES, isFinished, roadmapSteps, type StatusEntry } from '../../domain/orders/status.js';
import type { OrderStatus } from '../../domain/orders/vocabulary.js';

/** The spec's transition table (OrderStatusValueEnum), every legal move from each status. */
const TABLE: Record<OrderStatus, OrderStatus[]> = {
  created: ['confirmed', 'awaiting_payment', 'cancelled', 'cancellation_requested'],
  awaiting_payment: ['confirmed', 'cancelled', 'cancellation_requested'],
  confirmed: ['picking', 'cancelled', 'cancellation_requested'],
  picking: ['confirmed', 'picked', 'ready_for_pickup', 'cancelled', 'cancellation_requested'],
  picked: ['en_route', 'cancelled', 'cancellation_requested'],
  ready_for_pickup: ['completed', 'cancelled', 'cancellation_requested'],
  en_route: ['completed', 'cancelled', 'picked'],
  completed: [],
  cancellation_requested: ['cancelled', 'en_route'],
  cancelled: [],
};
const STATUSES = Object.keys(TABLE) as OrderStatus[];

const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 9, minute));
const entry = (status: OrderStatus, minute: number, comment: string | null = null): StatusEntry => ({
  status,
  at: at(minute),
  reason: null,
  comment,
});

describe('the transition table', () => {
  it('allows exactly the moves the spec lists, from every status to every status', () => {
    for (const from of STATUSES) {
      for (const to of STATUSES) expect(canMove(from, to), `${from} -> ${to}`).toBe(TABLE[from].includes(to));
    }
  });

  it('finishes an order only when completed or cancelled', () => {
    expect([...FINISHED_STATUSES].sort()).toEqual(['cancelled', 'completed']);
    for (const s of STATUSES) expect(isFinished(s), s).toBe(s === 'completed' || s === 'cancelled');
  });
});

describe('roadmap entries', () => {
  const delivery = { type: 'delivery' as const, paymentMethod: 'cash' as const };

  it('shows the latest entry of a status by time, whatever the order of the history', () => {
    const history = [entry('created', 0), entry('confirmed', 6, 'again'), entry('confirmed', 1, 'first'), entry('picking', 7)];
    const steps = roadmapSteps({ ...delivery, status: 'picking' }, history, 'en');
    expect(steps[1]).toMatchObject({ value: 'confirmed', state: 'done', at: at(6).toISOString(), comment: 'again' });
  });

  it('shows the entry recorded last among entries of the same time', () => {
    const history = [entry('created', 0), entry('confirmed', 1, 'first'), entry('confirmed', 1, 'second'), entry('picking', 2)];
    expect(roadmapSteps({ ...delivery, status: 'picking' }, history, 'en')[1]).toMatchObject({
      at: at(1).toISOString(),
      comment: 'second',
    });
  });

  it('shows no time on a step the order moved back from', () => {
    const history = [entry('created', 0), entry('confirmed', 1), entry('picking', 2), entry('confirmed', 3)];
    const steps = roadmapSteps({ ...delivery, status: 'confirmed' }, history, 'en');
    expect(steps.map((s) => [s.value, s.state, s.at])).toEqual([
      ['created', 'done', at(0).toISOString()],
      ['confirmed', 'current', at(3).toISOString()],
      ['picking', 'upcoming', null],
      ['picked', 'upcoming', null],
      ['en_route', 'upcoming', null],
      ['completed', 'upcoming', null],
    ]);
    expect(steps[2]!.comment).toBeNull();
  });
});

describe('roadmap of a cancellation', () => {
  const delivery = { type: 'delivery' as const, paymentMethod: 'online' as const };

  it('ends a requested cancellation with that request as the current step, once', () => {
    const history = [entry('created', 0), entry('awaiting_payment', 1), entry('confirmed', 2), entry('cancellation_requested', 3)];
    const steps = roadmapSteps({ ...delivery, status: 'cancellation_requested' }, history, 'en');
    expect(steps.map((s) => [s.value, s.state])).toEqual([
      ['created', 'done'],
      ['awaiting_payment', 'done'],
      ['confirmed', 'done'],
      ['cancellation_requested', 'current'],
    ]);
    expect(steps[3]).toMatchObject({ display: 'Cancellation requested', at: at(3).toISOString() });
  });

  it('ends a direct cancellation with the cancellation alone', () => {
    const history = [entry('created', 0), entry('awaiting_payment', 1), entry('cancelled', 2)];
    const steps = roadmapSteps({ ...delivery, status: 'cancelled' }, history, 'en');
    expect(steps.map((s) => [s.value, s.state, s.at])).toEqual([
      ['created', 'done', at(0).toISOString()],
      ['awaiting_payment', 'done', at(1).toISOString()],
      ['cancelled', 'current', at(2).toISOString()],
    ]);
  });
});
