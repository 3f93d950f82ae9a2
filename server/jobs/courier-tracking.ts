// Deliveries under way at a real courier service (order worker, job 7): asked where they are,
// tracking moved by the answer.
import { claimDeliveriesForStatusCheck, lockOrder } from '../../db/queries/orders.js';
import { followCourierStatus } from '../../services/order-lifecycle.js';
import type { AppDeps } from '../../services/deps.js';

/** How many courier status questions are open at once (each waits up to COURIER_TIMEOUT_MS). */
const COURIER_QUESTIONS_AT_ONCE = 8;

/**
 * Asks an `http` courier service where each delivery under way is (every
 * COURIER_STATUS_CHECK_SECONDS) and moves its tracking by the answer, as its events would
 * (followCourierStatus). The deliveries are taken in one short statement (other instances take
 * others); the service is asked with no lock held, a few questions at a time, so a slow service
 * holds neither orders nor the rest of the worker's pass. Each answer is then applied in its own
 * transaction under the order's lock, only if the delivery has not moved since it was asked
 * about (the next question sees the new state). A question not answered is asked again at the
 * next interval; an answer the state machine refuses is logged and changes nothing. The
 * simulator is moved by its QA operation instead.
 */
export async function followCourierDeliveries(deps: AppDeps): Promise<number> {
  const courier = deps.courier;
  if (courier.name === 'simulator') return 0;
  const due = await claimDeliveriesForStatusCheck(
    deps.db,
    deps.config.orders.courier.statusCheckSeconds,
    deps.config.orders.worker.batchSize,
  );
  let followed = 0;
  const follow = async (asked: (typeof due)[number]) => {
    try {
      const status = await courier.deliveryStatus(asked.courier_request_ref);
      if (!status) return;
      followed += await deps.db.transaction().execute(async (trx) => {
        const o = await lockOrder(trx, asked.order_id);
        if (!o || o.courier_request_ref !== asked.courier_request_ref || o.tracking_state !== asked.tracking_state) return 0;
        const outcome = await followCourierStatus(trx, o, status, deps.clock.now());
        if (outcome === 'applied') return 1;
        deps.log.warn('courier service reported a delivery state this order cannot take', {
          order_id: o.id,
          from: o.tracking_state,
          to: status.state,
          code: outcome,
        });
        return 0;
      });
    } catch (err) {
      deps.log.warn('courier delivery status unknown; will ask again', { order_id: asked.order_id, err: (err as Error).message });
    }
  };
  for (let i = 0; i < due.length; i += COURIER_QUESTIONS_AT_ONCE)
    await Promise.all(due.slice(i, i + COURIER_QUESTIONS_AT_ONCE).map(follow));
  return followed;
}
