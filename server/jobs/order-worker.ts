// The background worker of orders. Every instance runs one; they share the work through
// `FOR UPDATE SKIP LOCKED`, so a row is handled by exactly one instance at a time and a crashed
// instance's rows are taken by the others (nothing is marked done before its effect commits).
// One tick does, each in its own transaction:
//   1. push fan-out: outbox events with a notification_id -> one push delivery per customer device,
//      and the picker events that push -> one per picker device;
//   2. push sending: due deliveries -> the push provider, one device's in order, with retries and
//      backoff; a delivery superseded by a later one about the same order is dropped; dead
//      tokens forget their device;
//   3. provider commands: courier requests and withdrawals, bank refunds and invoice cancellations;
//   3b. a real bank's open invoices: asked about, and settled by its answer; and those closed
//       here before its final word: asked until it gives one (a late payment is taken or refunded);
//   4. payment deadline: online orders unpaid after their window are cancelled; pickup orders
//      not collected a day after their slot ended are cancelled (and refunded when paid);
//   5. courier dispatch: deliveries whose courier should be requested now;
//   6. deliveries under way at a real courier service: asked where they are, tracking moved.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  claimDeliveriesDueForCourier,
  claimDeliveriesForStatusCheck,
  claimOrdersPastPaymentWindow,
  claimUncollectedPickups,
  findStoreForOrder,
  lockOrder,
  updateDelivery,
  updateOrder,
} from '../../db/queries/orders.js';
import { recordOrderChange } from '../../db/queries/order-events.js';
import {
  claimDueProviderCommands,
  closeInvoice,
  findInvoicesDueForCheck,
  findInvoice,
  findPaidInvoices,
  hasPendingDifferenceRefund,
  markDifferenceRefundMoot,
  finishProviderCommand,
  lockInvoiceDueForCheck,
  recordBankWord,
  refundedDifferences,
  scheduleInvoiceCheck,
  type ProviderCommandRow,
} from '../../db/queries/payments.js';
import { setReconciliationStatus } from '../../db/queries/picking.js';
import {
  claimDuePushDeliveries,
  claimUnpushedEvents,
  customerPushTargets,
  finishPushDelivery,
  forgetPushDevice,
  insertPushDeliveries,
  markEventsPushed,
  orderFactsForPickerPush,
  orderFactsForPush,
  pickerPushTargets,
  storeQueuePushTargets,
} from '../../db/queries/push.js';
import type { Executor } from '../../db/executor.js';
import type { OrderStatus, TrackingState } from '../../db/tables/orders.js';
import { wholeRefunds } from '../../domain/money/bank-invoice.js';
import { afterFailure } from '../../domain/time/retry-schedule.js';
import { pushNotice } from '../../domain/texts/orders.js';
import { pickerPushNotice } from '../../domain/picking/messages.js';
import { PICKUP_COLLECTION_HOURS } from '../../domain/orders/status.js';
import { cancelUncollected, cancelUnpaid, followCourierStatus, requestCourier, settleInvoice, takeLatePayment } from '../../handlers/services/order-lifecycle.js';
import type { AppDeps } from '../deps.js';
import { bankOf, BankRefusedError } from '../providers/bank/index.js';
import type { InvoiceOutcome } from '../providers/bank/types.js';
import { courierOf, CourierRefusedError } from '../providers/courier/index.js';
import { pushSenderOf } from '../providers/push/index.js';

/** Provider commands are retried for about a day (backoff capped at an hour) before giving up. */
const COMMAND_MAX_ATTEMPTS = 30;
const COMMAND_RETRY_BASE_SECONDS = 5;
/** How long after its expiry a closed invoice waits for the bank's final word (then: support). */
const BANK_WORD_WAIT_MS = 24 * 3600 * 1000;

export interface WorkerTick {
  pushEvents: number;
  pushesSent: number;
  commands: number;
  invoicesSettled: number;
  unpaidCancelled: number;
  uncollectedCancelled: number;
  couriersRequested: number;
  deliveriesFollowed: number;
}

interface Envelope {
  type: 'order.changed' | 'delivery.tracking.changed';
  event_id: string;
  notification_id: string | null;
  /** `status` and `changes` of a tracking event: absent from envelopes of older builds. */
  data: { order_id: string; order_version: number; status?: OrderStatus; changes?: string[]; state?: TrackingState };
}

