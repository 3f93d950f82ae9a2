// Demo picking data: a few orders of the demo customer waiting for picking in each demo store,
// so `npm start` shows the demo pickers a queue. Orders are written the way checkout leaves a
// paid-or-cash order: `confirmed`, lines priced from the store's inventory, stock reserved, a slot
// held; `insertConfirmedOrder` is also the tests' factory of pickable orders.
import { sql, type Transaction } from 'kysely';
import { reserveDeliverySlot, reservePickupSlot } from '../queries/logistics.js';
import { formatDecimal, parseDecimal } from '../../domain/money/decimal.js';
import {} from '../../domain/picking/items.js';
import { lineTotal } from '../../domain/money/money.js';
import type { DB } from '../schema.js';
import { DEMO_CUSTOMER } from './accounts.js';
import { DEMO_STORES } from './stores.js';

export interface ConfirmedOrderLine {
  inventoryId: string;
  /** In the inventory row's unit: whole pieces, or kg with up to 3 decimals. */
  quantity: string;
}

export interface ConfirmedOrderSpec {
  customerId: string;
  storeId: string;
  type: 'delivery' | 'pickup';
  paymentMethod?: 'cash' | 'online';
  /** Express delivery (no slot). Otherwise the first slot that can still be held is taken. */
  express?: boolean;
  absenceAction?: 'call' | 'remove';
  comment?: string | null;
  lines: ConfirmedOrderLine[];
  /** Placed this many minutes ago (the queue orders express cards by it). */
  placedMinutesAgo?: number;
}

export interface ConfirmedOrder {
  orderId: string;
  no: number;
  goodsTotal: string;
}

/** Inserts a confirmed order as checkout would leave it: lines, totals, reserved stock, a slot hold, history. */
export async function insertConfirmedOrder(trx: Transaction<DB>, spec: ConfirmedOrderSpec, now: Date): Promise<ConfirmedOrder> {
  const inventories = await trx
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
      'p.plu',
      'p.weight_based',
      'p.weight',
      'u.name_ru as unit_ru',
      'u.name_en as unit_en',
      sql<string | null>`(SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id)`.as('barcode'),
    ])
    .where('i.store_id', '=', spec.storeId)
    .where(
      'i.id',
      'in',
      spec.lines.map((l) => l.inventoryId),
    )
    .execute();
  const byId = new Map(inventories.map((i) => [i.id, i]));
  const lines = spec.lines.map((l, n) => {
    const inv = byId.get(l.inventoryId);
    if (!inv) throw new Error(`inventory ${l.inventoryId} is not sold in store ${spec.storeId}`);
    const quantity = parseDecimal(l.quantity, 3);
    if (quantity === null || quantity <= 0n) throw new Error(`quantity ${l.quantity} is not a positive decimal`);
    return { n: n + 1, inv, quantity, total: lineTotal(quantity, parseDecimal(inv.unit_price, 2)!) };
  });
  const goods = lines.reduce((sum, l) => sum + l.total, 0n);
  const store = await trx
    .selectFrom('stores')
    .select(['address_en', 'delivery_cost', 'lon', 'lat'])
    .where('id', '=', spec.storeId)
    .executeTakeFirstOrThrow();
  const deliveryCost = spec.type === 'delivery' ? parseDecimal(store.delivery_cost, 2)! : 0n;
  const paymentMethod = spec.paymentMethod ?? 'cash';
  const placedAt = new Date(now.getTime() - (spec.placedMinutesAgo ?? 5) * 60_000);
  const order = await trx
    .insertInto('orders')
    .values({
      customer_id: spec.customerId,
      store_id: spec.storeId,
      type: spec.type,
      payment_method: paymentMethod,
      status: 'confirmed',
      status_comment: null,
      status_reason: null,
      payment_status: paymentMethod === 'online' ? 'paid' : 'not_required',
      absence_action: spec.absenceAction ?? 'call',
      comment: spec.comment ?? null,
      // A delivery address a few hundred metres from the store.
      address_line: spec.type === 'delivery' ? 'Moscow, Tverskaya St, 7, apt. 12' : (store.address_en ?? ''),
      delivery_lon: spec.type === 'delivery' ? store.lon + 0.004 : null,
      delivery_lat: spec.type === 'delivery' ? store.lat - 0.003 : null,
      is_express: spec.type === 'delivery' && (spec.express ?? false),
      goods_total: formatDecimal(goods, 2),
      delivery_cost: formatDecimal(deliveryCost, 2),
      total_price: formatDecimal(goods + deliveryCost, 2),
      items_count: lines.length,
      created_at: placedAt,
      updated_at: placedAt,
    })
    .returning(['id', 'no'])
    .executeTakeFirstOrThrow();

  await trx
    .insertInto('order_items')
    .values(
      lines.map((l) => ({
        order_id: order.id,
        line_no: l.n,
        product_id: l.inv.product_id,
        unit_id: l.inv.unit_id,
        inventory_id: l.inv.id,
        name_ru: l.inv.name_ru,
        name_en: l.inv.name_en,
        unit_name_ru: l.inv.unit_ru,
        unit_name_en: l.inv.unit_en,
        image: l.inv.image_listing,
        barcode: l.inv.barcode,
        plu_code: l.inv.plu,
        weight_based: l.inv.weight_based,
        weight: l.inv.weight,
        quantity: formatDecimal(l.quantity, 3),
        unit_price: l.inv.unit_price,
        old_price: l.inv.old_price,
        line_total: formatDecimal(l.total, 2),
      })),
    )
    .execute();
  // Checkout reserves the ordered quantity.
  for (const l of lines) {
    await trx
      .updateTable('inventories')
      .set({ stock: sql<string>`greatest(stock - ${formatDecimal(l.quantity, 3)}::numeric, 0)` })
      .where('id', '=', l.inv.id)
      .where('stock', 'is not', null)
      .execute();
  }

  if (!(spec.type === 'delivery' && spec.express)) await holdFirstFreeSlot(trx, order.id, spec.storeId, spec.type);
  await trx
    .insertInto('order_status_history')
    .values([
      { order_id: order.id, status: 'created', reason: null, comment: null, occurred_at: placedAt },
      { order_id: order.id, status: 'confirmed', reason: null, comment: null, occurred_at: placedAt },
    ])
    .execute();
  if (spec.type === 'delivery') await trx.insertInto('order_deliveries').values({ order_id: order.id, updated_at: placedAt }).execute();
  return { orderId: order.id, no: order.no, goodsTotal: formatDecimal(goods, 2) };
}

