// Holding slot capacity for orders (the functions order creation calls inside its transaction),
// on real PostgreSQL: parallel holds of the last units, every refusal reason, idempotency,
// rollback and release.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import {
  releaseDeliverySlot,
  releasePickupSlot,
  reserveDeliverySlot,
  reservePickupSlot,
  type SlotHoldResult,
} from '../../db/queries/logistics.js';
import { createTestDatabase } from '../support/db.js';
import { createSlot, createStore } from './fixtures.js';

let database: OpenedDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.shutdown());

const slotState = (id: string) =>
  database.db
    .selectFrom('store_slots')
    .select([
      'reserved',
      'capacity',
      (eb) =>
        eb
          .selectFrom('slot_holds')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('slot_holds.slot_id', '=', 'store_slots.id')
          .as('holds'),
    ])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

const holdInOwnTransaction = (storeId: string, slotId: string, orderId = randomUUID()) =>
  database.db.transaction().execute((trx) => reserveDeliverySlot(trx, { storeId, slotId, orderId }));

describe('reserveDeliverySlot under concurrency', () => {
  it('gives exactly K of N parallel holds on a slot of capacity K, and never oversells', async () => {
    const store = await createStore(database.db);
    const K = 5;
    const N = 40;
    const slot = await createSlot(database.db, { storeId: store, startsInMinutes: 600, capacity: K });
    const results = await Promise.all(Array.from({ length: N }, () => holdInOwnTransaction(store, slot)));
    const ok = results.filter((r) => r.ok);
    expect(ok).toHaveLength(K);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === 'full')).toBe(true);
    expect(await slotState(slot)).toEqual({ reserved: K, capacity: K, holds: K });
  });

  it('takes the last unit once when holds and a release race', async () => {
    const store = await createStore(database.db);
    const slot = await createSlot(database.db, { storeId: store, startsInMinutes: 600, capacity: 1 });
    const first = randomUUID();
    expect((await holdInOwnTransaction(store, slot, first)).ok).toBe(true);
    const [released, ...holds] = await Promise.all([
      database.db.transaction().execute((trx) => releaseDeliverySlot(trx, first)),
      ...Array.from({ length: 10 }, () => holdInOwnTransaction(store, slot)),
    ]);
    expect(released).toEqual({ released: true, slotId: slot });
    // Whatever the interleaving, the slot never holds more than its capacity.
    const state = await slotState(slot);
    expect(state.reserved).toBe(state.holds);
    expect(state.reserved).toBeLessThanOrEqual(1);
    expect(holds.filter((h) => h.ok).length).toBe(state.reserved);
  });
});

