// What the customer reads about an order, in both languages: purchase status names, delivery
// state names, the server's explanations (kept as reason codes in the database, so each reader
// gets their own language), and push notification texts.
import type { OrderStatus, PaymentStatus, TrackingState } from '../orders/vocabulary.js';

export type Lang = 'ru' | 'en';
type Texts = { ru: string; en: string };

const STATUS: Record<OrderStatus, Texts> = {
  created: { en: 'Order placed', ru: 'Заказ оформлен' },
  awaiting_payment: { en: 'Awaiting payment', ru: 'Ожидает оплаты' },
  confirmed: { en: 'Confirmed', ru: 'Подтверждён' },
  picking: { en: 'Being picked', ru: 'Собирается' },
  picked: { en: 'Waiting for the courier', ru: 'Ожидает курьера' },
  ready_for_pickup: { en: 'Ready for pickup', ru: 'Готов к выдаче' },
  en_route: { en: 'On the way', ru: 'В пути' },
  completed: { en: 'Delivered', ru: 'Доставлен' },
  cancellation_requested: { en: 'Cancellation requested', ru: 'Запрошена отмена' },
  cancelled: { en: 'Cancelled', ru: 'Отменён' },
};
// A pickup order is not "delivered" but collected.
const PICKUP_COMPLETED: Texts = { en: 'Collected', ru: 'Получен' };

export function statusDisplay(status: OrderStatus, type: 'delivery' | 'pickup', lang: Lang): string {
  return (status === 'completed' && type === 'pickup' ? PICKUP_COMPLETED : STATUS[status])[lang];
}

const TRACKING: Record<TrackingState, Texts> = {
  pending: { en: 'Courier not requested yet', ru: 'Курьер ещё не вызван' },
  searching_courier: { en: 'Looking for a courier', ru: 'Ищем курьера' },
  courier_assigned: { en: 'Courier is heading to the store', ru: 'Курьер едет в магазин' },
  courier_at_store: { en: 'Courier is at the store', ru: 'Курьер в магазине' },
  en_route: { en: 'Courier is on the way', ru: 'Курьер в пути' },
  arrived: { en: 'Courier has arrived', ru: 'Курьер на месте' },
  delivered: { en: 'Delivered', ru: 'Доставлено' },
  cancelled: { en: 'Courier delivery cancelled', ru: 'Доставка курьером отменена' },
  returning: { en: 'Returning the order to the store', ru: 'Заказ возвращается в магазин' },
  returned: { en: 'The order is back at the store', ru: 'Заказ вернулся в магазин' },
};

export const trackingDisplay = (state: TrackingState, lang: Lang): string => TRACKING[state][lang];
export const trackingDisplayTexts = (state: TrackingState): Texts => TRACKING[state];

/** Why an order entered a status. Unknown codes (written by a newer build) read as no comment. */
export type StatusReason =
  | 'cancelled_by_customer'
  | 'not_paid_in_time'
  | 'cancellation_queued'
  | 'cancellation_too_late'
  | 'courier_withdrawn'
  | 'nothing_picked'
  | 'not_collected'
  | 'delivery_failed';

const REASONS: Record<StatusReason, Texts> = {
  cancelled_by_customer: { en: 'Cancelled at your request.', ru: 'Отменён по вашей просьбе.' },
  not_paid_in_time: { en: 'The order was not paid in time.', ru: 'Заказ не был оплачен вовремя.' },
  cancellation_queued: {
    en: 'A courier is already assigned. We are withdrawing the delivery; the order will be cancelled once the courier service confirms.',
    ru: 'Курьер уже назначен. Мы отзываем доставку; заказ будет отменён, когда служба доставки подтвердит отмену.',
  },
  cancellation_too_late: {
    en: 'The courier had already collected the order, so it could not be cancelled.',
    ru: 'Курьер уже забрал заказ, поэтому отменить его не удалось.',
  },
  courier_withdrawn: { en: 'Cancelled at your request; the courier was withdrawn.', ru: 'Отменён по вашей просьбе; курьер отозван.' },
  nothing_picked: {
    en: 'None of the ordered products could be picked, so the order was cancelled.',
    ru: 'Ни один из заказанных товаров не удалось собрать, поэтому заказ отменён.',
  },
  delivery_failed: {
    en: 'The courier could not deliver the order and it is back at the store. It will be sent again; you can also cancel it (a paid order is refunded in full).',
    ru: 'Курьер не смог доставить заказ, и он вернулся в магазин. Его отправят снова; вы также можете отменить заказ (оплаченный заказ вернём полностью).',
  },
  not_collected: {
    en: 'The order was not collected within 24 hours after the pickup slot ended, so it was cancelled.',
    ru: 'Заказ не забрали в течение 24 часов после окончания времени самовывоза, поэтому он отменён.',
  },
};

/** The comment to show: the server's reason in the reader's language, else the free text. */
export function statusComment(reason: string | null, comment: string | null, lang: Lang): string | null {
  const known = reason !== null && reason in REASONS ? REASONS[reason as StatusReason][lang] : null;
  return known ?? comment;
}

const ONLINE_DISABLED: Texts = {
  en: 'Online payment is temporarily unavailable. Please pay in cash.',
  ru: 'Онлайн-оплата временно недоступна. Пожалуйста, оплатите наличными.',
};
export const onlinePaymentDisabledMessage = (lang: Lang): string => ONLINE_DISABLED[lang];

