// The local loyalty ledger: a complete customer data platform kept in this service's PostgreSQL
// (tables loyalty_ledger_*), so the embedded default works end to end without any outside
// system. It behaves as a provider does: it owns loyalty customers, their accounts, cards, point
// operations and in-store receipts; it decides tiers from turnover against the program's
// boundaries; retried commands carrying the same idempotency key are applied once.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from '../../../db/schema.js';
import { levelIndexFor } from '../../../domain/loyalty/tiers.js';
import {
  rejected,
  type AccrualRequest,
  type LoyaltyProvider,
  type ProviderCard,
  type ProviderCardLookup,
  type ProviderCustomer,
  type ProviderProgram,
  type ProviderPurchase,
  type ProviderPurchaseDetail,
  type ProviderTransaction,
} from './types.js';

type Db = Kysely<DB> | Transaction<DB>;

/** Prefix of the numbers of virtual cards this ledger issues (16 digits in all). */
const VIRTUAL_CARD_PREFIX = '2775';
const CARD_TITLE = { virtual: 'Виртуальная карта', physical: 'Пластиковая карта' };
const ACCOUNTS = [
  { kind: 'bonus' as const, title: 'Бонусные баллы', description: '1 балл = 1 рубль скидки' },
  { kind: 'promo' as const, title: 'Акционные баллы', description: 'Баллы за участие в акциях' },
];
/** Points of an accrual expire after a year. */
const POINTS_LIFETIME = sql`interval '365 days'`;

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

export class LocalLoyaltyLedger implements LoyaltyProvider {
  readonly name = 'local' as const;

  constructor(
    private readonly db: Kysely<DB>,
    /** Base URL of the QR code images of virtual cards (`<base>/<card number>.png`). */
    private readonly qrBaseUrl: string,
    private readonly release: () => Promise<void> = async () => {},
  ) {}

  close(): Promise<void> {
    return this.release();
  }

  async findCustomerId(phone: string): Promise<string | null> {
    const row = await this.db.selectFrom('loyalty_ledger_customers').select('id').where('phone', '=', phone).executeTakeFirst();
    return row?.id ?? null;
  }

