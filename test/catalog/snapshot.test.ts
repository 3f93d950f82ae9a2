// The versioned catalog snapshot on the demo data: version, bootstrap bytes and their ETag,
// 304/404/503, gzip, the 24-hour life of a replaced version and the atomicity of a publication.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PublicationInProgressError, publishCatalogVersion } from '../../db/queries/catalog-snapshot.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const STORE = DEMO_STORES[0]!.id;
const headers = (lang: 'ru' | 'en' = 'en', store = STORE) => ({ 'x-store-id': store, 'accept-language': lang });
const version = (h: Record<string, string> = headers()) => svc.client.call.GET('/api/catalog/version', { headers: h });
const bootstrap = (v: string, h: Record<string, string> = headers()) =>
  svc.client.call.GET('/api/catalog/bootstrap/{version}', { params: { path: { version: v } }, headers: h });
const publish = () =>
  svc.deps.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((trx) => publishCatalogVersion(trx, 24, svc.deps.clock.now()));

describe('getCatalogVersion', () => {
  it('returns the published version with the ETag of its snapshot for the store and language', async () => {
    const r = await version();
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ version: expect.any(String), etag: expect.stringMatching(/^".+"$/), published_at: expect.any(String) });
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('vary')).toMatch(/X-Store-Id.*Accept-Language/);
    const ru = await version(headers('ru'));
    const other = await version(headers('en', DEMO_STORES[1]!.id));
    expect(ru.body.version).toBe(r.body.version);
    expect(new Set([r.body.etag, ru.body.etag, other.body.etag]).size).toBe(3);
  });

  it('answers 422 for a missing, unknown or malformed store', async () => {
    expect((await svc.client.invalid('GET', '/api/catalog/version')).body.code).toBe('STORE_REQUIRED');
    expect((await version({ 'x-store-id': randomUUID() })).body.code).toBe('STORE_NOT_FOUND');
    expect((await svc.client.invalid('GET', '/api/catalog/version', { headers: { 'x-store-id': 'tverskaya' } })).body.code).toBe(
      'VALIDATION_ERROR',
    );
  });
});

