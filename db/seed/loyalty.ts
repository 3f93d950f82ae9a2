// Demo data of the local loyalty ledger (the provider side): the program "Семейный клуб" with three
// levels; the demo customer's loyalty history (a plastic card, a year of in-store receipts with
// their accruals and one redemption, enough turnover for the middle tier); another customer who
// owns a card; cards to try the link flows with (an unregistered card carrying points, a blocked
// one, never-issued plastic cards from stock). No wallet is created: the demo customer creates
// it through the API and watches provisioning find this history. Deterministic: fixed ids, a
// seeded PRNG, dates only relative to now.
import { sql, type Transaction } from 'kysely';
import { loyaltyAccrualFor } from '../../domain/loyalty/accrual.js';
import type { DB } from '../schema.js';
import type { StoredPosition } from '../tables/loyalty.js';
import { DEMO_CUSTOMER } from './accounts.js';

/** mulberry32: a small deterministic PRNG, so "random" receipts are the same on every machine. */
function prng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const DEMO_LOYALTY_PROGRAM = {
  id: 12,
  name: 'Семейный клуб',
  levels: [
    {
      id: 1,
      position: 1,
      name: 'Бронза',
      boundary: '0.00',
      accrual_percent: '3.00',
      range_label: 'от 0 ₽',
      description: '3% от покупок баллами',
    },
    {
      id: 2,
      position: 2,
      name: 'Серебро',
      boundary: '10000.00',
      accrual_percent: '5.00',
      range_label: 'от 10 000 ₽',
      description: '5% от покупок баллами',
    },
    {
      id: 3,
      position: 3,
      name: 'Золото',
      boundary: '30000.00',
      accrual_percent: '7.00',
      range_label: 'от 30 000 ₽',
      description: '7% от покупок баллами',
    },
  ],
};

/** Card numbers to try the flows with (see README): each answers a different link preview. */
export const DEMO_LOYALTY_CARDS = {
  /** The demo customer's own plastic card. */
  demoPlastic: { id: 'card-000017', number: '7770000000000017' },
  /** Another customer's card: OWNED_BY_ANOTHER_CUSTOMER, 409 on link. */
  ownedByAnother: { id: 'card-000025', number: '7770000000000025' },
  /** Issued, never registered, 150 points on it: ISSUED, the points join the account on link. */
  unregisteredWithPoints: { id: 'card-000033', number: '7770000000000033', balance: '150.00' },
  /** Blocked at the provider: BLOCKED. */
  blocked: { id: 'card-000041', number: '7770000000000041' },
  /** Plastic cards from stock, never issued: NOT_ISSUED, for link-physical/. */
  stock: Array.from({ length: 20 }, (_, i) => {
    const n = String(1001 + i);
    return { id: `card-00${n}`, number: `777000000000${n}` };
  }),
};

export const DEMO_LOYALTY_CUSTOMERS = {
  demo: { id: 'LC-000001', phone: DEMO_CUSTOMER.phone },
  other: { id: 'LC-000002', phone: '+79990000002' },
};

const SHOPS = ['Тверская', 'Арбат', 'Хамовники'];
const GOODS: { name: string; code: string; price: number }[] = [
  { name: 'Молоко 3,2% 930 мл', code: '4601234567893', price: 8990 },
  { name: 'Хлеб Бородинский 400 г', code: '4607001234561', price: 6490 },
  { name: 'Сыр Российский 200 г', code: '4600123456787', price: 28990 },
  { name: 'Яйца С1 10 шт', code: '4601234500011', price: 12990 },
  { name: 'Кофе молотый 250 г', code: '4601234500028', price: 54990 },
  { name: 'Масло сливочное 82,5% 180 г', code: '4601234500035', price: 23990 },
  { name: 'Куриное филе 1 кг', code: '4601234500042', price: 49990 },
  { name: 'Яблоки Гала 1 кг', code: '4601234500059', price: 17990 },
  { name: 'Гречка 900 г', code: '4601234500066', price: 11990 },
  { name: 'Творог 5% 350 г', code: '4601234500073', price: 16990 },
  { name: 'Сок апельсиновый 1 л', code: '4601234500080', price: 19990 },
  { name: 'Шоколад тёмный 90 г', code: '4601234500097', price: 15990 },
];

