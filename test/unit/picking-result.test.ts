// The customer's picking result: groups, change kinds and reasons of each line.
import { describe, expect, it } from 'vitest';
import { toleranceFor, type ItemFacts } from '../../domain/picking/items.js';
import { pickingResult, type PositionProduct, type ResultItemInput } from '../../domain/picking/result.js';

const product = (name: string, priceKopecks: bigint): PositionProduct => ({
  name,
  productId: null,
  unitId: null,
  image: null,
  barcode: '4600000000001',
  pluCode: null,
  unit: 'pc',
  priceKopecks,
});

function line(id: number, facts: Partial<ItemFacts>, opts: { isAdded?: boolean; replacement?: PositionProduct } = {}): ResultItemInput {
  const isWeightBased = facts.isWeightBased ?? false;
  const ordered = facts.ordered ?? (isWeightBased ? 1000n : 2000n);
  return {
    id,
    position: id,
    isAdded: opts.isAdded ?? false,
    ordered: product(`P${id}`, 10000n),
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

describe('pickingResult', () => {
  const items = [
    line(1, {}),
    line(2, { state: 'clarified', clarificationKind: 'removed', actual: null }),
    line(3, { actual: 1000n, confirmed: 1000n }),
    line(4, { isWeightBased: true, actual: 1260n, confirmed: 1260n }),
    line(5, { isWeightBased: true, actual: 950n }),
    line(6, {}, { replacement: product('Substitute', 9000n) }),
    line(7, { ordered: 1000n, actual: 1000n }, { isAdded: true }),
    line(8, { state: 'clarified', clarificationKind: 'removed', actual: null }, { isAdded: true }),
    line(9, { state: 'clarified', clarificationKind: 'store_transfer_shortage', actual: null }),
  ];

  it('compares every line of a completed picking, removed first, then changed, then unchanged', () => {
    const r = pickingResult(items, 'en', true);
    expect(r.summary).toEqual({ removed: 2, changed: 5, unchanged: 1 });
    expect(r.items.map((i) => [i.id, i.group, i.changes, i.reason?.code ?? null])).toEqual([
      ['2', 'removed', ['removed'], 'missing'],
      ['9', 'removed', ['removed'], 'store_transfer_shortage'],
      ['3', 'changed', ['quantity'], 'quantity_mismatch'],
      ['4', 'changed', ['weight'], 'weight_mismatch'],
      ['5', 'changed', ['weight'], 'weighed'],
      ['6', 'changed', ['product', 'price'], 'replaced'],
      ['7', 'changed', ['added'], 'added'],
      ['1', 'unchanged', [], null],
    ]);
    expect(r.hasChanges).toBe(true);
  });

  it('gives original and final positions with line totals', () => {
    const r = pickingResult(items, 'ru', true);
    const weighed = r.items.find((i) => i.id === '4')!;
    expect(weighed.original).toMatchObject({ quantity: '1.000', unit_price: '100.00', line_total: '100.00', weight: '1.000' });
    expect(weighed.final).toMatchObject({ quantity: '1.260', line_total: '126.00', weight: '1.260' });
    expect(weighed.reason?.display).toBe('Вес отличается от заказанного');
    const replaced = r.items.find((i) => i.id === '6')!;
    expect(replaced.final).toMatchObject({ name: 'Substitute', unit_price: '90.00', line_total: '180.00' });
    expect(r.items.find((i) => i.id === '7')!.original).toBeNull();
    expect(r.items.find((i) => i.id === '2')!.final).toBeNull();
  });

  it('lists only changed lines while picking is in progress, and skips unresolved ones', () => {
    const r = pickingResult(
      [...items, line(10, { state: 'pending', actual: null }), line(11, { state: 'missing', actual: null, missingAction: 'call' })],
      'en',
      false,
    );
    expect(r.items.map((i) => i.id)).toEqual(['2', '9', '3', '4', '5', '6', '7']);
    expect(r.summary.unchanged).toBe(1);
  });

  it('has no changes when everything was picked as ordered', () => {
    expect(pickingResult([line(1, {}), line(2, { isWeightBased: true })], 'en', true).hasChanges).toBe(false);
  });
});
