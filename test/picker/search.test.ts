// Picker product search: the offset form and the cursor form (/v2, TEST only), the store it
// searches, barcodes and scale labels, and the cursor's stability while products are added.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scaleLabel } from '../../domain/codes/scale-label.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { paths } from '../../generated/api.test.js';
import { createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, startPicking, type TestPicker } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let picker: TestPicker;
const STORE = DEMO_STORES[0]!.id;

beforeAll(async () => {
  svc = await startTestService();
  picker = await createPicker(svc, [STORE, DEMO_STORES[1]!.id]);
});
afterAll(() => svc?.close());

type SearchQuery = NonNullable<paths['/api/picker/catalog/products']['get']['parameters']['query']> &
  NonNullable<paths['/api/picker/catalog/products/v2']['get']['parameters']['query']>;
const search = (params: Partial<SearchQuery>, who: { auth: Record<string, string> } = picker, v2 = false) =>
  v2
    ? svc.client.call.GET('/api/picker/catalog/products/v2', { params: { query: params }, headers: who.auth })
    : svc.client.call.GET('/api/picker/catalog/products', { params: { query: params }, headers: who.auth });

describe('searchPickerProducts', () => {
  it("finds products of the picker's store by text, in stock first, with offset pages", async () => {
    const r = await search({ query: 'milk', limit: 5 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ limit: 5, offset: 0 });
    expect(r.body.total).toBeGreaterThan(5);
    expect(r.body.has_more).toBe(true);
    expect(r.body.items).toHaveLength(5);
    for (const item of r.body.items) expect(item.name.toLowerCase()).toContain('milk');
    const ids = await svc.deps.db
      .selectFrom('inventories')
      .select('id')
      .where('store_id', '=', STORE)
      .where(
        'id',
        'in',
        r.body.items.map((i: any) => i.inventory_id),
      )
      .execute();
    expect(ids).toHaveLength(5);
    const all = await search({ query: 'milk', limit: 100 });
    const inStock = all.body.items.map((i: any) => Number(i.available_quantity) > 0);
    expect(inStock).toEqual([...inStock].sort((a, b) => Number(b) - Number(a)));
    const second = await search({ query: 'milk', limit: 5, offset: 5 });
    expect(second.body.items.map((i: any) => i.inventory_id)).toEqual(all.body.items.slice(5, 10).map((i: any) => i.inventory_id));
    const ru = await svc.client.call.GET('/api/picker/catalog/products', {
      params: { query: { query: 'молоко', limit: 3 } },
      headers: { ...picker.auth, 'accept-language': 'ru' },
    });
    expect(ru.body.items[0].name.toLowerCase()).toContain('молоко');
  });

  it("finds a product by barcode and a weight product by a scale label's PLU", async () => {
    const [piece] = await stockedProducts(svc, { weight: false, count: 1 });
    const byBarcode = await search({ barcode: piece!.barcode! });
    expect(byBarcode.body).toMatchObject({
      total: 1,
      items: [{ product_id: piece!.productId, barcode: piece!.barcode, kind: 'piece', price: piece!.unitPrice }],
    });
    const [weighed] = await stockedProducts(svc, { weight: true, count: 1 });
    const byLabel = await search({ barcode: scaleLabel(weighed!.plu!, 640) });
    expect(byLabel.body).toMatchObject({
      total: 1,
      items: [{ product_id: weighed!.productId, kind: 'weight', plu_code: weighed!.plu, barcode: '' }],
    });
    expect((await search({ barcode: piece!.barcode!, query: 'zzzz' })).body.total).toBe(0);
    expect((await search({ barcode: '123' })).body.total).toBe(0);
  });

  it('lists the whole assortment without a query, and an empty page past the end', async () => {
    const whole = await search({ limit: 1 });
    const count = await svc.deps.db
      .selectFrom('inventories')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('store_id', '=', STORE)
      .where('is_default', '=', true)
      .executeTakeFirstOrThrow();
    expect(whole.body.total).toBe(Number(count.n));
    const past = await search({ limit: 10, offset: 100000 });
    expect(past.body).toMatchObject({ items: [], total: Number(count.n), has_more: false });
  });

  it('searches the store of the current session, else the default store', async () => {
    const roaming = await createPicker(svc, [STORE, DEMO_STORES[1]!.id]);
    const [elsewhere] = await stockedProducts(svc, { storeId: DEMO_STORES[1]!.id, weight: false, count: 1 });
    const order = await createConfirmedOrder(svc, {
      storeId: DEMO_STORES[1]!.id,
      lines: [{ inventoryId: elsewhere!.inventoryId, quantity: '1' }],
    });
    const before = await search({ barcode: elsewhere!.barcode! }, roaming);
    expect(before.body.items[0]?.inventory_id).not.toBe(elsewhere!.inventoryId);
    await startPicking(svc, roaming, order.orderId);
    const during = await search({ barcode: elsewhere!.barcode! }, roaming);
    expect(during.body.items[0].inventory_id).toBe(elsewhere!.inventoryId);
  });

  it('answers 422 STORE_REQUIRED without a store, 422 for a limit above 100, 401 without a token', async () => {
    const homeless = await createPicker(svc, []);
    const r = await search({ query: 'milk' }, homeless);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('STORE_REQUIRED');
    expect((await search({ limit: 101 })).body.code).toBe('VALIDATION_ERROR');
    expect((await search({ query: 'milk' }, { auth: {} })).status).toBe(401);
  });
});

