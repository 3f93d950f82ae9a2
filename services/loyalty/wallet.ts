// The loyalty wallet as the card use cases and the background worker share it: applying a provider
// snapshot to the wallet, sending card commands (now or again later), the customer's lock and
// look-up budget, and turning provider failures into the contract's answers.
import type { Transaction, Updateable } from 'kysely';
import {
  customerPhone,
  enqueueJob,
  findWallet,
  findWalletById,
  insertWalletIfAbsent,
  lockCustomerLoyalty,
  updateWallet,
  type WalletRow,
} from '../../db/queries/loyalty.js';
import type { Executor } from '../../db/executor.js';
import type { DB } from '../../db/schema.js';
import type { MirroredAccount, MirroredCard, StoredWalletCommand } from '../../db/tables/loyalty.js';
import type { AppDeps } from '../deps.js';
import { badGateway, conflict, notFound, unauthorized, unprocessable } from '../errors.js';
import { assertUnderLimit, recordRateEvent } from '../limits.js';
import {
  LoyaltyProviderError,
  type LoyaltyProvider,
  type ProviderCustomer,
  type ProviderProgram,
} from '../../platform/providers/loyalty/index.js';
import type { LoyaltyMember } from '../../domain/loyalty/accrual.js';
import { tierStatusFor } from '../../domain/loyalty/tiers.js';
import { normalizeCardNumber } from '../../domain/loyalty/wallet.js';

export const isLinked = (w: WalletRow): boolean => w.provider_customer_id !== null && w.cards.length > 0;

export const mainCardOf = (w: WalletRow): MirroredCard | null => w.cards.find((c) => c.id === w.main_card_id) ?? null;

/** The wallet as the accrual rule sees it: null without a linked wallet. */
export function memberOf(w: WalletRow | undefined | null): LoyaltyMember | null {
  if (!w || !isLinked(w)) return null;
  return {
    tierLabel: w.loyalty_status?.current_tier || null,
    accrualPercent: w.tier_accrual_percent,
    mainCardBlocked: mainCardOf(w)?.is_blocked ?? false,
  };
}

// ---- the customer's wallet under lock ---------------------------------------------------------

export const walletNotFound = () => notFound('You do not have a loyalty card yet', 'WALLET_NOT_FOUND');
export const walletNotLinked = () => conflict('WALLET_NOT_LINKED', 'The loyalty card is not set up yet; wait until the wallet is ready');
export const syncInProgress = () => conflict('WALLET_SYNC_IN_PROGRESS', 'The loyalty card is being set up; re-read the wallet');

/** Runs `work` holding the customer's loyalty lock, in one transaction. */
export function underLock<T>(deps: Pick<AppDeps, 'db'>, customerId: string, work: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return deps.db.transaction().execute(async (trx) => {
    await lockCustomerLoyalty(trx, customerId);
    return work(trx);
  });
}

export async function requireWallet(trx: Executor, customerId: string): Promise<WalletRow> {
  const wallet = await findWallet(trx, customerId);
  if (!wallet) throw walletNotFound();
  return wallet;
}

/** Counts one card look-up against the customer's budget (10 in 10 minutes by default); 429 past it. */
export async function countCardLookup(deps: Pick<AppDeps, 'db' | 'config' | 'clock'>, customerId: string): Promise<void> {
  const { cardLookupsPerWindow, cardLookupWindowSeconds } = deps.config.loyalty;
  const subject = `loyalty-card-lookup:${customerId}`;
  // Its own committed transaction: the look-up counts even when the command then fails.
  await deps.db.transaction().execute(async (trx) => {
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
      deps.clock.now(),
    );
    await recordRateEvent(trx, subject);
  });
}

/** The digits of a card number as the customer typed it; 422 when it is not one. */
export function cardNumberOf(raw: string): string {
  const digits = normalizeCardNumber(raw);
  if (!digits) throw unprocessable('CARD_NUMBER_INVALID', 'A card number has 6 to 19 digits');
  return digits;
}

/** The customer's phone, the provider's key of the customer; 401 once the account is gone. */
export async function phoneOf(db: Executor, customerId: string): Promise<string> {
  const phone = await customerPhone(db, customerId);
  if (!phone) throw unauthorized();
  return phone;
}

