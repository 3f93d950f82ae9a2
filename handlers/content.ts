// Handlers of the Content tag, keyed by operationId. Content does not depend on a store; texts
// and pictures follow Accept-Language.
import {
  findMainPageTitles,
  findSupportContact,
  findUpdateMessage,
  listActiveBanners,
  listActiveStories,
  listPublishedPages,
} from '../db/queries/content.js';
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { notFound } from '../services/errors.js';
import { updateKind } from '../domain/accounts/mobile-version.js';

/** Used only when the content team has not stored a message for the kind and language. */
const BUILT_IN_UPDATE_MESSAGES = {
  required: {
    ru: 'Эта версия приложения больше не поддерживается. Обновите приложение.',
    en: 'This version of the app is no longer supported. Please update the app.',
  },
  available: { ru: 'Доступна новая версия приложения.', en: 'A new version of the app is available.' },
} as const;

export const contentHandlers = {
  // GET /api/core/banners/
  getBanner: async (ctx) => {
    const [main] = await listActiveBanners(ctx.deps.db, ctx.lang, 1);
    if (!main) throw notFound('No banner is active now');
    return { status: 200, body: main };
  },

  // POST /api/core/mobile-version/check/
  checkMobileVersion: async (ctx) => {
    const { platform, version } = ctx.body;
    const kind = updateKind(version, ctx.deps.config.catalog.mobileVersions[platform]);
    const message =
      kind === 'none' ? null : ((await findUpdateMessage(ctx.deps.db, kind, ctx.lang)) ?? BUILT_IN_UPDATE_MESSAGES[kind][ctx.lang]);
    return { status: 200, body: { update_required: kind === 'required', can_update: kind !== 'none', message } };
  },

  // GET /api/core/pages/
  listPages: async (ctx) => {
    return { status: 200, body: await listPublishedPages(ctx.deps.db, ctx.lang) };
  },

  // GET /api/core/pages/main-page/products-titles
  getMainPageProductsTitles: async (ctx) => {
    const titles = await findMainPageTitles(ctx.deps.db, ctx.lang);
    if (!titles) throw notFound(`Main-page titles are not configured for language ${ctx.lang}`);
    return { status: 200, body: titles };
  },

  // GET /api/core/stories/
  listStories: async (ctx) => {
    return { status: 200, body: await listActiveStories(ctx.deps.db, ctx.lang) };
  },

  // GET /api/core/support-contact/
  getSupportContact: async (ctx) => {
    return { status: 200, body: await findSupportContact(ctx.deps.db, ctx.lang) };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const contentSteps: StepsMap = {
  getBanner: { varyBy: ['Accept-Language'] },
  checkMobileVersion: { varyBy: ['Accept-Language'] },
  listPages: { varyBy: ['Accept-Language'] },
  getMainPageProductsTitles: { varyBy: ['Accept-Language'] },
  listStories: { varyBy: ['Accept-Language'] },
  getSupportContact: { varyBy: ['Accept-Language'] },
};
