// Handlers of the Loyalty tag (/api/loaylty/..., spelled so), keyed by operationId. The wallet is
// this service's record kept in step with the loyalty provider (server/providers/loyalty); reads
// never wait for the provider unless the contract says so, card commands call it synchronously
// while holding the customer's loyalty lock (so commands on one wallet are serialized).
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import type { components } from '../generated/api.test.js';
import {
  cartLineFacts,
  customerPhone,
  enqueueJob,
  findMirroredPurchase,
  findOnlinePurchase,
  findWallet,
  hasQueuedSync,
  insertWalletIfAbsent,
  listPurchasePage,
  localTransactionPage,
  lockCustomerLoyalty,
  mirrorTransactions,
  orderLines,
  orderNumbers,
  replacePurchaseMirror,
  storePurchaseDetail,
  updateWallet,
  type PurchaseRow,
  type TransactionRow,
  type WalletRow,
} from '../db/queries/loyalty.js';
import type { Executor } from '../db/executor.js';
import type { DB } from '../db/schema.js';
import type { StoredPosition } from '../db/tables/loyalty.js';
import { loadItems } from '../db/queries/picking/items.js';
import { findLatestSessionOfOrder } from '../db/queries/picking/sessions.js';
import { toPickingResult } from '../services/presenters/picking.js';
import type { ResultPosition } from '../domain/picking/result.js';
import { conflict, notFound, unauthorized, unprocessable } from '../services/errors.js';
import { fingerprintOf, withIdempotency } from '../services/idempotency.js';
import { LoyaltyProviderError, type ProviderProgram } from '../platform/providers/loyalty/index.js';
import { declaredHeader, type RequestContext } from '../server/handler-types.js';
import type { OperationId } from '../generated/operations.js';
import { parseRequestedQuantity, quantityUnit } from '../domain/catalog/availability.js';
import { formatDecimal, normalizeDecimal, parseDecimal } from '../domain/money/decimal.js';
import { formatMoney, previewCart } from '../domain/loyalty/accrual.js';
import { BLOCK_REASONS, baseAccrualName, linkPreviewMessage, transactionDescription, type Lang } from '../domain/texts/loyalty.js';
import { decideCardLink, maskCardNumber, normalizeCardNumber, unblockable, type LinkMode } from '../domain/loyalty/wallet.js';
import { hasNextPage, pageWindow } from '../server/http/paging.js';
import { assertUnderLimit, recordRateEvent } from '../services/limits.js';
import {
  applyCommand,
  cardRefusal,
  isLinked,
  memberOf,
  providerFailure,
  providerUnavailable,
  walletBody,
  wrapperBody,
} from '../services/loyalty.js';
import { customerIdOf } from './support/principal.js';
import { findActiveStoreCached } from '../services/stores.js';

type Schemas = components['schemas'];
type Ctx<K extends OperationId> = RequestContext<K>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A failed re-sync is not retried by reads sooner than this. */
const RESYNC_AFTER_ERROR_SECONDS = 60;

const walletNotFound = () => notFound('You do not have a loyalty card yet', 'WALLET_NOT_FOUND');
const walletNotLinked = () => conflict('WALLET_NOT_LINKED', 'The loyalty card is not set up yet; wait until the wallet is ready');
const syncInProgress = () => conflict('WALLET_SYNC_IN_PROGRESS', 'The loyalty card is being set up; re-read the wallet');

/** Runs `work` holding the customer's loyalty lock, in one transaction. */
function underLock<T>(ctx: Ctx<OperationId>, customerId: string, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return ctx.deps.db.transaction().execute(async (trx) => {
    await lockCustomerLoyalty(trx, customerId);
    return work(trx);
  });
}

async function requireWallet(trx: Executor, customerId: string): Promise<WalletRow> {
  const wallet = await findWallet(trx, customerId);
  if (!wallet) throw walletNotFound();
  return wallet;
}

/** Counts one card look-up against the customer's budget (10 in 10 minutes by default); 429 past it. */
async function countCardLookup(ctx: Ctx<OperationId>, customerId: string): Promise<void> {
  const { cardLookupsPerWindow, cardLookupWindowSeconds } = ctx.deps.config.loyalty;
  const subject = `loyalty-card-lookup:${customerId}`;
  // Its own committed transaction: the look-up counts even when the command then fails.
  await ctx.deps.db.transaction().execute(async (trx) => {
    await lockCustomerLoyalty(trx, customerId);
    await assertUnderLimit(
      trx,
      subject,
      cardLookupsPerWindow,
      cardLookupWindowSeconds,
      {
        code: 'RATE_LIMITED',
        detail: 'Too many card look-ups; try again later',
      },
      ctx.deps.clock.now(),
    );
    await recordRateEvent(trx, subject);
  });
}

