// Handlers of the Content tag, keyed by operationId; the use cases are services/content.ts's.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { activeStories, checkMobileVersion, mainBanner, mainPageTitles, publishedPages, supportContact } from '../services/content.js';

export const contentHandlers = {
  // GET /api/core/banners/
  getBanner: async (ctx) => {
    return { status: 200, body: await mainBanner(ctx.deps, ctx.lang) };
  },

  // POST /api/core/mobile-version/check/
  checkMobileVersion: async (ctx) => {
    return { status: 200, body: await checkMobileVersion(ctx.deps, ctx.body.platform, ctx.body.version, ctx.lang) };
  },

  // GET /api/core/pages/
  listPages: async (ctx) => {
    return { status: 200, body: await publishedPages(ctx.deps, ctx.lang) };
  },

  // GET /api/core/pages/main-page/products-titles
  getMainPageProductsTitles: async (ctx) => {
    return { status: 200, body: await mainPageTitles(ctx.deps, ctx.lang) };
  },

  // GET /api/core/stories/
  listStories: async (ctx) => {
    return { status: 200, body: await activeStories(ctx.deps, ctx.lang) };
  },

  // GET /api/core/support-contact/
  getSupportContact: async (ctx) => {
    return { status: 200, body: await supportContact(ctx.deps, ctx.lang) };
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
