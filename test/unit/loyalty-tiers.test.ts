// Loyalty tiers (domain/loyalty/tiers.ts): progress at the edges of a level, which tier the
// provider's report names (by id, else by name), the turnover when it names none, and the scale
// rebuilt from the report alone.
import { describe, expect, it } from 'vitest';
import { levelIndexFor, progressBetween, tierStatusFor, type ProgramLevel, type TierStatusInput } from '../../domain/loyalty/tiers.js';

const LEVELS: ProgramLevel[] = [
  { id: 1, order: 1, name: 'Bronze', boundary: '0', range_label: 'from 0', description: '3%' },
  { id: 2, order: 2, name: 'Silver', boundary: '10000', range_label: 'from 10 000', description: '5%' },
  { id: 3, order: 3, name: 'Gold', boundary: '30000', range_label: 'from 30 000', description: '7%' },
];

const status = (input: Partial<TierStatusInput>) =>
  tierStatusFor({
    programName: 'Family club',
    turnover: '14200',
    lastPurchasePoints: '0',
    current: null,
    next: null,
    levels: LEVELS,
    ...input,
  });

const active = (s: ReturnType<typeof tierStatusFor>) => s.tiers.filter((t) => t.is_active).map((t) => t.label);

describe('tier amounts', () => {
  it('refuses a turnover or boundary that is not an amount', () => {
    expect(() => levelIndexFor(LEVELS, '14 200')).toThrow('"14 200" is not an amount');
    expect(() => levelIndexFor([{ ...LEVELS[0]!, boundary: '1.234' }], '10')).toThrow('"1.234" is not an amount');
  });
});

describe('progressBetween', () => {
  it('is 0 without a lower boundary and 1 when the next boundary is not above it', () => {
    expect(progressBetween(null, '30000', '14200')).toBe(0);
    expect(progressBetween('30000', '30000', '100')).toBe(1);
    expect(progressBetween('30000', '10000', '20000')).toBe(1);
  });

  it('stays within 0..1 below the lower and above the upper boundary', () => {
    expect(progressBetween('10000', '30000', '5000')).toBe(0);
    expect(progressBetween('10000', '30000', '30000')).toBe(1);
    expect(progressBetween('10000', '30000', '45000')).toBe(1);
    expect(progressBetween('10000', '30000', '29999.99')).toBe(0.9999);
  });
});

describe('tierStatusFor with the level list', () => {
  it('matches the reported tier by id when both have one, whatever its name', () => {
    const s = status({ current: { id: 2, order: null, name: 'Silber', boundary: null } });
    expect(s.current_tier).toBe('Silver');
    expect(active(s)).toEqual(['Silver']);
    expect(status({ current: { id: 3, order: 3, name: 'Silver', boundary: '30000' } }).current_tier).toBe('Gold');
  });

  it('matches by name when the report or the level has no id', () => {
    expect(status({ current: { id: null, order: null, name: 'Gold', boundary: null } }).current_tier).toBe('Gold');
    const unnumbered = LEVELS.map((l) => ({ ...l, id: null }));
    const s = status({ current: { id: 1, order: 1, name: 'Gold', boundary: null }, levels: unnumbered });
    expect(s.current_tier).toBe('Gold');
    expect(active(s)).toEqual(['Gold']);
  });

  it('keeps the tier the provider reports even below its turnover, with nothing left to the next', () => {
    const s = status({ current: { id: 1, order: 1, name: 'Bronze', boundary: '0' }, turnover: '14200' });
    expect(s).toMatchObject({ current_tier: 'Bronze', next_tier: 'Silver', progress: 1, amount_to_next: '0.00' });
    expect(active(s)).toEqual(['Bronze']);
  });

  it('places the customer by turnover when the provider reports no tier or one the program lacks', () => {
    expect(status({ turnover: '0' })).toMatchObject({ current_tier: 'Bronze', next_tier: 'Silver', amount_to_next: '10000.00' });
    expect(status({ turnover: '14200' }).current_tier).toBe('Silver');
    const unknown = status({ turnover: '31000', current: { id: 9, order: 9, name: 'Platinum', boundary: '100000' } });
    expect(unknown).toMatchObject({ current_tier: 'Gold', next_tier: '', progress: 1 });
    expect(active(unknown)).toEqual(['Gold']);
  });

  it('has no current tier below the lowest boundary and counts progress to it from zero', () => {
    const s = status({ turnover: '5000', levels: LEVELS.slice(1) });
    expect(s).toMatchObject({ current_tier: '', next_tier: 'Silver', progress: 0.5, amount_to_next: '5000.00', tiers_source: 'cdp' });
    expect(active(s)).toEqual([]);
  });

  it('lists every level with its boundary, range and description', () => {
    expect(status({}).tiers[2]).toEqual({
      id: 3,
      order: 3,
      label: 'Gold',
      is_active: false,
      boundary: '30000.00',
      range_label: 'from 30 000',
      description: '7%',
    });
  });
});

describe('tierStatusFor without the level list (cdp_fallback)', () => {
  it('treats an empty level list like a missing one', () => {
    const s = status({ levels: [], current: { id: 2, order: 2, name: 'Silver', boundary: '10000' } });
    expect(s).toMatchObject({ tiers_source: 'cdp_fallback', tiers_complete: false, current_tier: 'Silver' });
    expect(s.tiers).toHaveLength(1);
  });

  it('counts what is left to the reported next tier', () => {
    const s = status({
      levels: null,
      current: { id: null, order: null, name: 'Silver', boundary: '10000' },
      next: { id: null, order: null, name: 'Gold', boundary: '30000' },
    });
    expect(s).toMatchObject({ progress: 0.21, amount_to_next: '15800.00' });
  });

  it('is on the top tier when the provider reports no next one', () => {
    const s = status({ levels: null, current: { id: 3, order: 3, name: 'Gold', boundary: null } });
    expect(s).toMatchObject({ current_tier: 'Gold', next_tier: '', progress: 1, amount_to_next: '0' });
    expect(s.tiers).toEqual([{ id: 3, order: 3, label: 'Gold', is_active: true, boundary: null, range_label: '', description: '' }]);
  });

  it('shows only the next tier, with no progress, when the provider reports no current one', () => {
    const s = status({ levels: null, turnover: '5000', next: { id: 2, order: 2, name: 'Silver', boundary: '10000' } });
    expect(s).toMatchObject({ current_tier: '', next_tier: 'Silver', progress: 0, amount_to_next: '5000.00' });
    expect(s.tiers.map((t) => [t.label, t.is_active])).toEqual([['Silver', false]]);
  });

  it('shows an empty scale when the provider reports no tier at all', () => {
    const s = status({ levels: null });
    expect(s).toMatchObject({ current_tier: '', next_tier: '', progress: 0, amount_to_next: '0', tiers: [] });
  });
});
