// Units and the category operations on the hand-made fixture catalog (fixture.ts):
//   food (0) -> dairy (1) -> milk (2), cheese (2); food -> bakery (1, own production, main page)
//   household (0, main page) -> soap (1);  empty (0, main page, no products anywhere)
// Store A sells products in milk, cheese, bakery and soap; store B only in milk and bakery.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { CATEGORY, loadFixture, STORE_A, STORE_B, STORE_C, storeHeaders } from './fixture.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
  await loadFixture(svc);
});
afterAll(() => svc?.close());

type ListPath =
  | '/api/catalog/features/units/'
  | '/api/catalog/groups/categories/root'
  | '/api/catalog/groups/categories/menu'
  | '/api/catalog/groups/categories/main-page'
  | '/api/catalog/groups/categories/own-production';
const get = (path: ListPath, headers: Record<string, string> = storeHeaders(STORE_A!.id)) => svc.client.call.GET(path, { headers });
const category = (id: string, headers: Record<string, string>) =>
  svc.client.call.GET('/api/catalog/groups/categories/{category_id}', { params: { path: { category_id: id } }, headers });
/** Deliberately invalid: a bad header or query value, or no store. */
const invalid = (path: string, headers: Record<string, string> = storeHeaders(STORE_A!.id)) => svc.client.invalid('GET', path, { headers });
const idsOf = (cards: { id: string }[]) => cards.map((c) => c.id);

describe('listMeasurementUnits', () => {
  it('lists every unit with its ratio, names in the requested language, ordered by name', async () => {
    const en = await get('/api/catalog/features/units/', {});
    expect(en.status).toBe(200);
    expect(en.headers.get('vary')).toContain('Accept-Language');
    expect(en.body.map((u: { name: string }) => u.name)).toEqual(['100 g', 'kg', 'pack of 6', 'pc']);
    expect(en.body.find((u: { name: string }) => u.name === '100 g')).toMatchObject({ full_name: '100 grams', ratio: '0.100' });
    const ru = await get('/api/catalog/features/units/', { 'accept-language': 'ru-RU,ru;q=0.9' });
    expect(ru.body.map((u: { name: string }) => u.name)).toEqual(['100 г', 'кг', 'уп. 6 шт', 'шт']);
  });

  it('answers 422 for a malformed Accept-Language', async () => {
    const r = await invalid('/api/catalog/features/units/', { 'accept-language': 'x'.repeat(256) });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('VALIDATION_ERROR');
  });
});

describe('listRootCategories', () => {
  it('lists the roots with products in the store, in menu order', async () => {
    const a = await get('/api/catalog/groups/categories/root');
    expect(a.status).toBe(200);
    expect(a.body).toEqual([
      { id: CATEGORY.food, name: 'Food', level: 0, color: '#FFF4D6', parent_id: null, children_count: 2, image: null },
      { id: CATEGORY.household, name: 'Household', level: 0, color: '#E8E4F7', parent_id: null, children_count: 1, image: null },
    ]);
    expect(idsOf((await get('/api/catalog/groups/categories/root', storeHeaders(STORE_B!.id))).body)).toEqual([CATEGORY.food]);
    expect((await get('/api/catalog/groups/categories/root', storeHeaders(STORE_C!.id))).body).toEqual([]);
    expect((await get('/api/catalog/groups/categories/root', storeHeaders(STORE_A!.id, 'ru'))).body[0].name).toBe('Еда');
  });

  it('answers 422 STORE_REQUIRED and STORE_NOT_FOUND', async () => {
    expect((await invalid('/api/catalog/groups/categories/root', {})).body.code).toBe('STORE_REQUIRED');
    expect((await get('/api/catalog/groups/categories/root', storeHeaders(randomUUID()))).body.code).toBe('STORE_NOT_FOUND');
    expect((await invalid('/api/catalog/groups/categories/root', { 'x-store-id': 'store-1' })).body.code).toBe('VALIDATION_ERROR');
  });
});

describe('listMenuCategories', () => {
  it('lists the roots with their visible children; children_count counts children the store sells in', async () => {
    const a = await get('/api/catalog/groups/categories/menu');
    expect(a.status).toBe(200);
    expect(a.body.map((c: { id: string; children: { id: string }[] | null }) => [c.id, c.children && idsOf(c.children)])).toEqual([
      [CATEGORY.food, [CATEGORY.dairy, CATEGORY.bakery]],
      [CATEGORY.household, [CATEGORY.soap]],
    ]);
    expect(a.body[0].children[0]).toEqual({
      id: CATEGORY.dairy,
      name: 'Dairy',
      level: 1,
      color: '#FFF4D6',
      parent_id: CATEGORY.food,
      children_count: 2,
      image: null,
    });
    const b = await get('/api/catalog/groups/categories/menu', storeHeaders(STORE_B!.id));
    expect(b.body).toHaveLength(1);
    expect(b.body[0].children.find((c: { id: string }) => c.id === CATEGORY.dairy).children_count).toBe(1); // milk only
  });

  it('answers 422 without a store', async () => {
    expect((await invalid('/api/catalog/groups/categories/menu', {})).status).toBe(422);
  });
});