function cardNumberOf(raw: string): string {
  const digits = normalizeCardNumber(raw);
  if (!digits) throw unprocessable('CARD_NUMBER_INVALID', 'A card number has 6 to 19 digits');
  return digits;
}

async function phoneOf(ctx: Ctx<OperationId>, customerId: string): Promise<string> {
  const phone = await customerPhone(ctx.deps.db, customerId);
  if (!phone) throw unauthorized();
  return phone;
}

/** What the provider says about a card number, seen from the caller. */
async function lookUp(ctx: Ctx<OperationId>, wallet: WalletRow | undefined, phone: string, number: string) {
  const { provider } = ctx.deps.loyalty;
  try {
    const callerId = wallet?.provider_customer_id ?? (await provider.findCustomerId(phone));
    const card = await provider.lookupCard(number);
    const holder: 'caller' | 'other' | 'none' =
      !card || card.holder_id === null ? 'none' : card.holder_id === callerId ? 'caller' : 'other';
    return { card, facts: card ? { holder, issued: card.issued, isBlocked: card.is_blocked } : null };
  } catch (err) {
    throw providerFailure(err);
  }
}

async function previewLink(ctx: Ctx<'previewLoyaltyCardLink' | 'previewLoyaltyPhysicalCardLink'>, mode: LinkMode) {
  const customerId = customerIdOf(ctx);
  const number = cardNumberOf(ctx.body.card_number);
  await countCardLookup(ctx, customerId);
  const wallet = await findWallet(ctx.deps.db, customerId);
  const { card, facts } = await lookUp(ctx, wallet, await phoneOf(ctx, customerId), number);
  const d = decideCardLink(facts, mode, wallet?.status === 'pending');
  // Another customer's data is never shown: the balance only of the caller's or an unregistered card.
  const showsBalance = card !== null && (d.ownerMatch === true || card.holder_id === null);
  const activeBalance = wallet?.accounts.find((a) => a.id === wallet.active_account_id)?.balance ?? '0';
  const transfer = mode === 'physical' && d.canLink ? normalizeDecimal(wallet && isLinked(wallet) ? activeBalance : '0', 2) : null;
  return {
    status: 200 as const,
    body: {
      status: d.status,
      can_link: d.canLink,
      reason_code: d.reasonCode,
      card_number_masked: maskCardNumber(number),
      owner_match: d.ownerMatch,
      is_virtual: card?.is_virtual ?? null,
      card_balance: showsBalance ? normalizeDecimal(card.balance, 2) : null,
      transfer_amount: transfer,
      message: linkPreviewMessage(d.status, d.canLink, d.reasonCode, ctx.lang, transfer),
    },
  };
}

async function link(ctx: Ctx<'linkLoyaltyCard' | 'linkLoyaltyPhysicalCard'>, mode: LinkMode) {
  const customerId = customerIdOf(ctx);
  const number = cardNumberOf(ctx.body.card_number);
  await countCardLookup(ctx, customerId);
  const phone = await phoneOf(ctx, customerId);
  return underLock(ctx, customerId, async (trx) => {
    const wallet = (await findWallet(trx, customerId)) ?? null;
    if (wallet?.status === 'pending') throw syncInProgress();
    const { card, facts } = await lookUp(ctx, wallet ?? undefined, phone, number);
    const d = decideCardLink(facts, mode, false);
    if (d.status === 'ALREADY_LINKED' && wallet && card && wallet.cards.some((c) => c.id === card.id)) {
      return { status: 200 as const, body: wrapperBody('unchanged', 'cardAlreadyLinked', wallet, ctx.lang) };
    }
    // The caller's own card missing from the wallet (no wallet yet, or older data): the provider
    // confirms it and the wallet takes its data, as for a new link.
    if (!d.canLink && d.status !== 'ALREADY_LINKED') throw cardRefusal(d.reasonCode!);
    const command =
      mode === 'link'
        ? ({ type: 'link', card_number: number, key: `link:${customerId}:${number}` } as const)
        : ({ type: 'link_physical', card_number: number, key: `link-physical:${customerId}:${number}` } as const);
    const done = await applyCommand(ctx.deps, trx, customerId, wallet, phone, command);
    const key = done.outcome === 'accepted' ? 'commandAccepted' : mode === 'link' ? 'cardLinked' : 'physicalIssued';
    return { status: 200 as const, body: wrapperBody(done.outcome, key, done.wallet, ctx.lang) };
  });
}