describe('getCatalogSnapshot', () => {
  it('serves the snapshot of the version for the store and language, with the ETag the version announced', async () => {
    const v = (await version(headers('ru'))).body;
    const r = await bootstrap(v.version, headers('ru'));
    expect(r.status).toBe(200);
    expect(r.headers.get('etag')).toBe(v.etag);
    expect(r.headers.get('vary')).toMatch(/X-Store-Id.*Accept-Language/);
    const s = r.body;
    expect(s).toMatchObject({ version: v.version, published_at: v.published_at, store_id: STORE, language: 'ru' });
    // Every product the store sells, as listing cards, all anonymous.
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM inventories i JOIN products p ON p.id = i.product_id
      WHERE i.store_id = ${STORE} AND i.is_default AND p.is_active`.execute(svc.deps.db);
    expect(s.products).toHaveLength(rows[0]!.n);
    expect(s.products.every((p: { is_favorite: boolean }) => p.is_favorite === false)).toBe(true);
    const productIds = new Set(s.products.map((p: { id: string }) => p.id));
    for (const section of ['top', 'new', 'fresh', 'discounted']) {
      expect(s.sections[section].length, section).toBeGreaterThan(0);
      expect(
        s.sections[section].every((id: string) => productIds.has(id)),
        section,
      ).toBe(true);
    }
    // The same menu, blocks, banners and titles as the live operations.
    const live = async (
      path:
        | '/api/catalog/groups/categories/menu'
        | '/api/catalog/groups/categories/main-page'
        | '/api/core/pages/main-page/products-titles'
        | '/api/core/banners/',
    ) => (await svc.client.call.GET(path, { headers: headers('ru') })).body;
    expect(s.menu_categories).toEqual(await live('/api/catalog/groups/categories/menu'));
    expect(s.main_page_categories).toEqual(await live('/api/catalog/groups/categories/main-page'));
    expect(s.titles).toEqual(await live('/api/core/pages/main-page/products-titles'));
    expect(s.banners[0]).toEqual(await live('/api/core/banners/'));
    expect(s.products[0].name).toMatch(/[а-яё]/i);
    const discounts = s.sections.discounted.map((id: string) =>
      Number(s.products.find((p: { id: string }) => p.id === id).discount_percent),
    );
    expect(discounts).toEqual([...discounts].sort((a, b) => b - a));
  });

  it('answers 304 without a body for a matching If-None-Match, in any of its forms', async () => {
    const v = (await version()).body;
    for (const inm of [v.etag, `W/${v.etag}`, `"other", ${v.etag}`, '*']) {
      const r = await bootstrap(v.version, { ...headers(), 'if-none-match': inm });
      expect(r.status, inm).toBe(304);
      expect(r.body).toBeUndefined();
      expect(r.headers.get('etag')).toBe(v.etag);
    }
    const stale = await bootstrap(v.version, { ...headers(), 'if-none-match': '"stale"' });
    expect(stale.status).toBe(200);
    // The ETag of one language does not match the snapshot of the other.
    const ru = await bootstrap(v.version, { ...headers('ru'), 'if-none-match': v.etag });
    expect(ru.status).toBe(200);
    expect(ru.body.language).toBe('ru');
  });

  it('sends the stored gzip bytes when the client accepts gzip, and plain bytes otherwise', async () => {
    const v = (await version()).body;
    const url = `${svc.url}/api/catalog/bootstrap/${v.version}`;
    const gz = await fetch(url, { headers: { ...headers(), 'accept-encoding': 'gzip' } });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    const gzBytes = Number(gz.headers.get('content-length'));
    const gzBody = await gz.json();
    const plain = await fetch(url, { headers: { ...headers(), 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    const plainBytes = Number(plain.headers.get('content-length'));
    expect(await plain.json()).toEqual(gzBody);
    expect(gzBytes).toBeLessThan(plainBytes / 4);
    expect(plain.headers.get('vary')).toMatch(/Accept-Encoding/);
  });

  it('answers 404 CATALOG_VERSION_NOT_FOUND for an unknown version, 422 for a version that is not a UUID', async () => {
    const r = await bootstrap(randomUUID());
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('CATALOG_VERSION_NOT_FOUND');
    expect((await svc.client.invalid('GET', '/api/catalog/bootstrap/latest', { headers: headers() })).body.code).toBe('VALIDATION_ERROR');
    expect((await svc.client.invalid('GET', `/api/catalog/bootstrap/${randomUUID()}`)).body.code).toBe('STORE_REQUIRED');
  });

  it('keeps serving the replaced version for 24 hours after a publication, then 404', async () => {
    const before = (await version()).body;
    const published = await publish();
    const after = (await version()).body;
    expect(after.version).toBe(published.version);
    expect(after.version).not.toBe(before.version);
    expect((await bootstrap(before.version)).status).toBe(200);
    await svc.deps.db
      .updateTable('catalog_versions')
      .set({ replaced_at: sql<Date>`now() - interval '25 hours'` })
      .where('id', '=', before.version)
      .execute();
    expect((await bootstrap(before.version)).body.code).toBe('CATALOG_VERSION_NOT_FOUND');
    expect((await bootstrap(after.version)).status).toBe(200);
  });
});

describe('publication', () => {
  it('is atomic: until it commits readers see the previous version, complete, and then the new one, complete', async () => {
    const before = (await version()).body;
    let seenDuring: string | undefined;
    const published = await svc.deps.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const result = await publishCatalogVersion(trx, 24, svc.deps.clock.now());
        // Written but not committed: the service, on its own connections, still serves the old version.
        seenDuring = (await version()).body.version;
        expect((await bootstrap(result.version)).body.code).toBe('CATALOG_VERSION_NOT_FOUND');
        return result;
      });
    expect(seenDuring).toBe(before.version);
    expect((await version()).body.version).toBe(published.version);
    for (const store of DEMO_STORES) {
      for (const lang of ['ru', 'en'] as const) {
        const v = (await version(headers(lang, store.id))).body;
        const r = await bootstrap(v.version, headers(lang, store.id));
        expect(r.status).toBe(200);
        expect(r.headers.get('etag')).toBe(v.etag);
      }
    }
  });

  it('never lets a reader see a version whose snapshot it cannot load, under parallel reads', async () => {
    let publishing = true;
    const failures: string[] = [];
    let reads = 0;
    const reader = async () => {
      while (publishing) {
        const v = await version(headers('ru', DEMO_STORES[2]!.id));
        if (v.status !== 200) failures.push(`version ${v.status}`);
        const r = await bootstrap(v.body.version, { ...headers('ru', DEMO_STORES[2]!.id), 'if-none-match': v.body.etag });
        if (r.status !== 304) failures.push(`bootstrap ${r.status} ${r.body?.code}`);
        reads++;
      }
    };
    const readers = Array.from({ length: 6 }, reader);
    for (let i = 0; i < 3; i++) await publish();
    publishing = false;
    await Promise.all(readers);
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(0);
  });

  it('refuses a second publication while one is running', async () => {
    await svc.deps.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        await publishCatalogVersion(trx, 24, svc.deps.clock.now());
        await expect(publish()).rejects.toBeInstanceOf(PublicationInProgressError);
      });
  });
});

describe('not published', () => {
  it('answers 503 CATALOG_NOT_PUBLISHED with Retry-After for a store without a snapshot, and when nothing is published', async () => {
    const current = (await version()).body.version;
    // A store opened after the last publication has no snapshot in it.
    const storeId = randomUUID();
    await svc.deps.db
      .insertInto('stores')
      .values({
        id: storeId,
        code: `NEW-${storeId.slice(0, 8)}`,
        name_ru: 'Новый',
        name_en: 'New',
        lon: 37.6,
        lat: 55.7,
        created_at: new Date(),
      })
      .execute();
    const fresh = await version(headers('en', storeId));
    expect(fresh.status).toBe(503);
    expect(fresh.body.code).toBe('CATALOG_NOT_PUBLISHED');
    expect(Number(fresh.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await bootstrap(current, headers('en', storeId))).body.code).toBe('CATALOG_NOT_PUBLISHED');

    await svc.deps.db.deleteFrom('catalog_versions').execute();
    const none = await version();
    expect(none.status).toBe(503);
    expect(none.body.code).toBe('CATALOG_NOT_PUBLISHED');
    const snapshot = await bootstrap(current);
    expect(snapshot.status).toBe(503);
    expect(snapshot.body.code).toBe('CATALOG_NOT_PUBLISHED');
    // A publication covers the new store too.
    await publish();
    expect((await version(headers('en', storeId))).status).toBe(200);
  });
});
