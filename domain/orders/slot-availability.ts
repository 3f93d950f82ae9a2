// Whether a delivery or pickup window can still be chosen, and why not.

export type SlotUnavailableReason = 'closed' | 'cutoff_passed' | 'full';

export interface SlotState {
  isClosed: boolean;
  /** Last instant an order for the window is accepted (exclusive): start - the store's lead time. */
  cutoffAt: Date;
  capacity: number;
  /** Orders holding the window. */
  reserved: number;
}

export interface SlotAvailability {
  /** capacity - reserved, never below 0 (a capacity lowered below the holds reads as full). */
  remainingCapacity: number;
  isAvailable: boolean;
  /** The first reason that applies, in the spec's order: closed, cutoff_passed, full. */
  reason: SlotUnavailableReason | null;
}

export function slotAvailability(slot: SlotState, now: Date): SlotAvailability {
  const remainingCapacity = Math.max(0, slot.capacity - slot.reserved);
  const reason: SlotUnavailableReason | null = slot.isClosed
    ? 'closed'
    : now.getTime() >= slot.cutoffAt.getTime()
      ? 'cutoff_passed'
      : remainingCapacity === 0
        ? 'full'
        : null;
  return { remainingCapacity, isAvailable: reason === null, reason };
}

/** The cut-off of a window: its start minus the lead time in minutes. */
export const cutoffOf = (startsAt: Date, leadMinutes: number): Date => new Date(startsAt.getTime() - leadMinutes * 60_000);