// ---- purchases and transactions ---------------------------------------------------------------

const purchaseOf = (p: PurchaseRow): Schemas['PurchaseSchema'] => ({
  id: p.id,
  date: p.occurred_at.toISOString(),
  shop_name: p.shop_name,
  total: normalizeDecimal(p.total, 2),
  bonus_accrual: normalizeDecimal(p.bonus_accrual, 2),
  items_count: p.items_count,
  source: p.source,
});

type OrderLine = Awaited<ReturnType<typeof orderLines>>[number];

/**
 * A receipt position of an order line as ordered. Pieces are counted whole; a weighed line is one
 * position whose price and amount are for the weighed quantity. `price` is before the store's
 * promotion (old price), `discount` the difference, `amount` what the line cost.
 */
function orderedPosition(l: OrderLine, lang: Lang): StoredPosition {
  const qty = parseDecimal(l.quantity, 3) ?? 0n;
  const pieces = !l.weight_based && qty % 1000n === 0n;
  const amount = parseDecimal(l.line_total, 2) ?? 0n;
  const before = l.old_price === null ? amount : ((parseDecimal(l.old_price, 2) ?? 0n) * qty + 500n) / 1000n;
  const discount = before > amount ? before - amount : 0n;
  const unitBefore = parseDecimal(l.old_price ?? l.unit_price, 2) ?? 0n;
  return {
    name: lang === 'ru' ? l.name_ru : l.name_en,
    code: l.barcode ?? l.plu_code ?? '',
    quantity: pieces ? Number(qty / 1000n) : 1,
    price: formatMoney(pieces ? unitBefore : amount + discount),
    amount: formatMoney(amount),
    discount: formatMoney(discount),
  };
}

/** A receipt position of a line as the picker collected it (changed lines carry no promotion). */
function collectedPosition(p: ResultPosition): StoredPosition {
  const amount = parseDecimal(p.line_total, 2) ?? 0n;
  const qty = parseDecimal(p.quantity, 3) ?? 0n;
  const pieces = p.weight === null && qty % 1000n === 0n;
  return {
    name: p.name,
    code: p.barcode ?? p.plu_code ?? '',
    quantity: pieces ? Number(qty / 1000n) : 1,
    price: formatMoney(pieces ? (parseDecimal(p.unit_price, 2) ?? 0n) : amount),
    amount: formatMoney(amount),
    discount: formatMoney(0n),
  };
}

/**
 * Receipt positions of a completed online order: the lines as collected by its completed picking
 * (a line collected as ordered keeps its order line, with the promotion), or the order lines
 * when it was never picked.
 */
async function positionsOfOrder(db: Executor, orderId: string, lang: Lang): Promise<StoredPosition[]> {
  const lines = await orderLines(db, orderId);
  const session = await findLatestSessionOfOrder(db, orderId);
  if (session?.status !== 'completed') return lines.map((l) => orderedPosition(l, lang));
  const items = await loadItems(db, session.id);
  const lineOfItem = new Map(items.map((i) => [String(i.id), lines.find((l) => l.id === i.order_item_id)]));
  return toPickingResult(items, lang, true).items.flatMap((r) => {
    if (!r.final) return [];
    const line = lineOfItem.get(r.id);
    return [r.group === 'unchanged' && line ? orderedPosition(line, lang) : collectedPosition(r.final)];
  });
}

function transactionOf(t: TransactionRow, source: 'provider' | 'local', lang: Lang): Schemas['TransactionSchema'] {
  const orderId = t.order_id && UUID.test(t.order_id) ? t.order_id : null;
  return {
    id: t.id,
    type: t.type,
    status: t.status,
    amount: normalizeDecimal(t.amount, 2),
    balance_after: t.balance_after === null ? null : normalizeDecimal(t.balance_after, 2),
    account_id: t.account_id,
    created_at: t.created_at.toISOString(),
    available_at: t.available_at?.toISOString() ?? null,
    expires_at: t.expires_at?.toISOString() ?? null,
    description: transactionDescription(
      { type: t.type, order_no: orderId ? t.order_no : null, shop_name: t.shop_name, comment: t.comment },
      lang,
    ),
    purchase_id: t.purchase_id,
    order_id: orderId,
    source,
  };
}

