// Handlers of the Content tag, keyed by operationId; the use cases are services/content.ts's.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { ifNoneMatchMatches } from '../server/http/conditional.js';
import type { KeptContent } from '../services/content-cache.js';
import { activeStories, checkMobileVersion, mainBanner, mainPageTitles, publishedPages, supportContact } from '../services/content.js';

export const contentHandlers = {
  // GET /api/core/banners/
  getBanner: async (ctx) => {
    return keptReply(await mainBanner(ctx.deps, ctx.lang), ctx.headers['if-none-match']);
  },

  // POST /api/core/mobile-version/check/
  checkMobileVersion: async (ctx) => {
    return { status: 200, body: await checkMobileVersion(ctx.deps, ctx.body.platform, ctx.body.version, ctx.lang) };
  },

  // GET /api/core/pages/
  listPages: async (ctx) => {
    return keptReply(await publishedPages(ctx.deps, ctx.lang), ctx.headers['if-none-match']);
  },

  // GET /api/core/pages/main-page/products-titles
  getMainPageProductsTitles: async (ctx) => {
    return keptReply(await mainPageTitles(ctx.deps, ctx.lang), ctx.headers['if-none-match']);
  },

  // GET /api/core/stories/
  listStories: async (ctx) => {
    return keptReply(await activeStories(ctx.deps, ctx.lang), ctx.headers['if-none-match']);
  },

  // GET /api/core/support-contact/
  getSupportContact: async (ctx) => {
    return keptReply(await supportContact(ctx.deps, ctx.lang), ctx.headers['if-none-match']);
  },
} satisfies Partial<HandlerMap>;

/**
 * The reply of an answer the instance keeps (services/content-cache.ts): 304 without a body when
 * `If-None-Match` holds its ETag, else the answer; either way with the ETag and `no-cache`, so an
 * app's HTTP cache revalidates before each reuse instead of guessing how long content lasts.
 */
export function keptReply<T>(kept: KeptContent<T>, ifNoneMatch: string | undefined) {
  const headers = { ETag: kept.etag, 'Cache-Control': 'no-cache' };
  if (ifNoneMatchMatches(ifNoneMatch, kept.etag)) return { status: 304 as const, headers, body: undefined };
  return { status: 200 as const, headers, body: kept.value };
}

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const contentSteps: StepsMap = {
  getBanner: { varyBy: ['Accept-Language'] },
  checkMobileVersion: { varyBy: ['Accept-Language'] },
  listPages: { varyBy: ['Accept-Language'] },
  getMainPageProductsTitles: { varyBy: ['Accept-Language'] },
  listStories: { varyBy: ['Accept-Language'] },
  getSupportContact: { varyBy: ['Accept-Language'] },
};
