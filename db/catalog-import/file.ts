// The catalog file (`npm run catalog:import -- FILE`, and the demo data through the same path):
// its shape, every rule a row must satisfy, and the plan the import writes. Pure: it takes the
// parsed JSON and what the database already knows (stores, units) and returns either the complete
// plan or every problem found, each naming its row, so a bad file changes nothing.
import { isValidGtin, isPlu } from '../../domain/codes/barcode.js';
import { isUuid } from '../../domain/ids.js';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import type { TemperatureClass } from '../../domain/picking/batching.js';

export interface LocalizedText {
  ru: string;
  en: string;
}

/** One unit products are sold in. */
export interface UnitRow {
  code: string;
  kind: 'piece' | 'weight';
  name: LocalizedText;
  full_name: LocalizedText;
  ratio: string | number;
}

export interface CategoryRow {
  /** Stable key of the category in the chain's systems. */
  code: string;
  /** Identifier to give a new category (kept by an existing one); generated when absent. */
  id?: string;
  /** Code of the parent category; null or absent for a root. Siblings keep the file's order. */
  parent?: string | null;
  name: LocalizedText;
  color: string;
  image?: { original: string; listing: string } | null;
  own_production?: boolean;
  /** Own-production categories: whether the app shows a product counter. */
  show_products_count?: boolean;
  main_page?: { position: number; layout: string } | null;
}

export interface InventoryRow {
  /** Store code (stores.code). */
  store: string;
  /** Unit code. */
  unit: string;
  default?: boolean;
  stock: string | number | null;
  price: string | number;
  old_price?: string | number | null;
  order_limit?: string | number | null;
  /**
   * Where the product stands in this store: aisle, section (rack) and shelf as signed in the store
   * (shelves counted from the floor up), and `sequence`, the key of the picker's route. All four
   * are given together, or none: a row without them is not located and is walked last.
   */
  aisle?: string | null;
  section?: string | null;
  shelf?: string | null;
  /**
   * Sorts as text in the order a picker walks the store (`03-B-2`): digits, capital Latin letters
   * and `-` `.` `/` only, each part padded to one width across the store.
   */
  sequence?: string | null;
  /** How the product is kept in this store: `ambient` (the default), `chilled` or `frozen`. */
  temperature_class?: TemperatureClass | null;
}

export interface ProductRow {
  code: string;
  id?: string;
  category: string | null;
  name: LocalizedText;
  description?: LocalizedText | null;
  composition?: LocalizedText | null;
  country?: LocalizedText | null;
  manufacturer?: string | null;
  brand?: string | null;
  weight_based?: boolean;
  weight?: string | number;
  nutrition?: {
    calories?: string | number | null;
    protein?: string | number | null;
    fats?: string | number | null;
    carbohydrates?: string | number | null;
  } | null;
  barcodes?: string[];
  plu?: string | null;
  image?: { original: string; detail: string; listing: string; thumbnail: string } | null;
  top?: boolean;
  new?: boolean;
  fresh?: boolean;
  popularity?: number;
  inventories: InventoryRow[];
}

export interface CatalogFile {
  units?: UnitRow[];
  categories: CategoryRow[];
  products: ProductRow[];
}

export interface ImportContext {
  /** Active stores by code. */
  stores: ReadonlyMap<string, string>;
  /** Units already in the database, by code (the file may add or update units). */
  existingUnits: ReadonlyMap<string, { kind: 'piece' | 'weight'; ratio: string }>;
}

export interface ImportProblem {
  /** Which row: `products[12] P000013`, `categories[3] dairy`, `file`. */
  row: string;
  /** Which field of the row, dotted (`inventories[0].price`). */
  field: string;
  message: string;
}

export interface PlannedUnit {
  code: string;
  kind: 'piece' | 'weight';
  name_ru: string;
  name_en: string;
  full_name_ru: string;
  full_name_en: string;
  ratio: string;
}