// ---- provider snapshots -----------------------------------------------------------------------

/** The programs for the tier scale, or null when the provider cannot give them now. */
export async function programsOrNull(deps: Pick<AppDeps, 'loyalty'>): Promise<ProviderProgram[] | null> {
  try {
    return await deps.loyalty.programs.get();
  } catch (err) {
    if (err instanceof LoyaltyProviderError) return null;
    throw err;
  }
}

/** The wallet fields that mirror the provider's view of the customer (the wallet turns `ready`). */
export function snapshotChanges(
  w: WalletRow | null,
  c: ProviderCustomer,
  programs: ProviderProgram[] | null,
  now: Date,
): Updateable<DB['loyalty_wallets']> {
  const program = programs?.find((p) => p.id === c.program_id) ?? null;
  const levels = program?.levels.length ? program.levels : null;
  const status = tierStatusFor({
    programName: c.program_name || program?.name || '',
    turnover: c.total_turnover,
    lastPurchasePoints: c.last_purchase_points,
    current: c.current_tier,
    next: c.next_tier,
    levels,
  });
  const levelRate =
    levels?.find((l) => (c.current_tier?.id != null && l.id != null ? l.id === c.current_tier.id : l.name === c.current_tier?.name))
      ?.accrual_percent ?? null;
  // A rate the provider did not repeat this time stays as last known (same tier, same rate).
  const rate = c.current_tier ? (c.current_tier.accrual_percent ?? levelRate ?? w?.tier_accrual_percent ?? null) : null;
  const accounts: MirroredAccount[] = c.accounts.map((a) => ({
    id: a.id,
    title: a.title,
    description: a.description,
    balance: a.balance,
    is_active: a.is_active,
  }));
  const cards: MirroredCard[] = c.cards.map((x) => ({ ...x }));
  // The customer's choice of account survives while that account is usable.
  const keep = w?.active_account_id && accounts.some((a) => a.id === w.active_account_id && a.is_active) ? w.active_account_id : null;
  const main = c.main_card_id && cards.some((x) => x.id === c.main_card_id) ? c.main_card_id : (cards.find((x) => x.is_active)?.id ?? null);
  return {
    status: 'ready',
    provider_customer_id: c.id,
    accounts: JSON.stringify(accounts),
    cards: JSON.stringify(cards),
    main_card_id: main,
    active_account_id: keep ?? accounts.find((a) => a.is_active)?.id ?? null,
    loyalty_status: JSON.stringify(status),
    tier_accrual_percent: rate,
    last_synced_at: now,
    last_error_code: null,
    last_error_at: null,
    last_error_attempts: null,
    sync_attempts: 0,
  };
}

/**
 * Writes provider data fetched at wallet revision `seenRevision`, unless something changed the
 * wallet meanwhile (a command wrote newer data): then the older snapshot is dropped.
 */
export async function writeSnapshotIfCurrent(
  deps: Pick<AppDeps, 'db' | 'loyalty' | 'clock'>,
  walletId: string,
  customerId: string,
  seenRevision: number,
  c: ProviderCustomer,
): Promise<boolean> {
  const programs = await programsOrNull(deps);
  return deps.db.transaction().execute(async (trx) => {
    await lockCustomerLoyalty(trx, customerId);
    const current = await findWalletById(trx, walletId);
    if (!current || current.revision !== seenRevision) return false;
    await updateWallet(trx, walletId, snapshotChanges(current, c, programs, deps.clock.now()));
    return true;
  });
}

// ---- card commands ----------------------------------------------------------------------------

/** A card command as sent to the provider, kept on its job so it can be re-sent with the same key. */
export type WalletCommand = StoredWalletCommand;

