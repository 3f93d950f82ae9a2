// The customer's purchases (online orders and the provider's in-store receipts) and point
// transactions. The provider's data is mirrored here, so that history can still be shown when
// the provider cannot be reached.
import {
  findMirroredPurchase,
  findOnlinePurchase,
  findWallet,
  listPurchasePage,
  localTransactionPage,
  mirrorTransactions,
  orderLines,
  orderNumbers,
  replacePurchaseMirror,
  storePurchaseDetail,
} from '../../db/queries/loyalty.js';
import type { Executor } from '../../db/executor.js';
import type { StoredPosition } from '../../db/tables/loyalty.js';
import { loadItems } from '../../db/queries/picking/items.js';
import { findLatestSessionOfOrder } from '../../db/queries/picking/sessions.js';
import type { components } from '../../generated/api.test.js';
import type { AppDeps } from '../deps.js';
import { notFound } from '../errors.js';
import { toPickingResult } from '../presenters/picking.js';
import {
  collectedPosition,
  orderedPosition,
  purchaseBody,
  purchaseDetailBody,
  reportedTransactionBody,
  transactionBody,
} from '../presenters/loyalty.js';
import { LoyaltyProviderError } from '../../platform/providers/loyalty/index.js';
import { isUuid } from '../../domain/ids.js';
import type { Lang } from '../../domain/texts/loyalty.js';
import { isLinked, providerFailure } from './wallet.js';

type Schemas = components['schemas'];

/** One page of a listing: its items and how many there are in all. */
export interface Page<T> {
  items: T[];
  count: number;
}

export interface PageInput {
  customerId: string;
  lang: Lang;
  offset: number;
  limit: number;
}

const emptyPage = <T>(): Page<T> => ({ items: [], count: 0 });

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

/**
 * The customer's purchases, newest first; the in-store ones are re-read from the provider once
 * the mirror is older than the refresh interval. Online shop names are in the caller's language.
 */
export async function listPurchases(deps: AppDeps, input: PageInput): Promise<Page<Schemas['PurchaseSchema']>> {
  const { customerId } = input;
  const wallet = await findWallet(deps.db, customerId);
  if (!wallet || !isLinked(wallet)) return emptyPage();
  const { purchasesRefreshSeconds } = deps.config.loyalty;
  const fresh = wallet.purchases_synced_at && deps.clock.nowMs() - wallet.purchases_synced_at.getTime() < purchasesRefreshSeconds * 1000;
  if (!fresh) {
    try {
      const purchases = await deps.loyalty.provider.listPurchases(wallet.provider_customer_id!);
      await deps.db.transaction().execute((trx) => replacePurchaseMirror(trx, wallet.id, purchases));
    } catch (err) {
      if (!(err instanceof LoyaltyProviderError)) throw err;
      // The contract: the provider unreachable during a needed refresh is an empty page.
      return emptyPage();
    }
  }
  const page = await listPurchasePage(deps.db, wallet.id, customerId, input.lang, input.offset, input.limit);
  return { items: page.items.map(purchaseBody), count: page.count };
}

/**
 * One purchase with its receipt positions: an online order of the caller, an in-store receipt
 * already mirrored with its positions, or else read from the provider (and mirrored).
 */
export async function getPurchase(
  deps: AppDeps,
  input: { customerId: string; purchaseId: string; lang: Lang },
): Promise<Schemas['PurchaseDetailSchema']> {
  const { customerId, purchaseId: id, lang } = input;
  const wallet = await findWallet(deps.db, customerId);
  if (!wallet || !isLinked(wallet)) throw notFound('Your loyalty card is not set up', 'WALLET_NOT_LINKED');
  if (isUuid(id)) {
    const online = await findOnlinePurchase(deps.db, customerId, id, lang);
    if (online) return purchaseDetailBody(online, await positionsOfOrder(deps.db, id, lang), []);
  }
  const mirrored = await findMirroredPurchase(deps.db, wallet.id, id);
  if (mirrored?.positions) return purchaseDetailBody({ ...mirrored, source: 'offline' }, mirrored.positions, mirrored.discounts ?? []);
  let detail;
  try {
    detail = await deps.loyalty.provider.getPurchase(wallet.provider_customer_id!, id);
  } catch (err) {
    throw providerFailure(err);
  }
  if (!detail) throw notFound('Purchase not found', 'PURCHASE_NOT_FOUND');
  await storePurchaseDetail(deps.db, wallet.id, detail);
  const purchase = {
    id: detail.id,
    occurred_at: new Date(detail.date),
    shop_name: detail.shop_name,
    total: detail.total,
    bonus_accrual: detail.bonus_accrual,
    items_count: detail.items_count,
    source: 'offline' as const,
  };
  return purchaseDetailBody(purchase, detail.positions, detail.discounts);
}

/**
 * A page of the customer's point transactions as the provider reports them (and mirrored); when
 * the provider is unreachable, this service's own records instead (marked `local`).
 */
export async function listTransactions(deps: AppDeps, input: PageInput): Promise<Page<Schemas['TransactionSchema']>> {
  const { customerId, lang } = input;
  const wallet = await findWallet(deps.db, customerId);
  if (!wallet || !isLinked(wallet)) return emptyPage();
  try {
    const page = await deps.loyalty.provider.listTransactions(wallet.provider_customer_id!, { offset: input.offset, limit: input.limit });
    await mirrorTransactions(deps.db, wallet.id, page.items);
    const numbers = await orderNumbers(
      deps.db,
      page.items.flatMap((t) => (t.order_id ? [t.order_id] : [])),
    );
    const items = page.items.map((t) => reportedTransactionBody(t, t.order_id ? (numbers.get(t.order_id) ?? null) : null, lang));
    return { items, count: page.count };
  } catch (err) {
    if (!(err instanceof LoyaltyProviderError)) throw err;
    const page = await localTransactionPage(deps.db, wallet.id, customerId, input.offset, input.limit);
    return { items: page.items.map((t) => transactionBody(t, 'local', lang)), count: page.count };
  }
}
