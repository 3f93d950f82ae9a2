// The customer's wallet and card commands. Reads never wait for the provider: a stale wallet is
// served at once and re-synced in the background. Card commands call the provider synchronously
// while holding the customer's loyalty lock, so commands on one wallet run one after the other.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import {
  enqueueJob,
  findWallet,
  hasQueuedSync,
  insertWalletIfAbsent,
  lockCustomerLoyalty,
  updateWallet,
  type WalletRow,
} from '../../db/queries/loyalty.js';
import type { DB } from '../../db/schema.js';
import type { AppDeps } from '../deps.js';
import { unprocessable, conflict } from '../errors.js';
import { fingerprintOf, withIdempotency } from '../idempotency.js';
import {
  blockReasonsBody,
  linkPreviewBody,
  walletBody,
  wrapperBody,
  type WalletBody,
  type WalletWrapperBody,
} from '../presenters/loyalty.js';
import { normalizeMoney } from '../../domain/money/money.js';
import { decideCardLink, unblockable, type LinkMode } from '../../domain/loyalty/wallet.js';
import { BLOCK_REASONS, type Lang } from '../../domain/texts/loyalty.js';
import {
  applyCommand,
  cardNumberOf,
  cardRefusal,
  countCardLookup,
  isLinked,
  phoneOf,
  providerFailure,
  requireWallet,
  syncInProgress,
  underLock,
  walletNotFound,
  walletNotLinked,
} from './wallet.js';

/** A failed re-sync is not retried by reads sooner than this. */
const RESYNC_AFTER_ERROR_SECONDS = 60;

/** The idempotency records of card replacement are kept under its operation's name. */
const REPLACE_OPERATION = 'replaceLoyaltyCard';

export interface CardNumberInput {
  customerId: string;
  /** The card number as the customer typed it. */
  cardNumber: string;
  lang: Lang;
}

export interface CardInput {
  customerId: string;
  /** The wallet's card to act on; null for its main card. */
  cardId: string | null;
  lang: Lang;
}