export function sendCommand(
  provider: LoyaltyProvider,
  command: WalletCommand,
  providerCustomerId: string | null,
  phone: string,
): Promise<ProviderCustomer> {
  const need = () => {
    if (!providerCustomerId) throw new LoyaltyProviderError('rejected', 'the wallet is not linked', 'customer_not_found');
    return providerCustomerId;
  };
  switch (command.type) {
    case 'block':
      return provider.blockCard({ customerId: need(), cardId: command.card_id, reason: command.reason, idempotencyKey: command.key });
    case 'unblock':
      return provider.unblockCard({ customerId: need(), cardId: command.card_id, idempotencyKey: command.key });
    case 'replace':
      return provider.replaceCard({ customerId: need(), cardId: command.card_id, idempotencyKey: command.key });
    case 'link':
      return provider.linkCard({ customerId: providerCustomerId, phone, cardNumber: command.card_number, idempotencyKey: command.key });
    case 'link_physical':
      return provider.issuePhysicalCard({
        customerId: providerCustomerId,
        phone,
        cardNumber: command.card_number,
        idempotencyKey: command.key,
      });
  }
}

/** Why a card cannot be linked, as the contract's answer (the codes of WalletLinkPreviewSchema). */
export function cardRefusal(code: string) {
  switch (code) {
    case 'CARD_NOT_FOUND':
      return unprocessable('CARD_NOT_FOUND', 'No card has this number');
    case 'CARD_OWNED_BY_ANOTHER_CUSTOMER':
      return conflict('CARD_OWNED_BY_ANOTHER_CUSTOMER', 'This card belongs to another customer');
    case 'CARD_BLOCKED':
      return conflict('CARD_BLOCKED', 'This card is blocked');
    case 'CARD_NOT_ISSUED':
      return conflict('CARD_NOT_ISSUED', 'This card has not been issued; issue it as a physical card');
    case 'CARD_ALREADY_ISSUED':
      return conflict('CARD_ALREADY_ISSUED', 'This card is already issued; link it as an existing card');
    case 'UNBLOCK_NOT_ALLOWED':
      return conflict('UNBLOCK_NOT_ALLOWED', 'This card was blocked by the loyalty program. Contact support.');
    default:
      return providerUnavailable();
  }
}

/** Provider refusals as the contract's codes; anything else is a 502 (nothing changed). */
export function providerFailure(err: unknown): unknown {
  if (!(err instanceof LoyaltyProviderError)) return err;
  if (err.kind === 'rejected' && err.code) return cardRefusal(err.code.toUpperCase());
  return providerUnavailable();
}

export function providerUnavailable() {
  return badGateway('LOYALTY_PROVIDER_UNAVAILABLE', 'The loyalty service is not available. Try again later.');
}

/**
 * Sends a card command while the caller holds the customer's loyalty lock (in `trx`). The
 * provider's answer is applied to the wallet (`applied`; the wallet is created when there was
 * none). When the answer does not come in time the wallet turns `pending` and the command is
 * queued to be re-sent with the same key (`accepted`). A refusal or failure changes nothing.
 */
export async function applyCommand(
  deps: Pick<AppDeps, 'loyalty' | 'clock' | 'log'>,
  trx: Executor,
  customerId: string,
  wallet: WalletRow | null,
  phone: string,
  command: WalletCommand,
): Promise<{ outcome: 'applied' | 'accepted'; wallet: WalletRow }> {
  const { provider } = deps.loyalty;
  try {
    const customer = await sendCommand(provider, command, wallet?.provider_customer_id ?? null, phone);
    const programs = await programsOrNull(deps);
    const target = wallet ?? (await insertWalletIfAbsent(trx, { customer_id: customerId, status: 'ready' })).wallet;
    return {
      outcome: 'applied',
      wallet: await updateWallet(trx, target.id, snapshotChanges(target, customer, programs, deps.clock.now())),
    };
  } catch (err) {
    if (err instanceof LoyaltyProviderError && err.kind === 'unknown') {
      const target = wallet ?? (await insertWalletIfAbsent(trx, { customer_id: customerId, status: 'pending' })).wallet;
      const pending = await updateWallet(trx, target.id, { status: 'pending', sync_attempts: 0 });
      await enqueueJob(trx, target.id, 'command', command);
      deps.log.warn('loyalty command outcome unknown; queued for reconciliation', { wallet_id: target.id, command: command.type });
      return { outcome: 'accepted', wallet: pending };
    }
    throw providerFailure(err);
  }
}
