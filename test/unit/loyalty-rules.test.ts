// The pure loyalty rules: accrual (and its split over preview lines), tiers, card link decisions,
// wallet control fields, card numbers and sync timing.
import { describe, expect, it } from 'vitest';
import { lineAmountKopecks, loyaltyAccrualFor, pointsShares, previewCart } from '../../domain/loyalty/accrual.js';
import { levelIndexFor, progressBetween, tierStatusFor, type ProgramLevel } from '../../domain/loyalty/tiers.js';
import {
  decideCardLink,
  maskCardNumber,
  normalizeCardNumber,
  orderCards,
  pollAfterSeconds,
  retryDelaySeconds,
  walletControls,
} from '../../domain/loyalty/wallet.js';

const silver = { tierLabel: 'Silver', accrualPercent: '5.00', mainCardBlocked: false };

describe('loyaltyAccrualFor', () => {
  it('earns floor(total x rate) whole points for a linked member', () => {
    expect(loyaltyAccrualFor('245.74', silver)).toEqual({ outcome: 'accrued', points: 12n, accrualPercent: '5.00' });
    expect(loyaltyAccrualFor('19.99', silver).points).toBe(0n);
    expect(loyaltyAccrualFor('20.00', silver).points).toBe(1n);
    expect(loyaltyAccrualFor('1000', { ...silver, accrualPercent: '3.5' }).points).toBe(35n);
  });

  it('earns nothing without a linked wallet or with a blocked main card', () => {
    expect(loyaltyAccrualFor('5000.00', null)).toEqual({ outcome: 'no_wallet', points: 0n, accrualPercent: null });
    expect(loyaltyAccrualFor('5000.00', { ...silver, mainCardBlocked: true })).toEqual({
      outcome: 'card_blocked',
      points: 0n,
      accrualPercent: null,
    });
  });

  it('refuses amounts that are not money', () => {
    expect(() => loyaltyAccrualFor('1.005', silver)).toThrow(RangeError);
    expect(() => loyaltyAccrualFor('-5.00', silver)).toThrow(RangeError);
    expect(() => loyaltyAccrualFor('1e3', silver)).toThrow(RangeError);
  });
});

describe('pointsShares', () => {
  it('splits the points by amount, largest remainders first, and adds up exactly', () => {
    // 12 points over 179.80 and 74.93: exact shares 8.470 and 3.530 -> floors 8 + 3, the last
    // point to the larger remainder (.530).
    const shares = pointsShares([17980n, 7493n], 12n);
    expect(shares).toEqual([8n, 4n]);
    expect(shares.reduce((a, b) => a + b, 0n)).toBe(12n);
  });

  it('gives nothing when there is nothing to split', () => {
    expect(pointsShares([100n, 200n], 0n)).toEqual([0n, 0n]);
    expect(pointsShares([0n, 0n], 5n)).toEqual([0n, 0n]);
  });

  it('breaks ties towards the earlier line', () => {
    expect(pointsShares([100n, 100n, 100n], 1n)).toEqual([1n, 0n, 0n]);
  });
});

describe('previewCart', () => {
  it('prices lines half-up to kopecks and accrues on the cart total', () => {
    const p = previewCart(
      [
        { quantityThousandths: 2000n, unitPrice: '89.90' },
        { quantityThousandths: 750n, unitPrice: '99.90' },
      ],
      silver,
    );
    expect(p.lines.map((l) => l.subtotal)).toEqual([17980n, 7493n]); // 74.925 rounds half-up to 74.93
    expect(p.total).toBe(25473n);
    expect(p.discount).toBe(0n);
    expect(p.accrual.points).toBe(12n);
    expect(p.lines.reduce((a, l) => a + l.points, 0n)).toBe(12n);
  });

  it('rounds each line amount half-up', () => {
    expect(lineAmountKopecks(1n, 1n)).toBe(0n);
    expect(lineAmountKopecks(500n, 1n)).toBe(1n); // 0.005 -> 0.01
    expect(lineAmountKopecks(1234n, 9999n)).toBe(12339n); // 1.234 x 99.99 = 123.38766
  });
});

