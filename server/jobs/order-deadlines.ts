// Order deadlines (order worker, job 5): online orders unpaid after their window are cancelled;
// pickup orders not collected a day after their slot ended are cancelled (and refunded when paid).
import { claimOrdersPastPaymentWindow, claimUncollectedPickups, lockOrder } from '../../db/queries/orders.js';
import { PICKUP_COLLECTION_HOURS } from '../../domain/orders/status.js';
import { cancelUncollected, cancelUnpaid } from '../../services/order-lifecycle.js';
import type { AppDeps } from '../../services/deps.js';

export async function cancelUnpaidOrders(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    let cancelled = 0;
    for (const id of await claimOrdersPastPaymentWindow(trx, deps.config.orders.worker.batchSize)) {
      const o = await lockOrder(trx, id);
      if (o && (await cancelUnpaid(trx, o, deps.clock.now()))) cancelled++;
    }
    return cancelled;
  });
}

export async function cancelUncollectedPickups(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    let cancelled = 0;
    for (const id of await claimUncollectedPickups(trx, PICKUP_COLLECTION_HOURS, deps.config.orders.worker.batchSize)) {
      const o = await lockOrder(trx, id);
      if (o && (await cancelUncollected(trx, o, deps.clock.now()))) cancelled++;
    }
    return cancelled;
  });
}
