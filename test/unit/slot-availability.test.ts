import { describe, expect, it } from 'vitest';
import { cutoffOf, slotAvailability } from '../../domain/orders/slot-availability.js';

const now = new Date('2025-03-14T08:00:00Z');
const open = { isClosed: false, cutoffAt: new Date('2025-03-14T09:00:00Z'), capacity: 5, reserved: 2 };

describe('slotAvailability', () => {
  it('is available when open, before the cut-off and with capacity left', () => {
    expect(slotAvailability(open, now)).toEqual({ remainingCapacity: 3, isAvailable: true, reason: null });
  });
  it('is cutoff_passed at the cut-off instant itself and after', () => {
    expect(slotAvailability(open, open.cutoffAt).reason).toBe('cutoff_passed');
    expect(slotAvailability(open, new Date(open.cutoffAt.getTime() - 1)).reason).toBeNull();
  });
  it('is full with no capacity left, and never reports negative capacity', () => {
    expect(slotAvailability({ ...open, reserved: 5 }, now)).toEqual({ remainingCapacity: 0, isAvailable: false, reason: 'full' });
    expect(slotAvailability({ ...open, capacity: 3, reserved: 5 }, now).remainingCapacity).toBe(0);
    expect(slotAvailability({ ...open, capacity: 0, reserved: 0 }, now).reason).toBe('full');
  });
  it('gives the first reason in the order closed, cutoff_passed, full', () => {
    const everything = { isClosed: true, cutoffAt: now, capacity: 1, reserved: 1 };
    expect(slotAvailability(everything, now).reason).toBe('closed');
    expect(slotAvailability({ ...everything, isClosed: false }, now).reason).toBe('cutoff_passed');
  });
  it('computes the cut-off from the lead time', () => {
    expect(cutoffOf(new Date('2025-03-14T10:00:00Z'), 120).toISOString()).toBe('2025-03-14T08:00:00.000Z');
  });
});
