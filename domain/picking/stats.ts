// Derived figures of a picker's history summary: averages, pace and rates. Integer arithmetic
// on counts and seconds; fractions are written as decimal strings rounded half-up.

export interface SummaryCounts {
  completed_sessions_count: number;
  items_count: number;
  replaced_items_count: number;
  removed_items_count: number;
  total_duration_seconds: number;
}

export interface SummaryRates {
  average_duration_seconds: number | null;
  average_seconds_per_item: number | null;
  /** Items per minute, 2 decimals. */
  items_per_minute: string | null;
  /** Removed items / items, 4 decimals. */
  missing_rate: string | null;
  /** Replaced items / items, 4 decimals. */
  replacement_rate: string | null;
}

/** numerator / denominator rounded half-up to `decimals`, as a decimal string. */
export function ratio(numerator: number, denominator: number, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const n = BigInt(numerator) * scale * 2n + BigInt(denominator);
  const q = n / (2n * BigInt(denominator));
  const whole = q / scale;
  const fraction = (q % scale).toString().padStart(decimals, '0');
  return `${whole}.${fraction}`;
}

const roundedDivision = (n: number, d: number): number => Math.floor((2 * n + d) / (2 * d));

export function summaryRates(c: SummaryCounts): SummaryRates {
  const hasItems = c.items_count > 0;
  return {
    average_duration_seconds: c.completed_sessions_count > 0 ? roundedDivision(c.total_duration_seconds, c.completed_sessions_count) : null,
    average_seconds_per_item: hasItems ? roundedDivision(c.total_duration_seconds, c.items_count) : null,
    // items / (seconds / 60) = items * 60 / seconds
    items_per_minute: hasItems && c.total_duration_seconds > 0 ? ratio(c.items_count * 60, c.total_duration_seconds, 2) : null,
    missing_rate: hasItems ? ratio(c.removed_items_count, c.items_count, 4) : null,
    replacement_rate: hasItems ? ratio(c.replaced_items_count, c.items_count, 4) : null,
  };
}
