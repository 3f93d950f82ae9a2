// Whether one cart line can be ordered (AvailabilityOutput): the table of the spec, first match
// wins. Quantities are bigint thousandths (scale 3, see decimal.ts).
import { formatDecimal, minBigint, parseDecimal } from '../money/decimal.js';

export const QUANTITY_SCALE = 3;

export type AvailabilityReason = 'UNKNOWN_PRODUCT' | 'NOT_SOLD_IN_STORE' | 'LIMIT_EXCEEDED' | 'OUT_OF_STOCK';

export type QuantityProblem = 'not_a_decimal' | 'too_many_decimals' | 'below_minimum' | 'fractional_pieces' | 'fractional_grams';

/** Why a quantity breaks the rule, as the end of the INVALID_QUANTITY detail. */
export const QUANTITY_PROBLEMS: Record<QuantityProblem, string> = {
  not_a_decimal: 'is not a decimal number',
  too_many_decimals: 'has more than 3 decimals',
  below_minimum: 'is below 0.001',
  fractional_pieces: 'must be a whole number for a piece unit',
  fractional_grams: 'must be whole grams (at most 2 decimals of 100 g)',
};

/** What a quantity is counted in: the unit's kind, and kilograms (or pieces) per unit (0.100 for 100 g). */
export interface QuantityUnit {
  kind: 'piece' | 'weight';
  ratio: string;
}

/** The unit of a fact row (null when the unit is unknown). */
export const quantityUnit = (f: { unit_kind: 'piece' | 'weight' | null; unit_ratio: string | null } | undefined): QuantityUnit | null =>
  f?.unit_kind && f.unit_ratio !== null ? { kind: f.unit_kind, ratio: f.unit_ratio } : null;

/**
 * A requested quantity in thousandths, or the rule it breaks: at least 0.001, at most three
 * decimals, whole for piece units, whole grams for weight units smaller than a kilogram (at most
 * two decimals of 100 g: a scale weighs grams, and the picked line is kept in kg) - `unit` null
 * when the unit is unknown: nothing to check.
 */
export function parseRequestedQuantity(
  raw: string | number,
  unit: QuantityUnit | null,
): { ok: true; thousandths: bigint } | { ok: false; problem: QuantityProblem } {
  const text = typeof raw === 'number' ? String(raw) : raw.trim();
  if (!/^-?[0-9]+(\.[0-9]+)?$/.test(text)) return { ok: false, problem: 'not_a_decimal' };
  const thousandths = parseDecimal(text, QUANTITY_SCALE);
  if (thousandths === null) return { ok: false, problem: 'too_many_decimals' };
  if (thousandths < 1n) return { ok: false, problem: 'below_minimum' };
  if (unit?.kind === 'piece' && thousandths % 1000n !== 0n) return { ok: false, problem: 'fractional_pieces' };
  // In kg this is thousandths x ratio thousandths millionths: whole grams are whole thousandths of kg.
  if (unit?.kind === 'weight' && (thousandths * parseDecimal(unit.ratio, 3)!) % 1000n !== 0n)
    return { ok: false, problem: 'fractional_grams' };
  return { ok: true, thousandths };
}

export interface InventoryFacts {
  /** Decimal string from the database; null when the store has not reported stock. */
  stock: string | null;
  /** Per-order limit in this unit; null when there is none. */
  orderQuantityLimit: string | null;
}

export interface AvailabilityVerdict {
  is_available: boolean;
  max_quantity: string;
  is_user_order_quantity_limit_enabled: boolean;
  user_order_quantity_limit: string;
  requested_quantity: string;
  reason_code: AvailabilityReason | null;
}

export function decideAvailability(requested: bigint, productExists: boolean, inventory: InventoryFacts | null): AvailabilityVerdict {
  const requestedText = formatDecimal(requested, QUANTITY_SCALE);
  const limit = inventory?.orderQuantityLimit != null ? parseDecimal(inventory.orderQuantityLimit, QUANTITY_SCALE) : null;
  const base = {
    is_user_order_quantity_limit_enabled: limit !== null,
    user_order_quantity_limit: formatDecimal(limit ?? 0n, QUANTITY_SCALE),
    requested_quantity: requestedText,
  };
  if (!productExists) return { ...base, is_available: false, max_quantity: '0.000', reason_code: 'UNKNOWN_PRODUCT' };
  if (!inventory) return { ...base, is_available: false, max_quantity: '0.000', reason_code: 'NOT_SOLD_IN_STORE' };
  const stock = inventory.stock === null ? 0n : (parseDecimal(inventory.stock, QUANTITY_SCALE) ?? 0n);
  const max = limit === null ? stock : minBigint(stock, limit);
  let reason: AvailabilityReason | null = null;
  if (limit !== null && limit < stock && requested > limit) reason = 'LIMIT_EXCEEDED';
  else if (requested > stock) reason = 'OUT_OF_STOCK';
  return { ...base, is_available: reason === null, max_quantity: formatDecimal(max, QUANTITY_SCALE), reason_code: reason };
}