  async provisionCustomer({ phone, idempotencyKey }: { phone: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    return this.db.transaction().execute(async (trx) => {
      const customerId = await this.findOrCreateCustomer(trx, phone);
      const cards = await trx.selectFrom('loyalty_ledger_cards').selectAll().where('customer_id', '=', customerId).execute();
      const usableVirtual = cards.find((c) => c.is_virtual && c.is_active && !c.is_blocked);
      if (!usableVirtual) {
        // A retried provisioning finds the card its first attempt issued (same key).
        const issued = cards.find((c) => c.issue_key === idempotencyKey) ?? (await this.issueVirtualCard(trx, customerId, idempotencyKey));
        await trx.updateTable('loyalty_ledger_customers').set({ main_card_id: issued.id }).where('id', '=', customerId).execute();
      } else {
        const customer = await this.lockCustomer(trx, customerId);
        if (!customer.main_card_id)
          await trx.updateTable('loyalty_ledger_customers').set({ main_card_id: usableVirtual.id }).where('id', '=', customerId).execute();
      }
      return this.snapshot(trx, customerId);
    });
  }

  async getCustomer(customerId: string): Promise<ProviderCustomer> {
    return this.snapshot(this.db, customerId);
  }

  async listPrograms(): Promise<ProviderProgram[]> {
    const programs = await this.db.selectFrom('loyalty_ledger_programs').selectAll().orderBy('id').execute();
    const levels = await this.db.selectFrom('loyalty_ledger_levels').selectAll().orderBy('program_id').orderBy('position').execute();
    // Customers per level: each customer counts at the highest level its turnover reaches.
    const { rows: counts } = await sql<{ level_id: number; clients: number }>`
      WITH turnover AS (
        SELECT c.id, c.program_id, COALESCE(SUM(o.purchase_amount), 0) AS amount
        FROM loyalty_ledger_customers c
        JOIN loyalty_ledger_programs p ON p.id = c.program_id
        LEFT JOIN loyalty_ledger_operations o ON o.customer_id = c.id AND o.type = 'accrual' AND o.status <> 'cancelled'
          AND o.purchase_amount IS NOT NULL AND o.created_at >= now() - make_interval(days => p.period_days)
        GROUP BY c.id, c.program_id
      ), placed AS (
        SELECT DISTINCT ON (t.id) t.id, l.id AS level_id
        FROM turnover t JOIN loyalty_ledger_levels l ON l.program_id = t.program_id AND l.boundary <= t.amount
        ORDER BY t.id, l.boundary DESC
      )
      SELECT level_id, count(*)::int AS clients FROM placed GROUP BY level_id`.execute(this.db);
    const clients = new Map(counts.map((c) => [c.level_id, c.clients]));
    return programs.map((p) => ({
      id: p.id,
      name: p.name,
      levels: levels
        .filter((l) => l.program_id === p.id)
        .map((l) => ({
          id: l.id,
          order: l.position,
          name: l.name,
          boundary: l.boundary,
          clients_count: clients.get(l.id) ?? 0,
          range_label: l.range_label,
          description: l.description,
          accrual_percent: l.accrual_percent,
        })),
    }));
  }

  async lookupCard(cardNumber: string): Promise<ProviderCardLookup | null> {
    const c = await this.db.selectFrom('loyalty_ledger_cards').selectAll().where('card_number', '=', cardNumber).executeTakeFirst();
    if (!c) return null;
    return {
      id: c.id,
      card_number: c.card_number,
      is_virtual: c.is_virtual,
      issued: c.issued_at !== null,
      holder_id: c.customer_id,
      is_blocked: c.is_blocked,
      balance: c.balance,
    };
  }

  async linkCard(input: {
    customerId: string | null;
    phone: string;
    cardNumber: string;
    idempotencyKey: string;
  }): Promise<ProviderCustomer> {
    return this.db.transaction().execute(async (trx) => {
      const customerId = input.customerId ?? (await this.findOrCreateCustomer(trx, input.phone));
      const customer = await this.lockCustomer(trx, customerId);
      const card = await this.lockCard(trx, input.cardNumber);
      if (card.customer_id === customerId) return this.snapshot(trx, customerId);
      if (card.customer_id !== null) throw rejected('card_owned_by_another_customer', 'the card belongs to another customer');
      if (card.is_blocked) throw rejected('card_blocked', 'the card is blocked');
      if (card.issued_at === null) throw rejected('card_not_issued', 'the card was never issued');
      await trx.updateTable('loyalty_ledger_cards').set({ customer_id: customerId }).where('id', '=', card.id).execute();
      // Points collected on the card before registration join the customer's bonus account.
      if (Number(card.balance) !== 0) {
        await this.postOperation(trx, customerId, {
          type: 'adjustment',
          amount: card.balance,
          comment: `Баллы с карты ${card.card_number.slice(-4)}`,
          idempotencyKey: `card-balance:${card.id}`,
        });
        await trx.updateTable('loyalty_ledger_cards').set({ balance: 0 }).where('id', '=', card.id).execute();
      }
      if (!(await this.hasActiveMainCard(trx, customer.main_card_id))) {
        await trx.updateTable('loyalty_ledger_customers').set({ main_card_id: card.id }).where('id', '=', customerId).execute();
      }
      return this.snapshot(trx, customerId);
    });
  }

  async issuePhysicalCard(input: {
    customerId: string | null;
    phone: string;
    cardNumber: string;
    idempotencyKey: string;
  }): Promise<ProviderCustomer> {
    return this.db.transaction().execute(async (trx) => {
      const customerId = input.customerId ?? (await this.findOrCreateCustomer(trx, input.phone));
      const customer = await this.lockCustomer(trx, customerId);
      const card = await this.lockCard(trx, input.cardNumber);
      // The same request again (a retry after a timeout): already done.
      if (card.customer_id === customerId && card.issue_key === input.idempotencyKey) return this.snapshot(trx, customerId);
      if (card.customer_id !== null && card.customer_id !== customerId)
        throw rejected('card_owned_by_another_customer', 'the card belongs to another customer');
      if (card.is_blocked) throw rejected('card_blocked', 'the card is blocked');
      if (card.issued_at !== null || card.is_virtual) throw rejected('card_already_issued', 'the card is already issued');
      await trx
        .updateTable('loyalty_ledger_cards')
        .set({ customer_id: customerId, issued_at: sql<Date>`now()`, issue_key: input.idempotencyKey })
        .where('id', '=', card.id)
        .execute();
      // The points stay on the customer's accounts; the new card takes over the main card's role.
      if (customer.main_card_id) {
        await trx.updateTable('loyalty_ledger_cards').set({ is_active: false }).where('id', '=', customer.main_card_id).execute();
      }
      await trx.updateTable('loyalty_ledger_customers').set({ main_card_id: card.id }).where('id', '=', customerId).execute();
      return this.snapshot(trx, customerId);
    });
  }

  async blockCard(input: { customerId: string; cardId: string; reason: string | null; idempotencyKey: string }): Promise<ProviderCustomer> {
    return this.db.transaction().execute(async (trx) => {
      await this.lockCustomer(trx, input.customerId);
      const card = await this.customerCard(trx, input.customerId, input.cardId);
      if (!card.is_blocked) {
        await trx
          .updateTable('loyalty_ledger_cards')
          .set({ is_blocked: true, block_reason: input.reason })
          .where('id', '=', card.id)
          .execute();
      }
      return this.snapshot(trx, input.customerId);
    });
  }

  async unblockCard(input: { customerId: string; cardId: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    return this.db.transaction().execute(async (trx) => {
      await this.lockCustomer(trx, input.customerId);
      const card = await this.customerCard(trx, input.customerId, input.cardId);
      if (card.is_blocked) {
        if (card.block_reason === 'provider' || !card.is_active)
          throw rejected('unblock_not_allowed', 'only a block by the customer on an active card can be lifted');
        await trx.updateTable('loyalty_ledger_cards').set({ is_blocked: false, block_reason: null }).where('id', '=', card.id).execute();
      }
      return this.snapshot(trx, input.customerId);
    });
  }

  async replaceCard(input: { customerId: string; cardId: string; idempotencyKey: string }): Promise<ProviderCustomer> {
    return this.db.transaction().execute(async (trx) => {
      await this.lockCustomer(trx, input.customerId);
      const done = await trx
        .selectFrom('loyalty_ledger_cards')
        .select('id')
        .where('issue_key', '=', input.idempotencyKey)
        .executeTakeFirst();
      if (done) return this.snapshot(trx, input.customerId);
      const old = await this.customerCard(trx, input.customerId, input.cardId);
      const fresh = await this.issueVirtualCard(trx, input.customerId, input.idempotencyKey);
      await trx.updateTable('loyalty_ledger_cards').set({ is_active: false, is_blocked: true }).where('id', '=', old.id).execute();
      await trx.updateTable('loyalty_ledger_customers').set({ main_card_id: fresh.id }).where('id', '=', input.customerId).execute();
      return this.snapshot(trx, input.customerId);
    });
  }

  async listPurchases(customerId: string): Promise<ProviderPurchase[]> {
    await this.requireCustomer(this.db, customerId);
    const rows = await this.db
      .selectFrom('loyalty_ledger_receipts')
      .select(['id', 'occurred_at', 'shop_name', 'total', 'bonus_accrual', sql<number>`jsonb_array_length(positions)`.as('items_count')])
      .where('customer_id', '=', customerId)
      .orderBy('occurred_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      date: r.occurred_at.toISOString(),
      shop_name: r.shop_name,
      total: r.total,
      bonus_accrual: r.bonus_accrual,
      items_count: r.items_count,
    }));
  }

