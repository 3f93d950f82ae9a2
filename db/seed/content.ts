// Demo content: banners, stories, pages, main-page titles, support contacts and update messages,
// all rows an editor can change in the database. Display windows are relative to the seeding
// time, so the demo shows active, expired and future items whenever it is seeded.
import type { Transaction } from 'kysely';
import type { DB } from '../schema.js';
import { demoCategoryId, demoProductId } from './catalog.js';
import { stableUuid } from './ids.js';

const CDN = 'https://cdn.grocery.example/content';
const DAY = 24 * 3600_000;

/** The demo's support contacts: the one row getSupportContact reads. */
export const DEMO_SUPPORT_CONTACT = {
  id: 1,
  chat_enabled_android: true,
  chat_enabled_ios: false,
  chat_channel_id: 'grocery-support',
  chat_android_app_key: 'ak_demo_5d0c8e1f',
  chat_ios_app_key: null,
  support_phone: '+78005553535',
  email: 'support@grocery.example',
  site_ru: 'https://grocery.example/ru/help',
  site_en: 'https://grocery.example/en/help',
};

export async function seedContent(trx: Transaction<DB>, now: Date): Promise<void> {
  const at = (days: number) => new Date(now.getTime() + days * DAY);
  const banner = (name: string) => ({ image_ru: `${CDN}/banners/${name}-ru.webp`, image_en: `${CDN}/banners/${name}-en.webp` });
  await trx
    .insertInto('banners')
    .values([
      {
        id: stableUuid('banner:dairy-week'),
        ...banner('dairy-week'),
        reference_type: 'category',
        reference_id: demoCategoryId('dairy'),
        priority: 10,
        starts_at: at(-3),
        ends_at: at(30),
        published_at: at(-3),
      },
      {
        id: stableUuid('banner:fresh'),
        ...banner('fresh'),
        reference_type: 'collection',
        reference_id: 'fresh',
        priority: 5,
        starts_at: null,
        ends_at: null,
        published_at: at(-10),
      },
      {
        id: stableUuid('banner:coffee'),
        ...banner('coffee'),
        reference_type: 'product',
        reference_id: demoProductId('P000036'),
        priority: 5,
        starts_at: at(-1),
        ends_at: null,
        published_at: at(-1),
      },
      {
        id: stableUuid('banner:app'),
        ...banner('app'),
        reference_type: 'url',
        reference_id: 'https://grocery.example/app',
        priority: 1,
        starts_at: null,
        ends_at: null,
        published_at: at(-20),
      },
      // Outside their windows: never shown now.
      {
        id: stableUuid('banner:new-year'),
        ...banner('new-year'),
        reference_type: 'none',
        reference_id: null,
        priority: 100,
        starts_at: at(-60),
        ends_at: at(-30),
        published_at: at(-60),
      },
      {
        id: stableUuid('banner:summer'),
        ...banner('summer'),
        reference_type: 'none',
        reference_id: null,
        priority: 100,
        starts_at: at(20),
        ends_at: null,
        published_at: at(-1),
      },
    ])
    .execute();

  const stories = [
    {
      key: 'kitchen',
      position: 1,
      created: at(-2),
      slides: [
        { type: 'none' as const, reference_id: null },
        { type: 'category' as const, reference_id: demoCategoryId('kitchen') },
      ],
    },
    {
      key: 'bakery',
      position: 2,
      created: at(-5),
      slides: [
        { type: 'category' as const, reference_id: demoCategoryId('bakery') },
        { type: 'product' as const, reference_id: demoProductId('P000022') },
        { type: 'collection' as const, reference_id: 'new' },
      ],
    },
    { key: 'delivery', position: 3, created: at(-8), slides: [{ type: 'url' as const, reference_id: 'https://grocery.example/delivery' }] },
  ];
  for (const s of stories) {
    const id = stableUuid(`story:${s.key}`);
    await trx
      .insertInto('stories')
      .values({
        id,
        cover_ru: `${CDN}/stories/${s.key}/cover-ru.webp`,
        cover_en: `${CDN}/stories/${s.key}/cover-en.webp`,
        position: s.position,
        created_at: s.created,
      })
      .execute();
    await trx
      .insertInto('story_slides')
      .values(
        s.slides.map((slide, i) => ({
          id: stableUuid(`story:${s.key}:${i + 1}`),
          story_id: id,
          position: i + 1,
          image_ru: `${CDN}/stories/${s.key}/${i + 1}-ru.webp`,
          image_en: `${CDN}/stories/${s.key}/${i + 1}-en.webp`,
          ...slide,
        })),
      )
      .execute();
  }
  // An expired story: never listed.
  await trx
    .insertInto('stories')
    .values({
      id: stableUuid('story:winter'),
      cover_ru: `${CDN}/stories/winter/cover-ru.webp`,
      cover_en: `${CDN}/stories/winter/cover-en.webp`,
      position: 0,
      starts_at: at(-90),
      ends_at: at(-60),
      created_at: at(-90),
    })
    .execute();
  await trx
    .insertInto('story_slides')
    .values({
      id: stableUuid('story:winter:1'),
      story_id: stableUuid('story:winter'),
      position: 1,
      image_ru: `${CDN}/stories/winter/1-ru.webp`,
      image_en: `${CDN}/stories/winter/1-en.webp`,
      type: 'none',
      reference_id: null,
    })
    .execute();

  await trx
    .insertInto('content_pages')
    .values([
      {
        slug: 'terms',
        position: 1,
        title_ru: 'Условия использования',
        title_en: 'Terms of service',
        content_ru: '## 1. Общие положения\n\nЭти условия регулируют заказы, оформленные в приложении.',
        content_en: '## 1. General\n\nThese terms govern orders placed in the app.',
      },
      {
        slug: 'privacy',
        position: 2,
        title_ru: 'Политика конфиденциальности',
        title_en: 'Privacy policy',
        content_ru: '## Какие данные мы храним\n\nТелефон, адреса доставки и историю заказов.',
        content_en: '## What we keep\n\nYour phone, delivery addresses and order history.',
      },
      {
        slug: 'delivery',
        position: 3,
        title_ru: 'Правила доставки',
        title_en: 'Delivery rules',
        content_ru: '- Доставка с 8:00 до 23:00\n- Бесплатно от 1500 ₽',
        content_en: '- Delivery from 8:00 to 23:00\n- Free from 1,500 RUB',
      },
      {
        slug: 'about',
        position: 4,
        title_ru: 'О компании',
        title_en: 'About us',
        content_ru: 'Сеть магазинов у дома с собственной кухней и пекарней.',
        content_en: 'A chain of neighbourhood stores with its own kitchen and bakery.',
      },
      {
        slug: 'draft-loyalty',
        position: 5,
        is_published: false,
        title_ru: 'Программа лояльности',
        title_en: 'Loyalty programme',
        content_ru: 'Черновик',
        content_en: 'Draft',
      },
    ])
    .execute();

  await trx
    .insertInto('main_page_titles')
    .values([
      {
        language: 'ru',
        promo: 'Акции',
        own: 'Наша кухня',
        new: 'Новинки',
        childhood: 'Детям',
        fresh: 'Свежее',
        own_category_id: demoCategoryId('kitchen'),
      },
      {
        language: 'en',
        promo: 'Promotions',
        own: 'Our kitchen',
        new: 'New',
        childhood: 'For kids',
        fresh: 'Fresh',
        own_category_id: demoCategoryId('kitchen'),
      },
    ])
    .execute();

  await trx.insertInto('support_contacts').values(DEMO_SUPPORT_CONTACT).execute();

  await trx
    .insertInto('mobile_update_messages')
    .values([
      {
        kind: 'required',
        language: 'ru',
        message: 'Эта версия приложения больше не поддерживается. Обновите приложение, чтобы продолжить.',
      },
      { kind: 'required', language: 'en', message: 'This version of the app is no longer supported. Update the app to continue.' },
      { kind: 'available', language: 'ru', message: 'Доступна новая версия приложения с более быстрым оформлением заказа.' },
      { kind: 'available', language: 'en', message: 'A new version of the app is available with faster checkout.' },
    ])
    .execute();
}