const kopecksText = (kopecks: number) => (kopecks / 100).toFixed(2);

interface Receipt {
  id: string;
  customer: string;
  card: string;
  shop: string;
  daysAgo: number;
  positions: StoredPosition[];
  total: number;
}

/** Receipts of one customer: `count` visits spread over `spanDays`, 2 to 5 positions each. */
function receipts(
  random: () => number,
  customer: string,
  card: string,
  idPrefix: string,
  count: number,
  spanDays: number,
  scale = 1,
): Receipt[] {
  const out: Receipt[] = [];
  for (let i = 0; i < count; i++) {
    const positions: StoredPosition[] = [];
    const lines = 2 + Math.floor(random() * 4);
    for (let l = 0; l < lines; l++) {
      const g = GOODS[Math.floor(random() * GOODS.length)];
      const quantity = (1 + Math.floor(random() * 2)) * scale;
      const amount = g!.price * quantity;
      positions.push({
        name: g!.name,
        code: g!.code,
        quantity,
        price: kopecksText(g!.price),
        amount: kopecksText(amount),
        discount: '0.00',
      });
    }
    out.push({
      id: `${idPrefix}-${String(i + 1).padStart(4, '0')}`,
      customer,
      card,
      shop: SHOPS[i % SHOPS.length]!,
      // Oldest first, the newest a few days ago.
      daysAgo: Math.round(spanDays - (i * (spanDays - 3)) / Math.max(1, count - 1)),
      positions,
      total: positions.reduce((s, p) => s + Math.round(Number(p.amount) * 100), 0),
    });
  }
  return out;
}

