// Rules of the loyalty wallet that need no database: card numbers, what linking a card would do
// (WalletLinkPreviewSchema's table), the wallet's control fields, the order of cards, and the
// timing of background synchronization (retry backoff, poll hint).

export interface WalletCard {
  id: string;
  is_active: boolean;
  is_blocked: boolean;
  block_reason: string | null;
}

/** Digits of a card number with spaces and dashes removed, or null unless 6 to 19 digits remain. */
export function normalizeCardNumber(raw: string): string | null {
  const digits = raw.trim().replace(/[\s-]+/g, '');
  return /^[0-9]{6,19}$/.test(digits) ? digits : null;
}

/** All but the last 4 digits replaced by `*`. */
export const maskCardNumber = (digits: string): string => '*'.repeat(Math.max(0, digits.length - 4)) + digits.slice(-4);

export type LinkMode = 'link' | 'physical';
export type LinkStatus = 'ISSUED' | 'NOT_ISSUED' | 'ALREADY_LINKED' | 'OWNED_BY_ANOTHER_CUSTOMER' | 'BLOCKED' | 'NOT_FOUND';

/** A card as the provider knows it, seen from the caller. */
export interface CardFacts {
  /** Whose card it is: the caller's loyalty customer, another one, or nobody registered. */
  holder: 'caller' | 'other' | 'none';
  /** False for a physical card from stock that was never issued. */
  issued: boolean;
  isBlocked: boolean;
}

export interface LinkDecision {
  status: LinkStatus;
  canLink: boolean;
  /** The code the paired command would answer when `canLink` is false. */
  reasonCode: string | null;
  ownerMatch: boolean | null;
}

/**
 * What link/ (`link`) or link-physical/ (`physical`) would do with a card, first match wins:
 * unknown, already the caller's, another customer's, blocked, never issued, issued. A wallet
 * whose synchronization is unfinished accepts no card commands.
 */
export function decideCardLink(card: CardFacts | null, mode: LinkMode, walletPending: boolean): LinkDecision {
  const status: LinkStatus =
    card === null
      ? 'NOT_FOUND'
      : card.holder === 'caller'
        ? 'ALREADY_LINKED'
        : card.holder === 'other'
          ? 'OWNED_BY_ANOTHER_CUSTOMER'
          : card.isBlocked
            ? 'BLOCKED'
            : !card.issued
              ? 'NOT_ISSUED'
              : 'ISSUED';
  const ownerMatch = card === null || card.holder === 'none' ? null : card.holder === 'caller';
  const accepted = mode === 'link' ? status === 'ISSUED' : status === 'NOT_ISSUED';
  if (accepted) {
    return walletPending
      ? { status, canLink: false, reasonCode: 'WALLET_SYNC_IN_PROGRESS', ownerMatch }
      : { status, canLink: true, reasonCode: null, ownerMatch };
  }
  const reasonCode: Record<LinkStatus, string> = {
    NOT_FOUND: 'CARD_NOT_FOUND',
    ALREADY_LINKED: 'ALREADY_LINKED',
    OWNED_BY_ANOTHER_CUSTOMER: 'CARD_OWNED_BY_ANOTHER_CUSTOMER',
    BLOCKED: 'CARD_BLOCKED',
    NOT_ISSUED: 'CARD_NOT_ISSUED',
    ISSUED: 'CARD_ALREADY_ISSUED',
  };
  return { status, canLink: false, reasonCode: reasonCode[status], ownerMatch };
}

/** The block made by the loyalty provider; the customer can neither choose nor lift it. */
export const PROVIDER_BLOCK_REASON = 'provider';

export interface WalletControls {
  is_linked: boolean;
  is_blocked: boolean;
  can_block: boolean;
  can_unblock: boolean;
  can_replace: boolean;
  can_link_card: boolean;
}

export interface WalletFacts {
  status: 'pending' | 'ready' | 'error';
  providerCustomerId: string | null;
  mainCard: WalletCard | null;
  cardsCount: number;
}

/** The control fields of WalletSchema: the app decides what to offer from these only. */
export function walletControls(w: WalletFacts): WalletControls {
  const isLinked = w.providerCustomerId !== null && w.cardsCount > 0;
  const main = w.mainCard;
  return {
    is_linked: isLinked,
    is_blocked: main?.is_blocked ?? false,
    can_block: isLinked && main !== null && main.is_active && !main.is_blocked,
    can_unblock: isLinked && main !== null && unblockable(main),
    can_replace: isLinked && w.status !== 'pending',
    can_link_card: w.status !== 'pending',
  };
}

/** Only a block the customer made, on a card still in use, can be lifted by the customer. */
export const unblockable = (card: WalletCard): boolean => card.is_blocked && card.is_active && card.block_reason !== PROVIDER_BLOCK_REASON;

/** Cards as the wallet lists them: the main card, then other active cards, then retired ones. */
export function orderCards<C extends WalletCard>(cards: C[], mainCardId: string | null): C[] {
  const rank = (c: C) => (c.id === mainCardId ? 0 : c.is_active ? 1 : 2);
  return cards
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c);
}

/** Attempts of one provisioning or reconciliation before the wallet turns `error`. */
export const MAX_SYNC_ATTEMPTS = 5;

/**
 * Wait before attempt `attempt + 1` after `attempt` failed: base, 2x, 4x, 8x (with a base of 60 s,
 * 1 + 2 + 4 + 8 = 15 minutes over the 5 attempts).
 */
export const retryDelaySeconds = (attempt: number, baseSeconds: number): number => baseSeconds * 2 ** Math.max(0, attempt - 1);

/** `poll_after_seconds` while pending: 2 s, doubling with each failed attempt, at most 30 s. */
export const pollAfterSeconds = (failedAttempts: number): number => Math.min(30, 2 * 2 ** Math.max(0, failedAttempts));
