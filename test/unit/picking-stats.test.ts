// The derived figures of the picker's history summary: averages, pace, rates.
import { describe, expect, it } from 'vitest';
import { ratio, summaryRates } from '../../domain/picking/stats.js';

describe('history summary figures', () => {
  it('divides with half-up rounding', () => {
    expect(ratio(1, 3, 4)).toBe('0.3333');
    expect(ratio(2, 3, 4)).toBe('0.6667');
    expect(ratio(1, 8, 2)).toBe('0.13');
    expect(ratio(5, 5, 4)).toBe('1.0000');
  });
  it('derives averages, pace and rates from the counts', () => {
    expect(
      summaryRates({
        completed_sessions_count: 2,
        items_count: 30,
        replaced_items_count: 3,
        removed_items_count: 2,
        total_duration_seconds: 1800,
      }),
    ).toEqual({
      average_duration_seconds: 900,
      average_seconds_per_item: 60,
      items_per_minute: '1.00',
      missing_rate: '0.0667',
      replacement_rate: '0.1000',
    });
  });
  it('has no averages or rates without sessions or items', () => {
    expect(
      summaryRates({
        completed_sessions_count: 0,
        items_count: 0,
        replaced_items_count: 0,
        removed_items_count: 0,
        total_duration_seconds: 0,
      }),
    ).toEqual({
      average_duration_seconds: null,
      average_seconds_per_item: null,
      items_per_minute: null,
      missing_rate: null,
      replacement_rate: null,
    });
  });
});
