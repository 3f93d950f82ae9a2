// Content kept by the instance (services/content-cache.ts): answered without PostgreSQL, with a
// strong ETag per language (and store) and 304 on a matching If-None-Match, and read again when a
// change is committed through any connection (the content team's SQL, another instance): the
// triggers' NOTIFY content_changed, the listener's reconnect, the safety TTL and the display
// windows each end a kept answer.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../db/schema.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { TestClock } from '../../platform/clock.js';
import { LISTENER_APPLICATION_NAME } from '../../server/realtime/outbox-feed.js';
import { CONTENT_SAFETY_TTL_MS, ContentCache, type ContentRead } from '../../services/content-cache.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
/** A connection of its own, as the content team's SQL or another instance would have. */
let other: pg.Client;
beforeAll(async () => {
  // Stores are kept long enough that the store check of the main page's blocks reads nothing either.
  svc = await startTestService({ env: { STORE_CACHE_SECONDS: '600' } });
  other = new pg.Client({ connectionString: svc.config.databaseUrl! });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
  await svc?.close();
});

const STORE = DEMO_STORES[0]!.id;
type ContentPath =
  | '/api/core/banners/'
  | '/api/core/stories/'
  | '/api/core/pages/'
  | '/api/core/pages/main-page/products-titles'
  | '/api/core/support-contact/'
  | '/api/catalog/features/units/'
  | '/api/catalog/groups/categories/main-page';
const PATHS: ContentPath[] = [
  '/api/core/banners/',
  '/api/core/stories/',
  '/api/core/pages/',
  '/api/core/pages/main-page/products-titles',
  '/api/core/support-contact/',
  '/api/catalog/features/units/',
  '/api/catalog/groups/categories/main-page',
];
const get = (path: ContentPath, lang = 'en', ifNoneMatch?: string) =>
  svc.client.call.GET(path, {
    headers: {
      'accept-language': lang,
      ...(path.includes('/main-page') && path.startsWith('/api/catalog') ? { 'x-store-id': STORE } : {}),
      ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}),
    },
  });

/** Polls `path` until `done` holds for its body; how long that took (ms). */
async function servedWithin(path: ContentPath, done: (body: any) => boolean, lang = 'en'): Promise<number> {
  const started = performance.now();
  await expect.poll(async () => done((await get(path, lang)).body), { timeout: 5000, interval: 20 }).toBe(true);
  return performance.now() - started;
}