type UnpushedEvent = Awaited<ReturnType<typeof claimUnpushedEvents>>[number];

// ------------------------------------------------------------------------------------------------
// 1. push fan-out

async function fanOutPushes(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const events = await claimUnpushedEvents(trx, deps.config.orders.worker.batchSize);
    for (const e of events) {
      if (e.type.startsWith('picker.')) await fanOutPickerPush(trx, deps, e);
      else await fanOutCustomerPush(trx, e);
    }
    await markEventsPushed(trx, events.map((e) => e.id));
    return events.length;
  });
}

/** A customer's order event, to the installations of the customer's app. */
async function fanOutCustomerPush(trx: Executor, e: UnpushedEvent): Promise<void> {
  const env = e.payload as Envelope;
  if (!e.customer_id || !e.order_id || !env.notification_id) return;
  const targets = await customerPushTargets(trx, e.customer_id);
  if (!targets.wantsOrderUpdates || !targets.deviceIds.length) return;
  const order = await orderFactsForPush(trx, e.order_id);
  if (!order) return;
  // A tracking event of an older build reads as a tracking change alone.
  const { status = order.status, changes = ['delivery'] } = env.data;
  const notice = pushNotice(
    env.type === 'delivery.tracking.changed'
      ? { type: env.type, state: env.data.state!, status, changes, reason: order.status_reason }
      : { type: env.type, status, changes, orderType: order.type, paymentStatus: order.payment_status, reason: order.status_reason },
    order.no,
    targets.language,
  );
  // PushNotificationPayload: it selects the screen and triggers a re-read, it is not a snapshot
  // of the order. Made once, so every retry sends the same notification.
  const data: Record<string, string> = {
    notification_id: env.notification_id,
    kind: notice.kind,
    screen: 'order',
    title: notice.title,
    body: notice.body,
    sent_at: new Date().toISOString(),
    event_id: env.event_id,
    order_id: e.order_id,
    order_no: String(order.no),
    order_version: String(env.data.order_version),
  };
  await insertPushDeliveries(
    trx,
    targets.deviceIds.map((deviceId) => ({
      notification_id: env.notification_id!,
      device_id: deviceId,
      event_id: env.event_id,
      customer_id: e.customer_id!,
      order_id: e.order_id,
      title: notice.title,
      body: notice.body,
      data,
    })),
  );
}

/**
 * A picker event that pushes (PushNotificationPayload `picker_*`): an order entering a store's
 * queue, to the store's pickers with no current session, if it is in the queue's horizon (a slot
 * order days ahead is not in the queue yet); the cancellation of a picker's order, to that
 * picker. Each in the language of the installation's registration.
 */
async function fanOutPickerPush(trx: Executor, deps: AppDeps, e: UnpushedEvent): Promise<void> {
  const payload = e.payload as { audience?: { picker_id?: number } };
  if (!e.order_id || !e.store_id) return;
  const order = await orderFactsForPickerPush(trx, e.order_id, deps.config.picking.queueHorizonHours);
  if (!order) return;
  const cancelled = e.type === 'picker.order.cancelled';
  if (!cancelled && (order.status !== 'confirmed' || !order.in_horizon)) return;
  const pickerId = payload.audience?.picker_id;
  const targets = cancelled ? (typeof pickerId === 'number' ? await pickerPushTargets(trx, pickerId) : []) : await storeQueuePushTargets(trx, e.store_id);
  if (!targets.length) return;
  const kind = cancelled ? 'picker_order_cancelled' : 'picker_queue';
  const notificationId = randomUUID();
  const sentAt = new Date().toISOString();
  await insertPushDeliveries(
    trx,
    targets.map((t) => {
      const notice = pickerPushNotice(cancelled ? { kind: 'picker_order_cancelled' } : { kind: 'picker_queue', isExpress: order.is_express }, order.no, t.language ?? 'ru');
      return {
        notification_id: notificationId,
        device_id: t.device_id,
        event_id: e.event_id,
        picker_id: t.picker_id!,
        order_id: e.order_id,
        title: notice.title,
        body: notice.body,
        data: { notification_id: notificationId, kind, screen: cancelled ? 'picker_session' : 'picker_queue', title: notice.title, body: notice.body, sent_at: sentAt, order_id: e.order_id! },
      };
    }),
  );
}