/** What the bank's payment page says the invoice is for: the order, or the difference it was picked for above what was paid. */
export function invoiceDescription(orderNo: number, difference: boolean, lang: Lang): string {
  if (difference) return lang === 'ru' ? `Доплата по заказу № ${orderNo}` : `Additional payment for order ${orderNo}`;
  return lang === 'ru' ? `Оплата заказа № ${orderNo}` : `Payment for order ${orderNo}`;
}

/** A proposed quantity as the customer reads it: kilograms for a weight, whole pieces otherwise. */
export function quantityText(kind: 'replacement' | 'quantity' | 'weight', quantity: string, lang: Lang): string {
  if (kind === 'weight') return lang === 'ru' ? `${quantity.replace('.', ',')} кг` : `${quantity} kg`;
  const pieces = quantity.replace(/\.0*$/, '');
  return lang === 'ru' ? `${pieces} шт.` : `${pieces} pcs`;
}

/** What the picker proposes, asking the customer to answer in the app. */
function approvalRequestText(event: Extract<PushEvent, { type: 'order.approval.requested' }>, lang: Lang): string {
  // Names are clipped so the alert stays within the push payload's 500 characters.
  const clip = (name: string) => (name.length > 120 ? `${name.slice(0, 119)}…` : name);
  event = { ...event, proposedName: clip(event.proposedName), originalName: clip(event.originalName) };
  if (event.approvalKind === 'replacement') {
    return lang === 'ru'
      ? `Нет «${event.originalName}». Сборщик предлагает замену: «${event.proposedName}». Одобрите или отклоните в приложении`
      : `${event.originalName} is out of stock. The picker proposes ${event.proposedName} instead: approve or reject in the app`;
  }
  return lang === 'ru'
    ? `«${event.originalName}»: есть только ${event.proposedQuantity}. Одобрите или отклоните в приложении`
    : `${event.originalName}: ${event.proposedQuantity} is what the store has. Approve or reject in the app`;
}

/** PushNotificationPayload `kind` of a customer's order notification. */
export type PushKind = 'order_status' | 'delivery_tracking' | 'payment' | 'replacement_approval';

export type PushEvent =
  | {
      type: 'order.changed';
      status: OrderStatus;
      changes: string[];
      orderType: 'delivery' | 'pickup';
      paymentStatus: PaymentStatus;
      reason: string | null;
    }
  | { type: 'delivery.tracking.changed'; state: TrackingState; status: OrderStatus; changes: string[]; reason: string | null }
  | {
      type: 'order.approval.requested';
      status: OrderStatus;
      changes: string[];
      approvalKind: 'replacement' | 'quantity' | 'weight';
      /** The proposed product and the ordered one, in the notification's language. */
      proposedName: string;
      originalName: string;
      /** The proposed quantity as the customer reads it ("0.850 kg", "2 pcs"). */
      proposedQuantity: string;
    };

/**
 * The push notification of an order event: its kind, the order number and what happened. An
 * order cancelled in the step says so with its reason, even when the courier delivery's end came
 * with it (rule 3 of the spec: a cancelled courier request alone does not cancel the purchase,
 * so "courier delivery cancelled" would tell the customer the wrong thing).
 */
export function pushNotice(event: PushEvent, orderNo: number, lang: Lang): { kind: PushKind; title: string; body: string } {
  const title = lang === 'ru' ? `Заказ № ${orderNo}` : `Order ${orderNo}`;
  const notice = (kind: PushKind, body: string) => ({ kind, title, body });
  if (event.type === 'order.approval.requested') return notice('replacement_approval', approvalRequestText(event, lang));
  if (event.status === 'cancelled' && event.changes.includes('status')) {
    return notice('order_status', statusComment(event.reason, null, lang) ?? STATUS.cancelled[lang]);
  }
  if (event.type === 'delivery.tracking.changed') return notice('delivery_tracking', TRACKING[event.state][lang]);
  if (event.changes.includes('payment') && event.status === 'confirmed') {
    return notice('payment', lang === 'ru' ? 'Оплата получена, заказ подтверждён' : 'Payment received, the order is confirmed');
  }
  // Picked for more than was paid: the difference is to be paid in the app (and once it is, said so).
  const afterPicking = event.status !== 'created' && event.status !== 'awaiting_payment' && event.status !== 'cancelled';
  if (event.changes.includes('payment') && afterPicking && event.paymentStatus === 'awaiting') {
    return notice(
      'payment',
      lang === 'ru'
        ? 'Заказ собран на сумму больше оплаченной: доплатите разницу в приложении'
        : 'The order was picked for more than you paid: pay the difference in the app',
    );
  }
  if (event.changes.includes('payment') && !event.changes.includes('status') && event.paymentStatus === 'paid') {
    return notice('payment', lang === 'ru' ? 'Доплата получена' : 'Additional payment received');
  }
  if (event.changes.includes('payment') && !event.changes.includes('status')) {
    return notice('payment', lang === 'ru' ? 'Деньги за заказ возвращены' : 'The payment for the order was refunded');
  }
  return notice('order_status', statusDisplay(event.status, event.orderType, lang));
}
