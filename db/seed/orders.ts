// Demo order history of the demo customer: finished orders (a delivered one with its courier
// trail, a collected pickup, one cancelled for non-payment), so "My orders" has a history tab
// and the roadmap and tracking screens have something finished to show. The unfinished demo
// orders (waiting for pickers) come from the picking seed. Deterministic: fixed ids, fixed
// products (the first in-stock ones by code), dates relative to today.
import { sql, type Transaction } from 'kysely';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import { lineTotal } from '../../domain/money/money.js';
import type { DB } from '../schema.js';
import type { OrderStatus, TrackingState } from '../tables/orders.js';
import { DEMO_CUSTOMER } from './accounts.js';
import { stableUuid } from './ids.js';
import { DEMO_STORES } from './stores.js';

const TVERSKAYA = DEMO_STORES.find((s) => s.code === 'MSK-TVERSKAYA')!;
const ARBAT = DEMO_STORES.find((s) => s.code === 'MSK-ARBAT')!;

interface DemoOrder {
  key: string;
  store: (typeof DEMO_STORES)[number];
  type: 'delivery' | 'pickup';
  payment: 'cash' | 'online';
  daysAgo: number;
  /** Pieces of the first in-stock products of the store, by product code. */
  pieces: number[];
  /** Status moves, minutes after placing. */
  statuses: [OrderStatus, number, string | null][];
  tracking?: [TrackingState, number][];
}

const ORDERS: DemoOrder[] = [
  {
    key: 'delivered',
    store: TVERSKAYA,
    type: 'delivery',
    payment: 'online',
    daysAgo: 6,
    pieces: [2, 1, 3],
    statuses: [
      ['created', 0, null],
      ['awaiting_payment', 1, null],
      ['confirmed', 3, null],
      ['picking', 20, null],
      ['picked', 38, null],
      ['en_route', 52, null],
      ['completed', 75, null],
    ],
    tracking: [
      ['pending', 0],
      ['searching_courier', 20],
      ['courier_assigned', 24],
      ['courier_at_store', 36],
      ['en_route', 52],
      ['arrived', 73],
      ['delivered', 75],
    ],
  },
  {
    key: 'collected',
    store: ARBAT,
    type: 'pickup',
    payment: 'cash',
    daysAgo: 3,
    pieces: [1, 2],
    statuses: [
      ['created', 0, null],
      ['confirmed', 0, null],
      ['picking', 30, null],
      ['ready_for_pickup', 45, null],
      ['completed', 190, null],
    ],
  },
  {
    key: 'not-paid',
    store: TVERSKAYA,
    type: 'delivery',
    payment: 'online',
    daysAgo: 1,
    pieces: [4],
    statuses: [
      ['created', 0, null],
      ['awaiting_payment', 2, null],
      ['cancelled', 30, 'not_paid_in_time'],
    ],
    tracking: [
      ['pending', 0],
      ['cancelled', 30],
    ],
  },
];

export async function seedOrders(trx: Transaction<DB>): Promise<void> {
  for (const spec of ORDERS) {
    const id = stableUuid(`order:${spec.key}`);
    const placed = sql<Date>`date_trunc('hour', now()) - make_interval(days => ${spec.daysAgo}) - interval '4 hours'`;
    const at = (minutes: number) => sql<Date>`${placed} + make_interval(mins => ${minutes})`;
    const stocked = await trx
      .selectFrom('inventories as i')
      .innerJoin('products as p', 'p.id', 'i.product_id')
      .innerJoin('measurement_units as u', 'u.id', 'i.unit_id')
      .select([
        'i.id',
        'i.product_id',
        'i.unit_id',
        'i.unit_price',
        'i.old_price',
        'p.name_ru',
        'p.name_en',
        'p.image_listing',
        'p.weight',
        'u.name_ru as unit_ru',
        'u.name_en as unit_en',
      ])
      .where('i.store_id', '=', spec.store.id)
      .where('u.code', '=', 'pc')
      .where('i.stock', '>=', '5')
      .orderBy('p.code')
      .limit(spec.pieces.length)
      .execute();
    const lines = stocked.map((inv, n) => {
      const quantity = BigInt(spec.pieces[n]!) * 1000n;
      return { inv, quantity, total: lineTotal(quantity, parseDecimal(inv.unit_price, 2)!) };
    });
    const goods = lines.reduce((sum, l) => sum + l.total, 0n);
    const delivery = spec.type === 'delivery' ? 19900n : 0n;
    const last = spec.statuses[spec.statuses.length - 1];
    await trx
      .insertInto('orders')
      .values({
        id,
        customer_id: DEMO_CUSTOMER.id,
        store_id: spec.store.id,
        type: spec.type,
        payment_method: spec.payment,
        status: last![0],
        status_reason: last![2],
        payment_status: spec.payment === 'cash' ? 'not_required' : last![0] === 'cancelled' ? 'awaiting' : 'paid',
        address_line: spec.type === 'delivery' ? 'Tverskaya St, 7, Moscow' : spec.store.address_en,
        delivery_lon: spec.type === 'delivery' ? 37.6106 : null,
        delivery_lat: spec.type === 'delivery' ? 55.7579 : null,
        apartment: spec.type === 'delivery' ? '12' : null,
        goods_total: formatDecimal(goods, 2),
        delivery_cost: formatDecimal(delivery, 2),
        total_price: formatDecimal(goods + delivery, 2),
        items_count: lines.length,
        picking_result_state: last![0] === 'completed' ? 'completed' : 'cancelled',
        order_version: spec.statuses.length + (spec.tracking?.length ?? 0),
        created_at: placed,
        updated_at: at(last![1]),
        completed_at: last![0] === 'completed' ? at(last![1]) : null,
        cancelled_at: last![0] === 'cancelled' ? at(last![1]) : null,
        cancellation_reason: last![2],
      })
      .execute();
    await trx
      .insertInto('order_items')
      .values(
        lines.map((l, n) => ({
          order_id: id,
          line_no: n + 1,
          product_id: l.inv.product_id,
          unit_id: l.inv.unit_id,
          inventory_id: l.inv.id,
          name_ru: l.inv.name_ru,
          name_en: l.inv.name_en,
          unit_name_ru: l.inv.unit_ru,
          unit_name_en: l.inv.unit_en,
          image: l.inv.image_listing,
          weight: l.inv.weight,
          quantity: formatDecimal(l.quantity, 3),
          unit_price: l.inv.unit_price,
          old_price: l.inv.old_price,
          line_total: formatDecimal(l.total, 2),
        })),
      )
      .execute();
    await trx
      .insertInto('order_status_history')
      .values(spec.statuses.map(([status, minutes, reason]) => ({ order_id: id, status, reason, occurred_at: at(minutes) })))
      .execute();
    if (spec.tracking) {
      const [state, minutes] = spec.tracking[spec.tracking.length - 1]!;
      const delivered = state === 'delivered';
      await trx
        .insertInto('order_deliveries')
        .values({
          order_id: id,
          tracking_state: state,
          courier_name: delivered ? 'Ivan' : null,
          courier_transport: delivered ? 'bicycle' : null,
          updated_at: at(minutes),
        })
        .execute();
      await trx
        .insertInto('order_tracking_history')
        .values(spec.tracking.map(([s, m]) => ({ order_id: id, state: s, occurred_at: at(m) })))
        .execute();
    }
  }
}
