// Content operations on the demo content (db/seed/content.ts): banners, stories, pages, titles,
// support contacts and the mobile version check (versions from configuration).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCategoryId, demoProductId } from '../../db/seed/catalog.js';
import { startTestService, type TestService } from '../support/service.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  // Versions of the check: Android 2.0.0 .. 2.14.0; iOS left unconfigured.
  svc = await startTestService({
    env: {
      MOBILE_ANDROID_MIN_VERSION: '2.0.0',
      MOBILE_ANDROID_LATEST_VERSION: '2.14.0',
      MOBILE_IOS_MIN_VERSION: '',
      MOBILE_IOS_LATEST_VERSION: '',
    },
  });
});
afterAll(() => svc?.close());

type ContentPath =
  | '/api/core/banners/'
  | '/api/core/stories/'
  | '/api/core/pages/'
  | '/api/core/pages/main-page/products-titles'
  | '/api/core/support-contact/';
const get = (path: ContentPath, lang?: string) => svc.client.call.GET(path, { headers: lang ? { 'accept-language': lang } : {} });
/**
 * The answer once the service has heard of a change just committed: it keeps content until the
 * change's notification arrives, a moment after the commit (test/content/content-cache.test.ts).
 */
const afterChange = (path: ContentPath, lang?: string) => expect.poll(async () => (await get(path, lang)).body, { timeout: 5000 });

describe('getBanner', () => {
  it('returns the active banner with the highest priority, its picture in the requested language', async () => {
    const en = await get('/api/core/banners/');
    expect(en.status).toBe(200);
    // The expired and the future banners have priority 100 but are outside their windows.
    expect(en.body).toEqual({
      image: 'https://cdn.grocery.example/content/banners/dairy-week-en.webp',
      reference_type: 'category',
      reference_id: demoCategoryId('dairy'),
    });
    expect((await get('/api/core/banners/', 'ru')).body.image).toMatch(/dairy-week-ru\.webp$/);
    expect(en.headers.get('vary')).toContain('Accept-Language');
  });

  it('prefers the most recently published among equal priorities, and answers 404 when none is active', async () => {
    await svc.deps.db.updateTable('banners').set({ is_active: false }).where('priority', '=', 10).execute();
    // "coffee" (published a day ago) and "fresh" (ten days ago) both have priority 5.
    await afterChange('/api/core/banners/').toEqual({
      image: 'https://cdn.grocery.example/content/banners/coffee-en.webp',
      reference_type: 'product',
      reference_id: demoProductId('P000036'),
    });
    await svc.deps.db.updateTable('banners').set({ is_active: false }).execute();
    await afterChange('/api/core/banners/').toMatchObject({ code: 'NOT_FOUND' });
    const none = await get('/api/core/banners/');
    expect(none.status).toBe(404);
    expect(none.body.code).toBe('NOT_FOUND');
    await svc.deps.db.updateTable('banners').set({ is_active: true }).execute();
  });
});

describe('listStories', () => {
  it("lists the active stories in the content team's order with their slides", async () => {
    const r = await get('/api/core/stories/', 'ru');
    expect(r.status).toBe(200);
    expect(r.body.map((s: { image: string }) => s.image.split('/')[5])).toEqual(['kitchen', 'bakery', 'delivery']);
    expect(r.body[1].items).toEqual([
      { image: 'https://cdn.grocery.example/content/stories/bakery/1-ru.webp', type: 'category', reference_id: demoCategoryId('bakery') },
      { image: 'https://cdn.grocery.example/content/stories/bakery/2-ru.webp', type: 'product', reference_id: demoProductId('P000022') },
      { image: 'https://cdn.grocery.example/content/stories/bakery/3-ru.webp', type: 'collection', reference_id: 'new' },
    ]);
    expect(new Date(r.body[0].created_at).getTime()).toBeLessThan(Date.now());
  });

  it('leaves out stories without slides', async () => {
    await svc.deps.db
      .deleteFrom('story_slides')
      .where('story_id', 'in', svc.deps.db.selectFrom('stories').select('id').where('position', '=', 3))
      .execute();
    await afterChange('/api/core/stories/').toHaveLength(2);
  });
});

describe('listPages', () => {
  it('lists the published pages in order, in the requested language', async () => {
    const en = await get('/api/core/pages/');
    expect(en.status).toBe(200);
    expect(en.body.map((p: { title: string }) => p.title)).toEqual(['Terms of service', 'Privacy policy', 'Delivery rules', 'About us']);
    expect((await get('/api/core/pages/', 'ru')).body[0]).toEqual({
      title: 'Условия использования',
      content: '## 1. Общие положения\n\nЭти условия регулируют заказы, оформленные в приложении.',
    });
  });
});

