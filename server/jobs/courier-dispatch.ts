// Courier dispatch (order worker, job 6): deliveries whose courier should be requested now, by
// COURIER_DISPATCH_LEAD_MINUTES before their slot.
import { claimDeliveriesDueForCourier, lockOrder } from '../../db/queries/orders.js';
import { requestCourier } from '../../services/order-lifecycle.js';
import type { AppDeps } from '../../services/deps.js';

export async function dispatchCouriers(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    let requested = 0;
    for (const id of await claimDeliveriesDueForCourier(
      trx,
      deps.config.orders.courierDispatchLeadMinutes,
      deps.config.orders.worker.batchSize,
    )) {
      const o = await lockOrder(trx, id);
      if (o && (await requestCourier(trx, o, deps.clock.now()))) requested++;
    }
    return requested;
  });
}
