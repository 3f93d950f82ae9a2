// Kysely table types, one file per area under db/tables. They mirror the migrations in
// db/migrations (which are frozen and do not import these). Numeric columns are decimal strings.
import type { AccountsTables } from './tables/accounts.js';
import type { ApprovalsTables } from './tables/approvals.js';
import type { CatalogTables } from './tables/catalog.js';
import type { ContentTables } from './tables/content.js';
import type { FoundationTables } from './tables/foundation.js';
import type { LogisticsTables } from './tables/logistics.js';
import type { LoyaltyTables } from './tables/loyalty.js';
import type { OrdersTables } from './tables/orders.js';
import type { PaymentsTables } from './tables/payments.js';
import type { PickingTables } from './tables/picking.js';

export interface DB
  extends
    FoundationTables,
    AccountsTables,
    CatalogTables,
    ContentTables,
    LogisticsTables,
    OrdersTables,
    PaymentsTables,
    PickingTables,
    LoyaltyTables,
    ApprovalsTables {}