  async getPurchase(customerId: string, purchaseId: string): Promise<ProviderPurchaseDetail | null> {
    const r = await this.db
      .selectFrom('loyalty_ledger_receipts')
      .selectAll()
      .where('customer_id', '=', customerId)
      .where('id', '=', purchaseId)
      .executeTakeFirst();
    if (!r) return null;
    return {
      id: r.id,
      date: r.occurred_at.toISOString(),
      shop_name: r.shop_name,
      total: r.total,
      bonus_accrual: r.bonus_accrual,
      items_count: r.positions.length,
      positions: r.positions,
      discounts: r.discounts,
    };
  }

  async listTransactions(
    customerId: string,
    page: { offset: number; limit: number },
  ): Promise<{ items: ProviderTransaction[]; count: number }> {
    await this.requireCustomer(this.db, customerId);
    const base = this.db.selectFrom('loyalty_ledger_operations').where('customer_id', '=', customerId);
    const [rows, total] = await Promise.all([
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
      base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow(),
    ]);
    return {
      count: total.n,
      items: rows.map((o) => ({
        id: o.id,
        type: o.type,
        status: o.status,
        amount: o.amount,
        balance_after: o.balance_after,
        account_id: o.account_id,
        created_at: o.created_at.toISOString(),
        available_at: iso(o.available_at),
        expires_at: iso(o.expires_at),
        order_id: o.order_id,
        purchase_id: o.purchase_id,
        shop_name: o.shop_name,
        comment: o.comment,
      })),
    };
  }