// ------------------------------------------------------------------------------------------------
// 2. push sending

async function sendPushes(deps: AppDeps): Promise<number> {
  const { maxAttempts, retryBaseSeconds } = deps.config.orders.push;
  const sender = pushSenderOf(deps);
  return deps.db.transaction().execute(async (trx) => {
    const due = await claimDuePushDeliveries(trx, deps.config.orders.worker.batchSize);
    // One device's notifications go out one after another, in the order they were made (the
    // phone shows them in arrival order); devices are independent and sent to at once.
    type Outcome = Awaited<ReturnType<typeof sender.send>> | 'no_device' | 'superseded';
    const outcomes = new Array<Outcome>(due.length);
    const byDevice = new Map<string, number[]>();
    for (const [i, d] of due.entries()) byDevice.set(d.device_id, [...(byDevice.get(d.device_id) ?? []), i]);
    await Promise.all(
      [...byDevice.values()].map(async (indexes) => {
        for (const i of indexes) {
          const d = due[i];
          if (d.superseded) outcomes[i] = 'superseded';
          else if (!d.push_token || !d.platform) outcomes[i] = 'no_device';
          else {
            outcomes[i] = await sender
              .send({ token: d.push_token, platform: d.platform, notificationId: d.notification_id, title: d.title, body: d.body, data: d.data })
              .catch((err: Error) => ({ kind: 'retry' as const, error: err.message }));
          }
        }
      }),
    );
    let sent = 0;
    for (const [i, d] of due.entries()) {
      const outcome = outcomes[i];
      const key = { notification_id: d.notification_id, device_id: d.device_id };
      if (outcome === 'no_device') {
        await finishPushDelivery(trx, key, { state: 'skipped', error: 'the installation was removed' });
      } else if (outcome === 'superseded') {
        await finishPushDelivery(trx, key, { state: 'skipped', error: 'superseded by a later notification about the order' });
      } else if (outcome.kind === 'sent') {
        sent++;
        await finishPushDelivery(trx, key, { state: 'sent' });
      } else if (outcome.kind === 'invalid_token') {
        await finishPushDelivery(trx, key, { state: 'stale_token', error: outcome.error });
        await forgetPushDevice(trx, d.device_id, d.push_token!);
      } else if (outcome.kind === 'rejected') {
        await finishPushDelivery(trx, key, { state: 'failed', error: outcome.error });
      } else {
        const next = afterFailure(d.attempts + 1, maxAttempts, retryBaseSeconds);
        await finishPushDelivery(trx, key, next.retry ? { state: 'pending', error: outcome.error, delaySeconds: next.delaySeconds } : { state: 'failed', error: outcome.error });
      }
    }
    return sent;
  });
}

// ------------------------------------------------------------------------------------------------
// 3. provider commands

/** The picking difference a `bank.refund` returns (finishSession), or null for a whole refund. */
function partialRefundOf(cmd: ProviderCommandRow): { amount: string; sessionId: number } | null {
  const p = cmd.payload as { amount?: unknown; session_id?: unknown };
  return cmd.kind === 'bank.refund' && typeof p.amount === 'string' && typeof p.session_id === 'number' ? { amount: p.amount, sessionId: p.session_id } : null;
}

