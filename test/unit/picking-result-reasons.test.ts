// The customer's picking result in detail (domain/picking/result.ts, stats.ts): every reason in
// both languages, the barcode a picked position shows, the order within a group, and the picker's
// pace when no time was recorded.
import { describe, expect, it } from 'vitest';
import { toleranceFor, type ItemFacts } from '../../domain/picking/items.js';
import { pickingResult, resultItem, type PositionProduct, type ResultItemInput } from '../../domain/picking/result.js';
import { summaryRates } from '../../domain/picking/stats.js';

const product = (name: string, priceKopecks: bigint, barcode: string | null = '4600000000001'): PositionProduct => ({
  name,
  productId: null,
  unitId: null,
  image: null,
  barcode,
  pluCode: null,
  unit: 'pc',
  priceKopecks,
});

function line(
  id: number,
  facts: Partial<ItemFacts>,
  opts: { isAdded?: boolean; replacement?: PositionProduct; position?: number; ordered?: PositionProduct } = {},
): ResultItemInput {
  const isWeightBased = facts.isWeightBased ?? false;
  const ordered = facts.ordered ?? (isWeightBased ? 1000n : 2000n);
  return {
    id,
    position: opts.position ?? id,
    isAdded: opts.isAdded ?? false,
    ordered: opts.ordered ?? product(`P${id}`, 10000n),
    replacement: opts.replacement ?? null,
    facts: {
      state: 'picked',
      clarificationKind: null,
      missingAction: null,
      isWeightBased,
      ordered,
      actual: ordered,
      confirmed: null,
      pickSource: 'scan',
      lastScannedBarcode: null,
      labelPlu: null,
      hasReplacement: opts.replacement !== undefined,
      tolerance: isWeightBased ? toleranceFor(ordered, 100n) : null,
      ...facts,
    },
  };
}

const EVERY_REASON = [
  line(1, { state: 'clarified', clarificationKind: 'removed', actual: null }),
  line(2, { actual: 1000n, confirmed: 1000n }),
  line(3, { isWeightBased: true, actual: 1260n, confirmed: 1260n }),
  line(4, { isWeightBased: true, actual: 950n }),
  line(5, { state: 'clarified', clarificationKind: 'store_transfer_shortage', actual: null }),
  line(6, {}, { replacement: product('Substitute', 9000n) }),
  line(7, { ordered: 1000n, actual: 1000n }, { isAdded: true }),
];

describe('result reasons', () => {
  it('explains every change in Russian', () => {
    expect(Object.fromEntries(pickingResult(EVERY_REASON, 'ru', true).items.map((i) => [i.reason!.code, i.reason!.display]))).toEqual({
      missing: 'Нет в наличии в магазине',
      quantity_mismatch: 'Количество отличается от заказанного',
      weight_mismatch: 'Вес отличается от заказанного',
      weighed: 'Точный вес после взвешивания',
      store_transfer_shortage: 'Товар не поступил в магазин',
      replaced: 'Заменён на похожий товар',
      added: 'Добавлен по вашей просьбе',
    });
  });

  it('explains every change in English', () => {
    expect(Object.fromEntries(pickingResult(EVERY_REASON, 'en', true).items.map((i) => [i.reason!.code, i.reason!.display]))).toEqual({
      missing: 'Out of stock in the store',
      quantity_mismatch: 'A different quantity was available',
      weight_mismatch: 'The weight differs from the order',
      weighed: 'Exact weight after weighing',
      store_transfer_shortage: 'The product did not arrive at the store',
      replaced: 'Replaced with a similar product',
      added: 'Added at your request',
    });
  });
});

describe('result positions', () => {
  it('shows the barcode the picker scanned, else the picked product own one', () => {
    const scanned = resultItem(line(1, { lastScannedBarcode: '2204011012603' }), 'en');
    expect(scanned?.final?.barcode).toBe('2204011012603');
    expect(scanned?.original?.barcode).toBe('4600000000001');
    const replaced = resultItem(line(2, {}, { replacement: product('Substitute', 9000n, '4600000000002') }), 'en');
    expect(replaced?.final?.barcode).toBe('4600000000002');
    expect(resultItem(line(3, {}, { ordered: product('No code', 100n, null) }), 'en')?.final?.barcode).toBeNull();
  });

  it('lists the lines of one group in the order of the order lines', () => {
    const items = [
      line(1, { actual: 1000n, confirmed: 1000n }, { position: 3 }),
      line(2, { actual: 1000n, confirmed: 1000n }, { position: 1 }),
      line(3, {}, { position: 0 }),
      line(4, { actual: 1000n, confirmed: 1000n }, { position: 2 }),
      line(5, {}, { position: 4 }),
    ];
    expect(pickingResult(items, 'en', true).items.map((i) => i.id)).toEqual(['2', '4', '1', '3', '5']);
  });
});

describe('picker pace', () => {
  const counts = { completed_sessions_count: 1, replaced_items_count: 0, removed_items_count: 0 };

  it('has no pace without recorded time or without items', () => {
    expect(summaryRates({ ...counts, items_count: 5, total_duration_seconds: 0 }).items_per_minute).toBeNull();
    expect(summaryRates({ ...counts, items_count: 0, total_duration_seconds: 600 }).items_per_minute).toBeNull();
    expect(summaryRates({ ...counts, items_count: 5, total_duration_seconds: 600 }).items_per_minute).toBe('0.50');
  });
});