export async function seedLoyalty(trx: Transaction<DB>): Promise<void> {
  const p = DEMO_LOYALTY_PROGRAM;
  await trx.insertInto('loyalty_ledger_programs').values({ id: p.id, name: p.name, period_days: 365, is_default: true }).execute();
  await trx
    .insertInto('loyalty_ledger_levels')
    .values(p.levels.map((l) => ({ ...l, program_id: p.id })))
    .execute();

  const { demo, other } = DEMO_LOYALTY_CUSTOMERS;
  const c = DEMO_LOYALTY_CARDS;
  const ago = (days: number) => sql<Date>`now() - make_interval(days => ${days})`;
  await trx
    .insertInto('loyalty_ledger_customers')
    .values([
      { id: demo.id, phone: demo.phone, program_id: p.id, main_card_id: c.demoPlastic.id, created_at: ago(400) },
      { id: other.id, phone: other.phone, program_id: p.id, main_card_id: c.ownedByAnother.id, created_at: ago(500) },
    ])
    .execute();
  await trx
    .insertInto('loyalty_ledger_accounts')
    .values([
      { id: 'bonus-000001', customer_id: demo.id, kind: 'bonus', title: 'Бонусные баллы', description: '1 балл = 1 рубль скидки' },
      { id: 'promo-000001', customer_id: demo.id, kind: 'promo', title: 'Акционные баллы', description: 'Баллы за участие в акциях' },
      { id: 'bonus-000002', customer_id: other.id, kind: 'bonus', title: 'Бонусные баллы', description: '1 балл = 1 рубль скидки' },
      {
        id: 'promo-000002',
        customer_id: other.id,
        kind: 'promo',
        title: 'Акционные баллы',
        description: 'Баллы за участие в акциях',
        is_active: false,
      },
    ])
    .execute();
  await trx
    .insertInto('loyalty_ledger_cards')
    .values([
      {
        id: c.demoPlastic.id,
        card_number: c.demoPlastic.number,
        customer_id: demo.id,
        is_virtual: false,
        issued_at: ago(400),
        created_at: ago(420),
      },
      {
        id: c.ownedByAnother.id,
        card_number: c.ownedByAnother.number,
        customer_id: other.id,
        is_virtual: false,
        issued_at: ago(500),
        created_at: ago(520),
      },
      {
        id: c.unregisteredWithPoints.id,
        card_number: c.unregisteredWithPoints.number,
        customer_id: null,
        is_virtual: false,
        issued_at: ago(90),
        balance: c.unregisteredWithPoints.balance,
        created_at: ago(120),
      },
      {
        id: c.blocked.id,
        card_number: c.blocked.number,
        customer_id: null,
        is_virtual: false,
        issued_at: ago(200),
        is_blocked: true,
        block_reason: 'provider',
        created_at: ago(220),
      },
      ...c.stock.map((s) => ({
        id: s.id,
        card_number: s.number,
        customer_id: null,
        is_virtual: false,
        issued_at: null,
        created_at: ago(30),
      })),
    ])
    .execute();

  // A year of receipts; each earns the rate of the level reached before it, as at a real till.
  const random = prng(20261122);
  const history = [
    ...receipts(random, demo.id, c.demoPlastic.id, 'R-000154', 14, 330),
    ...receipts(random, other.id, c.ownedByAnother.id, 'R-000233', 6, 200, 3),
  ];
  // The demo customer spent 300 points at the till a month ago. Every movement is posted in time
  // order, so each `balance_after` is the running balance and the newest equals the account's.
  type Movement = { kind: 'receipt'; receipt: Receipt } | { kind: 'redemption'; customer: string; daysAgo: number; amount: number };
  const movements: Movement[] = [
    ...history.map((receipt): Movement => ({ kind: 'receipt', receipt })),
    { kind: 'redemption', customer: demo.id, daysAgo: 30, amount: 30_000 },
  ];
  const daysAgoOf = (m: Movement) => (m.kind === 'receipt' ? m.receipt.daysAgo : m.daysAgo);
  movements.sort((a, b) => daysAgoOf(b) - daysAgoOf(a)); // oldest first; stable for ties
  const balances = new Map<string, number>();
  const turnover = new Map<string, number>();
  let op = 0;
  for (const m of movements) {
    if (m.kind === 'redemption') {
      const left = (balances.get(m.customer) ?? 0) - m.amount;
      balances.set(m.customer, left);
      await trx
        .insertInto('loyalty_ledger_operations')
        .values({
          id: `op-${String(++op).padStart(7, '0')}`,
          customer_id: m.customer,
          account_id: 'bonus-000001',
          type: 'redemption',
          amount: kopecksText(-m.amount),
          balance_after: kopecksText(left),
          shop_name: SHOPS[0],
          created_at: ago(m.daysAgo),
          idempotency_key: 'seed:redemption:1',
        })
        .execute();
      continue;
    }
    const r = m.receipt;
    const reached = turnover.get(r.customer) ?? 0;
    const level = [...p.levels].reverse().find((l) => Number(l.boundary) * 100 <= reached)!;
    // The same rule as online orders (domain/loyalty/accrual.ts).
    const points = Number(
      loyaltyAccrualFor(kopecksText(r.total), { tierLabel: level.name, accrualPercent: level.accrual_percent, mainCardBlocked: false })
        .points,
    );
    const balance = (balances.get(r.customer) ?? 0) + points * 100;
    balances.set(r.customer, balance);
    turnover.set(r.customer, reached + r.total);
    const account = r.customer === demo.id ? 'bonus-000001' : 'bonus-000002';
    await trx
      .insertInto('loyalty_ledger_receipts')
      .values({
        id: r.id,
        customer_id: r.customer,
        card_id: r.card,
        shop_name: r.shop,
        occurred_at: ago(r.daysAgo),
        total: kopecksText(r.total),
        bonus_accrual: kopecksText(points * 100),
        positions: JSON.stringify(r.positions),
        discounts: JSON.stringify([]),
      })
      .execute();
    await trx
      .insertInto('loyalty_ledger_operations')
      .values({
        id: `op-${String(++op).padStart(7, '0')}`,
        customer_id: r.customer,
        account_id: account,
        type: 'accrual',
        amount: kopecksText(points * 100),
        balance_after: kopecksText(balance),
        purchase_amount: kopecksText(r.total),
        purchase_id: r.id,
        shop_name: r.shop,
        created_at: ago(r.daysAgo),
        expires_at: ago(r.daysAgo - 365),
        idempotency_key: `receipt:${r.id}`,
      })
      .execute();
  }
  for (const [customer, balance] of balances) {
    await trx
      .updateTable('loyalty_ledger_accounts')
      .set({ balance: kopecksText(balance) })
      .where('customer_id', '=', customer)
      .where('kind', '=', 'bonus')
      .execute();
  }
}
