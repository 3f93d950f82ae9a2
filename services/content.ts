// Content use cases: the main banner, stories, pages, main-page titles, support contacts and the
// mobile app's update check. None depends on a store; texts and pictures follow the language.
import type { Language } from '../db/queries/catalog.js';
import {
  findMainPageTitles,
  findSupportContact,
  findUpdateMessage,
  listActiveBanners,
  listActiveStorySlides,
  listPublishedPages,
} from '../db/queries/content.js';
import { updateKind } from '../domain/accounts/mobile-version.js';
import type { AppDeps } from './deps.js';
import { notFound } from './errors.js';
import { storiesView, supportContactView } from './presenters/content.js';

type Deps = Pick<AppDeps, 'db'>;

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
  const [main] = await listActiveBanners(deps.db, lang, 1);
  if (!main) throw notFound('No banner is active now');
  return main;
}

/** Whether the app of `version` on `platform` must or may update, and what to tell its user. */
export async function checkMobileVersion(
  deps: Pick<AppDeps, 'db' | 'config'>,
  platform: keyof AppDeps['config']['catalog']['mobileVersions'],
  version: string,
  lang: Language,
) {
  const kind = updateKind(version, deps.config.catalog.mobileVersions[platform]);
  const message = kind === 'none' ? null : ((await findUpdateMessage(deps.db, kind, lang)) ?? BUILT_IN_UPDATE_MESSAGES[kind][lang]);
  return { update_required: kind === 'required', can_update: kind !== 'none', message };
}

export const publishedPages = (deps: Deps, lang: Language) => listPublishedPages(deps.db, lang);

export async function mainPageTitles(deps: Deps, lang: Language) {
  const titles = await findMainPageTitles(deps.db, lang);
  if (!titles) throw notFound(`Main-page titles are not configured for language ${lang}`);
  return titles;
}

export async function activeStories(deps: Deps, lang: Language) {
  return storiesView(await listActiveStorySlides(deps.db, lang));
}

export async function supportContact(deps: Deps, lang: Language) {
  return supportContactView(await findSupportContact(deps.db), lang);
}