describe('ETag and If-None-Match', () => {
  it('answers each content read with a strong ETag per language, and 304 without a body while it holds', async () => {
    for (const path of PATHS) {
      const en = await get(path, 'en');
      const ru = await get(path, 'ru');
      expect([path, en.status, ru.status]).toEqual([path, 200, 200]);
      const etag = en.headers.get('etag')!;
      expect(etag, path).toMatch(/^"en-[A-Za-z0-9_-]+"$/); // strong: no W/
      expect(ru.headers.get('etag'), path).toMatch(/^"ru-/);
      expect(en.headers.get('cache-control'), path).toBe('no-cache');
      expect(en.headers.get('vary'), path).toContain('Accept-Language');

      const again = await get(path, 'en', etag);
      expect([path, again.status, again.text]).toEqual([path, 304, '']);
      expect(again.headers.get('etag'), path).toBe(etag);
      expect(again.headers.get('vary'), path).toContain('Accept-Language');
      // Another language's tag does not hold for this one.
      expect((await get(path, 'en', ru.headers.get('etag')!)).status, path).toBe(200);
    }
  });

  it('differs by store for the main page blocks, and matches the forms If-None-Match may take', async () => {
    const a = await get('/api/catalog/groups/categories/main-page');
    const b = await svc.client.call.GET('/api/catalog/groups/categories/main-page', { headers: { 'x-store-id': DEMO_STORES[1]!.id } });
    expect(b.headers.get('etag')).not.toBe(a.headers.get('etag'));
    const etag = a.headers.get('etag')!;
    for (const header of [`W/${etag}`, `"other", ${etag}`, '*']) {
      expect((await get('/api/catalog/groups/categories/main-page', 'en', header)).status, header).toBe(304);
    }
    expect((await get('/api/catalog/groups/categories/main-page', 'en', '"other"')).status).toBe(200);
  });

  it('gives two reads of the same rows the same tag (another instance answers the revalidation alike)', async () => {
    const first = (await get('/api/core/pages/', 'ru')).headers.get('etag');
    svc.deps.caches.content.changed(null);
    expect((await get('/api/core/pages/', 'ru')).headers.get('etag')).toBe(first);
  });
});

describe('kept in memory', () => {
  /** Reads through a Kysely whose pool counts every connection it hands out (each query takes one). */
  function countingDb() {
    let taken = 0;
    const pool = svc.deps.pool;
    const counted = new Kysely<DB>({
      dialect: new PostgresDialect({
        pool: {
          connect: () => {
            taken++;
            return pool.connect();
          },
          end: async () => {},
          options: pool.options,
        },
      }),
    });
    return { db: counted, taken: () => taken };
  }

  it('answers a kept read without touching the database', async () => {
    for (const path of PATHS) await get(path); // kept now
    const counting = countingDb();
    const { db, readDb } = svc.deps;
    Object.assign(svc.deps, { db: counting.db, readDb: counting.db });
    try {
      for (let i = 0; i < 5; i++) for (const path of PATHS) expect((await get(path)).status, path).toBe(200);
      expect(counting.taken()).toBe(0);
      // The same reads once nothing is kept do go to the database: the count can fail.
      svc.deps.caches.content.changed(null);
      for (const path of PATHS) await get(path);
      expect(counting.taken()).toBeGreaterThanOrEqual(PATHS.length);
    } finally {
      Object.assign(svc.deps, { db, readDb });
    }
  });
});

describe('changes', () => {
  it('serves a change committed through another connection within a moment, with a new ETag', async () => {
    const before = await get('/api/core/support-contact/', 'ru');
    expect(before.body.support_phone).toBe('+78005553535');
    await other.query(`UPDATE support_contacts SET support_phone = '+78005550101', site_ru = 'https://grocery.example/ru/support'`);
    const ms = await servedWithin('/api/core/support-contact/', (b) => b.support_phone === '+78005550101', 'ru');
    expect(ms).toBeLessThan(3000);
    const after = await get('/api/core/support-contact/', 'ru', before.headers.get('etag')!);
    expect(after.status).toBe(200); // the old tag no longer holds
    expect(after.body.site).toBe('https://grocery.example/ru/support');
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'));
  });

  it('serves changes of units, pages, titles, stories, the main page blocks and update messages alike', async () => {
    const blocks = (await get('/api/catalog/groups/categories/main-page')).body as { id: string }[];
    expect(blocks.length).toBeGreaterThan(0);
    const cases: [string, ContentPath | null, (body: any) => boolean, () => Promise<unknown>][] = [
      [
        `UPDATE measurement_units SET full_name_en = full_name_en || ' (renamed)'`,
        '/api/catalog/features/units/',
        (b: { full_name: string }[]) => b.every((u) => u.full_name.endsWith('(renamed)')),
        () => Promise.resolve(),
      ],
      [
        `UPDATE content_pages SET title_en = 'Renamed' WHERE position = (SELECT min(position) FROM content_pages)`,
        '/api/core/pages/',
        (b: { title: string }[]) => b[0]?.title === 'Renamed',
        () => Promise.resolve(),
      ],
      [
        `UPDATE main_page_titles SET promo = 'Deals' WHERE language = 'en'`,
        '/api/core/pages/main-page/products-titles',
        (b) => b.promo === 'Deals',
        () => Promise.resolve(),
      ],
      [`UPDATE stories SET is_active = false`, '/api/core/stories/', (b: unknown[]) => b.length === 0, () => Promise.resolve()],
      [
        `UPDATE categories SET main_page_position = NULL, main_page_layout = NULL WHERE id = '${blocks[0]!.id}'`,
        '/api/catalog/groups/categories/main-page',
        (b: { id: string }[]) => b.length === blocks.length - 1 && !b.some((c) => c.id === blocks[0]!.id),
        () => Promise.resolve(),
      ],
      [
        `UPDATE mobile_update_messages SET message = 'Update now, please.' WHERE kind = 'required' AND language = 'en'`,
        null,
        () => true,
        () =>
          expect
            .poll(
              async () =>
                (
                  await svc.client.call.POST('/api/core/mobile-version/check/', {
                    headers: { 'accept-language': 'en' },
                    body: { platform: 'android', version: '0.1.0' },
                  })
                ).body.message,
              { timeout: 5000, interval: 20 },
            )
            .toBe('Update now, please.'),
      ],
    ];
    // Everything kept first (the version check's messages too), then each change.
    await svc.client.call.POST('/api/core/mobile-version/check/', {
      headers: { 'accept-language': 'en' },
      body: { platform: 'android', version: '0.1.0' },
    });
    for (const [, path] of cases) if (path) await get(path);
    for (const [statement, path, done, check] of cases) {
      await other.query(statement);
      if (path) expect(await servedWithin(path, done), statement).toBeLessThan(3000);
      await check();
    }
  });

  it('heals a change whose notification was missed within the safety TTL', async () => {
    const before = (await get('/api/core/support-contact/')).body.email;
    // The trigger off for this one statement: as if the notification had been lost.
    await other.query('BEGIN');
    await other.query('ALTER TABLE support_contacts DISABLE TRIGGER support_contacts_content_changed');
    await other.query(`UPDATE support_contacts SET email = 'help@grocery.example'`);
    await other.query('ALTER TABLE support_contacts ENABLE TRIGGER support_contacts_content_changed');
    await other.query('COMMIT');
    await new Promise((r) => setTimeout(r, 300));
    expect((await get('/api/core/support-contact/')).body.email).toBe(before);
    svc.clock.advance(CONTENT_SAFETY_TTL_MS + 1);
    expect((await get('/api/core/support-contact/')).body.email).toBe('help@grocery.example');
  });

  it('reads everything again once its listening connection is back (notifications sent meanwhile are lost)', async () => {
    const before = (await get('/api/core/support-contact/')).body.chat_channel_id;
    await other.query('BEGIN');
    await other.query('ALTER TABLE support_contacts DISABLE TRIGGER support_contacts_content_changed');
    await other.query(`UPDATE support_contacts SET chat_channel_id = 'support-2'`);
    await other.query('ALTER TABLE support_contacts ENABLE TRIGGER support_contacts_content_changed');
    await other.query('COMMIT');
    expect((await get('/api/core/support-contact/')).body.chat_channel_id).toBe(before);
    await other.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()',
      [LISTENER_APPLICATION_NAME],
    );
    expect(await servedWithin('/api/core/support-contact/', (b) => b.chat_channel_id === 'support-2')).toBeLessThan(5000);
  });

  it('shows a banner when its display window opens, with no statement to announce it', async () => {
    const { rows } = await other.query<{ id: string }>(
      `INSERT INTO banners (image_ru, image_en, reference_type, priority, starts_at)
       VALUES ('https://cdn.grocery.example/content/banners/soon-ru.webp', 'https://cdn.grocery.example/content/banners/soon-en.webp',
               'none', 1000, now() + interval '2500 milliseconds') RETURNING id`,
    );
    try {
      await expect.poll(async () => (await get('/api/core/banners/')).status, { timeout: 5000 }).toBe(200);
      expect((await get('/api/core/banners/')).body.image).not.toMatch(/soon-en/); // kept, not open yet
      expect(await servedWithin('/api/core/banners/', (b) => /soon-en/.test(b.image ?? ''))).toBeLessThan(5000);
    } finally {
      await other.query('DELETE FROM banners WHERE id = $1', [rows[0]!.id]);
    }
  });
});

