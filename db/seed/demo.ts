// Deterministic demo data: the same rows on every machine and every run, so a newcomer (and a
// mobile engineer against TEST) sees a working service. Each area seeds its part, in order.
import { sql } from 'kysely';
import type { Database } from '../connection.js';
import { seedAccounts } from './accounts.js';
import { publishDemoCatalog, seedCatalog } from './catalog.js';
import { seedContent } from './content.js';
import { seedLogistics } from './logistics.js';
import { seedLoyalty } from './loyalty.js';
import { seedOrders } from './orders.js';
import { seedPicking } from './picking.js';
import { seedStores } from './stores.js';

export { DEMO_STORES } from './stores.js';

/** Seeds an empty database in one transaction; a database that already has stores is left alone. */
export async function seedDemoData(db: Database, now: Date): Promise<{ seeded: boolean }> {
  const result = await db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom('stores').select('id').limit(1).executeTakeFirst();
    if (existing) return { seeded: false };
    await seedStores(trx);
    await seedLogistics(trx);
    await seedAccounts(trx);
    await seedCatalog(trx);
    await seedContent(trx, now);
    await seedLoyalty(trx);
    await seedPicking(trx, now);
    await seedOrders(trx);
    await publishDemoCatalog(trx, now);
    return { seeded: true };
  });
  // Statistics for what was just loaded. Autovacuum would gather them within a minute or so;
  // until then the planner takes the tables for empty, and the generic plans that prepared
  // statements keep are made with those guesses (checkout's cart lock scanned a store's whole
  // unit range, 1 ms instead of 0.2, under load).
  if (result.seeded) await sql`ANALYZE`.execute(db);
  return result;
}
