// The customer's view of picking (OrderDetailSchema.picking_result): each order line compared
// with what the picker collected. Pure: built from the items of the order's picking session.
//
// Decisions (the spec gives the groups and change kinds, not when each applies):
//   - only resolved items are compared; while picking is in progress, unresolved items are left
//     out (the spec: "until picking completes, items lists only the lines already changed");
//   - a removed line (`clarified/removed`, `clarified/store_transfer_shortage`) is `removed`;
//   - a picked line is `changed` when its product (replacement), unit price, count or weight
//     differs from the order - a weight inside the tolerance but not equal to the ordered one is
//     still a change of what the customer pays (reason `weighed`), a confirmed weight outside it
//     is `weight_mismatch`;
//   - an item the picker added is `changed` with `added`; one added and then removed never
//     reached the order and is not shown.
import { formatDecimal } from '../money/decimal.js';
import { isResolved, stateKey, type ItemFacts } from './items.js';
import { lineTotal } from '../money/money.js';

export type ResultGroup = 'removed' | 'changed' | 'unchanged';
export type ResultChange = 'quantity' | 'weight' | 'price' | 'product' | 'added' | 'removed';
export type ReasonCode = 'missing' | 'quantity_mismatch' | 'weight_mismatch' | 'weighed' | 'store_transfer_shortage' | 'replaced' | 'added';

/** A product as it appears in a result position. */
export interface PositionProduct {
  name: string;
  productId: string | null;
  unitId: string | null;
  image: string | null;
  barcode: string | null;
  pluCode: string | null;
  unit: string | null;
  priceKopecks: bigint;
}

export interface ResultItemInput {
  id: number;
  position: number;
  isAdded: boolean;
  facts: ItemFacts;
  /** The ordered product at the ordered price (for an added item: the added product). */
  ordered: PositionProduct;
  /** The chosen replacement, if any. */
  replacement: PositionProduct | null;
}

export interface ResultPosition {
  name: string;
  quantity: string;
  unit_price: string;
  line_total: string;
  product_id: string | null;
  unit_id: string | null;
  image: string | null;
  barcode: string | null;
  plu_code: string | null;
  unit: string | null;
  weight: string | null;
}

export interface ResultItem {
  id: string;
  group: ResultGroup;
  changes: ResultChange[];
  reason: { code: ReasonCode; display: string } | null;
  original: ResultPosition | null;
  final: ResultPosition | null;
}

export interface PickingResultView {
  summary: { removed: number; changed: number; unchanged: number };
  items: ResultItem[];
  /** Whether the collected order differs from the ordered one. */
  hasChanges: boolean;
}

const REASONS: Record<ReasonCode, { ru: string; en: string }> = {
  missing: { ru: 'Нет в наличии в магазине', en: 'Out of stock in the store' },
  quantity_mismatch: { ru: 'Количество отличается от заказанного', en: 'A different quantity was available' },
  weight_mismatch: { ru: 'Вес отличается от заказанного', en: 'The weight differs from the order' },
  weighed: { ru: 'Точный вес после взвешивания', en: 'Exact weight after weighing' },
  store_transfer_shortage: { ru: 'Товар не поступил в магазин', en: 'The product did not arrive at the store' },
  replaced: { ru: 'Заменён на похожий товар', en: 'Replaced with a similar product' },
  added: { ru: 'Добавлен по вашей просьбе', en: 'Added at your request' },
};

const GROUP_ORDER: Record<ResultGroup, number> = { removed: 0, changed: 1, unchanged: 2 };

function position(p: PositionProduct, quantity: bigint, isWeightBased: boolean, barcode: string | null): ResultPosition {
  const q = formatDecimal(quantity, 3);
  return {
    name: p.name,
    quantity: q,
    unit_price: formatDecimal(p.priceKopecks, 2),
    line_total: formatDecimal(lineTotal(quantity, p.priceKopecks), 2),
    product_id: p.productId,
    unit_id: p.unitId,
    image: p.image,
    barcode,
    plu_code: p.pluCode,
    unit: p.unit,
    weight: isWeightBased ? q : null,
  };
}

/** One item compared with its order line, or null when it is not (yet) part of the result. */
export function resultItem(input: ResultItemInput, lang: 'ru' | 'en'): ResultItem | null {
  const { facts: f } = input;
  if (!isResolved(f)) return null;
  const reason = (code: ReasonCode) => ({ code, display: REASONS[code][lang] });
  const key = stateKey(f);
  const original = input.isAdded ? null : position(input.ordered, f.ordered, f.isWeightBased, input.ordered.barcode);
  if (key !== 'picked') {
    if (input.isAdded) return null;
    return {
      id: String(input.id),
      group: 'removed',
      changes: ['removed'],
      reason: reason(key === 'clarified/store_transfer_shortage' ? 'store_transfer_shortage' : 'missing'),
      original,
      final: null,
    };
  }
  const picked = input.replacement ?? input.ordered;
  const actual = f.actual ?? f.ordered;
  const final = position(picked, actual, f.isWeightBased, f.lastScannedBarcode ?? picked.barcode);
  if (input.isAdded) return { id: String(input.id), group: 'changed', changes: ['added'], reason: reason('added'), original: null, final };
  const changes: ResultChange[] = [];
  if (input.replacement) changes.push('product');
  if (picked.priceKopecks !== input.ordered.priceKopecks) changes.push('price');
  if (actual !== f.ordered) changes.push(f.isWeightBased ? 'weight' : 'quantity');
  let code: ReasonCode | null = null;
  if (input.replacement) code = 'replaced';
  else if (actual !== f.ordered) code = f.isWeightBased ? (f.confirmed !== null ? 'weight_mismatch' : 'weighed') : 'quantity_mismatch';
  return {
    id: String(input.id),
    group: changes.length ? 'changed' : 'unchanged',
    changes,
    reason: code ? reason(code) : null,
    original,
    final,
  };
}

/**
 * The result of a session's items. `completed` lists every line; otherwise (picking in progress)
 * only the lines already removed or changed, while the summary counts every resolved line.
 */
export function pickingResult(items: readonly ResultItemInput[], lang: 'ru' | 'en', completed: boolean): PickingResultView {
  const compared = items
    .map((i) => ({ position: i.position, item: resultItem(i, lang) }))
    .filter((x): x is { position: number; item: ResultItem } => x.item !== null);
  const summary = { removed: 0, changed: 0, unchanged: 0 };
  for (const { item } of compared) summary[item.group]++;
  const listed = compared
    .filter(({ item }) => completed || item.group !== 'unchanged')
    .sort((a, b) => GROUP_ORDER[a.item.group] - GROUP_ORDER[b.item.group] || a.position - b.position)
    .map(({ item }) => item);
  return { summary, items: listed, hasChanges: summary.removed + summary.changed > 0 };
}
