// Content reads: banners, stories, pages, main-page titles, support contacts, update messages.
// Pictures and texts exist per language; the request's language picks the column. Rows out;
// services/presenters/content.ts gives stories and the support contact their API shape (banners,
// pages and titles are selected in it already, and the catalog snapshot stores them so).
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import type { Language } from './catalog.js';

/**
 * The channel a statement changing content rows notifies, with the table's name as payload
 * (the triggers of migration 2026_12_03_1101_content_changes; instances drop what they kept).
 */
export const CONTENT_CHANGED_CHANNEL = 'content_changed';

/** Banners inside their display window now, highest priority first, then newest. */
export function listActiveBanners(db: Executor, lang: Language, limit?: number) {
  let q = db
    .selectFrom('banners')
    .select([`image_${lang} as image`, 'reference_type', 'reference_id'])
    .where('is_active', '=', true)
    .where(sql<boolean>`(starts_at IS NULL OR starts_at <= now()) AND (ends_at IS NULL OR ends_at > now())`)
    .orderBy('priority', 'desc')
    .orderBy('published_at', 'desc')
    .orderBy('id');
  if (limit !== undefined) q = q.limit(limit);
  return q.execute();
}

/**
 * The slides of the stories inside their display window now (a story without slides has no row),
 * stories in the content team's order, then newest; each story's slides in their order.
 */
export function listActiveStorySlides(db: Executor, lang: Language) {
  return db
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
}

export type StorySlideRow = Awaited<ReturnType<typeof listActiveStorySlides>>[number];

/**
 * Milliseconds until the next start or end of an active banner's or story's display window, or
 * null when none is ahead: an answer kept from the rows changes then without any statement.
 */
export async function msUntilDisplayWindowChange(db: Executor, table: 'banners' | 'stories'): Promise<number | null> {
  const { rows } = await sql<{ ms: number | null }>`
    SELECT ceil(extract(epoch FROM min(t) - now()) * 1000)::float8 AS ms
    FROM ${sql.table(table)}, LATERAL (VALUES (starts_at), (ends_at)) AS w(t)
    WHERE is_active AND t > now()`.execute(db);
  return rows[0]?.ms ?? null;
}

export function listPublishedPages(db: Executor, lang: Language) {
  return db
    .selectFrom('content_pages')
    .select([`title_${lang} as title`, `content_${lang} as content`])
    .where('is_published', '=', true)
    .orderBy('position')
    .orderBy('slug')
    .execute();
}

export async function findMainPageTitles(db: Executor, lang: Language) {
  const row = await db
    .selectFrom('main_page_titles as t')
    // A category withdrawn from the catalog is not offered as the section's target.
    .leftJoin('categories as c', (j) => j.onRef('c.id', '=', 't.own_category_id').on('c.is_active', '=', true))
    .select(['t.promo', 't.own', 't.new', 't.childhood', 't.fresh', 'c.id as own_category'])
    .where('t.language', '=', lang)
    .executeTakeFirst();
  return row ?? null;
}

/** The one row of support contacts, or undefined while none is stored. */
export function findSupportContact(db: Executor) {
  return db.selectFrom('support_contacts').selectAll().where('id', '=', 1).executeTakeFirst();
}

export type SupportContactRow = NonNullable<Awaited<ReturnType<typeof findSupportContact>>>;

/** Every stored update message (a handful: one per kind and language). */
export function listUpdateMessages(db: Executor) {
  return db.selectFrom('mobile_update_messages').select(['kind', 'language', 'message']).execute();
}
