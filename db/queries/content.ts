// Content reads: banners, stories, pages, main-page titles, support contacts, update messages.
// Pictures and texts exist per language; the request's language picks the column.
import { sql } from 'kysely';
import type { components } from '../../generated/api.test.js';
import type { Executor } from '../executor.js';
import type { Language } from './catalog.js';

type Schemas = components['schemas'];

/** Banners inside their display window now, highest priority first, then newest. */
export async function listActiveBanners(db: Executor, lang: Language, limit?: number): Promise<Schemas['BannerSchema'][]> {
  let q = db
    .selectFrom('banners')
    .select([`image_${lang} as image`, 'reference_type', 'reference_id'])
    .where('is_active', '=', true)
    .where(sql<boolean>`(starts_at IS NULL OR starts_at <= now()) AND (ends_at IS NULL OR ends_at > now())`)
    .orderBy('priority', 'desc')
    .orderBy('published_at', 'desc')
    .orderBy('id');
  if (limit !== undefined) q = q.limit(limit);
  const rows = await q.execute();
  return rows.map((r) => ({ image: r.image, reference_type: r.reference_type, reference_id: r.reference_id }));
}

/** Stories inside their display window now that have slides, in the content team's order, then newest. */
export async function listActiveStories(db: Executor, lang: Language): Promise<Schemas['StorySchema'][]> {
  const rows = await db
    .selectFrom('stories as s')
    .innerJoin('story_slides as sl', 'sl.story_id', 's.id')
    .select([
      's.id',
      `s.cover_${lang} as cover`,
      's.created_at',
      's.position',
      `sl.image_${lang} as slide_image`,
      'sl.type',
      'sl.reference_id',
    ])
    .where('s.is_active', '=', true)
    .where(sql<boolean>`(s.starts_at IS NULL OR s.starts_at <= now()) AND (s.ends_at IS NULL OR s.ends_at > now())`)
    .orderBy('s.position')
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id')
    .orderBy('sl.position')
    .execute();
  const stories = new Map<string, Schemas['StorySchema']>();
  for (const r of rows) {
    let story = stories.get(r.id);
    if (!story) {
      story = { image: r.cover, created_at: r.created_at.toISOString(), items: [] };
      stories.set(r.id, story);
    }
    story.items.push({ image: r.slide_image, type: r.type, reference_id: r.reference_id });
  }
  return [...stories.values()];
}

export async function listPublishedPages(db: Executor, lang: Language): Promise<Schemas['PageResponse'][]> {
  return db
    .selectFrom('content_pages')
    .select([`title_${lang} as title`, `content_${lang} as content`])
    .where('is_published', '=', true)
    .orderBy('position')
    .orderBy('slug')
    .execute();
}

export async function findMainPageTitles(db: Executor, lang: Language): Promise<Schemas['MainPageProductsTitlesSchema'] | null> {
  const row = await db
    .selectFrom('main_page_titles as t')
    // A category withdrawn from the catalog is not offered as the section's target.
    .leftJoin('categories as c', (j) => j.onRef('c.id', '=', 't.own_category_id').on('c.is_active', '=', true))
    .select(['t.promo', 't.own', 't.new', 't.childhood', 't.fresh', 'c.id as own_category'])
    .where('t.language', '=', lang)
    .executeTakeFirst();
  return row ?? null;
}

export async function findSupportContact(db: Executor, lang: Language): Promise<Schemas['SupportContactSchema']> {
  const row = await db.selectFrom('support_contacts').selectAll().where('id', '=', 1).executeTakeFirst();
  return {
    chat_enabled_android: row?.chat_enabled_android ?? false,
    chat_enabled_ios: row?.chat_enabled_ios ?? false,
    chat_channel_id: row?.chat_channel_id ?? null,
    chat_android_app_key: row?.chat_android_app_key ?? null,
    chat_ios_app_key: row?.chat_ios_app_key ?? null,
    support_phone: row?.support_phone ?? null,
    email: row?.email ?? null,
    site: (lang === 'ru' ? row?.site_ru : row?.site_en) ?? null,
  };
}

export async function findUpdateMessage(db: Executor, kind: 'required' | 'available', lang: Language): Promise<string | null> {
  const row = await db
    .selectFrom('mobile_update_messages')
    .select('message')
    .where('kind', '=', kind)
    .where('language', '=', lang)
    .executeTakeFirst();
  return row?.message ?? null;
}
