// Edges of the loyalty accrual and wallet rules (domain/loyalty/accrual.ts, wallet.ts): zero and
// refused amounts with the field they name, rates, the largest-remainder split over many lines, and
// the wallet controls of a half-linked or synchronizing wallet.
import { describe, expect, it } from 'vitest';
import { loyaltyAccrualFor, parseMoney, pointsShares, previewCart } from '../../domain/loyalty/accrual.js';
import { decideCardLink, orderCards, walletControls, type WalletCard } from '../../domain/loyalty/wallet.js';

const silver = { tierLabel: 'Silver', accrualPercent: '5.00', mainCardBlocked: false };

describe('accrual amounts and rates', () => {
  it('earns nothing on a zero total, which is a valid amount', () => {
    expect(loyaltyAccrualFor('0', silver)).toEqual({ outcome: 'accrued', points: 0n, accrualPercent: '5.00' });
    expect(loyaltyAccrualFor('0.00', null)).toEqual({ outcome: 'no_wallet', points: 0n, accrualPercent: null });
  });

  it('names the refused amount and what it is', () => {
    expect(() => loyaltyAccrualFor('-0.01', silver)).toThrow('goods total "-0.01" is not a non-negative amount with at most 2 decimals');
    expect(() => parseMoney('1.234')).toThrow('amount "1.234" is not a non-negative amount with at most 2 decimals');
    expect(() => previewCart([{ quantityThousandths: 1000n, unitPrice: '9,99' }], silver)).toThrow(
      'unit price "9,99" is not a non-negative amount with at most 2 decimals',
    );
  });

  it('reads money as kopecks', () => {
    expect(parseMoney('12.5')).toBe(1250n);
    expect(parseMoney('0')).toBe(0n);
  });

  it('accrues at rate 0 when the tier rate is unknown or zero', () => {
    expect(loyaltyAccrualFor('1000', { ...silver, accrualPercent: null })).toEqual({
      outcome: 'accrued',
      points: 0n,
      accrualPercent: '0.00',
    });
    expect(loyaltyAccrualFor('1000', { ...silver, accrualPercent: '0' })).toEqual({
      outcome: 'accrued',
      points: 0n,
      accrualPercent: '0.00',
    });
  });

  it('refuses a rate that is negative or not a decimal with at most 2 places', () => {
    for (const rate of ['-1', '5.005', 'five'])
      expect(() => loyaltyAccrualFor('1000', { ...silver, accrualPercent: rate }), rate).toThrow(
        `accrual percent "${rate}" is not a valid rate`,
      );
  });
});

describe('pointsShares over many lines', () => {
  it('gives the points left by rounding to the largest remainders, earlier lines first on ties', () => {
    expect(pointsShares([100n, 100n, 100n, 100n, 100n], 3n)).toEqual([1n, 1n, 1n, 0n, 0n]);
    expect(pointsShares([100n, 300n, 100n, 300n], 3n)).toEqual([1n, 1n, 0n, 1n]);
    expect(pointsShares([1n, 2n, 3n, 4n], 5n)).toEqual([1n, 1n, 1n, 2n]);
    expect(pointsShares([10n, 70n, 20n, 40n, 60n], 3n)).toEqual([0n, 1n, 0n, 1n, 1n]);
    expect(pointsShares([5n, 1n, 1n, 1n, 1n, 1n, 1n, 1n, 1n, 1n, 1n, 5n], 4n)).toEqual([1n, 1n, 1n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 0n, 1n]);
  });

  it('adds up to the points exactly', () => {
    const lines = [333n, 1n, 250n, 250n, 999n, 7n, 7n, 7n, 12n, 12n, 4000n, 5n];
    for (const points of [1n, 2n, 3n, 17n, 100n, 1234n]) expect(pointsShares(lines, points).reduce((a, b) => a + b, 0n)).toBe(points);
  });
});

describe('wallet controls', () => {
  const main: WalletCard = { id: 'c1', is_active: true, is_blocked: false, block_reason: null };
  const ready = { status: 'ready' as const, providerCustomerId: 'LC-1', mainCard: main, cardsCount: 1 };

  it('is linked only with a provider customer and at least one card', () => {
    expect(walletControls({ ...ready, providerCustomerId: null })).toMatchObject({
      is_linked: false,
      can_block: false,
      can_replace: false,
    });
    expect(walletControls({ ...ready, cardsCount: 0 })).toMatchObject({ is_linked: false, can_block: false, can_replace: false });
    const blocked = { ...main, is_blocked: true, block_reason: 'lost' };
    expect(walletControls({ ...ready, providerCustomerId: null, mainCard: blocked })).toMatchObject({
      is_blocked: true,
      can_unblock: false,
    });
  });

  it('offers no block or unblock without a main card', () => {
    expect(walletControls({ ...ready, mainCard: null, cardsCount: 2 })).toEqual({
      is_linked: true,
      is_blocked: false,
      can_block: false,
      can_unblock: false,
      can_replace: true,
      can_link_card: true,
    });
  });

  it('offers no replacement while a linked wallet synchronizes', () => {
    expect(walletControls({ ...ready, status: 'pending' })).toMatchObject({
      is_linked: true,
      can_block: true,
      can_replace: false,
      can_link_card: false,
    });
    expect(walletControls({ ...ready, status: 'error' })).toMatchObject({ can_replace: true, can_link_card: true });
  });

  it('refuses to link a blocked card nobody holds with CARD_BLOCKED', () => {
    expect(decideCardLink({ holder: 'none', issued: true, isBlocked: true }, 'link', false)).toEqual({
      status: 'BLOCKED',
      canLink: false,
      reasonCode: 'CARD_BLOCKED',
      ownerMatch: null,
    });
  });

  it('keeps the listed order among active cards and among retired cards', () => {
    const card = (id: string, is_active: boolean): WalletCard => ({ id, is_active, is_blocked: !is_active, block_reason: null });
    const cards = [card('r1', false), card('a1', true), card('r2', false), card('main', true), card('a2', true), card('r3', false)];
    expect(orderCards(cards, 'main').map((c) => c.id)).toEqual(['main', 'a1', 'a2', 'r1', 'r2', 'r3']);
  });
});