/** Holds the earliest window of the store that still accepts orders, and copies it to the order. */
async function holdFirstFreeSlot(trx: Transaction<DB>, orderId: string, storeId: string, type: 'delivery' | 'pickup'): Promise<void> {
  const candidates = await trx
    .selectFrom('store_slots')
    .select('id')
    .where('store_id', '=', storeId)
    .where('kind', '=', type)
    .where('is_closed', '=', false)
    .where('starts_at', '>', sql<Date>`now()`)
    .where(sql<boolean>`reserved < capacity`)
    .orderBy('starts_at')
    .limit(10)
    .execute();
  for (const { id } of candidates) {
    const hold = await (type === 'delivery' ? reserveDeliverySlot : reservePickupSlot)(trx, { storeId, slotId: id, orderId });
    if (!hold.ok) continue;
    await sql`
      UPDATE orders o SET slot_id = s.id, slot_date = s.slot_date,
        slot_start = (s.starts_at AT TIME ZONE st.timezone)::time, slot_end = (s.ends_at AT TIME ZONE st.timezone)::time
      FROM store_slots s JOIN stores st ON st.id = s.store_id
      WHERE o.id = ${orderId} AND s.id = ${id}`.execute(trx);
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// Demo orders

/** mulberry32: demo data must not depend on Math.random. */
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

/** Demo orders per store: [store index, type, express, absence action, piece lines, weight lines, comment]. */
const DEMO_ORDERS: [number, 'delivery' | 'pickup', boolean, 'call' | 'remove', number, number, string | null][] = [
  [0, 'delivery', true, 'call', 4, 2, 'Please pick ripe bananas'],
  [0, 'delivery', false, 'remove', 5, 1, null],
  [0, 'pickup', false, 'call', 3, 1, 'I will come after work'],
  [1, 'delivery', false, 'call', 4, 1, null],
  [2, 'delivery', false, 'call', 5, 2, 'Ring the bell twice'],
  [2, 'pickup', false, 'remove', 3, 0, null],
];

/**
 * Demo products a store can sell right now: default inventory rows in stock (at least 3 pieces or
 * 2 kg), in product-code order, so the pick below is the same on every machine.
 */
async function stockedProducts(trx: Transaction<DB>, storeId: string, weightBased: boolean) {
  return trx
    .selectFrom('inventories as i')
    .innerJoin('products as p', 'p.id', 'i.product_id')
    .select(['i.id', 'p.code'])
    .where('i.store_id', '=', storeId)
    .where('i.is_default', '=', true)
    .where('p.weight_based', '=', weightBased)
    .where('p.is_active', '=', true)
    .where('i.stock', '>=', weightBased ? '2' : '3')
    .orderBy('p.code')
    .execute();
}

export async function seedPicking(trx: Transaction<DB>, now: Date): Promise<void> {
  const random = prng(7_2026_11);
  for (const [storeIndex, type, express, absence, pieceLines, weightLines, comment] of DEMO_ORDERS) {
    const storeId = DEMO_STORES[storeIndex]!.id;
    const pieces = await stockedProducts(trx, storeId, false);
    const weights = await stockedProducts(trx, storeId, true);
    const pick = <T>(xs: T[], n: number): T[] => {
      const pool = [...xs];
      return Array.from({ length: Math.min(n, pool.length) }, () => pool.splice(Math.floor(random() * pool.length), 1)[0]!);
    };
    const lines: ConfirmedOrderLine[] = [
      ...pick(pieces, pieceLines).map((p) => ({ inventoryId: p.id, quantity: String(1 + Math.floor(random() * 3)) })),
      ...pick(weights, weightLines).map((p) => ({
        inventoryId: p.id,
        quantity: formatDecimal(BigInt(300 + 50 * Math.floor(random() * 20)), 3),
      })),
    ];
    await insertConfirmedOrder(
      trx,
      {
        customerId: DEMO_CUSTOMER.id,
        storeId,
        type,
        express,
        absenceAction: absence,
        comment,
        lines,
        placedMinutesAgo: 5 + Math.floor(random() * 40),
      },
      now,
    );
  }
}
