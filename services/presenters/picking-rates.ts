// The picking rates of a picker's history summary: single walks, batches and both together, from
// the walks the query summed per mode.
import type { components } from '../../generated/api.test.js';
import { pickingRates, type PickingMode, type WalkTotals } from '../../domain/picking/rates.js';

export type PickerPickingRatesView = components['schemas']['PickerPickingRatesSchema'];

export function toPickingRates(rows: readonly (WalkTotals & { mode: PickingMode })[]): PickerPickingRatesView {
  return pickingRates(Object.fromEntries(rows.map((r) => [r.mode, r])));
}
