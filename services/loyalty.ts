// The loyalty wallet as the handlers and the background worker share it: the row-to-API mapper,
// applying a provider snapshot to the wallet, sending card commands (now or again later), and
// turning provider failures into the contract's answers.
import type { components } from '../generated/api.test.js';
import {
  enqueueJob,
  findWalletById,
  insertWalletIfAbsent,
  lockCustomerLoyalty,
  updateWallet,
  type WalletRow,
} from '../db/queries/loyalty.js';
import type { Executor } from '../db/executor.js';
import type { DB } from '../db/schema.js';
import type { MirroredAccount, MirroredCard } from '../db/tables/loyalty.js';
import type { AppDeps } from './deps.js';
import { badGateway, conflict, unprocessable } from './errors.js';
import {
  LoyaltyProviderError,
  type LoyaltyProvider,
  type ProviderCustomer,
  type ProviderProgram,
} from '../platform/providers/loyalty/index.js';
import type { LoyaltyMember } from '../domain/loyalty/accrual.js';
import { blockReasonLabel, message, syncErrorMessage, type Lang, type MessageKey } from '../domain/texts/loyalty.js';
import { tierStatusFor } from '../domain/loyalty/tiers.js';
import { orderCards, pollAfterSeconds, walletControls } from '../domain/loyalty/wallet.js';
import type { Updateable } from 'kysely';

type Schemas = components['schemas'];
export type WalletBody = Schemas['WalletSchema'];
export type Outcome = 'applied' | 'accepted' | 'unchanged';

// ---- the API view -----------------------------------------------------------------------------

const mainCardOf = (w: WalletRow): MirroredCard | null => w.cards.find((c) => c.id === w.main_card_id) ?? null;

/** The one mapper of a wallet row to WalletSchema. */
export function walletBody(w: WalletRow, lang: Lang): WalletBody {
  const main = mainCardOf(w);
  const controls = walletControls({
    status: w.status,
    providerCustomerId: w.provider_customer_id,
    mainCard: main,
    cardsCount: w.cards.length,
  });
  const active = w.accounts.find((a) => a.id === w.active_account_id);
  return {
    id: w.id,
    status: w.status,
    ...controls,
    block_reason:
      main?.is_blocked && main.block_reason ? { key: main.block_reason, label: blockReasonLabel(main.block_reason, lang) } : null,
    balance: active?.balance ?? '0',
    active_account_id: w.active_account_id,
    main_card_id: w.main_card_id,
    accounts: w.accounts.map((a) => ({ id: a.id, title: a.title, description: a.description, balance: a.balance, is_active: a.is_active })),
    cards: orderCards(w.cards, w.main_card_id).map((c) => ({
      id: c.id,
      title: c.title,
      card_number: c.card_number,
      is_virtual: c.is_virtual,
      is_active: c.is_active,
      is_blocked: c.is_blocked,
      // Nothing to scan on a blocked or retired card.
      qrcode: c.is_active && !c.is_blocked ? c.qrcode : null,
    })),
    loyalty_status: w.loyalty_status,
    last_synced_at: w.last_synced_at?.toISOString() ?? null,
    last_error:
      w.status === 'error' && w.last_error_code
        ? {
            code: w.last_error_code,
            message: syncErrorMessage(w.last_error_code, lang),
            occurred_at: (w.last_error_at ?? w.updated_at).toISOString(),
            attempts: Math.max(1, w.last_error_attempts ?? 1),
          }
        : null,
    poll_after_seconds: w.status === 'pending' ? pollAfterSeconds(w.sync_attempts) : null,
    created_at: w.created_at.toISOString(),
    updated_at: w.updated_at.toISOString(),
  };
}

export function wrapperBody(outcome: Outcome, key: MessageKey | null, w: WalletRow, lang: Lang): Schemas['WalletWrapperSchema'] {
  return { outcome, message: key ? message(key, lang) : null, wallet: walletBody(w, lang) };
}

export const isLinked = (w: WalletRow): boolean => w.provider_customer_id !== null && w.cards.length > 0;

/** The wallet as the accrual rule sees it: null without a linked wallet. */
export function memberOf(w: WalletRow | undefined | null): LoyaltyMember | null {
  if (!w || !isLinked(w)) return null;
  return {
    tierLabel: w.loyalty_status?.current_tier || null,
    accrualPercent: w.tier_accrual_percent,
    mainCardBlocked: mainCardOf(w)?.is_blocked ?? false,
  };
}

// ---- provider snapshots -----------------------------------------------------------------------

/** The programs for the tier scale, or null when the provider cannot give them now. */
export async function programsOrNull(deps: AppDeps): Promise<ProviderProgram[] | null> {
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
  deps: AppDeps,
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

/** A card command as sent to the provider, kept so it can be re-sent with the same key. */
export type WalletCommand =
  | { type: 'block'; card_id: string; reason: string | null; key: string }
  | { type: 'unblock'; card_id: string; key: string }
  | { type: 'link'; card_number: string; key: string }
  | { type: 'link_physical'; card_number: string; key: string }
  | { type: 'replace'; card_id: string; key: string };

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
  deps: AppDeps,
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