export interface PlannedCategory {
  code: string;
  id: string | null;
  parent_code: string | null;
  /** Ancestors root first, by code. */
  ancestor_codes: string[];
  level: number;
  tree_order: number;
  name_ru: string;
  name_en: string;
  color: string;
  image_original: string | null;
  image_listing: string | null;
  is_own_production: boolean;
  show_products_count: boolean;
  main_page_position: number | null;
  main_page_layout: string | null;
  /** The ranks of the products of this subtree: one contiguous range (null when it has none). */
  product_rank_from: number | null;
  product_rank_to: number | null;
}

export interface PlannedInventory {
  store_id: string;
  unit_code: string;
  is_default: boolean;
  stock: string | null;
  unit_price: string;
  old_price: string | null;
  order_quantity_limit: string | null;
  location_aisle: string | null;
  location_section: string | null;
  location_shelf: string | null;
  location_sequence: string | null;
  temperature_class: TemperatureClass;
}

export interface PlannedProduct {
  code: string;
  id: string | null;
  category_code: string | null;
  name_ru: string;
  name_en: string;
  description_ru: string | null;
  description_en: string | null;
  composition_ru: string | null;
  composition_en: string | null;
  made_country_ru: string | null;
  made_country_en: string | null;
  manufacturer: string | null;
  brand: string | null;
  weight_based: boolean;
  weight: string;
  calories: string | null;
  protein: string | null;
  fats: string | null;
  carbohydrates: string | null;
  image_original: string | null;
  image_detail: string | null;
  image_listing: string | null;
  image_thumbnail: string | null;
  plu: string | null;
  is_top: boolean;
  is_new: boolean;
  is_fresh: boolean;
  popularity: number;
  sort_rank_ru: number;
  sort_rank_en: number;
  barcodes: string[];
  inventories: PlannedInventory[];
}

export interface CatalogImportPlan {
  units: PlannedUnit[];
  /** In tree pre-order: a parent always comes before its children. */
  categories: PlannedCategory[];
  products: PlannedProduct[];
}

export const MAX_CATEGORY_LEVEL = 32;
const CODE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const COLOR = /^#([0-9A-Fa-f]{6}|[0-9A-Fa-f]{8})$/;
const URL_TEXT = /^https?:\/\/\S{1,2040}$/;
// The route key is compared by code unit in the service and by the database's collation in SQL;
// on these characters, with parts of one width, the two orders agree (letter case and other
// punctuation are where collations differ).
const SEQUENCE = /^[0-9A-Z]+([-./][0-9A-Z]+)*$/;
const TEMPERATURE_CLASSES: readonly TemperatureClass[] = ['ambient', 'chilled', 'frozen'];
const LOCATION_PARTS = ['aisle', 'section', 'shelf', 'sequence'] as const;

/** Collects the problems of one row. */
class RowCheck {
  constructor(
    private readonly row: string,
    private readonly problems: ImportProblem[],
  ) {}

  fail(field: string, message: string): void {
    this.problems.push({ row: this.row, field, message });
  }

  text(value: unknown, field: string, max: number, required = true): string | null {
    if (value === undefined || value === null) {
      if (required) this.fail(field, 'is required');
      return null;
    }
    if (typeof value !== 'string' || value.trim() === '') {
      this.fail(field, 'must be a non-empty string');
      return null;
    }
    if (value.length > max) {
      this.fail(field, `must be at most ${max} characters`);
      return null;
    }
    return value.trim();
  }

  localized(value: unknown, field: string, max: number, required = true): LocalizedText | null {
    if (value === undefined || value === null) {
      if (required) this.fail(field, 'is required (an object with `ru` and `en`)');
      return null;
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(field, 'must be an object with `ru` and `en`');
      return null;
    }
    const v = value as Record<string, unknown>;
    const ru = this.text(v.ru, `${field}.ru`, max);
    const en = this.text(v.en, `${field}.en`, max);
    return ru !== null && en !== null ? { ru, en } : null;
  }