const emptyPage = { items: [], count: 0, has_next: false };

function levelsOf(p: ProviderProgram): Schemas['LoyaltyProgramSchema'] {
  return {
    id: p.id,
    name: p.name,
    levels: [...p.levels]
      .sort((a, b) => a.order - b.order)
      .map((l) => ({
        id: l.id,
        order: l.order,
        name: l.name,
        boundary: normalizeDecimal(l.boundary, 2),
        clients_count: l.clients_count,
        range_label: l.range_label,
        description: l.description,
      })),
  };
}

export const loyaltyHandlers = {
  // POST /api/loaylty/discounts/preview/
  previewLoyaltyDiscount: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const header = declaredHeader(ctx, 'x-store-id')?.trim() || null;
    const fromBody = ctx.body.store_id ?? null;
    if (fromBody && header && fromBody.toLowerCase() !== header.toLowerCase()) {
      throw unprocessable('STORE_MISMATCH', 'store_id and X-Store-Id name different stores');
    }
    const storeId = fromBody ?? header;
    if (!storeId) throw unprocessable('STORE_REQUIRED', 'Give the store in store_id or the X-Store-Id header');
    const store = await findActiveStoreCached(ctx.deps, storeId);
    if (!store) throw unprocessable('STORE_NOT_FOUND', 'No active store has this id');

    // Ids in lower case, as checkout reads them (an app may send UUIDs upper-cased).
    const items = ctx.body.items.map((item) => ({
      ...item,
      product_id: item.product_id.toLowerCase(),
      unit_id: item.unit_id.toLowerCase(),
    }));
    const facts = await cartLineFacts(ctx.deps.db, store.id, items);
    const lines = items.map((item, i) => {
      const f = facts.get(`${item.product_id}/${item.unit_id}`);
      if (!f || f.unit_price === null)
        throw unprocessable('UNKNOWN_PRODUCT', `items[${i}]: the product is not sold in this store in this unit`);
      const q = parseRequestedQuantity(item.quantity, quantityUnit(f));
      if (!q.ok)
        throw unprocessable(
          'QUANTITY_INVALID',
          `items[${i}]: the quantity must be at least 0.001 with at most three decimals, whole for pieces (${q.problem})`,
        );
      return { item, quantityThousandths: q.thousandths, unitPrice: f.unit_price };
    });
    const member = memberOf(await findWallet(ctx.deps.db, customerId));
    const preview = previewCart(lines, member);
    const points = preview.accrual.points;
    return {
      status: 200,
      body: {
        store_id: store.id,
        is_wallet_linked: member !== null,
        current_tier: member?.tierLabel ?? null,
        subtotal: formatMoney(preview.subtotal),
        discount_amount: formatMoney(preview.discount),
        total: formatMoney(preview.total),
        points_to_accrue: points.toString(),
        lines: lines.map((l, i) => ({
          product_id: l.item.product_id,
          unit_id: l.item.unit_id,
          quantity: formatDecimal(l.quantityThousandths, 3),
          unit_price: normalizeDecimal(l.unitPrice, 2),
          subtotal: formatMoney(preview.lines[i]!.subtotal),
          discount_amount: formatMoney(preview.lines[i]!.discount),
          total: formatMoney(preview.lines[i]!.total),
          points_to_accrue: preview.lines[i]!.points.toString(),
        })),
        applied_discounts:
          preview.accrual.outcome === 'accrued' && preview.accrual.accrualPercent !== null
            ? [
                {
                  code: 'BASE_ACCRUAL',
                  name: baseAccrualName(member?.tierLabel ?? '', preview.accrual.accrualPercent, ctx.lang),
                  amount: '0.00',
                  points: points.toString(),
                },
              ]
            : [],
        calculated_at: ctx.deps.clock.now().toISOString(),
      },
    };
  },

  // GET /api/loaylty/programs/
  listLoyaltyPrograms: async (ctx) => {
    try {
      return { status: 200, body: (await ctx.deps.loyalty.programs.get()).map(levelsOf) };
    } catch (err) {
      if (!(err instanceof LoyaltyProviderError)) throw err;
      // The contract: a provider failure is an empty list here (the strict variant tells them apart).
      return { status: 200, body: [] };
    }
  },

  // GET /api/loaylty/programs/strict/ (TEST only)
  listLoyaltyProgramsStrict: async (ctx) => {
    try {
      return { status: 200, body: (await ctx.deps.loyalty.programs.get()).map(levelsOf) };
    } catch (err) {
      if (err instanceof LoyaltyProviderError) throw providerUnavailable();
      throw err;
    }
  },

  // GET /api/loaylty/wallet/
  getLoyaltyWallet: async (ctx) => {
    const wallet = await findWallet(ctx.deps.db, customerIdOf(ctx));
    if (!wallet) throw walletNotFound();
    const { walletResyncSeconds } = ctx.deps.config.loyalty;
    const now = ctx.deps.clock.nowMs();
    const stale = !wallet.last_synced_at || now - wallet.last_synced_at.getTime() > walletResyncSeconds * 1000;
    const recentlyFailed = wallet.last_error_at !== null && now - wallet.last_error_at.getTime() < RESYNC_AFTER_ERROR_SECONDS * 1000;
    // Old data is served at once; a background re-sync brings the next read up to date.
    if (stale && !recentlyFailed && wallet.status !== 'pending' && isLinked(wallet) && !(await hasQueuedSync(ctx.deps.db, wallet.id))) {
      await enqueueJob(ctx.deps.db, wallet.id, 'sync');
    }
    return { status: 200, body: walletBody(wallet, ctx.lang) };
  },

  // POST /api/loaylty/wallet/create/
  createLoyaltyWallet: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return underLock(ctx, customerId, async (trx) => {
      const { wallet, created } = await insertWalletIfAbsent(trx, { customer_id: customerId, status: 'pending' });
      if (created) {
        await enqueueJob(trx, wallet.id, 'provision');
        return { status: 200 as const, body: wrapperBody('accepted', 'walletAccepted', wallet, ctx.lang) };
      }
      if (wallet.status !== 'error') return { status: 200 as const, body: wrapperBody('unchanged', 'walletUnchanged', wallet, ctx.lang) };
      // After a failure: provision again, or re-sync a wallet that is linked already.
      const pending = await updateWallet(trx, wallet.id, { status: 'pending', sync_attempts: 0 });
      await enqueueJob(trx, wallet.id, wallet.provider_customer_id ? 'sync' : 'provision');
      return { status: 200 as const, body: wrapperBody('accepted', 'walletRetry', pending, ctx.lang) };
    });
  },

  // POST /api/loaylty/wallet/accounts/switch/
  switchLoyaltyAccount: async (ctx) => {
    const customerId = customerIdOf(ctx);
    return underLock(ctx, customerId, async (trx) => {
      const wallet = await requireWallet(trx, customerId);
      const account = wallet.accounts.find((a) => a.id === ctx.body.account_id);
      if (!account) throw unprocessable('ACCOUNT_NOT_FOUND', 'The wallet has no such account');
      if (!account.is_active) throw conflict('ACCOUNT_INACTIVE', 'This account is closed or frozen');
      if (wallet.active_account_id === account.id)
        return { status: 200 as const, body: wrapperBody('unchanged', 'accountUnchanged', wallet, ctx.lang) };
      const updated = await updateWallet(trx, wallet.id, { active_account_id: account.id });
      return { status: 200 as const, body: wrapperBody('applied', 'accountSwitched', updated, ctx.lang) };
    });
  },

  // GET /api/loaylty/wallet/block-reasons/
  listLoyaltyBlockReasons: async (ctx) => {
    return { status: 200, body: BLOCK_REASONS.map((r) => ({ key: r.key, label: r.label[ctx.lang] })) };
  },

  // POST /api/loaylty/wallet/block/
  blockLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const reason = ctx.body.reason ?? null;
    const phone = await phoneOf(ctx, customerId);
    return underLock(ctx, customerId, async (trx) => {
      const wallet = await requireWallet(trx, customerId);
      if (!isLinked(wallet)) throw walletNotLinked();
      const card = wallet.cards.find((c) => c.id === (ctx.body.card_id ?? wallet.main_card_id));
      if (!card) throw unprocessable('CARD_NOT_FOUND', 'The wallet has no such card');
      if (reason !== null && !BLOCK_REASONS.some((r) => r.key === reason))
        throw unprocessable('BLOCK_REASON_INVALID', 'Choose a reason from GET /api/loaylty/wallet/block-reasons/');
      if (card.is_blocked) return { status: 200 as const, body: wrapperBody('unchanged', 'cardAlreadyBlocked', wallet, ctx.lang) };
      const done = await applyCommand(ctx.deps, trx, customerId, wallet, phone, {
        type: 'block',
        card_id: card.id,
        reason,
        key: `block:${wallet.id}:${randomUUID()}`,
      });
      return {
        status: 200 as const,
        body: wrapperBody(done.outcome, done.outcome === 'applied' ? 'cardBlocked' : 'commandAccepted', done.wallet, ctx.lang),
      };
    });
  },

  // POST /api/loaylty/wallet/unblock/
  unblockLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const phone = await phoneOf(ctx, customerId);
    return underLock(ctx, customerId, async (trx) => {
      const wallet = await requireWallet(trx, customerId);
      if (!isLinked(wallet)) throw walletNotLinked();
      const card = wallet.cards.find((c) => c.id === (ctx.body.card_id ?? wallet.main_card_id));
      if (!card) throw unprocessable('CARD_NOT_FOUND', 'The wallet has no such card');
      if (!card.is_blocked) return { status: 200 as const, body: wrapperBody('unchanged', 'cardNotBlocked', wallet, ctx.lang) };
      if (!unblockable(card)) throw cardRefusal('UNBLOCK_NOT_ALLOWED');
      const done = await applyCommand(ctx.deps, trx, customerId, wallet, phone, {
        type: 'unblock',
        card_id: card.id,
        key: `unblock:${wallet.id}:${randomUUID()}`,
      });
      return {
        status: 200 as const,
        body: wrapperBody(done.outcome, done.outcome === 'applied' ? 'cardUnblocked' : 'commandAccepted', done.wallet, ctx.lang),
      };
    });
  },

  // POST /api/loaylty/wallet/link/preview/
  previewLoyaltyCardLink: (ctx) => previewLink(ctx, 'link'),

  // POST /api/loaylty/wallet/link/
  linkLoyaltyCard: (ctx) => link(ctx, 'link'),

  // POST /api/loaylty/wallet/link-physical/preview/
  previewLoyaltyPhysicalCardLink: (ctx) => previewLink(ctx, 'physical'),

  // POST /api/loaylty/wallet/link-physical/
  linkLoyaltyPhysicalCard: (ctx) => link(ctx, 'physical'),

  // POST /api/loaylty/wallet/replace/
  replaceLoyaltyCard: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const idempotencyKey = declaredHeader(ctx, 'idempotency-key')?.trim() || null;
    const phone = await phoneOf(ctx, customerId);
    const replace = async (trx: Transaction<DB>) => {
      await lockCustomerLoyalty(trx, customerId);
      const wallet = await requireWallet(trx, customerId);
      if (!isLinked(wallet) || !wallet.main_card_id) throw walletNotLinked();
      if (wallet.status === 'pending') throw syncInProgress();
      // The provider key follows the client's key, so a retry after a timeout issues no second card.
      const key = `replace:${wallet.id}:${idempotencyKey ?? randomUUID()}`;
      const done = await applyCommand(ctx.deps, trx, customerId, wallet, phone, { type: 'replace', card_id: wallet.main_card_id, key });
      return {
        status: 200 as const,
        body: wrapperBody(done.outcome, done.outcome === 'applied' ? 'cardReplaced' : 'commandAccepted', done.wallet, ctx.lang),
      };
    };
    if (!idempotencyKey) return ctx.deps.db.transaction().execute(replace);
    return withIdempotency(
      ctx.deps,
      { principal: `customer:${customerId}`, operationId: ctx.operationId, key: idempotencyKey },
      fingerprintOf('replace'),
      replace,
    );
  },

  // GET /api/loaylty/wallet/purchases/
  listLoyaltyPurchases: async (ctx) => {
    const customerId = customerIdOf(ctx); // an online purchase's shop name is in the caller's language
    const window = pageWindow(ctx.query.page, ctx.query.page_size);
    const wallet = await findWallet(ctx.deps.db, customerId);
    if (!wallet || !isLinked(wallet)) return { status: 200, body: emptyPage };
    const { purchasesRefreshSeconds } = ctx.deps.config.loyalty;
    const fresh =
      wallet.purchases_synced_at && ctx.deps.clock.nowMs() - wallet.purchases_synced_at.getTime() < purchasesRefreshSeconds * 1000;
    if (!fresh) {
      try {
        const purchases = await ctx.deps.loyalty.provider.listPurchases(wallet.provider_customer_id!);
        await ctx.deps.db.transaction().execute((trx) => replacePurchaseMirror(trx, wallet.id, purchases));
      } catch (err) {
        if (!(err instanceof LoyaltyProviderError)) throw err;
        // The contract: the provider unreachable during a needed refresh is an empty page.
        return { status: 200, body: emptyPage };
      }
    }
    const page = await listPurchasePage(ctx.deps.db, wallet.id, customerId, ctx.lang, window.offset, window.pageSize);
    return { status: 200, body: { items: page.items.map(purchaseOf), count: page.count, has_next: hasNextPage(window, page.count) } };
  },

  // GET /api/loaylty/wallet/purchases/{purchase_id}/
  getLoyaltyPurchase: async (ctx) => {
    const customerId = customerIdOf(ctx); // shop and product names of an online purchase
    const id = ctx.path.purchase_id;
    const wallet = await findWallet(ctx.deps.db, customerId);
    if (!wallet || !isLinked(wallet)) throw notFound('Your loyalty card is not set up', 'WALLET_NOT_LINKED');
    const missing = () => notFound('Purchase not found', 'PURCHASE_NOT_FOUND');
    if (UUID.test(id)) {
      const online = await findOnlinePurchase(ctx.deps.db, customerId, id, ctx.lang);
      if (online) {
        const positions = await positionsOfOrder(ctx.deps.db, id, ctx.lang);
        return { status: 200, body: { ...purchaseOf(online), positions, discounts: [] } };
      }
    }
    const mirrored = await findMirroredPurchase(ctx.deps.db, wallet.id, id);
    if (mirrored?.positions) {
      return {
        status: 200,
        body: {
          ...purchaseOf({ ...mirrored, source: 'offline' }),
          positions: mirrored.positions,
          discounts: mirrored.discounts ?? [],
        },
      };
    }
    let detail;
    try {
      detail = await ctx.deps.loyalty.provider.getPurchase(wallet.provider_customer_id!, id);
    } catch (err) {
      throw providerFailure(err);
    }
    if (!detail) throw missing();
    await storePurchaseDetail(ctx.deps.db, wallet.id, detail);
    return {
      status: 200,
      body: {
        ...purchaseOf({
          id: detail.id,
          occurred_at: new Date(detail.date),
          shop_name: detail.shop_name,
          total: detail.total,
          bonus_accrual: detail.bonus_accrual,
          items_count: detail.items_count,
          source: 'offline',
        }),
        positions: detail.positions,
        discounts: detail.discounts,
      },
    };
  },

  // GET /api/loaylty/wallet/transactions/
  listLoyaltyTransactions: async (ctx) => {
    const customerId = customerIdOf(ctx);
    const window = pageWindow(ctx.query.page, ctx.query.page_size);
    const wallet = await findWallet(ctx.deps.db, customerId);
    if (!wallet || !isLinked(wallet)) return { status: 200, body: emptyPage };
    try {
      const page = await ctx.deps.loyalty.provider.listTransactions(wallet.provider_customer_id!, {
        offset: window.offset,
        limit: window.pageSize,
      });
      await mirrorTransactions(ctx.deps.db, wallet.id, page.items);
      const numbers = await orderNumbers(
        ctx.deps.db,
        page.items.flatMap((t) => (t.order_id ? [t.order_id] : [])),
      );
      const items = page.items.map((t) =>
        transactionOf(
          {
            ...t,
            created_at: new Date(t.created_at),
            available_at: t.available_at ? new Date(t.available_at) : null,
            expires_at: t.expires_at ? new Date(t.expires_at) : null,
            order_no: t.order_id ? (numbers.get(t.order_id) ?? null) : null,
          },
          'provider',
          ctx.lang,
        ),
      );
      return { status: 200, body: { items, count: page.count, has_next: hasNextPage(window, page.count) } };
    } catch (err) {
      if (!(err instanceof LoyaltyProviderError)) throw err;
      // The provider is unreachable: this service's own records instead (marked `local`).
      const page = await localTransactionPage(ctx.deps.db, wallet.id, customerId, window.offset, window.pageSize);
      return {
        status: 200,
        body: {
          items: page.items.map((t) => transactionOf(t, 'local', ctx.lang)),
          count: page.count,
          has_next: hasNextPage(window, page.count),
        },
      };
    }
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
