// A store's product as the picker app shows it (PickerCatalogProductSchema).
import type { StoreProductRow } from '../../db/queries/picking/catalog.js';
import { normalizeDecimal } from '../../domain/money/decimal.js';
import { normalizeMoney } from '../../domain/money/money.js';

type Lang = 'ru' | 'en';

export interface PickerCatalogProduct {
  inventory_id: string;
  product_id: string;
  name: string;
  barcode: string;
  description: string;
  unit: string;
  kind: 'piece' | 'weight';
  price: string;
  available_quantity: string;
  plu_code: string | null;
  image_url: string | null;
}

/** The one mapper of a store product to PickerCatalogProductSchema. */
export function toPickerCatalogProduct(r: StoreProductRow, lang: Lang): PickerCatalogProduct {
  return {
    inventory_id: r.inventory_id,
    product_id: r.product_id,
    name: lang === 'ru' ? r.name_ru : r.name_en,
    barcode: r.barcode ?? '',
    description: (lang === 'ru' ? r.description_ru : r.description_en) ?? '',
    unit: lang === 'ru' ? r.unit_ru : r.unit_en,
    kind: r.weight_based ? 'weight' : 'piece',
    price: normalizeMoney(r.unit_price),
    available_quantity: r.stock === null ? '0.000' : normalizeDecimal(r.stock, 3),
    plu_code: r.plu,
    image_url: r.image_listing,
  };
}
