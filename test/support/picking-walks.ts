// Walks for the picking-rate tests: orders picked and finished (or left open) through the API,
// then placed at chosen times and, for a batch, grouped under a batch row written with SQL (the
// batch service is not needed to measure batches).
import { createConfirmedOrder, type StockedProduct } from './orders.js';
import { itemCommand, sessionCommand, startPicking, type TestPicker } from './picking.js';
import type { TestService } from './service.js';

export interface PickedSession {
  sessionId: number;
  orderId: string;
}

/**
 * Starts an order of one piece of each product in `storeId` and picks every item as ordered but
 * the first `removed` ones (missing, then removed); `finish: false` leaves the session active.
 */
export async function pickOrder(
  svc: TestService,
  picker: TestPicker,
  storeId: string,
  products: StockedProduct[],
  opts: { removed?: number; finish?: boolean } = {},
): Promise<PickedSession> {
  const order = await createConfirmedOrder(svc, {
    storeId,
    absenceAction: 'remove',
    lines: products.map((p) => ({ inventoryId: p.inventoryId, quantity: '1' })),
  });
  const session = await startPicking(svc, picker, order.orderId);
  for (const [n, item] of session.items.entries()) {
    const steps =
      n < (opts.removed ?? 0)
        ? [
            () => itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'remove' }),
            () => itemCommand(svc, picker, order.orderId, item.item_id, 'clarification/resolve', { resolution: 'remove' }),
          ]
        : [() => itemCommand(svc, picker, order.orderId, item.item_id, 'piece-quantity', { quantity: Number(item.ordered_quantity) })];
    for (const step of steps) {
      const r = await step();
      if (r.status !== 200) throw new Error(`item command answered ${r.status}: ${JSON.stringify(r.body)}`);
    }
  }
  if (opts.finish ?? true) {
    const r = await sessionCommand(svc, picker, order.orderId, 'finish');
    if (r.status !== 200) throw new Error(`finish answered ${r.status}: ${JSON.stringify(r.body)}`);
  }
  return { sessionId: session.session_id, orderId: order.orderId };
}

/** Moves a session to the given start and closure (a closed session only gets a new closed_at). */
export async function placeSession(svc: TestService, sessionId: number, startedAt: Date, closedAt: Date | null): Promise<void> {
  await svc.deps.db
    .updateTable('picking_sessions')
    .set({ started_at: startedAt, ...(closedAt ? { closed_at: closedAt } : {}) })
    .where('id', '=', sessionId)
    .execute();
}

/** A batch of the picker in the store, created at `createdAt`, holding the sessions. */
export async function batchOf(
  svc: TestService,
  picker: TestPicker,
  storeId: string,
  createdAt: Date,
  sessionIds: number[],
): Promise<number> {
  const { id } = await svc.deps.db
    .insertInto('picking_batches')
    .values({ picker_id: picker.pickerId, store_id: storeId, created_at: createdAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  await svc.deps.db.updateTable('picking_sessions').set({ batch_id: id }).where('id', 'in', sessionIds).execute();
  return id;
}

/** `base` moved by whole seconds. */
export const at = (base: Date, seconds: number): Date => new Date(base.getTime() + seconds * 1000);