/** Runs one command; true when done, false when the provider asked to come back later. */
async function runCommand(trx: Executor, deps: AppDeps, cmd: ProviderCommandRow): Promise<boolean> {
  const o = await lockOrder(trx, cmd.order_id);
  if (!o) return true; // the order is gone: nothing left to tell anyone
  const payload = cmd.payload as Record<string, string | null | undefined>;
  switch (cmd.kind) {
    case 'courier.request': {
      if (o.tracking_state !== 'searching_courier' || o.delivery_lon === null || o.delivery_lat === null) return true;
      const store = await findStoreForOrder(trx, o.store_id);
      const { ref } = await courierOf(deps).requestCourier({
        orderId: o.id,
        orderNo: o.no,
        storeId: o.store_id,
        pickup: { lon: store?.lon ?? o.store_lon, lat: store?.lat ?? o.store_lat },
        dropoff: { lon: o.delivery_lon, lat: o.delivery_lat },
        addressLine: o.address_line,
        isExpress: o.is_express,
        window: o.slot_starts_at && o.slot_ends_at ? { startsAt: o.slot_starts_at.toISOString(), endsAt: o.slot_ends_at.toISOString() } : null,
      });
      await updateDelivery(trx, o.id, { courier_request_ref: ref }, null);
      return true;
    }
    case 'courier.withdraw':
      await courierOf(deps).withdraw({ orderId: o.id, ref: payload.ref ?? o.courier_request_ref });
      return true;
    case 'bank.cancel_invoice':
      await bankOf(deps).cancelInvoice({ invoiceId: String(payload.invoice_id), providerRef: String(payload.provider_ref) });
      return true;
    case 'bank.refund_surplus': {
      // The whole of a payment the bank took on an invoice the order no longer needed.
      const invoice = await findInvoice(trx, String(payload.invoice_id));
      if (!invoice || invoice.status !== 'surplus') throw new BankRefusedError('the invoice is not a surplus payment');
      const result = await bankOf(deps).refund({
        refundId: `refund-${cmd.id}`,
        invoiceId: invoice.id,
        providerRef: invoice.provider_ref,
        amount: invoice.amount,
        currency: invoice.currency,
      });
      return result.status === 'succeeded';
    }
    case 'bank.refund': {
      // Whole (a cancelled paid order: what was not already returned) or the picking difference
      // of one session (`amount`; moot once the whole payment is being returned).
      const difference = partialRefundOf(cmd);
      // A difference not yet asked of the bank when the order stopped being paid (cancelled and
      // refunded whole) is moot: the whole refund returns it. One already asked is seen through.
      if (difference && o.payment_status !== 'paid' && cmd.attempts === 0) {
        await markDifferenceRefundMoot(trx, cmd.id);
        await setReconciliationStatus(trx, difference.sessionId, 'not_required');
        return true;
      }
      if (!difference && o.payment_status !== 'refund_pending') return true;
      // A whole refund subtracts the differences already returned: it waits for those under way.
      if (!difference && (await hasPendingDifferenceRefund(trx, o.id, cmd.id))) return false;
      const paid = await findPaidInvoices(trx, o.id);
      if (!paid.length) throw new BankRefusedError('the order has no paid invoice to refund');
      // A difference goes back on the order's payment (an order picked for less paid no other);
      // a whole refund returns every paid invoice (the payment of a difference too).
      const refunds = difference ? [{ invoice: paid[0], amount: difference.amount }] : wholeRefunds(paid, await refundedDifferences(trx, o.id));
      let pending = false;
      for (const [n, { invoice, amount }] of refunds.entries()) {
        // One refund id per invoice and command: a command run again asks the bank the same.
        const result = await bankOf(deps).refund({
          refundId: n === 0 ? `refund-${cmd.id}` : `refund-${cmd.id}-${n}`,
          invoiceId: invoice.id,
          providerRef: invoice.provider_ref,
          amount,
          currency: invoice.currency,
        });
        if (result.status === 'pending') pending = true;
      }
      if (pending) return false;
      if (difference) {
        await setReconciliationStatus(trx, difference.sessionId, 'completed');
        await recordOrderChange(trx, o.id, ['payment']);
      } else {
        await updateOrder(trx, o.id, { payment_status: 'refunded' });
        await recordOrderChange(trx, o.id, ['payment'], { notify: true });
      }
      return true;
    }
  }
}