describe('getMainPageProductsTitles', () => {
  it('returns the titles of the language and the own-production category', async () => {
    const ru = await get('/api/core/pages/main-page/products-titles', 'ru');
    expect(ru.status).toBe(200);
    expect(ru.body).toEqual({
      promo: 'Акции',
      own: 'Наша кухня',
      new: 'Новинки',
      childhood: 'Детям',
      fresh: 'Свежее',
      own_category: demoCategoryId('kitchen'),
    });
    expect((await get('/api/core/pages/main-page/products-titles')).body.promo).toBe('Promotions');
  });

  it('answers 404 when the language has no titles', async () => {
    await svc.deps.db.deleteFrom('main_page_titles').where('language', '=', 'en').execute();
    await afterChange('/api/core/pages/main-page/products-titles', 'en').toMatchObject({ code: 'NOT_FOUND' });
    const r = await get('/api/core/pages/main-page/products-titles', 'en');
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('NOT_FOUND');
  });
});

describe('getSupportContact', () => {
  it('returns every contact field, null where unset, the site in the requested language', async () => {
    const r = await get('/api/core/support-contact/', 'ru');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      chat_enabled_android: true,
      chat_enabled_ios: false,
      chat_channel_id: 'grocery-support',
      chat_android_app_key: 'ak_demo_5d0c8e1f',
      chat_ios_app_key: null,
      support_phone: '+78005553535',
      email: 'support@grocery.example',
      site: 'https://grocery.example/ru/help',
    });
    expect((await get('/api/core/support-contact/')).body.site).toBe('https://grocery.example/en/help');
  });
});

describe('checkMobileVersion', () => {
  type Check = NonNullable<operations['checkMobileVersion']['requestBody']>['content']['application/json'];
  const check = (body: Check, lang = 'en') =>
    svc.client.call.POST('/api/core/mobile-version/check/', { headers: { 'accept-language': lang }, body });
  /** Deliberately invalid: bodies the schema refuses. */
  const checkInvalid = (body: unknown) =>
    svc.client.invalid('POST', '/api/core/mobile-version/check/', { headers: { 'accept-language': 'en' }, body: body as object });

  it('requires, offers or skips the update by comparing versions part by part', async () => {
    const cases: [string, boolean, boolean][] = [
      ['1.9.9', true, true],
      ['1.10', true, true],
      ['2', false, true],
      ['2.0.0', false, true],
      ['2.9.0', false, true],
      ['2.13.99', false, true],
      ['2.14', false, false],
      ['2.14.0.0', false, false],
      ['10.0', false, false],
    ];
    for (const [version, required, can] of cases) {
      const r = await check({ platform: 'android', version });
      expect(r.status, version).toBe(200);
      expect([r.body.update_required, r.body.can_update], version).toEqual([required, can]);
    }
  });

  it('says why in the requested language, and nothing when no update is available', async () => {
    expect((await check({ platform: 'android', version: '1.0.0' }, 'ru')).body.message).toMatch(/больше не поддерживается/);
    expect((await check({ platform: 'android', version: '2.1.0' })).body.message).toBe(
      'A new version of the app is available with faster checkout.',
    );
    expect((await check({ platform: 'android', version: '3.0.0' })).body.message).toBeNull();
  });

  it('answers no update for a platform without configured versions', async () => {
    expect((await check({ platform: 'ios', version: '0.1' })).body).toEqual({ update_required: false, can_update: false, message: null });
  });

  it('judges a debug or QA build by the version its name starts with, and a name with none as needing nothing', async () => {
    const cases: [string, boolean, boolean][] = [
      ['1.9.9-debug', true, true],
      ['v2.13.0', false, true],
      ['2.13.0 (123)', false, true],
      ['2.14.0-beta', false, false],
      ['2.13.9.9.9', false, true],
      ['nightly', false, false],
      ['', false, false],
    ];
    for (const [version, required, can] of cases) {
      if (version === '') {
        expect((await checkInvalid({ platform: 'android', version })).status).toBe(422); // minLength 1
        continue;
      }
      const r = await check({ platform: 'android', version });
      expect(r.status, version).toBe(200);
      expect([r.body.update_required, r.body.can_update], version).toEqual([required, can]);
    }
  });

  it('answers 422 for an unknown platform, a missing or too long version or an unknown property; 400 for bad JSON', async () => {
    for (const body of [
      { platform: 'windows', version: '1.0.0' },
      { platform: 'ios', version: '1'.repeat(33) },
      { platform: 'ios' },
      { platform: 'ios', version: '1.0', build: '7' },
    ]) {
      const r = await checkInvalid(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
    expect((await svc.client.invalid('POST', '/api/core/mobile-version/check/', { body: '{"platform"' })).status).toBe(400);
  });
});

describe('malformed headers and bodies', () => {
  it('answers 422 for an Accept-Language longer than the contract allows, on every content read', async () => {
    for (const path of [
      '/api/core/banners/',
      '/api/core/stories/',
      '/api/core/pages/',
      '/api/core/pages/main-page/products-titles',
      '/api/core/support-contact/',
    ]) {
      const r = await svc.client.invalid('GET', path, { headers: { 'accept-language': `ru,${'x'.repeat(300)}` } });
      expect(r.status, path).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 413 for a version check body over the limit', async () => {
    const r = await svc.client.invalid('POST', '/api/core/mobile-version/check/', {
      body: { platform: 'ios', version: '1.0', pad: 'x'.repeat(svc.config.bodyLimitBytes) },
    });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
