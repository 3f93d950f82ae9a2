// Handlers of the QA tag, keyed by operationId.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { latestOtpCode } from '../db/queries/auth.js';
import { findCustomerOrder, lockCustomerOrder } from '../db/queries/orders.js';
import { findInvoice, findOpenInvoice } from '../db/queries/payments.js';
import { conflict, notFound } from '../services/errors.js';
import { simulatedCourier, simulatedEta } from '../platform/providers/courier/index.js';
import { isTestPhone, otpState } from '../domain/codes/otp.js';
import type { TrackingState } from '../db/tables/orders.js';
import { applyCourierEvent, settleInvoice, type CourierEvent } from '../services/order-lifecycle.js';
import { deliveryView, orderStatusView } from '../services/presenters/orders.js';
import { customerIdOf } from './support/principal.js';

/** Where the simulated courier is on the way, for its arrival estimate. */
const ETA_STAGE: Partial<Record<TrackingState, 'to_store' | 'at_store' | 'to_customer' | 'at_customer'>> = {
  courier_assigned: 'to_store',
  courier_at_store: 'at_store',
  en_route: 'to_customer',
  arrived: 'at_customer',
};

/** Plain codes of test phones are served for a day, then treated as gone. */
const QA_CODE_RETENTION_MS = 24 * 3600_000;

export const qaHandlers = {
  // GET /api/qa/otp/last
  getLastOtpCode: async (ctx) => {
    const { config, db } = ctx.deps;
    const { phone, purpose } = ctx.query;
    // PROD does not route this operation; the check here keeps it closed even if it were.
    if (config.env !== 'TEST' || !isTestPhone(phone, config.auth.otpTestPhonePrefixes)) throw notFound('Not a configured test phone');
    const candidates = await Promise.all(
      (purpose ? [purpose] : (['login', 'update_pin'] as const)).map((p) => latestOtpCode(db, phone, p)),
    );
    const code = candidates
      .filter((c) => c?.plain_code && c.created_at.getTime() > ctx.deps.clock.nowMs() - QA_CODE_RETENTION_MS)
      .sort((a, b) => b!.id - a!.id)[0];
    if (!code?.plain_code) throw notFound('No code was issued to this phone');
    return {
      status: 200,
      body: {
        phone,
        code: code.plain_code,
        purpose: code.purpose,
        state: otpState(code, config.auth.otpMaxAttempts, ctx.deps.clock.now()),
        sent_at: code.created_at.toISOString(),
        expires_at: code.expires_at.toISOString(),
        attempts_left: Math.max(0, config.auth.otpMaxAttempts - code.attempts),
      },
    };
  },
  // POST /api/qa/orders/{order_id}/delivery-tracking: the courier simulator (TEST only).
  simulateDeliveryTracking: async (ctx) => {
    const { config, db } = ctx.deps;
    if (config.env !== 'TEST') throw notFound('Not available in this environment');
    const customerId = customerIdOf(ctx);
    const orderId = ctx.path.order_id.toLowerCase();
    const body = ctx.body;
    const delivery = await db.transaction().execute(async (trx) => {
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
        given ??
        (assigning ? store : o.courier_lon !== null && o.courier_lat !== null ? { lon: o.courier_lon, lat: o.courier_lat } : store);
      // A new state, or a new position in the same one, gets a new arrival estimate.
      const stage = body.state !== o.tracking_state || given ? ETA_STAGE[body.state] : undefined;
      const event: CourierEvent = {
        state: body.state,
        comment: body.comment,
        location: assigning ? position : given,
        courier,
        eta: stage
          ? simulatedEta(
              stage,
              { courier: position, store, customer },
              courier?.transport ?? o.courier_transport ?? 'car',
              ctx.deps.clock.now(),
            )
          : undefined,
        route:
          body.state === 'en_route'
            ? [
                [position.lon, position.lat],
                [customer.lon, customer.lat],
              ]
            : undefined,
      };
      await applyCourierEvent(trx, o, event, ctx.deps.clock.now());
      return deliveryView((await findCustomerOrder(trx, orderId, customerId))!, ctx.lang, config.orders.trackingRefreshSeconds);
    });
    return { status: 200, body: delivery! };
  },

  // POST /api/qa/payments/bank/{order_id}/settle: the sandbox bank's notification (TEST only).
  settleSandboxBankInvoice: async (ctx) => {
    const { config, db } = ctx.deps;
    if (config.env !== 'TEST') throw notFound('Not available in this environment');
    const customerId = customerIdOf(ctx);
    const orderId = ctx.path.order_id.toLowerCase();
    const result = await db.transaction().execute(async (trx) => {
      const o = await lockCustomerOrder(trx, orderId, customerId);
      if (!o) throw notFound('No order with this id');
      const open = await findOpenInvoice(trx, o.id);
      // Only the sandbox settles its own invoices; a real bank's invoice is that bank's to settle.
      if (!open || open.provider !== 'sandbox' || open.expires_at.getTime() <= ctx.deps.clock.nowMs()) {
        throw conflict('NO_OPEN_INVOICE', 'The order has no open sandbox invoice; GET its invoice first');
      }
      await settleInvoice(trx, o, open.id, ctx.body.outcome, ctx.deps.clock.now());
      const [invoice, after] = await Promise.all([findInvoice(trx, open.id), findCustomerOrder(trx, orderId, customerId)]);
      return { invoice: invoice!, order: after! };
    });
    const { invoice, order } = result;
    return {
      status: 200,
      body: {
        invoice_id: invoice.id,
        order_id: invoice.order_id,
        // What settleInvoice just closed it as (under the order's lock, so nothing else did).
        status: ctx.body.outcome,
        amount: invoice.amount,
        currency: invoice.currency,
        link: invoice.link,
        created_at: invoice.created_at.toISOString(),
        expires_at: invoice.expires_at.toISOString(),
        settled_at: invoice.settled_at ? invoice.settled_at.toISOString() : null,
        order_status: orderStatusView(order, ctx.lang),
        payment_status: order.payment_status,
      },
    };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const qaSteps: StepsMap = {
  simulateDeliveryTracking: { varyBy: ['Accept-Language'] },
  settleSandboxBankInvoice: { varyBy: ['Accept-Language'] },
};
