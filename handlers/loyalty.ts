// Handlers of the Loyalty tag (/api/loaylty/..., spelled so), keyed by operationId: each reads its
// typed input and calls one use case of services/loyalty/.
import { declaredHeader, type HandlerMap, type StepsMap } from '../server/handler-types.js';
import { hasNextPage, pageWindow, type PageWindow } from '../server/http/paging.js';
import { unprocessable } from '../services/errors.js';
import {
  blockCard,
  createWallet,
  linkCard,
  listBlockReasons,
  previewCardLink,
  readWallet,
  replaceCard,
  switchAccount,
  unblockCard,
} from '../services/loyalty/cards.js';
import { getPurchase, listPurchases, listTransactions, type Page } from '../services/loyalty/history.js';
import { listPrograms, listProgramsStrict, previewDiscount } from '../services/loyalty/program.js';
import { customerIdOf } from './support/principal.js';

/** A page of a listing as the contract gives it. */
const pageBody = <T>(window: PageWindow, page: Page<T>) => ({
  items: page.items,
  count: page.count,
  has_next: hasNextPage(window, page.count),
});

export const loyaltyHandlers = {
  // POST /api/loaylty/discounts/preview/
  previewLoyaltyDiscount: async (ctx) => {
    const customerId = customerIdOf(ctx);
    // The store is named in the body or in X-Store-Id; both given, they must agree.
    const header = declaredHeader(ctx, 'x-store-id')?.trim() || null;
    const fromBody = ctx.body.store_id ?? null;
    if (fromBody && header && fromBody.toLowerCase() !== header.toLowerCase()) {
      throw unprocessable('STORE_MISMATCH', 'store_id and X-Store-Id name different stores');
    }
    const storeId = fromBody ?? header;
    if (!storeId) throw unprocessable('STORE_REQUIRED', 'Give the store in store_id or the X-Store-Id header');
    return { status: 200, body: await previewDiscount(ctx.deps, { customerId, storeId, items: ctx.body.items, lang: ctx.lang }) };
  },

  // GET /api/loaylty/programs/
  listLoyaltyPrograms: async (ctx) => ({ status: 200, body: await listPrograms(ctx.deps) }),

  // GET /api/loaylty/programs/strict/ (TEST only)
  listLoyaltyProgramsStrict: async (ctx) => ({ status: 200, body: await listProgramsStrict(ctx.deps) }),

  // GET /api/loaylty/wallet/
  getLoyaltyWallet: async (ctx) => ({ status: 200, body: await readWallet(ctx.deps, customerIdOf(ctx), ctx.lang) }),

  // POST /api/loaylty/wallet/create/
  createLoyaltyWallet: async (ctx) => ({ status: 200, body: await createWallet(ctx.deps, customerIdOf(ctx), ctx.lang) }),

  // POST /api/loaylty/wallet/accounts/switch/
  switchLoyaltyAccount: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return { status: 200, body: await switchAccount(ctx.deps, { customerId, accountId: ctx.body.account_id, lang: ctx.lang }) };
  },

  // GET /api/loaylty/wallet/block-reasons/
  listLoyaltyBlockReasons: (ctx) => ({ status: 200, body: listBlockReasons(ctx.lang) }),

  // POST /api/loaylty/wallet/block/
  blockLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const input = { customerId, cardId: ctx.body.card_id ?? null, reason: ctx.body.reason ?? null, lang: ctx.lang };
    return { status: 200, body: await blockCard(ctx.deps, input) };
  },

  // POST /api/loaylty/wallet/unblock/
  unblockLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return { status: 200, body: await unblockCard(ctx.deps, { customerId, cardId: ctx.body.card_id ?? null, lang: ctx.lang }) };
  },

  // POST /api/loaylty/wallet/link/preview/
  previewLoyaltyCardLink: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return { status: 200, body: await previewCardLink(ctx.deps, 'link', { customerId, cardNumber: ctx.body.card_number, lang: ctx.lang }) };
  },

  // POST /api/loaylty/wallet/link/
  linkLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return { status: 200, body: await linkCard(ctx.deps, 'link', { customerId, cardNumber: ctx.body.card_number, lang: ctx.lang }) };
  },

  // POST /api/loaylty/wallet/link-physical/preview/
  previewLoyaltyPhysicalCardLink: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const input = { customerId, cardNumber: ctx.body.card_number, lang: ctx.lang };
    return { status: 200, body: await previewCardLink(ctx.deps, 'physical', input) };
  },

  // POST /api/loaylty/wallet/link-physical/
  linkLoyaltyPhysicalCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return { status: 200, body: await linkCard(ctx.deps, 'physical', { customerId, cardNumber: ctx.body.card_number, lang: ctx.lang }) };
  },

  // POST /api/loaylty/wallet/replace/
  replaceLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const idempotencyKey = declaredHeader(ctx, 'idempotency-key')?.trim() || null;
    return { status: 200, body: await replaceCard(ctx.deps, { customerId, idempotencyKey, lang: ctx.lang }) };
  },

  // GET /api/loaylty/wallet/purchases/
  listLoyaltyPurchases: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const window = pageWindow(ctx.query.page, ctx.query.page_size);
    const page = await listPurchases(ctx.deps, { customerId, lang: ctx.lang, offset: window.offset, limit: window.pageSize });
    return { status: 200, body: pageBody(window, page) };
  },

  // GET /api/loaylty/wallet/purchases/{purchase_id}/
  getLoyaltyPurchase: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return { status: 200, body: await getPurchase(ctx.deps, { customerId, purchaseId: ctx.path.purchase_id, lang: ctx.lang }) };
  },

  // GET /api/loaylty/wallet/transactions/
  listLoyaltyTransactions: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const window = pageWindow(ctx.query.page, ctx.query.page_size);
    const page = await listTransactions(ctx.deps, { customerId, lang: ctx.lang, offset: window.offset, limit: window.pageSize });
    return { status: 200, body: pageBody(window, page) };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const loyaltySteps: StepsMap = {
  previewLoyaltyCardLink: { varyBy: ['Accept-Language'] },
  linkLoyaltyCard: { varyBy: ['Accept-Language'] },
  previewLoyaltyPhysicalCardLink: { varyBy: ['Accept-Language'] },
  linkLoyaltyPhysicalCard: { varyBy: ['Accept-Language'] },
  getLoyaltyWallet: { varyBy: ['Accept-Language'] },
  createLoyaltyWallet: { varyBy: ['Accept-Language'] },
  switchLoyaltyAccount: { varyBy: ['Accept-Language'] },
  listLoyaltyBlockReasons: { varyBy: ['Accept-Language'] },
  blockLoyaltyCard: { varyBy: ['Accept-Language'] },
  unblockLoyaltyCard: { varyBy: ['Accept-Language'] },
  replaceLoyaltyCard: { varyBy: ['Accept-Language'] },
  listLoyaltyPurchases: { varyBy: ['Accept-Language'] },
  getLoyaltyPurchase: { varyBy: ['Accept-Language'] },
  listLoyaltyTransactions: { varyBy: ['Accept-Language'] },
  previewLoyaltyDiscount: { varyBy: ['X-Store-Id', 'Accept-Language'] },
};