const LEVELS: ProgramLevel[] = [
  { id: 3, order: 3, name: 'Gold', boundary: '30000', range_label: 'from 30 000', description: '7%' },
  { id: 1, order: 1, name: 'Bronze', boundary: '0', range_label: 'from 0', description: '3%' },
  { id: 2, order: 2, name: 'Silver', boundary: '10000', range_label: 'from 10 000', description: '5%' },
];

describe('tiers', () => {
  it('places a turnover at the highest boundary it reaches', () => {
    expect(levelIndexFor(LEVELS, '0')).toBe(0);
    expect(levelIndexFor(LEVELS, '9999.99')).toBe(0);
    expect(levelIndexFor(LEVELS, '10000.00')).toBe(1);
    expect(levelIndexFor(LEVELS, '45000')).toBe(2);
    expect(levelIndexFor([{ ...LEVELS[2]!, boundary: '100' }], '50')).toBe(-1);
  });

  it('measures progress between boundaries, 1 on the top tier', () => {
    expect(progressBetween('10000', '30000', '14200')).toBe(0.21);
    expect(progressBetween('10000', '30000', '10000')).toBe(0);
    expect(progressBetween('30000', null, '45000')).toBe(1);
  });

  it('draws the full scale from the program (cdp) and marks the provider-reported tier', () => {
    const s = tierStatusFor({
      programName: 'Family club',
      turnover: '14200',
      lastPurchasePoints: '37.00',
      current: { id: 2, order: 2, name: 'Silver', boundary: '10000' },
      next: { id: 3, order: 3, name: 'Gold', boundary: '30000' },
      levels: LEVELS,
    });
    expect(s).toMatchObject({
      tiers_source: 'cdp',
      tiers_complete: true,
      current_tier: 'Silver',
      next_tier: 'Gold',
      amount_to_next: '15800.00',
      total_turnover: '14200.00',
      progress: 0.21,
    });
    expect(s.tiers.map((t) => [t.label, t.is_active])).toEqual([
      ['Bronze', false],
      ['Silver', true],
      ['Gold', false],
    ]);
  });

  it('rebuilds current and next tier when the level list is missing (cdp_fallback)', () => {
    const s = tierStatusFor({
      programName: 'Family club',
      turnover: '14200',
      lastPurchasePoints: '0',
      current: { id: null, order: null, name: 'Silver', boundary: '10000' },
      next: { id: null, order: null, name: 'Gold', boundary: '30000' },
      levels: null,
    });
    expect(s).toMatchObject({
      tiers_source: 'cdp_fallback',
      tiers_complete: false,
      current_tier: 'Silver',
      next_tier: 'Gold',
      progress: 0.21,
    });
    expect(s.tiers).toEqual([
      { id: null, order: null, label: 'Silver', is_active: true, boundary: '10000.00', range_label: '', description: '' },
      { id: null, order: null, label: 'Gold', is_active: false, boundary: '30000.00', range_label: '', description: '' },
    ]);
  });

  it('is on the top tier with nothing to go', () => {
    const s = tierStatusFor({
      programName: 'P',
      turnover: '31000',
      lastPurchasePoints: '0',
      current: { id: 3, order: 3, name: 'Gold', boundary: '30000' },
      next: null,
      levels: LEVELS,
    });
    expect(s).toMatchObject({ current_tier: 'Gold', next_tier: '', progress: 1, amount_to_next: '0' });
  });
});

