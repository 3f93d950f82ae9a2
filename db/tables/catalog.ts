// Tables of the catalog migration (units, categories, products, barcodes, inventories, favorites,
// search vocabulary, published versions and snapshots). Numeric columns are decimal strings.
import type { TemperatureClass } from '../../domain/picking/batching.js';
import type { ColumnType, Generated } from 'kysely';
import type { Decimal, Timestamp } from './types.js';

/** A column PostgreSQL computes (GENERATED ALWAYS ... STORED): read only. */
type Computed<T> = ColumnType<T, never, never>;

export interface MeasurementUnitsTable {
  id: Generated<string>;
  code: string;
  kind: 'piece' | 'weight';
  name_ru: string;
  name_en: string;
  full_name_ru: string;
  full_name_en: string;
  ratio: Decimal;
}

export interface CategoriesTable {
  id: Generated<string>;
  code: string;
  parent_id: string | null;
  level: number;
  /** Ancestors, root first; empty for a root category. */
  ancestor_ids: ColumnType<string[], string[] | undefined, string[]>;
  /** Pre-order position in the whole tree. */
  tree_order: number;
  name_ru: string;
  name_en: string;
  color: string;
  image_original: string | null;
  image_listing: string | null;
  is_own_production: Generated<boolean>;
  show_products_count: Generated<boolean>;
  main_page_position: number | null;
  main_page_layout: string | null;
  is_active: Generated<boolean>;
  /** The rank range of the products of this subtree (products.sort_rank_*); null when empty. */
  product_rank_from: number | null;
  product_rank_to: number | null;
  updated_at: Timestamp;
}

export interface ProductsTable {
  id: Generated<string>;
  code: string;
  category_id: string | null;
  name_ru: string;
  name_en: string;
  description_ru: string | null;
  description_en: string | null;
  composition_ru: string | null;
  composition_en: string | null;
  manufacturer: string | null;
  brand: string | null;
  made_country_ru: string | null;
  made_country_en: string | null;
  weight_based: Generated<boolean>;
  weight: ColumnType<string, string | number | undefined, string | number>;
  calories: Decimal | null;
  protein: Decimal | null;
  fats: Decimal | null;
  carbohydrates: Decimal | null;
  image_original: string | null;
  image_detail: string | null;
  image_listing: string | null;
  image_thumbnail: string | null;
  plu: string | null;
  is_top: Generated<boolean>;
  is_new: Generated<boolean>;
  is_fresh: Generated<boolean>;
  popularity: Generated<number>;
  sort_rank_ru: Generated<number>;
  sort_rank_en: Generated<number>;
  is_active: Generated<boolean>;
  /** Folded words of the names and brand (catalog_search_words()). */
  search_words: Computed<string[]>;
  updated_at: Timestamp;
}

export interface ProductBarcodesTable {
  barcode: string;
  product_id: string;
}

export interface CatalogSearchVocabularyTable {
  word: string;
}

/** Every string made by deleting one or two letters of a vocabulary word (migration 0009). */
export interface CatalogSearchDeletionsTable {
  variant: string;
  word: string;
}

/** Derived from inventories and products by triggers (migration 2026_11_22_0011); read-only here. */
export interface CatalogSearchPostingsTable {
  store_id: string;
  word: string;
  product_id: string;
  in_stock: boolean;
  sort_rank_ru: number;
  sort_rank_en: number;
}

/** Per store and category (with its descendants): how many products the store sells there. */
export interface CatalogCategoryTotalsTable {
  store_id: string;
  category_id: string;
  products: number;
}

export interface InventoriesTable {
  id: Generated<string>;
  product_id: string;
  store_id: string;
  unit_id: string;
  is_default: Generated<boolean>;
  /** NULL: stock not reported yet. */
  stock: Decimal | null;
  unit_price: Decimal;
  old_price: Decimal | null;
  discount_percent: Computed<string | null>;
  /** NULL: no per-order limit. */
  order_quantity_limit: Decimal | null;
  in_stock: Computed<boolean>;
  /** Copies of the product's catalog ranks (for the listing index). */
  sort_rank_ru: Generated<number>;
  sort_rank_en: Generated<number>;
  updated_at: Timestamp;
  location_aisle: Generated<string | null>;
  location_section: Generated<string | null>;
  location_shelf: Generated<string | null>;
  /** Sorts in the store's walking order; NULL (not located) walks last. */
  location_sequence: Generated<string | null>;
  temperature_class: Generated<TemperatureClass>;
}

export interface FavoriteProductsTable {
  customer_id: string;
  product_id: string;
  created_at: Timestamp;
}

export interface CatalogVersionsTable {
  id: string;
  published_at: Timestamp;
  replaced_at: Timestamp | null;
}

export interface CatalogSnapshotsTable {
  version_id: string;
  store_id: string;
  language: 'ru' | 'en';
  etag: string;
  body: Buffer;
  body_gzip: Buffer;
}

export interface CatalogTables {
  measurement_units: MeasurementUnitsTable;
  categories: CategoriesTable;
  products: ProductsTable;
  product_barcodes: ProductBarcodesTable;
  catalog_search_vocabulary: CatalogSearchVocabularyTable;
  catalog_search_deletions: CatalogSearchDeletionsTable;
  catalog_search_postings: CatalogSearchPostingsTable;
  catalog_category_totals: CatalogCategoryTotalsTable;
  inventories: InventoriesTable;
  favorite_products: FavoriteProductsTable;
  catalog_versions: CatalogVersionsTable;
  catalog_snapshots: CatalogSnapshotsTable;
}
