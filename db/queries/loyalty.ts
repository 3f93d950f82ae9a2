// Loyalty wallet records of this service (the ledger tables belong to the local provider and are
// not read here): wallets, the job queue, the accruals of completed orders, the mirrors of
// purchases and transactions, and the cart facts of the discount preview.
import { sql, type Selectable, type Updateable } from 'kysely';
import type { Executor } from '../executor.js';
import { isUuid } from '../../domain/ids.js';
import type { ProviderTransaction } from '../../domain/loyalty/ledger.js';
import type { DB } from '../schema.js';
import type { AccrualOutcome, LoyaltyJobKind, LoyaltyJobPayloads, StoredDiscount, StoredPosition } from '../tables/loyalty.js';

export type WalletRow = Selectable<DB['loyalty_wallets']>;

/** A job of one kind, its payload typed by that kind. */
type JobOf<K extends LoyaltyJobKind> = Omit<Selectable<DB['loyalty_jobs']>, 'kind' | 'payload'> & {
  kind: K;
  payload: LoyaltyJobPayloads[K];
};
/** A claimed job: switching on `kind` narrows `payload`. */
export type JobRow = { [K in LoyaltyJobKind]: JobOf<K> }[LoyaltyJobKind];

/** The kind of a job with what it carries; provisioning and re-syncs carry nothing. */
export type NewJob = {
  [K in LoyaltyJobKind]: LoyaltyJobPayloads[K] extends Record<string, never> ? [kind: K] : [kind: K, payload: LoyaltyJobPayloads[K]];
}[LoyaltyJobKind];

// ---- wallets ----------------------------------------------------------------------------------

/**
 * Serializes the loyalty commands of one customer until the transaction ends (card commands,
 * wallet creation, snapshot writes by the worker), whether or not a wallet row exists yet.
 */