describe('decideCardLink', () => {
  const card = (holder: 'caller' | 'other' | 'none', issued = true, isBlocked = false) => ({ holder, issued, isBlocked });

  it('follows the preview table, first match wins', () => {
    expect(decideCardLink(null, 'link', false)).toEqual({
      status: 'NOT_FOUND',
      canLink: false,
      reasonCode: 'CARD_NOT_FOUND',
      ownerMatch: null,
    });
    expect(decideCardLink(card('caller'), 'link', false)).toEqual({
      status: 'ALREADY_LINKED',
      canLink: false,
      reasonCode: 'ALREADY_LINKED',
      ownerMatch: true,
    });
    // Another customer's card says so even when it is also blocked or unissued.
    expect(decideCardLink(card('other', true, true), 'link', false)).toEqual({
      status: 'OWNED_BY_ANOTHER_CUSTOMER',
      canLink: false,
      reasonCode: 'CARD_OWNED_BY_ANOTHER_CUSTOMER',
      ownerMatch: false,
    });
    expect(decideCardLink(card('none', true, true), 'link', false).status).toBe('BLOCKED');
    expect(decideCardLink(card('none', false), 'link', false)).toMatchObject({
      status: 'NOT_ISSUED',
      canLink: false,
      reasonCode: 'CARD_NOT_ISSUED',
    });
    expect(decideCardLink(card('none'), 'link', false)).toEqual({ status: 'ISSUED', canLink: true, reasonCode: null, ownerMatch: null });
  });

  it('accepts only never-issued cards for link-physical', () => {
    expect(decideCardLink(card('none', false), 'physical', false)).toMatchObject({ status: 'NOT_ISSUED', canLink: true, reasonCode: null });
    expect(decideCardLink(card('none'), 'physical', false)).toMatchObject({
      status: 'ISSUED',
      canLink: false,
      reasonCode: 'CARD_ALREADY_ISSUED',
    });
  });

  it('refuses while the wallet synchronizes', () => {
    expect(decideCardLink(card('none'), 'link', true)).toMatchObject({
      status: 'ISSUED',
      canLink: false,
      reasonCode: 'WALLET_SYNC_IN_PROGRESS',
    });
  });
});

describe('walletControls', () => {
  const main = { id: 'c1', is_active: true, is_blocked: false, block_reason: null };
  it('offers block, replace and linking on a ready linked wallet', () => {
    expect(walletControls({ status: 'ready', providerCustomerId: 'LC-1', mainCard: main, cardsCount: 1 })).toEqual({
      is_linked: true,
      is_blocked: false,
      can_block: true,
      can_unblock: false,
      can_replace: true,
      can_link_card: true,
    });
  });
  it('offers unblock only for a block by the customer', () => {
    const own = walletControls({
      status: 'ready',
      providerCustomerId: 'LC-1',
      mainCard: { ...main, is_blocked: true, block_reason: 'lost' },
      cardsCount: 1,
    });
    expect(own).toMatchObject({ is_blocked: true, can_block: false, can_unblock: true });
    const byProvider = walletControls({
      status: 'ready',
      providerCustomerId: 'LC-1',
      mainCard: { ...main, is_blocked: true, block_reason: 'provider' },
      cardsCount: 1,
    });
    expect(byProvider).toMatchObject({ is_blocked: true, can_unblock: false });
  });
  it('offers nothing but waiting while provisioning', () => {
    expect(walletControls({ status: 'pending', providerCustomerId: null, mainCard: null, cardsCount: 0 })).toEqual({
      is_linked: false,
      is_blocked: false,
      can_block: false,
      can_unblock: false,
      can_replace: false,
      can_link_card: false,
    });
  });
});

describe('card numbers and timing', () => {
  it('normalizes card numbers and masks them', () => {
    expect(normalizeCardNumber(' 2775 0000-1234 5678 ')).toBe('2775000012345678');
    expect(normalizeCardNumber('12345')).toBeNull();
    expect(normalizeCardNumber('1'.repeat(20))).toBeNull();
    expect(normalizeCardNumber('2775 00AB')).toBeNull();
    expect(maskCardNumber('2775000012345678')).toBe('************5678');
  });

  it('orders cards main, active, retired', () => {
    const cards = [
      { id: 'old', is_active: false, is_blocked: true, block_reason: null },
      { id: 'extra', is_active: true, is_blocked: false, block_reason: null },
      { id: 'main', is_active: true, is_blocked: false, block_reason: null },
    ];
    expect(orderCards(cards, 'main').map((c) => c.id)).toEqual(['main', 'extra', 'old']);
  });

  it('backs off 1, 2, 4, 8 x base (15 minutes over 5 attempts at 60 s) and polls 2..30 s', () => {
    const waits = [1, 2, 3, 4].map((a) => retryDelaySeconds(a, 60));
    expect(waits).toEqual([60, 120, 240, 480]);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(900);
    expect([0, 1, 2, 3, 4, 9].map(pollAfterSeconds)).toEqual([2, 4, 8, 16, 30, 30]);
  });
});
