// What only the TEST environment offers QA: the last code sent to a test phone, and the courier
// simulator. PROD does not route these operations; each also refuses outside TEST.
import { latestOtpCode } from '../db/queries/auth.js';
import { findCustomerOrder, lockCustomerOrder } from '../db/queries/orders.js';
import type { TrackingState } from '../db/tables/orders.js';
import { isTestPhone } from '../domain/codes/otp.js';
import type { Lang } from '../domain/texts/orders.js';
import { simulatedCourier, simulatedEta } from '../platform/providers/courier/index.js';
import type { AppDeps } from './deps.js';
import { conflict, notFound } from './errors.js';
import { applyCourierEvent, type CourierEvent } from './order-lifecycle.js';
import { deliveryView } from './presenters/orders.js';

/** Where the simulated courier is on the way, for its arrival estimate. */
const ETA_STAGE: Partial<Record<TrackingState, 'to_store' | 'at_store' | 'to_customer' | 'at_customer'>> = {
  courier_assigned: 'to_store',
  courier_at_store: 'at_store',
  en_route: 'to_customer',
  arrived: 'at_customer',
};

/** Plain codes of test phones are served for a day, then treated as gone. */
const QA_CODE_RETENTION_MS = 24 * 3600_000;

/** The TEST-only operations are not found elsewhere, even if a PROD router were to route them. */
export function onlyInTest(deps: Pick<AppDeps, 'config'>): void {
  if (deps.config.env !== 'TEST') throw notFound('Not available in this environment');
}

/** The newest code sent to a configured test phone (for `purpose`, else either), within a day. */
export async function lastTestCode(
  deps: Pick<AppDeps, 'db' | 'config' | 'clock'>,
  phone: string,
  purpose: 'login' | 'update_pin' | undefined,
) {
  const { config, db } = deps;
  if (config.env !== 'TEST' || !isTestPhone(phone, config.auth.otpTestPhonePrefixes)) throw notFound('Not a configured test phone');
  const candidates = await Promise.all((purpose ? [purpose] : (['login', 'update_pin'] as const)).map((p) => latestOtpCode(db, phone, p)));
  const code = candidates
    .filter((c) => c?.plain_code && c.created_at.getTime() > deps.clock.nowMs() - QA_CODE_RETENTION_MS)
    .sort((a, b) => b!.id - a!.id)[0];
  if (!code?.plain_code) throw notFound('No code was issued to this phone');
  return { ...code, plain_code: code.plain_code };
}

export interface CourierReport {
  state: TrackingState;
  comment?: string | null;
  courier_location?: { lon: number; lat: number } | null;
}

/** Moves the customer's delivery as a courier service would report it, and answers its new view. */
export async function simulateCourierEvent(
  deps: Pick<AppDeps, 'db' | 'config' | 'clock'>,
  customerId: string,
  orderId: string,
  body: CourierReport,
  lang: Lang,
) {
  onlyInTest(deps);
  return deps.db.transaction().execute(async (trx) => {
    const o = await lockCustomerOrder(trx, orderId, customerId);
    if (!o) throw notFound('No order with this id');
    if (o.type !== 'delivery' || o.delivery_lon === null || o.delivery_lat === null)
      throw conflict('ORDER_HAS_NO_DELIVERY', 'A pickup order has no courier delivery');
    // What a courier service would report with this event: who, where, and when they arrive.
    const store = { lon: o.store_lon, lat: o.store_lat };
    const customer = { lon: o.delivery_lon, lat: o.delivery_lat };
    const assigning = body.state === 'courier_assigned' && o.tracking_state === 'searching_courier';
    const courier = assigning ? simulatedCourier(o.id, o.order_version) : undefined;
    const given = body.courier_location ?? undefined;
    const position =
      given ?? (assigning ? store : o.courier_lon !== null && o.courier_lat !== null ? { lon: o.courier_lon, lat: o.courier_lat } : store);
    // A new state, or a new position in the same one, gets a new arrival estimate.
    const stage = body.state !== o.tracking_state || given ? ETA_STAGE[body.state] : undefined;
    const event: CourierEvent = {
      state: body.state,
      comment: body.comment,
      location: assigning ? position : given,
      courier,
      eta: stage
        ? simulatedEta(stage, { courier: position, store, customer }, courier?.transport ?? o.courier_transport ?? 'car', deps.clock.now())
        : undefined,
      route:
        body.state === 'en_route'
          ? [
              [position.lon, position.lat],
              [customer.lon, customer.lat],
            ]
          : undefined,
    };
    await applyCourierEvent(trx, o, event, deps.clock.now());
    return deliveryView((await findCustomerOrder(trx, orderId, customerId))!, lang, deps.config.orders.trackingRefreshSeconds);
  });
}