describe('listMainPageCategories', () => {
  it('lists the main-page blocks with products in the store, in block order, with layout and children', async () => {
    const a = await get('/api/catalog/groups/categories/main-page');
    expect(a.status).toBe(200);
    // "empty" (position 0) has no products anywhere and is left out.
    expect(a.body.map((c: { id: string; layout: string; children: unknown }) => [c.id, c.layout, c.children])).toEqual([
      [CATEGORY.bakery, 'carousel', null],
      [CATEGORY.household, 'tiles', [expect.objectContaining({ id: CATEGORY.soap })]],
    ]);
    expect(idsOf((await get('/api/catalog/groups/categories/main-page', storeHeaders(STORE_B!.id))).body)).toEqual([CATEGORY.bakery]);
  });

  it('answers 422 without a store', async () => {
    expect((await invalid('/api/catalog/groups/categories/main-page', {})).status).toBe(422);
  });
});

describe('listOwnProductionCategories', () => {
  it('lists own-production categories with the number of products in stock', async () => {
    const a = await get('/api/catalog/groups/categories/own-production');
    expect(a.status).toBe(200);
    expect(a.body).toEqual([
      {
        id: CATEGORY.bakery,
        name: 'Bakery',
        level: 1,
        color: '#F3E3CF',
        parent_id: CATEGORY.food,
        children_count: 0,
        image: null,
        products_count: 1,
      },
    ]);
    // Store B sells the bread but has none in stock.
    expect((await get('/api/catalog/groups/categories/own-production', storeHeaders(STORE_B!.id))).body[0].products_count).toBe(0);
    expect((await get('/api/catalog/groups/categories/own-production', storeHeaders(STORE_C!.id))).body).toEqual([]);
  });

  it('answers 422 without a store', async () => {
    expect((await invalid('/api/catalog/groups/categories/own-production', {})).status).toBe(422);
  });
});

describe('getCategory', () => {
  it('returns an active category, counting all its active children', async () => {
    const r = await category(CATEGORY.milk, { 'accept-language': 'ru' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: CATEGORY.milk,
      name: 'Молоко',
      level: 2,
      color: '#FFF4D6',
      parent_id: CATEGORY.dairy,
      children_count: 0,
      image: { original: 'https://cdn.example/milk.png', listing: 'https://cdn.example/milk.webp' },
    });
    expect((await category(CATEGORY.empty, {})).body.children_count).toBe(0);
    expect((await category(CATEGORY.food, {})).body.children_count).toBe(2);
  });

  it('answers 404 for an unknown, non-UUID or withdrawn category', async () => {
    const { demoCategoryId } = await import('../../db/seed/catalog.js');
    for (const id of [randomUUID(), 'dairy', demoCategoryId('dairy')]) {
      const r = await category(id, {});
      expect(r.status, id).toBe(404);
      expect(r.body.code).toBe('NOT_FOUND');
    }
  });
});

describe('listCategoryChildren', () => {
  const children = (id: string, level?: number, headers: Record<string, string> = storeHeaders(STORE_A!.id)) =>
    svc.client.call.GET('/api/catalog/groups/categories/{category_id}/children', {
      params: { path: { category_id: id }, query: { level } },
      headers,
    });

  it('returns the direct children, or the descendants at an absolute level, that the store sells in', async () => {
    expect(idsOf((await children(CATEGORY.food)).body)).toEqual([CATEGORY.dairy, CATEGORY.bakery]);
    expect(idsOf((await children(CATEGORY.food, 2)).body)).toEqual([CATEGORY.milk, CATEGORY.cheese]);
    expect(idsOf((await children(CATEGORY.food, 1)).body)).toEqual([CATEGORY.dairy, CATEGORY.bakery]);
    expect((await children(CATEGORY.food, 0)).body).toEqual([]);
    expect((await children(CATEGORY.dairy, 1)).body).toEqual([]);
    expect((await children(CATEGORY.milk)).body).toEqual([]);
    expect(idsOf((await children(CATEGORY.food, 2, storeHeaders(STORE_B!.id))).body)).toEqual([CATEGORY.milk]);
  });

  it('answers 404 for an unknown category, 422 for a bad level or without a store', async () => {
    expect((await children(randomUUID())).status).toBe(404);
    expect((await invalid(`/api/catalog/groups/categories/${CATEGORY.food}/children?level=-1`)).status).toBe(422);
    expect((await invalid(`/api/catalog/groups/categories/${CATEGORY.food}/children?level=two`)).status).toBe(422);
    expect((await invalid(`/api/catalog/groups/categories/${CATEGORY.food}/children`, {})).body.code).toBe('STORE_REQUIRED');
  });
});

describe('listCategoryParents', () => {
  const parents = (id: string, level?: number) =>
    svc.client.call.GET('/api/catalog/groups/categories/{category_id}/parents', {
      params: { path: { category_id: id }, query: { level } },
      headers: {},
    });

  it('returns the ancestors root first, or the one at a level', async () => {
    const all = await parents(CATEGORY.milk);
    expect(all.status).toBe(200);
    expect(idsOf(all.body)).toEqual([CATEGORY.food, CATEGORY.dairy]);
    expect(all.body[1]).toMatchObject({ level: 1, children_count: 2 });
    expect(idsOf((await parents(CATEGORY.milk, 0)).body)).toEqual([CATEGORY.food]);
    expect((await parents(CATEGORY.milk, 2)).body).toEqual([]);
    expect((await parents(CATEGORY.food)).body).toEqual([]);
  });

  it('answers 404 for an unknown category and 422 for a bad level', async () => {
    expect((await parents(randomUUID())).status).toBe(404);
    expect((await invalid(`/api/catalog/groups/categories/${CATEGORY.milk}/parents?level=33`, {})).status).toBe(422);
  });
});