describe('reserveDeliverySlot refusals and idempotency', () => {
  it('answers the held window, and the same hold again for the same order without a second unit', async () => {
    const store = await createStore(database.db);
    const slot = await createSlot(database.db, { storeId: store, startsInMinutes: 600, capacity: 3 });
    const order = randomUUID();
    const first = await holdInOwnTransaction(store, slot, order);
    expect(first).toMatchObject({ ok: true, alreadyHeld: false, slot: { slotId: slot, storeId: store } });
    if (first.ok) {
      expect(first.slot.endsAt.getTime() - first.slot.startsAt.getTime()).toBe(120 * 60_000);
      expect(first.slot.slotDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    const again = await holdInOwnTransaction(store, slot, order);
    expect(again).toMatchObject({ ok: true, alreadyHeld: true });
    expect((await slotState(slot)).reserved).toBe(1);
    const other = await createSlot(database.db, { storeId: store, startsInMinutes: 800 });
    expect(await holdInOwnTransaction(store, other, order)).toEqual({ ok: false, reason: 'order_holds_another_slot' });
  });

  it('refuses with not_found, closed, cutoff_passed and full, in that order of checks', async () => {
    const store = await createStore(database.db);
    const elsewhere = await createStore(database.db);
    const open = await createSlot(database.db, { storeId: store, startsInMinutes: 600 });
    const refuse = async (slotId: string, storeId = store): Promise<SlotHoldResult> => holdInOwnTransaction(storeId, slotId);
    expect(await refuse(randomUUID())).toEqual({ ok: false, reason: 'not_found' });
    expect(await refuse(open, elsewhere)).toEqual({ ok: false, reason: 'not_found' });
    const pickup = await createSlot(database.db, { storeId: store, kind: 'pickup', startsInMinutes: 600 });
    expect(await refuse(pickup)).toEqual({ ok: false, reason: 'not_found' });
    const closedFull = await createSlot(database.db, { storeId: store, startsInMinutes: 700, isClosed: true, capacity: 1, reserved: 1 });
    expect(await refuse(closedFull)).toEqual({ ok: false, reason: 'closed' });
    // 90 minutes ahead with a 120-minute lead: the cut-off has passed (and it is full too).
    const late = await createSlot(database.db, { storeId: store, startsInMinutes: 90, capacity: 1, reserved: 1 });
    expect(await refuse(late)).toEqual({ ok: false, reason: 'cutoff_passed' });
    const full = await createSlot(database.db, { storeId: store, startsInMinutes: 800, capacity: 0 });
    expect(await refuse(full)).toEqual({ ok: false, reason: 'full' });
    // A store that stopped delivering: its windows cannot be held.
    const stopped = await createStore(database.db, { accepts_delivery: false });
    const stoppedSlot = await createSlot(database.db, { storeId: stopped, startsInMinutes: 600 });
    expect(await refuse(stoppedSlot, stopped)).toEqual({ ok: false, reason: 'not_found' });
  });

  it('holds nothing when the order transaction rolls back', async () => {
    const store = await createStore(database.db);
    const slot = await createSlot(database.db, { storeId: store, startsInMinutes: 600, capacity: 1 });
    await expect(
      database.db.transaction().execute(async (trx) => {
        const held = await reserveDeliverySlot(trx, { storeId: store, slotId: slot, orderId: randomUUID() });
        expect(held.ok).toBe(true);
        throw new Error('order failed after the hold');
      }),
    ).rejects.toThrow('order failed after the hold');
    expect(await slotState(slot)).toEqual({ reserved: 0, capacity: 1, holds: 0 });
    expect((await holdInOwnTransaction(store, slot)).ok).toBe(true);
  });
});

describe('release and pickup holds', () => {
  it('gives the unit back once; a second release does nothing', async () => {
    const store = await createStore(database.db);
    const slot = await createSlot(database.db, { storeId: store, startsInMinutes: 600, capacity: 1 });
    const order = randomUUID();
    await holdInOwnTransaction(store, slot, order);
    expect(await releaseDeliverySlot(database.db, order)).toEqual({ released: true, slotId: slot });
    expect(await releaseDeliverySlot(database.db, order)).toEqual({ released: false, slotId: null });
    expect(await slotState(slot)).toEqual({ reserved: 0, capacity: 1, holds: 0 });
    // The freed unit can be held by another order.
    expect((await holdInOwnTransaction(store, slot)).ok).toBe(true);
  });

  it('holds and releases pickup windows with the pickup lead time (60 minutes by default)', async () => {
    const store = await createStore(database.db);
    const soon = await createSlot(database.db, { storeId: store, kind: 'pickup', startsInMinutes: 90, capacity: 2 });
    const tooSoon = await createSlot(database.db, { storeId: store, kind: 'pickup', startsInMinutes: 45, capacity: 2 });
    const order = randomUUID();
    // 90 minutes ahead is before the pickup cut-off although it is past a delivery one.
    expect(await reservePickupSlot(database.db, { storeId: store, slotId: soon, orderId: order })).toMatchObject({ ok: true });
    expect(await reservePickupSlot(database.db, { storeId: store, slotId: tooSoon, orderId: randomUUID() })).toEqual({
      ok: false,
      reason: 'cutoff_passed',
    });
    // A delivery release does not touch a pickup hold.
    expect(await releaseDeliverySlot(database.db, order)).toEqual({ released: false, slotId: null });
    expect(await releasePickupSlot(database.db, order)).toEqual({ released: true, slotId: soon });
    expect((await slotState(soon)).reserved).toBe(0);
  });
});