export async function lockCustomerLoyalty(trx: Executor, customerId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`loyalty:${customerId}`}, 0))`.execute(trx);
}

export function findWallet(db: Executor, customerId: string) {
  return db.selectFrom('loyalty_wallets').selectAll().where('customer_id', '=', customerId).executeTakeFirst();
}

/**
 * Account deletion: the customer's wallet is unlinked here (no provider customer, cards or
 * accounts), its queued work is dropped, and an `erase` job asks the provider to erase the
 * customer's data - retried until done, so that a new account on the same phone starts afresh.
 */
export async function unlinkDeletedCustomerWallet(db: Executor, customerId: string): Promise<void> {
  const wallet = await db
    .selectFrom('loyalty_wallets')
    .select(['id', 'provider_customer_id'])
    .where('customer_id', '=', customerId)
    .forUpdate()
    .executeTakeFirst();
  if (!wallet) return;
  await db
    .updateTable('loyalty_jobs')
    .set({ state: 'failed', last_error: 'account deleted', lease_until: null, finished_at: sql<Date>`now()` })
    .where('wallet_id', '=', wallet.id)
    .where('state', '=', 'queued')
    .execute();
  await db
    .updateTable('loyalty_wallets')
    .set({
      provider_customer_id: null,
      main_card_id: null,
      active_account_id: null,
      accounts: '[]',
      cards: '[]',
      loyalty_status: null,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', wallet.id)
    .execute();
  if (wallet.provider_customer_id) await enqueueJob(db, wallet.id, 'erase', { provider_customer_id: wallet.provider_customer_id });
}

export function findWalletById(db: Executor, walletId: string) {
  return db.selectFrom('loyalty_wallets').selectAll().where('id', '=', walletId).executeTakeFirst();
}

/** Creates the customer's wallet unless one exists; returns the row and whether it was created. */
export async function insertWalletIfAbsent(
  db: Executor,
  values: { customer_id: string; status: WalletRow['status'] },
): Promise<{ wallet: WalletRow; created: boolean }> {
  const inserted = await db
    .insertInto('loyalty_wallets')
    .values(values)
    .onConflict((oc) => oc.column('customer_id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { wallet: inserted, created: true };
  const existing = await findWallet(db, values.customer_id);
  if (!existing) throw new Error('wallet vanished between insert and read');
  return { wallet: existing, created: false };
}

/** Changes a wallet; the revision rises so that a job holding older provider data drops it. */
export function updateWallet(db: Executor, walletId: string, changes: Updateable<DB['loyalty_wallets']>) {
  return db
    .updateTable('loyalty_wallets')
    .set((eb) => ({ ...changes, revision: eb('revision', '+', 1), updated_at: sql<Date>`now()` }))
    .where('id', '=', walletId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The customer's phone (the key of the loyalty customer at the provider). */
export async function customerPhone(db: Executor, customerId: string): Promise<string | null> {
  const row = await db
    .selectFrom('customers')
    .select('phone')
    .where('id', '=', customerId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row?.phone ?? null;
}

// ---- jobs -------------------------------------------------------------------------------------

/**
 * Queues work for the worker. Provisioning and re-syncs collapse into the wallet's open one (a
 * partial unique index), so repeated triggers never pile up; returns false when one was open.
 */
export async function enqueueJob(db: Executor, walletId: string, ...[kind, payload]: NewJob): Promise<boolean> {
  const values = sql`(${walletId}, ${kind}, ${JSON.stringify(payload ?? {})}::jsonb, now())`;
  const { rows } =
    kind === 'provision' || kind === 'sync'
      ? await sql<{ id: number }>`
          INSERT INTO loyalty_jobs (wallet_id, kind, payload, run_at) VALUES ${values}
          ON CONFLICT (wallet_id) WHERE state = 'queued' AND kind IN ('provision', 'sync') DO NOTHING
          RETURNING id`.execute(db)
      : await sql<{ id: number }>`INSERT INTO loyalty_jobs (wallet_id, kind, payload, run_at) VALUES ${values} RETURNING id`.execute(db);
  return rows.length > 0;
}

/** Whether queued work will re-read the provider for this wallet (so GET wallet need not enqueue). */
export async function hasQueuedSync(db: Executor, walletId: string): Promise<boolean> {
  const row = await db
    .selectFrom('loyalty_jobs')
    .select('id')
    .where('wallet_id', '=', walletId)
    .where('state', '=', 'queued')
    .where('kind', 'in', ['provision', 'sync', 'command'])
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Claims up to `limit` due jobs: FOR UPDATE SKIP LOCKED makes concurrent workers (several
 * instances) take disjoint rows, and the lease keeps a claimed job from the others while it runs
 * outside any transaction; a worker that dies leaves it to be re-claimed when the lease ends.
 * The attempt is counted at claim time.
 */
export async function claimDueJobs(db: Executor, limit: number, leaseSeconds: number): Promise<JobRow[]> {
  const { rows } = await sql<JobRow>`
    UPDATE loyalty_jobs SET attempts = attempts + 1, lease_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id IN (
      SELECT id FROM loyalty_jobs
      WHERE state = 'queued' AND run_at <= now() AND (lease_until IS NULL OR lease_until < now())
      ORDER BY run_at, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING *`.execute(db);
  return rows;
}

export async function finishJob(db: Executor, jobId: number, state: 'done' | 'failed', error: string | null = null): Promise<void> {
  await db
    .updateTable('loyalty_jobs')
    .set({ state, last_error: error, lease_until: null, finished_at: sql<Date>`now()` })
    .where('id', '=', jobId)
    .execute();
}

export async function retryJobAt(db: Executor, jobId: number, runAt: Date, error: string): Promise<void> {
  await db.updateTable('loyalty_jobs').set({ run_at: runAt, last_error: error, lease_until: null }).where('id', '=', jobId).execute();
}

// ---- accruals of completed orders ------------------------------------------------------------

/** How far back the worker looks for completed orders it has not credited yet. */
export const ACCRUAL_LOOKBACK_DAYS = 30;

export interface CompletedOrder {
  id: string;
  customer_id: string;
  final_total: string;
  delivery_cost: string;
  completed_at: Date;
}

/**
 * Completed orders (with their picked total) that have no accrual record yet, oldest first.
 * Orders are only read, never locked (the order code owns those rows): exactly-once comes from
 * the primary key of loyalty_accruals.
 */
export async function completedOrdersWithoutAccrual(db: Executor, limit: number): Promise<CompletedOrder[]> {
  const { rows } = await sql<CompletedOrder>`
    SELECT o.id, o.customer_id, o.final_total, o.delivery_cost, o.completed_at
    FROM orders o
    WHERE o.status = 'completed' AND o.final_total IS NOT NULL AND o.completed_at IS NOT NULL
      AND o.completed_at >= now() - make_interval(days => ${ACCRUAL_LOOKBACK_DAYS})
      AND NOT EXISTS (SELECT 1 FROM loyalty_accruals a WHERE a.order_id = o.id)
    ORDER BY o.completed_at, o.id
    LIMIT ${limit}`.execute(db);
  return rows;
}

export interface NewAccrual {
  order_id: string;
  customer_id: string;
  wallet_id: string | null;
  outcome: AccrualOutcome;
  base_amount: string;
  points: string;
  accrual_percent: string | null;
  tier_label: string | null;
}

/** Records the accrual of an order unless one exists; true when this call recorded it. */
export async function insertAccrual(db: Executor, accrual: NewAccrual): Promise<boolean> {
  const row = await db
    .insertInto('loyalty_accruals')
    .values(accrual)
    .onConflict((oc) => oc.column('order_id').doNothing())
    .returning('order_id')
    .executeTakeFirst();
  return row !== undefined;
}

export function findAccrual(db: Executor, orderId: string) {
  return db.selectFrom('loyalty_accruals').selectAll().where('order_id', '=', orderId).executeTakeFirst();
}

export async function markAccrualPosted(db: Executor, orderId: string, operationId: string): Promise<void> {
  await db
    .updateTable('loyalty_accruals')
    .set({ provider_operation_id: operationId, posted_at: sql<Date>`now()` })
    .where('order_id', '=', orderId)
    .execute();
}

// ---- purchases --------------------------------------------------------------------------------

export interface PurchaseRow {
  id: string;
  occurred_at: Date;
  shop_name: string;
  total: string;
  bonus_accrual: string;
  items_count: number;
  source: 'online' | 'offline';
}

export interface MirroredPurchase {
  id: string;
  date: string;
  shop_name: string;
  total: string;
  bonus_accrual: string;
  items_count: number;
}

/** Makes the mirror of the provider's in-store purchases equal to what the provider reported. */
export async function replacePurchaseMirror(db: Executor, walletId: string, purchases: MirroredPurchase[]): Promise<void> {
  if (purchases.length) {
    await db
      .insertInto('loyalty_purchase_mirror')
      .values(
        purchases.map((p) => ({
          wallet_id: walletId,
          id: p.id,
          occurred_at: p.date,
          shop_name: p.shop_name,
          total: p.total,
          bonus_accrual: p.bonus_accrual,
          items_count: p.items_count,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['wallet_id', 'id']).doUpdateSet((eb) => ({
          occurred_at: eb.ref('excluded.occurred_at'),
          shop_name: eb.ref('excluded.shop_name'),
          total: eb.ref('excluded.total'),
          bonus_accrual: eb.ref('excluded.bonus_accrual'),
          items_count: eb.ref('excluded.items_count'),
          fetched_at: sql<Date>`now()`,
        })),
      )
      .execute();
  }
  // Receipts the provider no longer reports (returned, corrected) leave the mirror.
  let gone = db.deleteFrom('loyalty_purchase_mirror').where('wallet_id', '=', walletId);
  if (purchases.length)
    gone = gone.where(
      'id',
      'not in',
      purchases.map((p) => p.id),
    );
  await gone.execute();
  await db
    .updateTable('loyalty_wallets')
    .set({ purchases_synced_at: sql<Date>`now()` })
    .where('id', '=', walletId)
    .execute();
}

const onlinePurchases = (customerId: string, lang: 'ru' | 'en') => sql`
  SELECT o.id::text AS id, o.completed_at AS occurred_at, ${sql.ref(`s.name_${lang}`)} AS shop_name,
         o.final_total AS total, COALESCE(a.points, 0)::numeric(12, 2) AS bonus_accrual,
         -- receipt positions: the lines collected by the completed picking, else the order lines
         (CASE WHEN done.id IS NOT NULL
               THEN (SELECT count(*) FROM picking_items pi WHERE pi.session_id = done.id AND pi.state = 'picked')
               ELSE (SELECT count(*) FROM order_items i WHERE i.order_id = o.id) END)::int AS items_count,
         'online' AS source
  FROM orders o
  JOIN stores s ON s.id = o.store_id
  LEFT JOIN loyalty_accruals a ON a.order_id = o.id
  LEFT JOIN LATERAL (SELECT max(ps.id) AS id FROM picking_sessions ps WHERE ps.order_id = o.id AND ps.status = 'completed') done ON true
  WHERE o.customer_id = ${customerId} AND o.status = 'completed' AND o.completed_at IS NOT NULL AND o.final_total IS NOT NULL`;

const offlinePurchases = (walletId: string) => sql`
  SELECT m.id, m.occurred_at, m.shop_name, m.total, m.bonus_accrual, m.items_count, 'offline' AS source
  FROM loyalty_purchase_mirror m WHERE m.wallet_id = ${walletId}`;

/** One page of the customer's purchases, online and in-store together, newest first (ties by id). */
export async function listPurchasePage(
  db: Executor,
  walletId: string,
  customerId: string,
  lang: 'ru' | 'en',
  offset: number,
  limit: number,
): Promise<{ items: PurchaseRow[]; count: number }> {
  const all = sql`(${onlinePurchases(customerId, lang)} UNION ALL ${offlinePurchases(walletId)})`;
  const [page, total] = await Promise.all([
    sql<PurchaseRow>`SELECT * FROM ${all} p ORDER BY occurred_at DESC, id LIMIT ${limit} OFFSET ${offset}`.execute(db),
    sql<{ n: number }>`SELECT count(*)::int AS n FROM ${all} p`.execute(db),
  ]);
  return { items: page.rows, count: total.rows[0]!.n };
}

/** A completed online order of the customer as a purchase, or undefined. */
export async function findOnlinePurchase(
  db: Executor,
  customerId: string,
  orderId: string,
  lang: 'ru' | 'en',
): Promise<PurchaseRow | undefined> {
  const { rows } = await sql<PurchaseRow>`SELECT * FROM (${onlinePurchases(customerId, lang)}) p WHERE p.id = ${orderId}`.execute(db);
  return rows[0];
}

/** The lines of an online order (the source of its receipt positions), in line order. */
export function orderLines(db: Executor, orderId: string) {
  return db
    .selectFrom('order_items')
    .select(['id', 'name_ru', 'name_en', 'barcode', 'plu_code', 'weight_based', 'quantity', 'unit_price', 'old_price', 'line_total'])
    .where('order_id', '=', orderId)
    .orderBy('line_no')
    .execute();
}

export function findMirroredPurchase(db: Executor, walletId: string, purchaseId: string) {
  return db
    .selectFrom('loyalty_purchase_mirror')
    .selectAll()
    .where('wallet_id', '=', walletId)
    .where('id', '=', purchaseId)
    .executeTakeFirst();
}

/** Stores a purchase read from the provider, with its positions, in the mirror. */
export async function storePurchaseDetail(
  db: Executor,
  walletId: string,
  p: MirroredPurchase & { positions: StoredPosition[]; discounts: StoredDiscount[] },
): Promise<void> {
  const row = {
    wallet_id: walletId,
    id: p.id,
    occurred_at: p.date,
    shop_name: p.shop_name,
    total: p.total,
    bonus_accrual: p.bonus_accrual,
    items_count: p.items_count,
    positions: JSON.stringify(p.positions),
    discounts: JSON.stringify(p.discounts),
  };
  await db
    .insertInto('loyalty_purchase_mirror')
    .values(row)
    .onConflict((oc) => oc.columns(['wallet_id', 'id']).doUpdateSet({ ...row, fetched_at: sql<Date>`now()` }))
    .execute();
}

// ---- transactions -----------------------------------------------------------------------------

/** A transaction as the provider reports it; mirrored here for the local fallback. */
export type ReportedTransaction = ProviderTransaction;

export interface TransactionRow extends Omit<ReportedTransaction, 'created_at' | 'available_at' | 'expires_at'> {
  created_at: Date;
  available_at: Date | null;
  expires_at: Date | null;
  order_no: number | null;
}

/** Keeps what the provider reported, for when it cannot be reached. */
export async function mirrorTransactions(db: Executor, walletId: string, items: ReportedTransaction[]): Promise<void> {
  if (!items.length) return;
  await db
    .insertInto('loyalty_transaction_mirror')
    // An order id the provider reports that is not one of ours (not a uuid) is not an order link.
    .values(items.map((t) => ({ wallet_id: walletId, ...t, order_id: t.order_id && isUuid(t.order_id) ? t.order_id : null })))
    .onConflict((oc) =>
      oc.columns(['wallet_id', 'id']).doUpdateSet((eb) => ({
        type: eb.ref('excluded.type'),
        status: eb.ref('excluded.status'),
        amount: eb.ref('excluded.amount'),
        balance_after: eb.ref('excluded.balance_after'),
        account_id: eb.ref('excluded.account_id'),
        available_at: eb.ref('excluded.available_at'),
        expires_at: eb.ref('excluded.expires_at'),
        shop_name: eb.ref('excluded.shop_name'),
        comment: eb.ref('excluded.comment'),
        fetched_at: sql<Date>`now()`,
      })),
    )
    .execute();
}

/** Numbers of the given orders (for descriptions such as "Points for order No. …"). */
export async function orderNumbers(db: Executor, orderIds: string[]): Promise<Map<string, number>> {
  const ids = orderIds.filter(isUuid);
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('orders').select(['id', 'no']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.no]));
}

/**
 * The local view of the customer's transactions: what was mirrored from the provider, plus the
 * accruals recorded here for completed online orders that the mirror does not show yet.
 */
export async function localTransactionPage(
  db: Executor,
  walletId: string,
  customerId: string,
  offset: number,
  limit: number,
): Promise<{ items: TransactionRow[]; count: number }> {
  const all = sql`(
    SELECT m.id, m.type, m.status, m.amount, m.balance_after, m.account_id, m.created_at, m.available_at, m.expires_at,
           m.order_id::text AS order_id, m.purchase_id, m.shop_name, m.comment
    FROM loyalty_transaction_mirror m WHERE m.wallet_id = ${walletId}
    UNION ALL
    SELECT a.order_id::text, 'accrual', CASE WHEN a.posted_at IS NULL THEN 'pending' ELSE 'posted' END, a.points, NULL, NULL,
           a.created_at, NULL, NULL, a.order_id::text, a.order_id::text, NULL, NULL
    FROM loyalty_accruals a
    WHERE a.customer_id = ${customerId} AND a.outcome = 'accrued' AND a.points > 0
      AND NOT EXISTS (SELECT 1 FROM loyalty_transaction_mirror m WHERE m.wallet_id = ${walletId} AND m.id = a.provider_operation_id)
  )`;
  const [page, total] = await Promise.all([
    sql<TransactionRow>`
      SELECT t.*, o.no AS order_no FROM ${all} t LEFT JOIN orders o ON o.id::text = t.order_id
      ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit} OFFSET ${offset}`.execute(db),
    sql<{ n: number }>`SELECT count(*)::int AS n FROM ${all} t`.execute(db),
  ]);
  return { items: page.rows, count: total.rows[0]!.n };
}

// ---- discount preview -------------------------------------------------------------------------

export interface CartLineFacts {
  product_id: string;
  unit_id: string;
  unit_kind: 'piece' | 'weight' | null;
  /** Kilograms (or pieces) in one unit: 0.100 for 100 g. */
  unit_ratio: string | null;
  /** Shelf price in the store; null when the product/unit is not sold there (or inactive). */
  unit_price: string | null;
}

/** For each (product, unit) of a cart: the unit's kind and the store's price, in one query. */
export async function cartLineFacts(
  db: Executor,
  storeId: string,
  lines: { product_id: string; unit_id: string }[],
): Promise<Map<string, CartLineFacts>> {
  if (!lines.length) return new Map();
  const { rows } = await sql<CartLineFacts>`
    SELECT l.product_id::text AS product_id, l.unit_id::text AS unit_id, u.kind AS unit_kind, u.ratio AS unit_ratio, i.unit_price
    FROM unnest(${lines.map((l) => l.product_id)}::uuid[], ${lines.map((l) => l.unit_id)}::uuid[]) AS l(product_id, unit_id)
    LEFT JOIN measurement_units u ON u.id = l.unit_id
    LEFT JOIN products p ON p.id = l.product_id AND p.is_active
    LEFT JOIN inventories i ON i.product_id = p.id AND i.store_id = ${storeId} AND i.unit_id = l.unit_id`.execute(db);
  return new Map(rows.map((r) => [`${r.product_id}/${r.unit_id}`, r]));
}