async function runProviderCommands(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = await claimDueProviderCommands(trx, deps.config.orders.worker.batchSize);
    for (const cmd of due) {
      // A savepoint per command: one failing command must not undo the others' effects.
      await sql`SAVEPOINT provider_command`.execute(trx);
      try {
        const done = await runCommand(trx, deps, cmd);
        await sql`RELEASE SAVEPOINT provider_command`.execute(trx);
        if (done) await finishProviderCommand(trx, cmd.id, { state: 'done' });
        else await finishProviderCommand(trx, cmd.id, { state: 'pending', error: 'the provider has not finished yet', delaySeconds: COMMAND_RETRY_BASE_SECONDS * 6 });
      } catch (err) {
        await sql`ROLLBACK TO SAVEPOINT provider_command`.execute(trx);
        const message = (err as Error).message;
        const refused = err instanceof BankRefusedError || err instanceof CourierRefusedError;
        const next = afterFailure(cmd.attempts + 1, COMMAND_MAX_ATTEMPTS, COMMAND_RETRY_BASE_SECONDS);
        if (refused || !next.retry) {
          deps.log.error('provider command given up', { command_id: cmd.id, kind: cmd.kind, order_id: cmd.order_id, err: message });
          await finishProviderCommand(trx, cmd.id, { state: 'failed', error: message });
          // The picker app and support see that staff must settle the difference by hand.
          const difference = partialRefundOf(cmd);
          if (difference) await setReconciliationStatus(trx, difference.sessionId, 'failed');
        } else {
          deps.log.warn('provider command failed; will retry', { command_id: cmd.id, kind: cmd.kind, err: message });
          await finishProviderCommand(trx, cmd.id, { state: 'pending', error: message, delaySeconds: next.delaySeconds });
        }
      }
    }
    return due.length;
  });
}

// ------------------------------------------------------------------------------------------------
// 3b. a real bank's open invoices

/**
 * Asks a real bank about its open invoices and settles them by its word, as a notification
 * would (the sandbox's are settled by its QA operation). Each in its own transaction, the order
 * locked before the invoice as the invoice handler does; a question the bank does not answer is
 * asked again `statusCheckSeconds` later. The answer's wait is bounded by BANK_TIMEOUT_MS.
 *
 * An invoice closed here before the bank's final word (expired by this service's clock and
 * replaced, or its order cancelled) is asked about the same way until the bank says how it
 * ended: a payment the bank took on it is taken by the order or refunded (takeLatePayment).
 * A bank that still calls it pending a day after it expired is given up on, loudly: support
 * settles it by hand.
 */
async function checkBankInvoices(deps: AppDeps): Promise<number> {
  const bank = bankOf(deps);
  const { statusCheckSeconds } = deps.config.orders.bank;
  let settled = 0;
  for (const due of await findInvoicesDueForCheck(deps.db, deps.config.orders.worker.batchSize)) {
    settled += await deps.db.transaction().execute(async (trx) => {
      const o = await lockOrder(trx, due.order_id);
      const invoice = o ? await lockInvoiceDueForCheck(trx, due.id) : undefined;
      if (!o || !invoice) return 0;
      let outcome: InvoiceOutcome | null = null;
      // An invoice of a bank this instance is not configured for is left to one that is.
      if (invoice.provider === bank.name) {
        try {
          outcome = await bank.invoiceStatus({ invoiceId: invoice.id, providerRef: invoice.provider_ref });
        } catch (err) {
          deps.log.warn('bank invoice status unknown; will ask again', { invoice_id: invoice.id, order_id: o.id, err: (err as Error).message });
        }
      }
      await scheduleInvoiceCheck(trx, invoice.id, statusCheckSeconds, outcome !== null);
      if (invoice.status !== 'open') {
        if (outcome === null || outcome === 'open') {
          if (Date.now() - invoice.expires_at.getTime() < BANK_WORD_WAIT_MS) return 0;
          deps.log.error('the bank gave no final word on a closed invoice; stopped asking', { invoice_id: invoice.id, order_id: o.id });
          await recordBankWord(trx, invoice.id, null);
          return 0;
        }
        if (outcome !== 'paid') {
          await recordBankWord(trx, invoice.id, null);
          return 1;
        }
        const taken = await takeLatePayment(trx, o, invoice);
        deps.log.warn('the bank took a payment on an invoice closed here', { invoice_id: invoice.id, order_id: o.id, outcome: taken });
        return 1;
      }
      if (outcome === null || outcome === 'open') return 0;
      if (outcome === 'expired') await closeInvoice(trx, invoice.id, 'expired');
      else await settleInvoice(trx, o, invoice.id, outcome);
      return 1;
    });
  }
  return settled;
}

// ------------------------------------------------------------------------------------------------
// 4. payment deadline and uncollected pickups, 5. courier dispatch

