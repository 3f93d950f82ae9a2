// Row -> API mappers of the Content area: stories with their slides, and the support contacts
// (the site in the reader's language).
import type { components } from '../../generated/api.test.js';
import type { Language } from '../../db/queries/catalog.js';
import type { StorySlideRow, SupportContactRow } from '../../db/queries/content.js';

type Schemas = components['schemas'];

/** The stories of their slides' rows (one row per slide, a story's slides together). */
export function storiesView(rows: readonly StorySlideRow[]): Schemas['StorySchema'][] {
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

/** The support contacts; with none stored, chat off and nothing to call. */
export function supportContactView(row: SupportContactRow | undefined, lang: Language): Schemas['SupportContactSchema'] {
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