/** What the provider says about a card number, seen from the caller. */
async function lookUp(deps: Pick<AppDeps, 'loyalty'>, wallet: WalletRow | undefined, phone: string, number: string) {
  const { provider } = deps.loyalty;
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

/** What linking a card (`link`) or issuing a physical one (`physical`) would do; changes nothing. */
export async function previewCardLink(deps: AppDeps, mode: LinkMode, input: CardNumberInput) {
  const { customerId } = input;
  const number = cardNumberOf(input.cardNumber);
  await countCardLookup(deps, customerId);
  const wallet = await findWallet(deps.db, customerId);
  const { card, facts } = await lookUp(deps, wallet, await phoneOf(deps.db, customerId), number);
  const d = decideCardLink(facts, mode, wallet?.status === 'pending');
  // Another customer's data is never shown: the balance only of the caller's or an unregistered card.
  const showsBalance = card !== null && (d.ownerMatch === true || card.holder_id === null);
  const activeBalance = wallet?.accounts.find((a) => a.id === wallet.active_account_id)?.balance ?? '0';
  const transfer = mode === 'physical' && d.canLink ? normalizeMoney(wallet && isLinked(wallet) ? activeBalance : '0') : null;
  return linkPreviewBody(d, number, card, showsBalance ? card.balance : null, transfer, input.lang);
}

/** Links a card (`link`) or issues a physical one (`physical`) to the caller's wallet. */
export async function linkCard(deps: AppDeps, mode: LinkMode, input: CardNumberInput): Promise<WalletWrapperBody> {
  const { customerId, lang } = input;
  const number = cardNumberOf(input.cardNumber);
  await countCardLookup(deps, customerId);
  const phone = await phoneOf(deps.db, customerId);
  return underLock(deps, customerId, async (trx) => {
    const wallet = (await findWallet(trx, customerId)) ?? null;
    if (wallet?.status === 'pending') throw syncInProgress();
    const { card, facts } = await lookUp(deps, wallet ?? undefined, phone, number);
    const d = decideCardLink(facts, mode, false);
    if (d.status === 'ALREADY_LINKED' && wallet && card && wallet.cards.some((c) => c.id === card.id)) {
      return wrapperBody('unchanged', 'cardAlreadyLinked', wallet, lang);
    }
    // The caller's own card missing from the wallet (no wallet yet, or older data): the provider
    // confirms it and the wallet takes its data, as for a new link.
    if (!d.canLink && d.status !== 'ALREADY_LINKED') throw cardRefusal(d.reasonCode!);
    const command =
      mode === 'link'
        ? ({ type: 'link', card_number: number, key: `link:${customerId}:${number}` } as const)
        : ({ type: 'link_physical', card_number: number, key: `link-physical:${customerId}:${number}` } as const);
    const done = await applyCommand(deps, trx, customerId, wallet, phone, command);
    const key = done.outcome === 'accepted' ? 'commandAccepted' : mode === 'link' ? 'cardLinked' : 'physicalIssued';
    return wrapperBody(done.outcome, key, done.wallet, lang);
  });
}

/** The caller's wallet as last synchronized; a stale one is queued for a background re-sync. */
export async function readWallet(deps: AppDeps, customerId: string, lang: Lang): Promise<WalletBody> {
  const wallet = await findWallet(deps.db, customerId);
  if (!wallet) throw walletNotFound();
  const { walletResyncSeconds } = deps.config.loyalty;
  const now = deps.clock.nowMs();
  const stale = !wallet.last_synced_at || now - wallet.last_synced_at.getTime() > walletResyncSeconds * 1000;
  const recentlyFailed = wallet.last_error_at !== null && now - wallet.last_error_at.getTime() < RESYNC_AFTER_ERROR_SECONDS * 1000;
  // Old data is served at once; a background re-sync brings the next read up to date.
  if (stale && !recentlyFailed && wallet.status !== 'pending' && isLinked(wallet) && !(await hasQueuedSync(deps.db, wallet.id))) {
    await enqueueJob(deps.db, wallet.id, 'sync');
  }
  return walletBody(wallet, lang);
}

/** Creates the caller's wallet (provisioned in the background), or retries a failed one. */
export async function createWallet(deps: AppDeps, customerId: string, lang: Lang): Promise<WalletWrapperBody> {
  return underLock(deps, customerId, async (trx) => {
    const { wallet, created } = await insertWalletIfAbsent(trx, { customer_id: customerId, status: 'pending' });
    if (created) {
      await enqueueJob(trx, wallet.id, 'provision');
      return wrapperBody('accepted', 'walletAccepted', wallet, lang);
    }
    if (wallet.status !== 'error') return wrapperBody('unchanged', 'walletUnchanged', wallet, lang);
    // After a failure: provision again, or re-sync a wallet that is linked already.
    const pending = await updateWallet(trx, wallet.id, { status: 'pending', sync_attempts: 0 });
    await enqueueJob(trx, wallet.id, wallet.provider_customer_id ? 'sync' : 'provision');
    return wrapperBody('accepted', 'walletRetry', pending, lang);
  });
}

/** Makes another of the wallet's accounts the one its balance shows. */
export async function switchAccount(
  deps: AppDeps,
  input: { customerId: string; accountId: string; lang: Lang },
): Promise<WalletWrapperBody> {
  const { customerId, lang } = input;
  return underLock(deps, customerId, async (trx) => {
    const wallet = await requireWallet(trx, customerId);
    const account = wallet.accounts.find((a) => a.id === input.accountId);
    if (!account) throw unprocessable('ACCOUNT_NOT_FOUND', 'The wallet has no such account');
    if (!account.is_active) throw conflict('ACCOUNT_INACTIVE', 'This account is closed or frozen');
    if (wallet.active_account_id === account.id) return wrapperBody('unchanged', 'accountUnchanged', wallet, lang);
    const updated = await updateWallet(trx, wallet.id, { active_account_id: account.id });
    return wrapperBody('applied', 'accountSwitched', updated, lang);
  });
}

export const listBlockReasons = (lang: Lang) => blockReasonsBody(lang);

export async function blockCard(deps: AppDeps, input: CardInput & { reason: string | null }): Promise<WalletWrapperBody> {
  const { customerId, reason, lang } = input;
  const phone = await phoneOf(deps.db, customerId);
  return underLock(deps, customerId, async (trx) => {
    const wallet = await requireWallet(trx, customerId);
    if (!isLinked(wallet)) throw walletNotLinked();
    const card = wallet.cards.find((c) => c.id === (input.cardId ?? wallet.main_card_id));
    if (!card) throw unprocessable('CARD_NOT_FOUND', 'The wallet has no such card');
    if (reason !== null && !BLOCK_REASONS.some((r) => r.key === reason))
      throw unprocessable('BLOCK_REASON_INVALID', 'Choose a reason from GET /api/loaylty/wallet/block-reasons/');
    if (card.is_blocked) return wrapperBody('unchanged', 'cardAlreadyBlocked', wallet, lang);
    const done = await applyCommand(deps, trx, customerId, wallet, phone, {
      type: 'block',
      card_id: card.id,
      reason,
      key: `block:${wallet.id}:${randomUUID()}`,
    });
    return wrapperBody(done.outcome, done.outcome === 'applied' ? 'cardBlocked' : 'commandAccepted', done.wallet, lang);
  });
}

export async function unblockCard(deps: AppDeps, input: CardInput): Promise<WalletWrapperBody> {
  const { customerId, lang } = input;
  const phone = await phoneOf(deps.db, customerId);
  return underLock(deps, customerId, async (trx) => {
    const wallet = await requireWallet(trx, customerId);
    if (!isLinked(wallet)) throw walletNotLinked();
    const card = wallet.cards.find((c) => c.id === (input.cardId ?? wallet.main_card_id));
    if (!card) throw unprocessable('CARD_NOT_FOUND', 'The wallet has no such card');
    if (!card.is_blocked) return wrapperBody('unchanged', 'cardNotBlocked', wallet, lang);
    if (!unblockable(card)) throw cardRefusal('UNBLOCK_NOT_ALLOWED');
    const done = await applyCommand(deps, trx, customerId, wallet, phone, {
      type: 'unblock',
      card_id: card.id,
      key: `unblock:${wallet.id}:${randomUUID()}`,
    });
    return wrapperBody(done.outcome, done.outcome === 'applied' ? 'cardUnblocked' : 'commandAccepted', done.wallet, lang);
  });
}

/**
 * Replaces the main card with a new one. Under an idempotency key a retry replays the first
 * answer, and the provider's key follows the client's, so a retry after a timeout issues no
 * second card.
 */
export async function replaceCard(
  deps: AppDeps,
  input: { customerId: string; idempotencyKey: string | null; lang: Lang },
): Promise<WalletWrapperBody> {
  const { customerId, idempotencyKey, lang } = input;
  const phone = await phoneOf(deps.db, customerId);
  const replace = async (trx: Transaction<DB>) => {
    await lockCustomerLoyalty(trx, customerId);
    const wallet = await requireWallet(trx, customerId);
    if (!isLinked(wallet) || !wallet.main_card_id) throw walletNotLinked();
    if (wallet.status === 'pending') throw syncInProgress();
    const key = `replace:${wallet.id}:${idempotencyKey ?? randomUUID()}`;
    const done = await applyCommand(deps, trx, customerId, wallet, phone, { type: 'replace', card_id: wallet.main_card_id, key });
    return {
      status: 200 as const,
      body: wrapperBody(done.outcome, done.outcome === 'applied' ? 'cardReplaced' : 'commandAccepted', done.wallet, lang),
    };
  };
  if (!idempotencyKey) return (await deps.db.transaction().execute(replace)).body;
  const scope = { principal: `customer:${customerId}`, operationId: REPLACE_OPERATION, key: idempotencyKey };
  return (await withIdempotency(deps, scope, fingerprintOf('replace'), replace)).body;
}
