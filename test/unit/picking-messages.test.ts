// What the picker reads (domain/picking/messages.ts): the sentence for each outcome of a command
// in both languages, and the picker app's notifications.
import { describe, expect, it } from 'vitest';
import { actionMessage, pickerPushNotice, type MessageFacts } from '../../domain/picking/messages.js';

describe('actionMessage for a command that went through', () => {
  const ok: Array<[MessageFacts['command'], string, string]> = [
    ['scan', 'Товар отсканирован', 'Product scanned'],
    ['weight', 'Вес записан', 'Weight recorded'],
    ['piece_quantity', 'Количество записано', 'Quantity recorded'],
    ['manual_pick', 'Товар собран', 'Item picked'],
    ['missing', 'Товар отмечен как отсутствующий', 'Item marked missing'],
    ['resolve', 'Товар убран из заказа', 'Item removed from the order'],
    ['reopen', 'Товар снова в работе', 'Item reopened'],
    ['confirm', 'Расхождение подтверждено', 'Discrepancy confirmed'],
    ['replacement', 'Замена выбрана', 'Replacement chosen'],
    ['add', 'Товар добавлен', 'Item added'],
    ['finish', 'Сборка завершена', 'Picking finished'],
    ['cancel', 'Сборка отменена', 'Picking cancelled'],
  ];

  it('names what each command did, in Russian and in English', () => {
    for (const [command, ru, en] of ok) {
      expect(actionMessage('ok', 'ru', { command }), command).toBe(ru);
      expect(actionMessage('ok', 'en', { command }), command).toBe(en);
    }
  });
});

describe('actionMessage for a discrepancy to confirm', () => {
  it('asks to confirm a weight outside the tolerance in kilograms', () => {
    const facts: MessageFacts = { command: 'weight', confirmed: 1260n, isWeightBased: true };
    expect(actionMessage('clarification_required', 'ru', facts)).toBe('Вес вне допуска, подтвердите 1.260 кг');
    expect(actionMessage('clarification_required', 'en', facts)).toBe('Weight is outside the tolerance, confirm 1.260 kg');
  });

  it('asks to confirm a different count in whole pieces', () => {
    const facts: MessageFacts = { command: 'piece_quantity', confirmed: 3000n, isWeightBased: false };
    expect(actionMessage('clarification_required', 'ru', facts)).toBe('Количество отличается от заказа, подтвердите 3 шт');
    expect(actionMessage('clarification_required', 'en', facts)).toBe('Quantity differs from the order, confirm 3 pcs');
  });

  it('leaves the value out when no quantity was recorded', () => {
    expect(actionMessage('clarification_required', 'en', { command: 'weight', confirmed: null, isWeightBased: true })).toBe(
      'Weight is outside the tolerance, confirm  kg',
    );
    expect(actionMessage('clarification_required', 'en', { command: 'piece_quantity' })).toBe(
      'Quantity differs from the order, confirm  pcs',
    );
    expect(actionMessage('clarification_required', 'ru', { command: 'piece_quantity', confirmed: null })).toBe(
      'Количество отличается от заказа, подтвердите  шт',
    );
  });

  it('shows a zero quantity as zero, not as nothing', () => {
    expect(actionMessage('clarification_required', 'en', { command: 'weight', confirmed: 0n, isWeightBased: true })).toBe(
      'Weight is outside the tolerance, confirm 0.000 kg',
    );
    expect(actionMessage('clarification_required', 'en', { command: 'piece_quantity', confirmed: 0n })).toBe(
      'Quantity differs from the order, confirm 0 pcs',
    );
  });
});

describe('actionMessage for a refused scan or command', () => {
  it('names the product a foreign barcode belongs to, when known', () => {
    expect(actionMessage('mismatch', 'ru', { command: 'scan', scannedName: 'Молоко 3,2%' })).toBe('Это другой товар: Молоко 3,2%');
    expect(actionMessage('mismatch', 'en', { command: 'scan', scannedName: 'Milk 3.2%' })).toBe(
      'This barcode belongs to another product: Milk 3.2%',
    );
    expect(actionMessage('mismatch', 'ru', { command: 'scan', scannedName: null })).toBe('Это другой товар');
    expect(actionMessage('mismatch', 'en', { command: 'scan', scannedName: '' })).toBe('This barcode belongs to another product');
  });

  it('words the other refusals in both languages', () => {
    const refusals: Array<[Parameters<typeof actionMessage>[0], string, string]> = [
      ['not_found', 'Штрихкод не найден в ассортименте магазина', 'This barcode is not sold in this store'],
      ['already_picked', 'Товар уже собран полностью', 'The item is already picked in full'],
      [
        'same_product',
        'Это заказанный товар: верните позицию в работу как найденную в магазине',
        'This is the ordered product: reopen the item as found in store',
      ],
      [
        'kind_mismatch',
        'Замена должна быть того же типа (штучный или весовой)',
        'A replacement must be of the same kind (by piece or by weight)',
      ],
    ];
    for (const [outcome, ru, en] of refusals) {
      expect(actionMessage(outcome, 'ru', { command: 'scan' }), outcome).toBe(ru);
      expect(actionMessage(outcome, 'en', { command: 'scan' }), outcome).toBe(en);
    }
  });
});

describe('pickerPushNotice', () => {
  it('announces an order waiting to be picked, marking express ones', () => {
    expect(pickerPushNotice({ kind: 'picker_queue', isExpress: false }, 1042, 'ru')).toEqual({
      title: 'Новый заказ',
      body: 'Заказ № 1042 ждёт сборки',
    });
    expect(pickerPushNotice({ kind: 'picker_queue', isExpress: true }, 1042, 'ru')).toEqual({
      title: 'Новый заказ',
      body: 'Заказ № 1042 (экспресс) ждёт сборки',
    });
    expect(pickerPushNotice({ kind: 'picker_queue', isExpress: false }, 1042, 'en')).toEqual({
      title: 'New order',
      body: 'Order 1042 is waiting to be picked',
    });
    expect(pickerPushNotice({ kind: 'picker_queue', isExpress: true }, 1042, 'en')).toEqual({
      title: 'New order',
      body: 'Order 1042 (express) is waiting to be picked',
    });
  });

  it('tells the picker to stop when the order is cancelled', () => {
    expect(pickerPushNotice({ kind: 'picker_order_cancelled' }, 1042, 'ru')).toEqual({
      title: 'Заказ № 1042 отменён',
      body: 'Остановите сборку и подтвердите отмену в приложении',
    });
    expect(pickerPushNotice({ kind: 'picker_order_cancelled' }, 1042, 'en')).toEqual({
      title: 'Order 1042 cancelled',
      body: 'Stop picking it and acknowledge the cancellation in the app',
    });
  });
});
