// Texts shown to the picker (PickingActionOutput.message and error details), in Russian and
// English. Pure: the outcome and a few facts in, one sentence out.
import { formatDecimal } from '../money/decimal.js';
import type { ItemOutcome } from './items.js';

export type Lang = 'ru' | 'en';

export interface MessageFacts {
  /** The command, for the wording of `ok`. */
  command:
    | 'scan'
    | 'weight'
    | 'piece_quantity'
    | 'manual_pick'
    | 'missing'
    | 'resolve'
    | 'reopen'
    | 'confirm'
    | 'replacement'
    | 'add'
    | 'finish'
    | 'cancel';
  /** The recorded quantity of a discrepancy (thousandths) and whether it is a weight. */
  confirmed?: bigint | null;
  isWeightBased?: boolean;
  /** Name of the product a barcode belongs to (mismatch). */
  scannedName?: string | null;
}

const OK: Record<MessageFacts['command'], { ru: string; en: string }> = {
  scan: { ru: 'Товар отсканирован', en: 'Product scanned' },
  weight: { ru: 'Вес записан', en: 'Weight recorded' },
  piece_quantity: { ru: 'Количество записано', en: 'Quantity recorded' },
  manual_pick: { ru: 'Товар собран', en: 'Item picked' },
  missing: { ru: 'Товар отмечен как отсутствующий', en: 'Item marked missing' },
  resolve: { ru: 'Товар убран из заказа', en: 'Item removed from the order' },
  reopen: { ru: 'Товар снова в работе', en: 'Item reopened' },
  confirm: { ru: 'Расхождение подтверждено', en: 'Discrepancy confirmed' },
  replacement: { ru: 'Замена выбрана', en: 'Replacement chosen' },
  add: { ru: 'Товар добавлен', en: 'Item added' },
  finish: { ru: 'Сборка завершена', en: 'Picking finished' },
  cancel: { ru: 'Сборка отменена', en: 'Picking cancelled' },
};

export function actionMessage(outcome: ItemOutcome, lang: Lang, facts: MessageFacts): string {
  switch (outcome) {
    case 'ok':
      return OK[facts.command][lang];
    case 'clarification_required': {
      const value = facts.confirmed != null ? formatDecimal(facts.confirmed, 3) : '';
      if (facts.isWeightBased) {
        return lang === 'ru' ? `Вес вне допуска, подтвердите ${value} кг` : `Weight is outside the tolerance, confirm ${value} kg`;
      }
      const pieces = facts.confirmed != null ? String(facts.confirmed / 1000n) : '';
      return lang === 'ru'
        ? `Количество отличается от заказа, подтвердите ${pieces} шт`
        : `Quantity differs from the order, confirm ${pieces} pcs`;
    }
    case 'mismatch':
      return lang === 'ru'
        ? `Это другой товар${facts.scannedName ? `: ${facts.scannedName}` : ''}`
        : `This barcode belongs to another product${facts.scannedName ? `: ${facts.scannedName}` : ''}`;
    case 'not_found':
      return lang === 'ru' ? 'Штрихкод не найден в ассортименте магазина' : 'This barcode is not sold in this store';
    case 'already_picked':
      return lang === 'ru' ? 'Товар уже собран полностью' : 'The item is already picked in full';
    case 'same_product':
      return lang === 'ru'
        ? 'Это заказанный товар: верните позицию в работу как найденную в магазине'
        : 'This is the ordered product: reopen the item as found in store';
    case 'kind_mismatch':
      return lang === 'ru'
        ? 'Замена должна быть того же типа (штучный или весовой)'
        : 'A replacement must be of the same kind (by piece or by weight)';
  }
}

/** A picker app notification (PushNotificationPayload `picker_*`): an order to pick, or the order of the picker's session cancelled. */
export function pickerPushNotice(
  event: { kind: 'picker_queue'; isExpress: boolean } | { kind: 'picker_order_cancelled' },
  orderNo: number,
  lang: Lang,
): { title: string; body: string } {
  if (event.kind === 'picker_queue') {
    const express = event.isExpress ? (lang === 'ru' ? ' (экспресс)' : ' (express)') : '';
    return lang === 'ru'
      ? { title: 'Новый заказ', body: `Заказ № ${orderNo}${express} ждёт сборки` }
      : { title: 'New order', body: `Order ${orderNo}${express} is waiting to be picked` };
  }
  return lang === 'ru'
    ? { title: `Заказ № ${orderNo} отменён`, body: 'Остановите сборку и подтвердите отмену в приложении' }
    : { title: `Order ${orderNo} cancelled`, body: 'Stop picking it and acknowledge the cancellation in the app' };
}
