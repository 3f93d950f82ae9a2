// The loyalty program as customers see it: its tiers, and the points a cart would earn.
import { cartLineFacts, findWallet } from '../../db/queries/loyalty.js';
import type { components } from '../../generated/api.test.js';
import type { AppDeps } from '../deps.js';
import { unprocessable } from '../errors.js';
import { discountPreviewBody, programBody } from '../presenters/loyalty.js';
import { findActiveStoreCached } from '../stores.js';
import { LoyaltyProviderError } from '../../platform/providers/loyalty/index.js';
import { parseRequestedQuantity, quantityUnit } from '../../domain/catalog/availability.js';
import { previewCart } from '../../domain/loyalty/accrual.js';
import type { Lang } from '../../domain/texts/loyalty.js';
import { memberOf, providerUnavailable } from './wallet.js';

type Schemas = components['schemas'];

/** The provider's programs; a provider failure is an empty list (the strict variant tells them apart). */
export async function listPrograms(deps: Pick<AppDeps, 'loyalty'>): Promise<Schemas['LoyaltyProgramSchema'][]> {
  try {
    return (await deps.loyalty.programs.get()).map(programBody);
  } catch (err) {
    if (!(err instanceof LoyaltyProviderError)) throw err;
    return [];
  }
}

/** The provider's programs; a provider failure is a 502. */
export async function listProgramsStrict(deps: Pick<AppDeps, 'loyalty'>): Promise<Schemas['LoyaltyProgramSchema'][]> {
  try {
    return (await deps.loyalty.programs.get()).map(programBody);
  } catch (err) {
    if (err instanceof LoyaltyProviderError) throw providerUnavailable();
    throw err;
  }
}

export interface DiscountPreviewInput {
  customerId: string;
  /** The store the request names (its body or its X-Store-Id). */
  storeId: string;
  items: Schemas['DiscountPreviewInput']['items'];
  lang: Lang;
}

/** The points a cart would earn at the store's shelf prices, line by line (no price discounts). */
export async function previewDiscount(deps: AppDeps, input: DiscountPreviewInput): Promise<Schemas['DiscountPreviewSchema']> {
  const store = await findActiveStoreCached(deps, input.storeId);
  if (!store) throw unprocessable('STORE_NOT_FOUND', 'No active store has this id');

  // Ids in lower case, as checkout reads them (an app may send UUIDs upper-cased).
  const items = input.items.map((item) => ({
    ...item,
    product_id: item.product_id.toLowerCase(),
    unit_id: item.unit_id.toLowerCase(),
  }));
  const facts = await cartLineFacts(deps.db, store.id, items);
  const lines = items.map((item, i) => {
    const f = facts.get(`${item.product_id}/${item.unit_id}`);
    if (!f || f.unit_price === null)
      throw unprocessable('UNKNOWN_PRODUCT', `items[${i}]: the product is not sold in this store in this unit`);
    const q = parseRequestedQuantity(item.quantity, quantityUnit(f));
    if (!q.ok)
      throw unprocessable(
        'QUANTITY_INVALID',
        `items[${i}]: the quantity must be at least 0.001 with at most three decimals, whole for pieces (${q.problem})`,
      );
    return { product_id: item.product_id, unit_id: item.unit_id, quantityThousandths: q.thousandths, unitPrice: f.unit_price };
  });
  const member = memberOf(await findWallet(deps.db, input.customerId));
  const preview = previewCart(lines, member);
  return discountPreviewBody(store.id, lines, member, preview, input.lang, deps.clock.now());
}
