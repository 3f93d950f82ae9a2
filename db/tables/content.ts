// Content tables of the catalog migration: banners, stories, pages, main-page titles, support
// contacts and mobile update messages. Texts and pictures exist per language (`_ru`, `_en`).
import type { Generated } from 'kysely';
import type { Timestamp } from './types.js';

export type ReferenceKind = 'product' | 'category' | 'collection' | 'url' | 'none';

export interface BannersTable {
  id: Generated<string>;
  image_ru: string;
  image_en: string;
  reference_type: ReferenceKind;
  reference_id: string | null;
  priority: Generated<number>;
  starts_at: Timestamp | null;
  ends_at: Timestamp | null;
  published_at: Timestamp;
  is_active: Generated<boolean>;
}

export interface StoriesTable {
  id: Generated<string>;
  cover_ru: string;
  cover_en: string;
  position: Generated<number>;
  starts_at: Timestamp | null;
  ends_at: Timestamp | null;
  is_active: Generated<boolean>;
  created_at: Timestamp;
}

export interface StorySlidesTable {
  id: Generated<string>;
  story_id: string;
  position: number;
  image_ru: string;
  image_en: string;
  type: ReferenceKind;
  reference_id: string | null;
}

export interface ContentPagesTable {
  id: Generated<string>;
  slug: string;
  title_ru: string;
  title_en: string;
  content_ru: string;
  content_en: string;
  position: Generated<number>;
  is_published: Generated<boolean>;
}

export interface MainPageTitlesTable {
  language: 'ru' | 'en';
  promo: string;
  own: string;
  new: string;
  childhood: string;
  fresh: string;
  own_category_id: string | null;
}

export interface SupportContactsTable {
  id: Generated<number>;
  chat_enabled_android: Generated<boolean>;
  chat_enabled_ios: Generated<boolean>;
  chat_channel_id: string | null;
  chat_android_app_key: string | null;
  chat_ios_app_key: string | null;
  support_phone: string | null;
  email: string | null;
  site_ru: string | null;
  site_en: string | null;
  updated_at: Timestamp;
}

export interface MobileUpdateMessagesTable {
  kind: 'required' | 'available';
  language: 'ru' | 'en';
  message: string;
}

export interface ContentTables {
  banners: BannersTable;
  stories: StoriesTable;
  story_slides: StorySlidesTable;
  content_pages: ContentPagesTable;
  main_page_titles: MainPageTitlesTable;
  support_contacts: SupportContactsTable;
  mobile_update_messages: MobileUpdateMessagesTable;
}
