// Content use cases: the main banner, stories, pages, main-page titles, support contacts and the
// mobile app's update check. None depends on a store; texts and pictures follow the language.
// Every answer is kept by the instance until its rows change (services/content-cache.ts) and
// comes with its ETag; a banner's or story's display window opening or closing ends a kept answer
// too. Reads go to the primary, never the read replica: a read that follows a change's
// notification must see that change, or the old rows would be kept for the whole safety TTL.
import type { Language } from '../db/queries/catalog.js';
import {
  findMainPageTitles,
  findSupportContact,
  listActiveBanners,
  listActiveStorySlides,
  listPublishedPages,
  listUpdateMessages,
  msUntilDisplayWindowChange,
} from '../db/queries/content.js';
import { updateKind } from '../domain/accounts/mobile-version.js';
import type { KeptContent } from './content-cache.js';
import type { AppDeps } from './deps.js';
import { notFound } from './errors.js';
import { storiesView, supportContactView } from './presenters/content.js';

type Deps = Pick<AppDeps, 'db' | 'clock' | 'caches'>;

/** Used only when the content team has not stored a message for the kind and language. */
const BUILT_IN_UPDATE_MESSAGES = {
  required: {
    ru: 'Эта версия приложения больше не поддерживается. Обновите приложение.',
    en: 'This version of the app is no longer supported. Please update the app.',
  },
  available: { ru: 'Доступна новая версия приложения.', en: 'A new version of the app is available.' },
} as const;

/** The banner shown now: the highest priority, then the newest. */
export async function mainBanner(deps: Deps, lang: Language) {
  const kept = await deps.caches.content.get({ name: 'getBanner', lang }, ['banners'], deps.clock, async () => {
    const [main] = await listActiveBanners(deps.db, lang, 1);
    return { value: main ?? null, changesInMs: await msUntilDisplayWindowChange(deps.db, 'banners') };
  });
  return found(kept, 'No banner is active now');
}

/** Whether the app of `version` on `platform` must or may update, and what to tell its user. */
export async function checkMobileVersion(
  deps: Deps & Pick<AppDeps, 'config'>,
  platform: keyof AppDeps['config']['catalog']['mobileVersions'],
  version: string,
  lang: Language,
) {
  const kind = updateKind(version, deps.config.catalog.mobileVersions[platform]);
  if (kind === 'none') return { update_required: false, can_update: false, message: null };
  // Both kinds in one kept answer per language: the check runs at every app start.
  const messages = await deps.caches.content.get({ name: 'checkMobileVersion', lang }, ['mobile_update_messages'], deps.clock, async () => {
    const rows = await listUpdateMessages(deps.db);
    const stored = (k: 'required' | 'available') => rows.find((r) => r.kind === k && r.language === lang)?.message ?? null;
    return { value: { required: stored('required'), available: stored('available') } };
  });
  return { update_required: kind === 'required', can_update: true, message: messages.value[kind] ?? BUILT_IN_UPDATE_MESSAGES[kind][lang] };
}

export function publishedPages(deps: Deps, lang: Language) {
  return deps.caches.content.get({ name: 'listPages', lang }, ['content_pages'], deps.clock, async () => ({
    value: await listPublishedPages(deps.db, lang),
  }));
}

export async function mainPageTitles(deps: Deps, lang: Language) {
  // The own-production category is offered only while it is active: categories count too.
  const kept = await deps.caches.content.get(
    { name: 'getMainPageProductsTitles', lang },
    ['main_page_titles', 'categories'],
    deps.clock,
    async () => ({ value: await findMainPageTitles(deps.db, lang) }),
  );
  return found(kept, `Main-page titles are not configured for language ${lang}`);
}

export function activeStories(deps: Deps, lang: Language) {
  return deps.caches.content.get({ name: 'listStories', lang }, ['stories', 'story_slides'], deps.clock, async () => ({
    value: storiesView(await listActiveStorySlides(deps.db, lang)),
    changesInMs: await msUntilDisplayWindowChange(deps.db, 'stories'),
  }));
}

export function supportContact(deps: Deps, lang: Language) {
  return deps.caches.content.get({ name: 'getSupportContact', lang }, ['support_contacts'], deps.clock, async () => ({
    value: supportContactView(await findSupportContact(deps.db), lang),
  }));
}

/** A kept answer that has a value, or 404 (the absence is kept too, so it is not read each time). */
function found<T>(kept: KeptContent<T | null>, detail: string): KeptContent<T> {
  if (kept.value === null) throw notFound(detail);
  return kept as KeptContent<T>;
}