  async eraseCustomer(input: { customerId: string; idempotencyKey: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // The phone is unique and required here: a placeholder no real phone can equal frees it.
      const erased = await trx
        .updateTable('loyalty_ledger_customers')
        .set({ phone: `erased:${input.customerId}` })
        .where('id', '=', input.customerId)
        .returning('id')
        .executeTakeFirst();
      if (!erased) return;
      await trx
        .updateTable('loyalty_ledger_cards')
        .set({ is_blocked: true, block_reason: 'provider' })
        .where('customer_id', '=', input.customerId)
        .execute();
    });
  }

  async recordAccrual(input: AccrualRequest): Promise<{ operation_id: string }> {
    return this.db.transaction().execute(async (trx) => {
      await this.lockCustomer(trx, input.customerId);
      const id = await this.postOperation(trx, input.customerId, {
        type: 'accrual',
        amount: input.points,
        purchaseAmount: input.purchaseAmount,
        orderId: input.orderId,
        purchaseId: input.orderId,
        idempotencyKey: input.idempotencyKey,
        expires: true,
      });
      return { operation_id: id };
    });
  }

  // ---- internals ------------------------------------------------------------------------------

  private async nextId(db: Db, prefix: string): Promise<string> {
    const { rows } = await sql<{ n: string }>`SELECT nextval('loyalty_ledger_ids')::text AS n`.execute(db);
    return `${prefix}-${rows[0]!.n}`;
  }

  private async findOrCreateCustomer(trx: Transaction<DB>, phone: string): Promise<string> {
    const program = await trx.selectFrom('loyalty_ledger_programs').select('id').where('is_default', '=', true).executeTakeFirst();
    if (!program) throw rejected('customer_rejected', 'the ledger has no default program to enrol customers in');
    const id = await this.nextId(trx, 'LC');
    // Concurrent provisioning of one phone: the unique phone decides, the loser reads the winner.
    await trx
      .insertInto('loyalty_ledger_customers')
      .values({ id, phone, program_id: program.id })
      .onConflict((oc) => oc.column('phone').doNothing())
      .execute();
    const customer = await trx
      .selectFrom('loyalty_ledger_customers')
      .select('id')
      .where('phone', '=', phone)
      .forUpdate()
      .executeTakeFirstOrThrow();
    for (const a of ACCOUNTS) {
      const exists = await trx
        .selectFrom('loyalty_ledger_accounts')
        .select('id')
        .where('customer_id', '=', customer.id)
        .where('kind', '=', a.kind)
        .executeTakeFirst();
      if (!exists) {
        await trx
          .insertInto('loyalty_ledger_accounts')
          .values({
            id: await this.nextId(trx, a.kind),
            customer_id: customer.id,
            kind: a.kind,
            title: a.title,
            description: a.description,
          })
          .execute();
      }
    }
    return customer.id;
  }

  private async lockCustomer(trx: Transaction<DB>, customerId: string) {
    const c = await trx.selectFrom('loyalty_ledger_customers').selectAll().where('id', '=', customerId).forUpdate().executeTakeFirst();
    if (!c) throw rejected('customer_not_found', 'no such loyalty customer');
    return c;
  }

  private async requireCustomer(db: Db, customerId: string): Promise<void> {
    const c = await db.selectFrom('loyalty_ledger_customers').select('id').where('id', '=', customerId).executeTakeFirst();
    if (!c) throw rejected('customer_not_found', 'no such loyalty customer');
  }

  private async lockCard(trx: Transaction<DB>, cardNumber: string) {
    const card = await trx
      .selectFrom('loyalty_ledger_cards')
      .selectAll()
      .where('card_number', '=', cardNumber)
      .forUpdate()
      .executeTakeFirst();
    if (!card) throw rejected('card_not_found', 'no card has this number');
    return card;
  }

  private async customerCard(trx: Transaction<DB>, customerId: string, cardId: string) {
    const card = await trx
      .selectFrom('loyalty_ledger_cards')
      .selectAll()
      .where('id', '=', cardId)
      .where('customer_id', '=', customerId)
      .forUpdate()
      .executeTakeFirst();
    if (!card) throw rejected('card_not_found', 'the customer has no such card');
    return card;
  }

  private async hasActiveMainCard(trx: Transaction<DB>, mainCardId: string | null): Promise<boolean> {
    if (!mainCardId) return false;
    const card = await trx.selectFrom('loyalty_ledger_cards').select('is_active').where('id', '=', mainCardId).executeTakeFirst();
    return card?.is_active === true;
  }

  private async issueVirtualCard(trx: Transaction<DB>, customerId: string, issueKey: string) {
    const { rows } = await sql<{ n: string }>`SELECT nextval('loyalty_ledger_ids')::text AS n`.execute(trx);
    const serial = rows[0]!.n;
    return trx
      .insertInto('loyalty_ledger_cards')
      .values({
        id: `card-${serial}`,
        card_number: VIRTUAL_CARD_PREFIX + serial.padStart(12, '0'),
        customer_id: customerId,
        is_virtual: true,
        issued_at: sql<Date>`now()`,
        issue_key: issueKey,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  }

  /** Posts a movement on the customer's bonus account, once per idempotency key. */
  private async postOperation(
    trx: Transaction<DB>,
    customerId: string,
    op: {
      type: 'accrual' | 'adjustment';
      amount: string;
      purchaseAmount?: string;
      orderId?: string;
      purchaseId?: string;
      comment?: string;
      idempotencyKey: string;
      expires?: boolean;
    },
  ): Promise<string> {
    const done = await trx
      .selectFrom('loyalty_ledger_operations')
      .select('id')
      .where('idempotency_key', '=', op.idempotencyKey)
      .executeTakeFirst();
    if (done) return done.id;
    const account = await trx
      .updateTable('loyalty_ledger_accounts')
      .set((eb) => ({ balance: eb('balance', '+', op.amount) }))
      .where('customer_id', '=', customerId)
      .where('kind', '=', 'bonus')
      .returning(['id', 'balance'])
      .executeTakeFirst();
    if (!account) throw rejected('customer_not_found', 'the customer has no bonus account');
    const id = await this.nextId(trx, 'op');
    await trx
      .insertInto('loyalty_ledger_operations')
      .values({
        id,
        customer_id: customerId,
        account_id: account.id,
        type: op.type,
        amount: op.amount,
        balance_after: account.balance,
        purchase_amount: op.purchaseAmount ?? null,
        order_id: op.orderId ?? null,
        purchase_id: op.purchaseId ?? null,
        comment: op.comment ?? null,
        expires_at: op.expires ? sql<Date>`now() + ${POINTS_LIFETIME}` : null,
        idempotency_key: op.idempotencyKey,
        // The time the balance moved (the account row is locked by now), not the transaction's
        // start: a post that waited for another's lock is then listed after it, so the
        // balance_after of the history reads as a running balance in time order.
        created_at: sql<Date>`clock_timestamp()`,
      })
      .execute();
    return id;
  }

  private cardOf(c: {
    id: string;
    card_number: string;
    is_virtual: boolean;
    is_active: boolean;
    is_blocked: boolean;
    block_reason: string | null;
  }): ProviderCard {
    const showsQr = c.is_virtual && c.is_active && !c.is_blocked;
    const base = `${this.qrBaseUrl}/${c.card_number}`;
    return {
      id: c.id,
      card_number: c.card_number,
      title: c.is_virtual ? CARD_TITLE.virtual : CARD_TITLE.physical,
      is_virtual: c.is_virtual,
      is_active: c.is_active,
      is_blocked: c.is_blocked,
      block_reason: c.is_blocked ? c.block_reason : null,
      qrcode: showsQr ? { original: `${base}.png`, listing: `${base}-listing.png`, detail: `${base}-detail.png` } : null,
    };
  }

  private async snapshot(db: Db, customerId: string): Promise<ProviderCustomer> {
    const customer = await db
      .selectFrom('loyalty_ledger_customers as c')
      .innerJoin('loyalty_ledger_programs as p', 'p.id', 'c.program_id')
      .select(['c.id', 'c.main_card_id', 'c.program_id', 'p.name as program_name', 'p.period_days'])
      .where('c.id', '=', customerId)
      .executeTakeFirst();
    if (!customer) throw rejected('customer_not_found', 'no such loyalty customer');
    const [accounts, cards, levels, turnover, last] = await Promise.all([
      db.selectFrom('loyalty_ledger_accounts').selectAll().where('customer_id', '=', customerId).orderBy('kind').execute(),
      db.selectFrom('loyalty_ledger_cards').selectAll().where('customer_id', '=', customerId).orderBy('created_at').orderBy('id').execute(),
      db.selectFrom('loyalty_ledger_levels').selectAll().where('program_id', '=', customer.program_id).orderBy('position').execute(),
      sql<{ amount: string }>`
        SELECT COALESCE(SUM(purchase_amount), 0)::numeric(12, 2)::text AS amount FROM loyalty_ledger_operations
        WHERE customer_id = ${customerId} AND type = 'accrual' AND status <> 'cancelled' AND purchase_amount IS NOT NULL
          AND created_at >= now() - make_interval(days => ${customer.period_days})`.execute(db),
      db
        .selectFrom('loyalty_ledger_operations')
        .select('amount')
        .where('customer_id', '=', customerId)
        .where('type', '=', 'accrual')
        .where('purchase_amount', 'is not', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst(),
    ]);
    const total = turnover.rows[0]!.amount;
    const asLevels = levels.map((l) => ({
      id: l.id,
      order: l.position,
      name: l.name,
      boundary: l.boundary,
      range_label: l.range_label,
      description: l.description,
      accrual_percent: l.accrual_percent,
    }));
    const index = levelIndexFor(asLevels, total);
    const tier = (i: number) => {
      const l = asLevels[i];
      return l ? { id: l.id, order: l.order, name: l.name, boundary: l.boundary, accrual_percent: l.accrual_percent } : null;
    };
    return {
      id: customer.id,
      program_id: customer.program_id,
      program_name: customer.program_name,
      main_card_id: customer.main_card_id,
      // The bonus account first: it is the one the app shows by default.
      accounts: accounts
        .sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'bonus' ? -1 : 1))
        .map((a) => ({ id: a.id, title: a.title, description: a.description, balance: a.balance, is_active: a.is_active })),
      cards: cards.map((c) => this.cardOf(c)),
      current_tier: tier(index),
      next_tier: tier(index + 1),
      total_turnover: total,
      last_purchase_points: last?.amount ?? '0',
    };
  }
}