describe('searchPickerProductsByCursor', () => {
  it('pages through the same order as the offset form', async () => {
    const all = (await search({ query: 'milk', limit: 100 })).body.items.map((i: any) => i.inventory_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await search({ query: 'milk', limit: 7, ...(cursor ? { cursor } : {}) }, picker, true);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((i: any) => i.inventory_id));
      cursor = page.body.next_cursor;
      expect(page.body.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it('keeps its place when products are added before it', async () => {
    const first = await search({ query: 'milk', limit: 5 }, picker, true);
    const expectedNext = (await search({ query: 'milk', limit: 5, offset: 5 })).body.items.map((i: any) => i.inventory_id);
    // A new in-stock product that sorts first ("Aaa...").
    const category = await svc.deps.db
      .selectFrom('products')
      .select('category_id')
      .where('id', '=', first.body.items[0].product_id)
      .executeTakeFirstOrThrow();
    const product = await svc.deps.db
      .insertInto('products')
      .values({
        code: `T${randomUUID().slice(0, 8)}`,
        category_id: category.category_id,
        name_ru: 'Ааа молоко тестовое',
        name_en: 'Aaa milk for the test',
        updated_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const unit = await svc.deps.db.selectFrom('measurement_units').select('id').where('code', '=', 'pc').executeTakeFirstOrThrow();
    await svc.deps.db
      .insertInto('inventories')
      .values({ product_id: product.id, store_id: STORE, unit_id: unit.id, is_default: true, stock: '50', unit_price: '99.90' })
      .execute();
    expect((await search({ query: 'milk', limit: 1 })).body.items[0].product_id).toBe(product.id);
    const next = await search({ query: 'milk', limit: 5, cursor: first.body.next_cursor }, picker, true);
    expect(next.body.items.map((i: any) => i.inventory_id)).toEqual(expectedNext);
  });

  it('answers 422 INVALID_CURSOR for a foreign or mismatched cursor, 401 without a token', async () => {
    const page = await search({ query: 'milk', limit: 2 }, picker, true);
    const other = await search({ query: 'kefir', limit: 2, cursor: page.body.next_cursor }, picker, true);
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('INVALID_CURSOR');
    expect((await search({ query: 'milk', cursor: 'not-a-cursor' }, picker, true)).body.code).toBe('INVALID_CURSOR');
    expect((await search({ query: 'milk' }, { auth: {} }, true)).status).toBe(401);
  });
});
