// A small hand-made catalog whose expected listings, trees and verdicts are worked out by hand in
// the tests. Importing it replaces the demo catalog of the test file's own database (the import
// withdraws whatever the file does not list).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { importCatalog } from '../../db/catalog-import/write.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { CatalogFile, ProductRow } from '../../db/catalog-import/file.js';
import { ean13 } from '../../domain/codes/barcode.js';
import type { TestService } from '../support/service.js';

export const STORE_A = DEMO_STORES[0];
export const STORE_B = DEMO_STORES[1];
/** A demo store that sells nothing of the fixture. */
export const STORE_C = DEMO_STORES[2];

export const CATEGORY = Object.fromEntries(
  ['food', 'dairy', 'milk', 'cheese', 'bakery', 'household', 'soap', 'empty'].map((c) => [c, randomUUID()]),
) as Record<'food' | 'dairy' | 'milk' | 'cheese' | 'bakery' | 'household' | 'soap' | 'empty', string>;

export const P = Object.fromEntries(['M1', 'M2', 'M3', 'M4', 'C1', 'B1', 'S1'].map((c) => [c, randomUUID()])) as Record<
  'M1' | 'M2' | 'M3' | 'M4' | 'C1' | 'B1' | 'S1',
  string
>;

export const KEFIR_BARCODE = ean13('460123456789');
export const GOUDA_PLU = '4011';

const store = (code: string, extra: Record<string, unknown>) => ({ store: code, ...extra }) as ProductRow['inventories'][number];

export function fixtureCatalog(): CatalogFile {
  return {
    categories: [
      { code: 't-food', id: CATEGORY.food, name: { ru: 'Еда', en: 'Food' }, color: '#FFF4D6' },
      { code: 't-dairy', id: CATEGORY.dairy, parent: 't-food', name: { ru: 'Молочное', en: 'Dairy' }, color: '#FFF4D6' },
      {
        code: 't-milk',
        id: CATEGORY.milk,
        parent: 't-dairy',
        name: { ru: 'Молоко', en: 'Milk' },
        color: '#FFF4D6',
        image: { original: 'https://cdn.example/milk.png', listing: 'https://cdn.example/milk.webp' },
      },
      { code: 't-cheese', id: CATEGORY.cheese, parent: 't-dairy', name: { ru: 'Сыр', en: 'Cheese' }, color: '#FFF4D6' },
      {
        code: 't-bakery',
        id: CATEGORY.bakery,
        parent: 't-food',
        name: { ru: 'Выпечка', en: 'Bakery' },
        color: '#F3E3CF',
        own_production: true,
        main_page: { position: 1, layout: 'carousel' },
      },
      {
        code: 't-household',
        id: CATEGORY.household,
        name: { ru: 'Хозтовары', en: 'Household' },
        color: '#E8E4F7',
        main_page: { position: 2, layout: 'tiles' },
      },
      { code: 't-soap', id: CATEGORY.soap, parent: 't-household', name: { ru: 'Мыло', en: 'Soap' }, color: '#E8E4F7' },
      {
        code: 't-empty',
        id: CATEGORY.empty,
        name: { ru: 'Пусто', en: 'Empty' },
        color: '#FFFFFF',
        main_page: { position: 0, layout: 'single' },
      },
    ],
    products: [
      {
        code: 'T-M1',
        id: P.M1,
        category: 't-milk',
        name: { ru: 'Молоко 3,2%', en: 'Milk 3.2%' },
        brand: 'Meadow',
        top: true,
        fresh: true,
        popularity: 50,
        inventories: [
          store(STORE_A!.code, { unit: 'pc', stock: 10, price: '89.90', old_price: '99.90' }),
          store(STORE_B!.code, { unit: 'pc', stock: 4, price: '92.00' }),
        ],
      },
      {
        code: 'T-M2',
        id: P.M2,
        category: 't-milk',
        name: { ru: 'Молоко топлёное', en: 'Baked milk' },
        new: true,
        popularity: 10,
        inventories: [store(STORE_A!.code, { unit: 'pc', stock: 0, price: '75.00' })],
      },
      {
        code: 'T-M3',
        id: P.M3,
        category: 't-milk',
        name: { ru: 'Кефир', en: 'Kefir' },
        fresh: true,
        popularity: 30,
        barcodes: [KEFIR_BARCODE],
        inventories: [store(STORE_A!.code, { unit: 'pc', stock: 5, price: '59.50', old_price: '70.00' })],
      },
      {
        code: 'T-M4',
        id: P.M4,
        category: 't-milk',
        name: { ru: 'Молоко овсяное', en: 'Oat milk' },
        popularity: 20,
        inventories: [store(STORE_A!.code, { unit: 'pc', stock: 3, price: '149.00', old_price: '199.00', order_limit: 2 })],
      },
      {
        code: 'T-C1',
        id: P.C1,
        category: 't-cheese',
        name: { ru: 'Сыр Гауда', en: 'Gouda cheese' },
        weight_based: true,
        weight: '0.300',
        plu: GOUDA_PLU,
        top: true,
        popularity: 40,
        nutrition: { calories: '356', protein: '25', fats: '27.5', carbohydrates: null },
        description: { ru: 'Полутвёрдый сыр.', en: 'Semi-hard cheese.' },
        country: { ru: 'Нидерланды', en: 'Netherlands' },
        manufacturer: 'Kaasfabriek',
        image: {
          original: 'https://cdn.example/c1.jpg',
          detail: 'https://cdn.example/c1-d.webp',
          listing: 'https://cdn.example/c1-l.webp',
          thumbnail: 'https://cdn.example/c1-t.webp',
        },
        inventories: [
          store(STORE_A!.code, { unit: 'kg', default: true, stock: '2.500', price: '899.00' }),
          store(STORE_A!.code, { unit: 'g100', stock: '25.000', price: '89.90' }),
        ],
      },
      {
        code: 'T-B1',
        id: P.B1,
        category: 't-bakery',
        name: { ru: 'Хлеб ржаной', en: 'Rye bread' },
        fresh: true,
        new: true,
        popularity: 60,
        inventories: [
          store(STORE_A!.code, { unit: 'pc', stock: 20, price: '45.00' }),
          store(STORE_B!.code, { unit: 'pc', stock: 0, price: '47.00' }),
        ],
      },
      {
        code: 'T-S1',
        id: P.S1,
        category: 't-soap',
        name: { ru: 'Мыло детское', en: 'Baby soap' },
        popularity: 5,
        inventories: [store(STORE_A!.code, { unit: 'pc', stock: null, price: '120.00' })],
      },
    ],
  };
}

/** Replaces the catalog of the service's database with the fixture. */
export async function loadFixture(svc: TestService): Promise<void> {
  await svc.deps.db.transaction().execute((trx) => importCatalog(trx, fixtureCatalog()));
}

/** The unit id of a unit code. */
export async function unitId(svc: TestService, code: string): Promise<string> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM measurement_units WHERE code = ${code}`.execute(svc.deps.db);
  return rows[0]!.id;
}

export const storeHeaders = (storeId: string, lang: 'ru' | 'en' = 'en') => ({ 'x-store-id': storeId, 'accept-language': lang });