async function cancelUnpaidOrders(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    let cancelled = 0;
    for (const id of await claimOrdersPastPaymentWindow(trx, deps.config.orders.worker.batchSize)) {
      const o = await lockOrder(trx, id);
      if (o && (await cancelUnpaid(trx, o))) cancelled++;
    }
    return cancelled;
  });
}

async function cancelUncollectedPickups(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    let cancelled = 0;
    for (const id of await claimUncollectedPickups(trx, PICKUP_COLLECTION_HOURS, deps.config.orders.worker.batchSize)) {
      const o = await lockOrder(trx, id);
      if (o && (await cancelUncollected(trx, o))) cancelled++;
    }
    return cancelled;
  });
}

async function dispatchCouriers(deps: AppDeps): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    let requested = 0;
    for (const id of await claimDeliveriesDueForCourier(trx, deps.config.orders.courierDispatchLeadMinutes, deps.config.orders.worker.batchSize)) {
      const o = await lockOrder(trx, id);
      if (o && (await requestCourier(trx, o))) requested++;
    }
    return requested;
  });
}

// ------------------------------------------------------------------------------------------------
// 6. deliveries under way at a real courier service

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
async function followCourierDeliveries(deps: AppDeps): Promise<number> {
  const courier = courierOf(deps);
  if (courier.name === 'simulator') return 0;
  const due = await claimDeliveriesForStatusCheck(deps.db, deps.config.orders.courier.statusCheckSeconds, deps.config.orders.worker.batchSize);
  let followed = 0;
  const follow = async (asked: (typeof due)[number]) => {
    try {
      const status = await courier.deliveryStatus(asked.courier_request_ref);
      if (!status) return;
      followed += await deps.db.transaction().execute(async (trx) => {
        const o = await lockOrder(trx, asked.order_id);
        if (!o || o.courier_request_ref !== asked.courier_request_ref || o.tracking_state !== asked.tracking_state) return 0;
        const outcome = await followCourierStatus(trx, o, status);
        if (outcome === 'applied') return 1;
        deps.log.warn('courier service reported a delivery state this order cannot take', { order_id: o.id, from: o.tracking_state, to: status.state, code: outcome });
        return 0;
      });
    } catch (err) {
      deps.log.warn('courier delivery status unknown; will ask again', { order_id: asked.order_id, err: (err as Error).message });
    }
  };
  for (let i = 0; i < due.length; i += COURIER_QUESTIONS_AT_ONCE) await Promise.all(due.slice(i, i + COURIER_QUESTIONS_AT_ONCE).map(follow));
  return followed;
}

/** One pass of every task (also what the tests drive directly). */
export async function runOrderWorkerOnce(deps: AppDeps): Promise<WorkerTick> {
  return {
    pushEvents: await fanOutPushes(deps),
    pushesSent: await sendPushes(deps),
    commands: await runProviderCommands(deps),
    // Before the deadline: an invoice paid at the bank confirms its order instead.
    invoicesSettled: await checkBankInvoices(deps),
    unpaidCancelled: await cancelUnpaidOrders(deps),
    uncollectedCancelled: await cancelUncollectedPickups(deps),
    couriersRequested: await dispatchCouriers(deps),
    deliveriesFollowed: await followCourierDeliveries(deps),
  };
}

export interface OrderWorker {
  /** Stops scheduling and waits for the running pass to finish (before the pool closes). */
  stop(): Promise<void>;
}

export function startOrderWorker(deps: AppDeps): OrderWorker {
  const { enabled, intervalMs } = deps.config.orders.worker;
  if (!enabled) return { stop: async () => {} };
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const loop = () => {
    running = deps.telemetry
      .inSpan('order-worker pass', () => runOrderWorkerOnce(deps))
      .then((tick) => {
        if (Object.values(tick).some((n) => n > 0)) deps.log.debug('order worker', { ...tick });
      })
      .catch((err: Error) => deps.log.warn('order worker pass failed', { err: err.message }))
      .finally(() => {
        running = null;
        if (!stopped) {
          timer = setTimeout(loop, intervalMs);
          timer.unref();
        }
      });
  };
  timer = setTimeout(loop, intervalMs);
  timer.unref();
  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

