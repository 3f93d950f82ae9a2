// Rows picking writes for products: an order line as a session's item, a product the picker adds,
// and a product chosen as a replacement. Weight products are picked in kg at the price per kg,
// whatever unit the catalog sells them in.
import type { StoreProductRow } from '../../db/queries/picking/catalog.js';
import { pricePerKg } from '../../domain/money/money.js';
import type { NewItem, OrderLineForPicking, ReplacementData } from '../../db/queries/picking/items.js';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import { kopecks, lineTotal, money } from '../../domain/money/money.js';
import { currentLineTotal, isResolved, UNIT, type ItemFacts } from '../../domain/picking/items.js';

/** Kilograms in both languages: weight items are picked and priced per kg. */
export const KG = { ru: 'кг', en: 'kg' } as const;

/** An order line as a new item of the session (weight lines in kg at the price per kg). */
export function itemForLine(line: OrderLineForPicking, position: number, tolerancePercent: string): NewItem {
  const isWeight = line.weight_based || line.unit_kind === 'weight';
  const ratio = isWeight && line.unit_ratio ? parseDecimal(line.unit_ratio, 3)! : UNIT;
  const quantity = parseDecimal(line.quantity, 3)!;
  const ordered = (quantity * ratio + UNIT / 2n) / UNIT;
  const price = isWeight ? pricePerKg(line.unit_price, line.unit_ratio ?? '1.000') : kopecks(line.unit_price);
  // The store no longer sells the product: its goods could only have come from another store
  // and did not arrive - the line starts as a shortage (resolved, nothing to pay).
  const shortage = line.store_inventory_id === null;
  const inventoryId = line.store_inventory_id ?? line.inventory_id;
  if (!inventoryId) throw new Error(`order line ${line.id} has no inventory row to pick from`);
  const facts: ItemFacts = {
    state: shortage ? 'clarified' : 'pending',
    clarificationKind: shortage ? 'store_transfer_shortage' : null,
    missingAction: null,
    isWeightBased: isWeight,
    ordered,
    actual: null,
    confirmed: null,
    pickSource: null,
    lastScannedBarcode: null,
    labelPlu: null,
    hasReplacement: false,
    tolerance: null,
  };
  return {
    position,
    order_item_id: line.id,
    product_id: line.product_id,
    inventory_id: inventoryId,
    unit_id: line.unit_id,
    name_ru: line.name_ru,
    name_en: line.name_en,
    image_url: line.image ?? line.product_image,
    barcode: line.barcode ?? line.product_barcode,
    plu_code: line.plu_code ?? line.product_plu,
    unit_ru: isWeight ? KG.ru : line.unit_name_ru,
    unit_en: isWeight ? KG.en : line.unit_name_en,
    is_weight_based: isWeight,
    ordered_quantity: formatDecimal(ordered, 3),
    unit_price: money(price),
    tolerance_percent: isWeight ? tolerancePercent : null,
    state: facts.state,
    clarification_kind: facts.clarificationKind,
    is_resolved: isResolved(facts),
    is_added: false,
    current_line_total: money(currentLineTotal(facts, price)),
    location_aisle: line.location_aisle,
    location_section: line.location_section,
    location_shelf: line.location_shelf,
    location_sequence: line.location_sequence,
    temperature_class: line.temperature_class ?? 'ambient',
    replacement_preference: line.replacement_preference && JSON.stringify(line.replacement_preference),
  };
}

/** A product the picker adds (quantity in pieces, or kg for a weight product). */
export function addedItem(row: StoreProductRow, quantity: bigint, position: number, tolerancePercent: string): NewItem {
  const isWeight = row.weight_based;
  const price = isWeight ? pricePerKg(row.unit_price, row.unit_ratio) : kopecks(row.unit_price);
  return {
    position,
    order_item_id: null,
    product_id: row.product_id,
    inventory_id: row.inventory_id,
    unit_id: row.unit_id,
    name_ru: row.name_ru,
    name_en: row.name_en,
    image_url: row.image_listing,
    barcode: row.barcode,
    plu_code: row.plu,
    unit_ru: isWeight ? KG.ru : row.unit_ru,
    unit_en: isWeight ? KG.en : row.unit_en,
    is_weight_based: isWeight,
    ordered_quantity: formatDecimal(quantity, 3),
    unit_price: money(price),
    tolerance_percent: isWeight ? tolerancePercent : null,
    state: 'pending',
    clarification_kind: null,
    is_resolved: false,
    is_added: true,
    current_line_total: money(lineTotal(quantity, price)),
    location_aisle: row.location_aisle,
    location_section: row.location_section,
    location_shelf: row.location_shelf,
    location_sequence: row.location_sequence,
    temperature_class: row.temperature_class,
  };
}

/** The state machine's view of an item about to be inserted. */
export function factsOfNew(n: NewItem): Pick<ItemFacts, 'state' | 'clarificationKind'> {
  return { state: n.state, clarificationKind: n.clarification_kind ?? null };
}

/** The replacement recorded when a product is chosen as a substitute (priced per kg when weighed). */
export function replacementData(row: StoreProductRow): ReplacementData {
  return {
    product_id: row.product_id,
    inventory_id: row.inventory_id,
    unit_id: row.unit_id,
    name_ru: row.name_ru,
    name_en: row.name_en,
    barcode: row.barcode,
    plu_code: row.plu,
    image_url: row.image_listing,
    unit_ru: row.weight_based ? KG.ru : row.unit_ru,
    unit_en: row.weight_based ? KG.en : row.unit_en,
    unit_price: money(row.weight_based ? pricePerKg(row.unit_price, row.unit_ratio) : kopecks(row.unit_price)),
  };
}