  bool(value: unknown, field: string, fallback: boolean): boolean {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') {
      this.fail(field, 'must be true or false');
      return fallback;
    }
    return value;
  }

  integer(value: unknown, field: string, min: number, max: number, fallback: number): number {
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.fail(field, `must be an integer from ${min} to ${max}`);
      return fallback;
    }
    return value;
  }

  /** A decimal with at most `scale` decimals, at least `min` (in units of 10^-scale). */
  decimal(value: unknown, field: string, scale: number, opts: { min?: bigint; required?: boolean; whole?: boolean } = {}): string | null {
    if (value === undefined || value === null) {
      if (opts.required) this.fail(field, 'is required');
      return null;
    }
    if (typeof value !== 'string' && typeof value !== 'number') {
      this.fail(field, 'must be a decimal number or string');
      return null;
    }
    const units = parseDecimal(typeof value === 'string' ? value.trim() : value, scale);
    if (units === null) {
      this.fail(field, `must be a decimal with at most ${scale} decimals`);
      return null;
    }
    const min = opts.min ?? 0n;
    if (units < min) {
      this.fail(field, `must be at least ${formatDecimal(min, scale)}`);
      return null;
    }
    if (opts.whole && units % 10n ** BigInt(scale) !== 0n) {
      this.fail(field, 'must be a whole number for a piece unit');
      return null;
    }
    return formatDecimal(units, scale);
  }

  url(value: unknown, field: string): string | null {
    const text = this.text(value, field, 2048);
    if (text !== null && !URL_TEXT.test(text)) {
      this.fail(field, 'must be an http(s) URL');
      return null;
    }
    return text;
  }
}

/** The location and temperature class of an inventory row: not located and ambient when absent. */
function checkLocation(
  check: RowCheck,
  raw: Record<string, unknown>,
  f: string,
): Pick<PlannedInventory, 'location_aisle' | 'location_section' | 'location_shelf' | 'location_sequence' | 'temperature_class'> {
  const aisle = check.text(raw.aisle, `${f}.aisle`, 32, false);
  const section = check.text(raw.section, `${f}.section`, 32, false);
  const shelf = check.text(raw.shelf, `${f}.shelf`, 32, false);
  const sequence = check.text(raw.sequence, `${f}.sequence`, 64, false);
  if (sequence !== null && !SEQUENCE.test(sequence))
    check.fail(`${f}.sequence`, 'may hold digits, capital Latin letters and - . / between them only');
  // A partial location would put a product on the route without a place, or in a place off it.
  const given = LOCATION_PARTS.filter((k) => raw[k] !== undefined && raw[k] !== null);
  if (given.length > 0 && given.length < LOCATION_PARTS.length) {
    for (const k of LOCATION_PARTS)
      if (!given.includes(k)) check.fail(`${f}.${k}`, 'is required with a location (aisle, section, shelf and sequence come together)');
  }
  let temperature: TemperatureClass = 'ambient';
  if (raw.temperature_class !== undefined && raw.temperature_class !== null) {
    if (TEMPERATURE_CLASSES.includes(raw.temperature_class as TemperatureClass)) temperature = raw.temperature_class as TemperatureClass;
    else check.fail(`${f}.temperature_class`, 'must be `ambient`, `chilled` or `frozen`');
  }
  return {
    location_aisle: aisle,
    location_section: section,
    location_shelf: shelf,
    location_sequence: sequence,
    temperature_class: temperature,
  };
}

