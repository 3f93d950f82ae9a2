// A line's replacement preference (ReplacementPreferenceInput): its rules and what an order line
// stores of it. Which products the store sells is the caller's to read; the verdict is here.
import type { components } from '../../generated/api.test.js';
import { formatDecimal } from '../money/decimal.js';

export type ReplacementPolicy = components['schemas']['ReplacementPolicyEnum'];

/** The preference as a request sends it (`approval_required` may be left out: false). */
export interface ReplacementInput {
  policy: ReplacementPolicy;
  product_ids?: string[];
  approval_required?: boolean;
}

/** What an order line keeps of a preference (the order_items columns). */
export interface StoredReplacement {
  policy: ReplacementPolicy | null;
  productIds: string[];
  approvalRequired: boolean;
}

/** A line without a preference of its own: the order's absence_action applies. */
export const NO_PREFERENCE: StoredReplacement = { policy: null, productIds: [], approvalRequired: false };

/** The stored form of a preference (null or absent: none), named products in lower case and in the customer's order. */
export function storedReplacement(input: ReplacementInput | null | undefined): StoredReplacement {
  if (!input) return NO_PREFERENCE;
  return {
    policy: input.policy,
    productIds: input.policy === 'named_products' ? (input.product_ids ?? []).map((id) => id.toLowerCase()) : [],
    approvalRequired: input.approval_required ?? false,
  };
}

/** The rule of the policy and its products (no store facts needed), as the detail of the refusal, or null. */
export function replacementShapeProblem(input: ReplacementInput | null | undefined): string | null {
  if (!input) return null;
  if (input.policy === 'named_products' && !input.product_ids?.length) return 'named_products needs product_ids (1 to 3 products)';
  if (input.policy !== 'named_products' && input.product_ids !== undefined)
    return `product_ids are only for named_products, not ${input.policy}`;
  return null;
}

/** What the store knows of a named product: sold there, an active product it does not sell, or unknown (inactive or never existed). */
export type NamedProductFact = 'sold' | 'not_sold' | 'unknown';

/** A line whose preference names a product it cannot name (OrderCommandErrorLine). */
export interface PreferenceFailingLine {
  product_id: string;
  unit_id: string;
  requested_quantity: string;
  available_quantity: string;
  reason_code: 'NOT_SOLD_IN_STORE' | 'UNKNOWN_PRODUCT' | 'REPLACEMENT_PREFERENCE_INVALID';
}

/**
 * The lines whose named products break the rule - the line's own product
 * (REPLACEMENT_PREFERENCE_INVALID), or one the store does not sell - each named by its own product
 * and unit, first problem of each line; `facts` says of every named product what the store knows.
 */
export function namedProductProblems(
  lines: readonly { productId: string; unitId: string; quantity: bigint; preference: StoredReplacement }[],
  facts: ReadonlyMap<string, NamedProductFact>,
): { lines: PreferenceFailingLine[]; detail: string } | null {
  const failing: PreferenceFailingLine[] = [];
  const named: string[] = [];
  for (const line of lines) {
    const own = line.productId.toLowerCase();
    for (const id of line.preference.productIds) {
      const fact = id === own ? 'own' : (facts.get(id) ?? 'unknown');
      if (fact === 'sold') continue;
      failing.push({
        product_id: line.productId,
        unit_id: line.unitId,
        requested_quantity: formatDecimal(line.quantity, 3),
        available_quantity: '0.000',
        reason_code: fact === 'own' ? 'REPLACEMENT_PREFERENCE_INVALID' : fact === 'not_sold' ? 'NOT_SOLD_IN_STORE' : 'UNKNOWN_PRODUCT',
      });
      named.push(fact === 'own' ? `${id} (the line's own product)` : `${id} (not sold in this store)`);
      break;
    }
  }
  if (!failing.length) return null;
  return { lines: failing, detail: `A replacement preference names a product it cannot name: ${named.join(', ')}` };
}

/** Every product any of the preferences names (to read what the store knows of them). */
export const namedProductIds = (preferences: readonly StoredReplacement[]): string[] => [
  ...new Set(preferences.flatMap((p) => p.productIds)),
];
