// Row -> API mappers of the Catalog area: the published version, measurement units, product cards
// and the product screen, own-production category cards. Money is written with two decimals and
// quantities with three, whatever scale the column has.
import type { components } from '../../generated/api.test.js';
import {
  toProductCard,
  type CardRow,
  type CategoryNode,
  type CategoryTree,
  type ProductCard,
  type ProductDetail,
  type ProductDetailRow,
  type UnitRow,
} from '../../db/queries/catalog.js';
import { normalizeDecimal } from '../../domain/money/decimal.js';
import { normalizeMoney, QUANTITY_SCALE } from '../../domain/money/money.js';

type Schemas = components['schemas'];
export type { ProductCard, ProductDetail };
export type MeasurementUnit = Schemas['MeasurementUnitSchema'];

const quantity = (v: string) => normalizeDecimal(v, QUANTITY_SCALE);
/** Nutrients per 100 g, with two decimals like the catalog file gives them. */
const nutrient = (v: string | null) => (v === null ? null : normalizeDecimal(v, 2));

export function catalogVersionView(current: { version: string; etag: string; published_at: Date }): Schemas['CatalogVersionSchema'] {
  return { version: current.version, etag: current.etag, published_at: current.published_at.toISOString() };
}

export const measurementUnit = (r: UnitRow): MeasurementUnit => ({
  id: r.id,
  name: r.name,
  full_name: r.full_name,
  ratio: quantity(r.ratio),
});

/**
 * A product card of a listing or recommendation. The mapper itself sits beside its rows in
 * db/queries/catalog.ts: the stored snapshot, built in that layer, writes the same cards.
 */
export const productCard: (r: CardRow) => ProductCard = toProductCard;

export function productDetail(p: ProductDetailRow): ProductDetail {
  const limit = p.inventories.find((i) => i.is_default)?.order_quantity_limit ?? null;
  return {
    id: p.id,
    name: p.name,
    inventories: p.inventories.map((i) => ({
      id: i.id,
      unit_id: i.unit_id,
      stock: i.stock === null ? null : quantity(i.stock),
      unit_price: normalizeMoney(i.unit_price),
      old_price: i.old_price === null ? null : normalizeMoney(i.old_price),
      discount_percent: i.discount_percent === null ? null : normalizeMoney(i.discount_percent),
    })),
    category_id: p.category_id,
    category_uuid: p.category_id,
    category_name: p.category_name,
    description: p.description,
    composition: p.composition,
    manufacturer: p.manufacturer,
    made_country: p.made_country,
    brand: p.brand,
    image:
      p.image_original && p.image_detail && p.image_listing && p.image_thumbnail
        ? { original: p.image_original, detail: p.image_detail, listing: p.image_listing, thumbnail: p.image_thumbnail }
        : null,
    is_favorite: p.is_favorite,
    weight_based: p.weight_based,
    weight: quantity(p.weight),
    is_user_order_quantity_limit_enabled: limit !== null,
    user_order_quantity_limit: limit === null ? '0.000' : quantity(limit),
    calories: nutrient(p.calories),
    protein: nutrient(p.protein),
    fats: nutrient(p.fats),
    carbohydrates: nutrient(p.carbohydrates),
  };
}

/** An own-production category card; its products count only where the category shows one. */
export const ownProductionCard = (
  tree: CategoryTree,
  n: CategoryNode,
  counts: ReadonlyMap<string, number>,
): Schemas['OwnCategorySchema'] => ({
  ...tree.card(n, true),
  products_count: n.show_products_count ? (counts.get(n.id) ?? 0) : null,
});
