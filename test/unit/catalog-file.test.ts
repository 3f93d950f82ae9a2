import { describe, expect, it } from 'vitest';
import { planCatalogImport, type CatalogFile, type ImportContext } from '../../db/catalog-import/file.js';

const ctx: ImportContext = {
  stores: new Map([
    ['S1', 'store-1'],
    ['S2', 'store-2'],
  ]),
  existingUnits: new Map([
    ['pc', { kind: 'piece', ratio: '1.000' }],
    ['kg', { kind: 'weight', ratio: '1.000' }],
    ['g100', { kind: 'weight', ratio: '0.100' }],
  ]),
};

const file = (): CatalogFile => ({
  categories: [
    { code: 'food', name: { ru: 'Еда', en: 'Food' }, color: '#FFFFFF' },
    { code: 'fruit', parent: 'food', name: { ru: 'Фрукты', en: 'Fruit' }, color: '#FFFFFF' },
    { code: 'apples', parent: 'fruit', name: { ru: 'Яблоки', en: 'Apples' }, color: '#FFFFFF' },
    { code: 'drinks', name: { ru: 'Напитки', en: 'Drinks' }, color: '#FFFFFF' },
    { code: 'juice', parent: 'drinks', name: { ru: 'Соки', en: 'Juice' }, color: '#FFFFFF' },
  ],
  products: [
    {
      code: 'A',
      category: 'apples',
      name: { ru: 'Яблоки Гала', en: 'Gala apples' },
      weight_based: true,
      plu: '4133',
      inventories: [
        { store: 'S1', unit: 'kg', stock: '12.5', price: 149.9 },
        { store: 'S1', unit: 'g100', stock: '125', price: '14.99' },
      ],
    },
    {
      code: 'B',
      category: 'juice',
      name: { ru: 'Сок яблочный', en: 'Apple juice' },
      barcodes: ['4006381333931'],
      inventories: [
        { store: 'S1', unit: 'pc', stock: 3, price: '99', old_price: '120', order_limit: 2 },
        { store: 'S2', unit: 'pc', stock: null, price: '101.50' },
      ],
    },
    { code: 'C', category: 'apples', name: { ru: 'Антоновка', en: 'Antonovka apples' }, weight_based: true, inventories: [] },
  ],
});

const plan = (f: unknown) => planCatalogImport(f, ctx);
const problems = (f: unknown) => {
  const r = plan(f);
  if (r.ok) throw new Error('expected problems');
  return r.problems.map((p) => `${p.row} | ${p.field} | ${p.message}`);
};

describe('catalog file', () => {
  it('plans the tree in pre-order with levels and ancestors', () => {
    const r = plan(file());
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    expect(r.plan.categories.map((c) => [c.code, c.level, c.tree_order, c.ancestor_codes.join('/')])).toEqual([
      ['food', 0, 1, ''],
      ['fruit', 1, 2, 'food'],
      ['apples', 2, 3, 'food/fruit'],
      ['drinks', 0, 4, ''],
      ['juice', 1, 5, 'drinks'],
    ]);
  });

  it('normalises decimals and picks the default unit: the marked one, else the smallest ratio', () => {
    const r = plan(file());
    if (!r.ok) throw new Error('unexpected');
    const [a, b] = r.plan.products;
    expect(a!.inventories.map((i) => [i.unit_code, i.is_default, i.stock, i.unit_price])).toEqual([
      ['kg', false, '12.500', '149.90'],
      ['g100', true, '125.000', '14.99'],
    ]);
    expect(b!.inventories[0]).toMatchObject({
      is_default: true,
      stock: '3.000',
      unit_price: '99.00',
      old_price: '120.00',
      order_quantity_limit: '2.000',
      store_id: 'store-1',
    });
    expect(b!.inventories[1]).toMatchObject({ is_default: true, stock: null, store_id: 'store-2' });
  });

  it('ranks products in catalog order per language: category position, then name', () => {
    const r = plan(file());
    if (!r.ok) throw new Error('unexpected');
    const rank = (lang: 'ru' | 'en') =>
      [...r.plan.products].sort((x, y) => x[`sort_rank_${lang}`] - y[`sort_rank_${lang}`]).map((p) => p.code);
    expect(rank('ru')).toEqual(['C', 'A', 'B']); // Антоновка < Яблоки Гала, then the drinks
    expect(rank('en')).toEqual(['C', 'A', 'B']); // Antonovka < Gala
    // Each subtree's products hold one range of ranks: "a category and its descendants" is a range.
    expect(r.plan.categories.map((c) => [c.code, c.product_rank_from, c.product_rank_to])).toEqual([
      ['food', 1, 2],
      ['fruit', 1, 2],
      ['apples', 1, 2],
      ['drinks', 3, 3],
      ['juice', 3, 3],
    ]);
  });

  it('names each bad row and field', () => {
    const f = file();
    f.products[0]!.inventories[0]!.unit = 'pc';
    f.products[1]!.barcodes = ['4006381333932'];
    f.products[1]!.inventories[0]!.old_price = '98';
    f.products[1]!.inventories[0]!.stock = '2.5';
    f.products[1]!.inventories[1]!.store = 'S9';
    f.products[2]!.plu = '4133';
    expect(problems(f)).toEqual([
      'products[0] A | inventories[0].unit | a weight-based product is sold in weight units',
      'products[1] B | barcodes[0] | must be an EAN-13, EAN-8, UPC-A or GTIN-14 with a correct check digit',
      'products[1] B | inventories[0].stock | must be a whole number for a piece unit',
      'products[1] B | inventories[0].old_price | must be greater than price (it is the price before the discount)',
      'products[1] B | inventories[1].store | no active store has code "S9"',
      'products[2] C | plu | 4133 is already the PLU of product A',
    ]);
  });

  it('finds cycles, unknown parents and duplicate codes without cascading', () => {
    const f = file();
    f.categories.push(
      { code: 'x', parent: 'y', name: { ru: 'x', en: 'x' }, color: '#000000' },
      { code: 'y', parent: 'x', name: { ru: 'y', en: 'y' }, color: '#000000' },
    );
    f.categories[1]!.parent = 'nowhere';
    f.products.push({ ...f.products[1]!, barcodes: [] });
    expect(problems(f)).toEqual([
      'categories[1] fruit | parent | no category has code "nowhere"',
      'categories[5] x | parent | the parent chain forms a cycle',
      'categories[6] y | parent | the parent chain forms a cycle',
      'products[3] B | code | is used by an earlier product',
    ]);
  });

  it('refuses a file that is not the expected shape', () => {
    expect(problems([])).toEqual(['file |  | must be a JSON object with `categories` and `products`']);
    expect(problems({ categories: [], products: {}, extra: 1 })).toEqual([
      'file | products | must be an array',
      'file | extra | is not a known section',
    ]);
    expect(problems({ categories: [{ code: 'a', name: 'A', color: '#FFF' }], products: [] })).toEqual([
      'categories[0] a | name | must be an object with `ru` and `en`',
      'categories[0] a | color | must be #RRGGBB or #RRGGBBAA',
    ]);
  });
});
