// Orders to pick, made the way checkout leaves them (db/seed/picking.ts), from the demo catalog of
// the test database. Checkout (issue 6) is not needed to test picking.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DEMO_CUSTOMER } from '../../db/seed/accounts.js';
import { insertConfirmedOrder, type ConfirmedOrderSpec } from '../../db/seed/picking.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { TestService } from './service.js';

export interface StockedProduct {
  inventoryId: string;
  productId: string;
  categoryId: string | null;
  name: string;
  barcode: string | null;
  plu: string | null;
  unitPrice: string;
  stock: string;
}

/**
 * Default inventory rows of a store with at least `minStock` in stock, piece or weight, in a
 * fixed order; `skip` rows are passed over so that tests of one file pick different products.
 */
export async function stockedProducts(
  svc: TestService,
  opts: { storeId?: string; weight: boolean; count: number; skip?: number; minStock?: string },
): Promise<StockedProduct[]> {
  const { rows } = await sql<StockedProduct>`
    SELECT i.id AS "inventoryId", p.id AS "productId", p.category_id AS "categoryId", p.name_en AS name,
           (SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id) AS barcode, p.plu,
           i.unit_price AS "unitPrice", i.stock
    FROM inventories i JOIN products p ON p.id = i.product_id
    WHERE i.store_id = ${opts.storeId ?? DEMO_STORES[0]!.id} AND i.is_default AND p.is_active AND p.weight_based = ${opts.weight}
      AND i.stock >= ${opts.minStock ?? (opts.weight ? '5' : '10')}::numeric
    ORDER BY p.code
    OFFSET ${opts.skip ?? 0} LIMIT ${opts.count}`.execute(svc.deps.db);
  if (rows.length < opts.count) throw new Error(`the demo catalog has only ${rows.length} stocked products for this test`);
  return rows;
}

/** A confirmed order of the demo customer (or another) in a demo store, ready for picking. */
export async function createConfirmedOrder(svc: TestService, spec: Partial<ConfirmedOrderSpec> & Pick<ConfirmedOrderSpec, 'lines'>) {
  return svc.deps.db
    .transaction()
    .execute((trx) =>
      insertConfirmedOrder(
        trx,
        { customerId: DEMO_CUSTOMER.id, storeId: DEMO_STORES[0]!.id, type: 'delivery', ...spec },
        svc.deps.clock.now(),
      ),
    );
}

/** Headers of a picker command: the picker's token and a new Idempotency-Key (one per action). */
export const command = (auth: { authorization: string }, extra: Record<string, string> = {}) => ({
  ...auth,
  'idempotency-key': randomUUID(),
  ...extra,
});