function rowName(kind: string, index: number, code: unknown): string {
  return typeof code === 'string' && code ? `${kind}[${index}] ${code}` : `${kind}[${index}]`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The top-level checks of a file: an object whose `categories` and `products` are arrays. */
export function checkFileSections(sections: ReadonlyMap<string, unknown>): ImportProblem[] {
  const problems: ImportProblem[] = [];
  for (const key of ['categories', 'products'] as const) {
    if (!Array.isArray(sections.get(key))) problems.push({ row: 'file', field: key, message: 'must be an array' });
  }
  if (sections.has('units') && sections.get('units') !== undefined && !Array.isArray(sections.get('units')))
    problems.push({ row: 'file', field: 'units', message: 'must be an array' });
  for (const key of sections.keys()) {
    if (!['units', 'categories', 'products'].includes(key)) problems.push({ row: 'file', field: key, message: 'is not a known section' });
  }
  return problems;
}

export const NOT_AN_OBJECT: ImportProblem = { row: 'file', field: '', message: 'must be a JSON object with `categories` and `products`' };

/** Units and categories: the small sections every product row is checked against. */
export interface CatalogHead {
  units: PlannedUnit[];
  /** In tree pre-order: a parent always comes before its children. */
  categories: PlannedCategory[];
  unitKinds: ReadonlyMap<string, { kind: 'piece' | 'weight'; ratio: string }>;
  /** Ids claimed by categories (a product may not reuse one). */
  ids: Set<string>;
  /** Every category code of the file, placed in the tree or not (a product naming one is not reported again). */
  categoryCodes: ReadonlySet<string>;
}

export function planCatalogHead(unitRows: unknown[], categoryRows: unknown[], ctx: ImportContext, problems: ImportProblem[]): CatalogHead {
  // ---- units ----
  const units: PlannedUnit[] = [];
  const unitKinds = new Map<string, { kind: 'piece' | 'weight'; ratio: string }>(ctx.existingUnits);
  const fileUnitCodes = new Set<string>();
  unitRows.forEach((raw, i) => {
    const r = isObject(raw) ? raw : {};
    const check = new RowCheck(rowName('units', i, r.code), problems);
    if (!isObject(raw)) return check.fail('', 'must be an object');
    const code = check.text(r.code, 'code', 32);
    if (code !== null && !CODE.test(code)) check.fail('code', 'may hold letters, digits and . _ : / - only');
    if (code !== null && fileUnitCodes.has(code)) check.fail('code', 'is used by an earlier unit');
    const kind = r.kind === 'piece' || r.kind === 'weight' ? r.kind : null;
    if (!kind) check.fail('kind', 'must be `piece` or `weight`');
    const name = check.localized(r.name, 'name', 32);
    const fullName = check.localized(r.full_name, 'full_name', 64);
    const ratio = check.decimal(r.ratio, 'ratio', 3, { min: 1n, required: true });
    if (code === null || !kind || !name || !fullName || ratio === null) return;
    fileUnitCodes.add(code);
    unitKinds.set(code, { kind, ratio });
    units.push({ code, kind, name_ru: name.ru, name_en: name.en, full_name_ru: fullName.ru, full_name_en: fullName.en, ratio });
  });

  // ---- categories ----
  const categoryByCode = new Map<
    string,
    {
      row: string;
      parent: string | null;
      planned: Omit<PlannedCategory, 'ancestor_codes' | 'level' | 'tree_order' | 'product_rank_from' | 'product_rank_to'>;
    }
  >();
  const ids = new Set<string>();
  categoryRows.forEach((raw, i) => {
    const r = isObject(raw) ? raw : {};
    const name = rowName('categories', i, r.code);
    const check = new RowCheck(name, problems);
    if (!isObject(raw)) return check.fail('', 'must be an object');
    const code = check.text(r.code, 'code', 64);
    if (code !== null && !CODE.test(code)) check.fail('code', 'may hold letters, digits and . _ : / - only');
    if (code !== null && categoryByCode.has(code)) check.fail('code', 'is used by an earlier category');
    let id: string | null = null;
    if (r.id !== undefined && r.id !== null) {
      if (typeof r.id !== 'string' || !isUuid(r.id)) check.fail('id', 'must be a UUID');
      else if (ids.has(r.id.toLowerCase())) check.fail('id', 'is used by an earlier row');
      else id = r.id.toLowerCase();
    }
    const parent = r.parent === undefined || r.parent === null ? null : check.text(r.parent, 'parent', 64);
    const texts = check.localized(r.name, 'name', 200);
    const color = check.text(r.color, 'color', 9);
    if (color !== null && !COLOR.test(color)) check.fail('color', 'must be #RRGGBB or #RRGGBBAA');
    let image: { original: string; listing: string } | null = null;
    if (r.image !== undefined && r.image !== null) {
      if (!isObject(r.image)) check.fail('image', 'must be an object with `original` and `listing`, or null');
      else {
        const original = check.url(r.image.original, 'image.original');
        const listing = check.url(r.image.listing, 'image.listing');
        if (original && listing) image = { original, listing };
      }
    }
    let mainPage: { position: number; layout: string } | null = null;
    if (r.main_page !== undefined && r.main_page !== null) {
      if (!isObject(r.main_page)) check.fail('main_page', 'must be an object with `position` and `layout`, or null');
      else {
        const position = check.integer(r.main_page.position, 'main_page.position', 0, 1_000_000, -1);
        if (r.main_page.position === undefined) check.fail('main_page.position', 'is required');
        const layout = check.text(r.main_page.layout, 'main_page.layout', 32);
        if (position >= 0 && layout !== null) mainPage = { position, layout };
      }
    }
    const own = check.bool(r.own_production, 'own_production', false);
    const showCount = check.bool(r.show_products_count, 'show_products_count', true);
    // A row with a valid code joins the tree even when other fields are wrong, so that its
    // children and products are not reported again for its sake (the import fails anyway).
    if (code === null || !CODE.test(code) || categoryByCode.has(code)) return;
    if (id) ids.add(id);
    categoryByCode.set(code, {
      row: name,
      parent,
      planned: {
        code,
        id,
        parent_code: parent,
        name_ru: texts?.ru ?? '',
        name_en: texts?.en ?? '',
        color: color ?? '',
        image_original: image?.original ?? null,
        image_listing: image?.listing ?? null,
        is_own_production: own,
        show_products_count: showCount,
        main_page_position: mainPage?.position ?? null,
        main_page_layout: mainPage?.layout ?? null,
      },
    });
  });

  // The tree: every parent known, no cycles, at most MAX_CATEGORY_LEVEL deep; pre-order.
  const children = new Map<string | null, string[]>();
  for (const [code, c] of categoryByCode) {
    if (c.parent !== null && !categoryByCode.has(c.parent)) {
      problems.push({ row: c.row, field: 'parent', message: `no category has code "${c.parent}"` });
      continue;
    }
    if (c.parent === code) {
      problems.push({ row: c.row, field: 'parent', message: 'a category cannot be its own parent' });
      continue;
    }
    if (!children.has(c.parent)) children.set(c.parent, []);
    children.get(c.parent)!.push(code);
  }
  const categories: PlannedCategory[] = [];
  const placed = new Set<string>();
  const visit = (code: string, ancestors: string[]) => {
    const c = categoryByCode.get(code)!;
    placed.add(code);
    if (ancestors.length > MAX_CATEGORY_LEVEL) {
      problems.push({ row: c.row, field: 'parent', message: `the tree is deeper than ${MAX_CATEGORY_LEVEL + 1} levels` });
      return;
    }
    categories.push({
      ...c.planned,
      ancestor_codes: ancestors,
      level: ancestors.length,
      tree_order: categories.length + 1,
      product_rank_from: null,
      product_rank_to: null,
    });
    for (const child of children.get(code) ?? []) visit(child, [...ancestors, code]);
  };
  for (const root of children.get(null) ?? []) visit(root, []);
  for (const [code, c] of categoryByCode) {
    if (placed.has(code) || c.parent === code || (c.parent !== null && !categoryByCode.has(c.parent))) continue;
    // Not reached from a root: either the chain loops, or it ends at an unknown parent (already reported).
    const seen = new Set([code]);
    let up = c.parent;
    while (up !== null && categoryByCode.has(up) && !seen.has(up)) {
      seen.add(up);
      up = categoryByCode.get(up)!.parent;
    }
    if (up !== null && seen.has(up)) problems.push({ row: c.row, field: 'parent', message: 'the parent chain forms a cycle' });
  }
  return { units, categories, unitKinds, ids, categoryCodes: new Set(categoryByCode.keys()) };
}

/**
 * Checks product rows one at a time (a file's products can be streamed through it): each row
 * against the head and against the rows before it (codes, ids, barcodes and PLUs claimed once).
 */
export class ProductPlanner {
  private readonly productCodes = new Set<string>();
  private readonly barcodeOwner = new Map<string, string>();
  private readonly pluOwner = new Map<string, string>();

  constructor(
    private readonly head: CatalogHead,
    private readonly ctx: ImportContext,
  ) {}

  /** The planned row, or null when it has problems (added to `problems`). Sort ranks are left 0. */
  plan(raw: unknown, i: number, problems: ImportProblem[]): PlannedProduct | null {
    const { ctx, productCodes, barcodeOwner, pluOwner } = this;
    const ids = this.head.ids;
    const unitKinds = this.head.unitKinds;
    const r = isObject(raw) ? raw : {};
    const row = rowName('products', i, r.code);
    const check = new RowCheck(row, problems);
    if (!isObject(raw)) {
      check.fail('', 'must be an object');
      return null;
    }
    const before = problems.length;
    const code = check.text(r.code, 'code', 64);
    if (code !== null && !CODE.test(code)) check.fail('code', 'may hold letters, digits and . _ : / - only');
    if (code !== null && productCodes.has(code)) check.fail('code', 'is used by an earlier product');
    let id: string | null = null;
    if (r.id !== undefined && r.id !== null) {
      if (typeof r.id !== 'string' || !isUuid(r.id)) check.fail('id', 'must be a UUID');
      else if (ids.has(r.id.toLowerCase())) check.fail('id', 'is used by an earlier row');
      else id = r.id.toLowerCase();
    }
    const categoryCode = r.category === undefined || r.category === null ? null : check.text(r.category, 'category', 64);
    if (categoryCode !== null && !this.head.categoryCodes.has(categoryCode))
      check.fail('category', `no category has code "${categoryCode}"`);
    const texts = check.localized(r.name, 'name', 300);
    const description = check.localized(r.description, 'description', 10_000, false);
    const composition = check.localized(r.composition, 'composition', 10_000, false);
    const country = check.localized(r.country, 'country', 100, false);
    const manufacturer = check.text(r.manufacturer, 'manufacturer', 200, false);
    const brand = check.text(r.brand, 'brand', 200, false);
    const weightBased = check.bool(r.weight_based, 'weight_based', false);
    const weight = check.decimal(r.weight ?? 0, 'weight', 3) ?? '0.000';
    const nutrition: Record<'calories' | 'protein' | 'fats' | 'carbohydrates', string | null> = {
      calories: null,
      protein: null,
      fats: null,
      carbohydrates: null,
    };
    if (r.nutrition !== undefined && r.nutrition !== null) {
      if (!isObject(r.nutrition)) check.fail('nutrition', 'must be an object or null');
      else
        for (const k of Object.keys(nutrition) as (keyof typeof nutrition)[])
          nutrition[k] = check.decimal(r.nutrition[k], `nutrition.${k}`, 2);
    }
    const barcodes: string[] = [];
    if (r.barcodes !== undefined && r.barcodes !== null) {
      if (!Array.isArray(r.barcodes)) check.fail('barcodes', 'must be an array of barcodes');
      else
        r.barcodes.forEach((b, j) => {
          if (typeof b !== 'string' || !isValidGtin(b))
            return check.fail(`barcodes[${j}]`, 'must be an EAN-13, EAN-8, UPC-A or GTIN-14 with a correct check digit');
          const owner = barcodeOwner.get(b);
          if (owner !== undefined && owner !== code) return check.fail(`barcodes[${j}]`, `${b} is already the barcode of product ${owner}`);
          if (!barcodes.includes(b)) barcodes.push(b);
        });
    }
    let plu: string | null = null;
    if (r.plu !== undefined && r.plu !== null) {
      if (typeof r.plu !== 'string' || !isPlu(r.plu)) check.fail('plu', 'must be a PLU code of 4 or 5 digits');
      else if (pluOwner.has(r.plu)) check.fail('plu', `${r.plu} is already the PLU of product ${pluOwner.get(r.plu)}`);
      else plu = r.plu;
    }
    let image: PlannedProduct['image_original'][] = [null, null, null, null];
    if (r.image !== undefined && r.image !== null) {
      if (!isObject(r.image)) check.fail('image', 'must be an object with `original`, `detail`, `listing` and `thumbnail`, or null');
      else
        image = (['original', 'detail', 'listing', 'thumbnail'] as const).map((k) =>
          check.url((r.image as Record<string, unknown>)[k], `image.${k}`),
        );
    }
    const top = check.bool(r.top, 'top', false);
    const isNew = check.bool(r.new, 'new', false);
    const fresh = check.bool(r.fresh, 'fresh', false);
    const popularity = check.integer(r.popularity, 'popularity', 0, 2_000_000_000, 0);

    const inventories: PlannedInventory[] = [];
    if (!Array.isArray(r.inventories)) check.fail('inventories', 'must be an array (empty when no store sells the product)');
    else {
      const seen = new Set<string>();
      const ratioOf = new Map<PlannedInventory, bigint>();
      r.inventories.forEach((rawInv, j) => {
        const f = `inventories[${j}]`;
        if (!isObject(rawInv)) return check.fail(f, 'must be an object');
        const storeCode = check.text(rawInv.store, `${f}.store`, 64);
        const storeId = storeCode === null ? undefined : ctx.stores.get(storeCode);
        if (storeCode !== null && !storeId) check.fail(`${f}.store`, `no active store has code "${storeCode}"`);
        const unitCode = check.text(rawInv.unit, `${f}.unit`, 32);
        const unit = unitCode === null ? undefined : unitKinds.get(unitCode);
        if (unitCode !== null && !unit) check.fail(`${f}.unit`, `no unit has code "${unitCode}"`);
        if (unit && unit.kind !== (weightBased ? 'weight' : 'piece')) {
          check.fail(
            `${f}.unit`,
            weightBased ? 'a weight-based product is sold in weight units' : 'a piece product is sold in piece units',
          );
        }
        const key = `${storeCode}/${unitCode}`;
        if (seen.has(key)) check.fail(f, `the product is already sold in ${unitCode} in store ${storeCode}`);
        seen.add(key);
        // Whole quantities for piece units (a wrong unit is reported once, above, not again here).
        const whole = unit?.kind === 'piece' && !weightBased;
        const stock = check.decimal(rawInv.stock, `${f}.stock`, 3, { whole });
        const price = check.decimal(rawInv.price, `${f}.price`, 2, { required: true });
        const oldPrice = check.decimal(rawInv.old_price, `${f}.old_price`, 2);
        if (price !== null && oldPrice !== null && parseDecimal(oldPrice, 2)! <= parseDecimal(price, 2)!) {
          check.fail(`${f}.old_price`, 'must be greater than price (it is the price before the discount)');
        }
        const limit = check.decimal(rawInv.order_limit, `${f}.order_limit`, 3, { min: 1n, whole });
        const isDefault = check.bool(rawInv.default, `${f}.default`, false);
        const location = checkLocation(check, rawInv, f);
        if (!storeId || !unit || unitCode === null || price === null) return;
        const planned: PlannedInventory = {
          store_id: storeId,
          unit_code: unitCode,
          is_default: isDefault,
          stock,
          unit_price: price,
          old_price: oldPrice,
          order_quantity_limit: limit,
          ...location,
        };
        ratioOf.set(planned, parseDecimal(unit.ratio, 3)!);
        inventories.push(planned);
      });
      // One default unit per store: the marked one, otherwise the smallest ratio (the spec's
      // rule for cards), the first in the file among equals.
      for (const storeId of new Set(inventories.map((inv) => inv.store_id))) {
        const ofStore = inventories.filter((inv) => inv.store_id === storeId);
        const marked = ofStore.filter((inv) => inv.is_default);
        if (marked.length > 1) check.fail('inventories', 'more than one default unit in one store');
        if (marked.length === 0) {
          const smallest = ofStore.reduce((a, b) => (ratioOf.get(b)! < ratioOf.get(a)! ? b : a));
          smallest.is_default = true;
        }
      }
    }
    // Codes are claimed even by a row with problems, so that duplicates are found all the same.
    if (code !== null) productCodes.add(code);
    if (id) ids.add(id);
    for (const b of barcodes) barcodeOwner.set(b, code ?? row);
    if (plu) pluOwner.set(plu, code ?? row);
    if (problems.length > before || code === null || !texts) return null;
    return {
      code,
      id,
      category_code: categoryCode,
      name_ru: texts.ru,
      name_en: texts.en,
      description_ru: description?.ru ?? null,
      description_en: description?.en ?? null,
      composition_ru: composition?.ru ?? null,
      composition_en: composition?.en ?? null,
      made_country_ru: country?.ru ?? null,
      made_country_en: country?.en ?? null,
      manufacturer,
      brand,
      weight_based: weightBased,
      weight,
      ...nutrition,
      image_original: image[0]!,
      image_detail: image[1]!,
      image_listing: image[2]!,
      image_thumbnail: image[3]!,
      plu,
      is_top: top,
      is_new: isNew,
      is_fresh: fresh,
      popularity,
      sort_rank_ru: 0,
      sort_rank_en: 0,
      barcodes,
      inventories,
    };
  }
}

/**
 * Catalog order per language: category tree position (uncategorised last), then name, then code;
 * and each category's range of ranks. (The database import ranks the same way in SQL.)
 */
export function rankProducts(products: PlannedProduct[], categories: PlannedCategory[]): void {
  const treeOrderOf = new Map(categories.map((c) => [c.code, c.tree_order]));
  for (const lang of ['ru', 'en'] as const) {
    const collator = new Intl.Collator(lang, { sensitivity: 'base', numeric: true });
    const key = (p: PlannedProduct) => (p.category_code === null ? Number.MAX_SAFE_INTEGER : treeOrderOf.get(p.category_code)!);
    const ordered = [...products].sort(
      (a, b) =>
        key(a) - key(b) || collator.compare(a[`name_${lang}`], b[`name_${lang}`]) || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0),
    );
    ordered.forEach((p, i) => (p[`sort_rank_${lang}`] = i + 1));
  }
  // Ranks start with the category's tree position and a subtree is contiguous in pre-order, so
  // each subtree's products hold one range of ranks - the same range in both languages.
  const byCode = new Map(categories.map((c) => [c.code, c]));
  for (const p of products) {
    if (p.category_code === null) continue;
    const own = byCode.get(p.category_code)!;
    for (const c of [own, ...own.ancestor_codes.map((a) => byCode.get(a)!)]) {
      c.product_rank_from = Math.min(c.product_rank_from ?? p.sort_rank_ru, p.sort_rank_ru);
      c.product_rank_to = Math.max(c.product_rank_to ?? p.sort_rank_ru, p.sort_rank_ru);
    }
  }
}

export function planCatalogImport(
  input: unknown,
  ctx: ImportContext,
): { ok: true; plan: CatalogImportPlan } | { ok: false; problems: ImportProblem[] } {
  if (!isObject(input)) return { ok: false, problems: [NOT_AN_OBJECT] };
  const sectionProblems = checkFileSections(new Map(Object.entries(input)));
  if (sectionProblems.length) return { ok: false, problems: sectionProblems };
  const problems: ImportProblem[] = [];
  const head = planCatalogHead((input.units as unknown[] | undefined) ?? [], input.categories as unknown[], ctx, problems);
  const planner = new ProductPlanner(head, ctx);
  const products: PlannedProduct[] = [];
  (input.products as unknown[]).forEach((raw, i) => {
    const planned = planner.plan(raw, i, problems);
    if (planned) products.push(planned);
  });
  if (problems.length) return { ok: false, problems };
  rankProducts(products, head.categories);
  return { ok: true, plan: { units: head.units, categories: head.categories, products } };
}