describe('ContentCache', () => {
  const KEY = { name: 'op', lang: 'en' as const };
  /** A read that answers when the test says so. */
  function deferredRead<T>() {
    let answer!: (v: ContentRead<T>) => void;
    let calls = 0;
    const read = () => {
      calls++;
      return new Promise<ContentRead<T>>((resolve) => (answer = resolve));
    };
    return { read, answer: (v: T) => answer({ value: v }), calls: () => calls };
  }

  it('reads once for requests that come together, and keeps the answer', async () => {
    const cache = new ContentCache();
    const clock = new TestClock();
    const d = deferredRead<{ n: number }>();
    const a = cache.get(KEY, ['support_contacts'], clock, d.read);
    const b = cache.get(KEY, ['support_contacts'], clock, d.read);
    d.answer({ n: 1 });
    expect((await a).value).toEqual({ n: 1 });
    expect(await b).toBe(await a);
    expect((await cache.get(KEY, ['support_contacts'], clock, d.read)).value).toEqual({ n: 1 });
    expect(d.calls()).toBe(1);
  });

  it('does not keep a read that a change overtook, and drops only what the changed table fed', async () => {
    const cache = new ContentCache();
    const clock = new TestClock();
    const d = deferredRead<{ n: number }>();
    const other = deferredRead<{ n: number }>();
    const pending = cache.get(KEY, ['support_contacts'], clock, d.read);
    const unrelated = cache.get({ ...KEY, name: 'units' }, ['measurement_units'], clock, other.read);
    other.answer({ n: 7 });
    await unrelated;
    cache.changed('support_contacts'); // committed while the read was under way
    d.answer({ n: 1 });
    expect((await pending).value).toEqual({ n: 1 }); // answered to whoever asked before the change...
    const fresh = cache.get(KEY, ['support_contacts'], clock, d.read); // ...but not kept
    d.answer({ n: 2 });
    expect((await fresh).value).toEqual({ n: 2 });
    expect(d.calls()).toBe(2);
    expect((await cache.get({ ...KEY, name: 'units' }, ['measurement_units'], clock, other.read)).value).toEqual({ n: 7 });
    expect(other.calls()).toBe(1);
  });

  it('keeps nothing past the safety TTL or the moment the read says its answer changes, and no failed read', async () => {
    const cache = new ContentCache();
    const clock = new TestClock();
    clock.set(Date.UTC(2026, 11, 3));
    let n = 0;
    const read = () => Promise.resolve({ value: { n: ++n }, changesInMs: n === 2 ? 1000 : null });
    await cache.get(KEY, ['banners'], clock, read);
    clock.advance(CONTENT_SAFETY_TTL_MS - 1);
    expect((await cache.get(KEY, ['banners'], clock, read)).value).toEqual({ n: 1 });
    clock.advance(1);
    expect((await cache.get(KEY, ['banners'], clock, read)).value).toEqual({ n: 2 });
    clock.advance(1000);
    expect((await cache.get(KEY, ['banners'], clock, read)).value).toEqual({ n: 3 });
    const failing = () => Promise.reject(new Error('database away'));
    await expect(cache.get({ ...KEY, name: 'x' }, ['banners'], clock, failing)).rejects.toThrow('database away');
    expect((await cache.get({ ...KEY, name: 'x' }, ['banners'], clock, read)).value).toEqual({ n: 4 });
  });
});
