// The picking queue of a store: orders waiting for a picker within the horizon, and the event that
// announces an order entering it.
import { sql } from 'kysely';
import type { Executor } from '../../executor.js';
import { OPEN_STATUSES } from './sessions.js';
import { outboxInsertSql, pickerPayloadSql } from '../outbox.js';

export interface QueueOptions {
  storeId: string;
  horizonHours: number;
  slotLeadMinutes: number;
  expressMinutes: number;
  limit: number;
}

/**
 * The store's picking queue: orders waiting for picking (`confirmed`) or being picked
 * (`picking`), express ones and slot orders due within the horizon, express first, then by
 * deadline, then by creation.
 */
export function listQueue(db: Executor, q: QueueOptions) {
  const slotStart = sql<Date | null>`(o.slot_date + o.slot_start) AT TIME ZONE st.timezone`;
  const deadline = pickDeadline(q);
  return db
    .selectFrom('orders as o')
    .innerJoin('stores as st', 'st.id', 'o.store_id')
    .leftJoin('picking_sessions as s', (j) => j.onRef('s.order_id', '=', 'o.id').on('s.status', 'in', OPEN_STATUSES))
    .leftJoin('pickers as p', 'p.id', 's.picker_id')
    .select([
      'o.id as order_id',
      'o.no',
      'o.created_at',
      'o.is_express',
      'o.type',
      'o.slot_id',
      'o.slot_date',
      'o.slot_start',
      'o.slot_end',
      'o.items_count',
      'o.goods_total',
      'o.comment',
      'o.absence_action',
      'st.id as store_id',
      'st.name_ru as store_name_ru',
      'st.name_en as store_name_en',
      'st.address_ru as store_address_ru',
      'st.address_en as store_address_en',
      'st.timezone as store_timezone',
      's.id as session_id',
      's.picker_id',
      'p.display_name as picker_display_name',
      slotStart.as('slot_starts_at'),
      sql<Date | null>`(o.slot_date + o.slot_end + CASE WHEN o.slot_end <= o.slot_start THEN interval '1 day' ELSE interval '0' END) AT TIME ZONE st.timezone`.as(
        'slot_ends_at',
      ),
      deadline.as('pick_deadline'),
      sql<boolean>`EXISTS (SELECT 1 FROM order_items l WHERE l.order_id = o.id AND l.weight_based)`.as('has_weight_items'),
    ])
    .where('o.store_id', '=', q.storeId)
    .where('o.status', 'in', ['confirmed', 'picking'])
    .where((eb) =>
      eb.or([
        eb('o.is_express', '=', true),
        eb('o.slot_date', 'is', null),
        eb(slotStart, '<=', sql<Date>`now() + make_interval(hours => ${q.horizonHours})`),
      ]),
    )
    .orderBy('o.is_express', 'desc')
    .orderBy(deadline)
    .orderBy('o.created_at')
    .orderBy('o.id')
    .limit(q.limit)
    .execute();
}

/** When order `o` (of store `st`) must be picked by: the queue card's `pick_deadline`. */
export const pickDeadline = (due: { slotLeadMinutes: number; expressMinutes: number }) =>
  sql<Date>`CASE WHEN o.is_express OR o.slot_date IS NULL
      THEN o.created_at + make_interval(mins => ${due.expressMinutes})
      ELSE (o.slot_date + o.slot_start) AT TIME ZONE st.timezone - make_interval(mins => ${due.slotLeadMinutes}) END`;

export type QueueRow = Awaited<ReturnType<typeof listQueue>>[number];

/**
 * Announces the slot orders that entered the picker queue since the last sweep: those still
 * `confirmed` whose slot start crossed `now + horizonHours` (the queue's horizon) get the
 * `queue.changed` / `order_added` event the status trigger sends at confirmation, which for them
 * came while their card was not shown yet. One instance sweeps at a time (the watermark row is
 * locked, SKIP LOCKED); the first sweep only sets the watermark. Run inside a transaction.
 * Returns how many were announced.
 */
export async function announceOrdersEnteringQueue(trx: Executor, horizonHours: number): Promise<number> {
  const { rows } = await sql<{ swept_until: Date; horizon_end: Date }>`
    SELECT swept_until, now() + make_interval(hours => ${horizonHours}) AS horizon_end
    FROM picker_queue_horizon WHERE id = 1 FOR UPDATE SKIP LOCKED`.execute(trx);
  if (!rows.length) {
    await sql`INSERT INTO picker_queue_horizon (id, swept_until) VALUES (1, now() + make_interval(hours => ${horizonHours}))
      ON CONFLICT (id) DO NOTHING`.execute(trx);
    return 0;
  }
  const { swept_until: from, horizon_end: to } = rows[0]!;
  if (to <= from) return 0;
  // picker.queue.changed `order_added` for each order entering the horizon, as the status trigger writes it.
  const announcement = outboxInsertSql(
    {
      type: 'picker.queue.changed',
      event_id: sql`e.event_id`,
      store_id: sql`e.store_id`,
      order_id: sql`e.id`,
      payload: pickerPayloadSql(
        'queue.changed',
        { store_id: sql`e.store_id` },
        { event_id: sql`e.event_id`, occurred_at: sql`now()`, store_id: sql`e.store_id`, order_id: sql`e.id`, reason: sql`'order_added'` },
      ),
    },
    sql`FROM entering e RETURNING 1`,
  );
  const announced = await sql<{ count: string }>`
    WITH entering AS (
      SELECT gen_random_uuid() AS event_id, o.id, o.store_id FROM orders o
      WHERE o.status = 'confirmed' AND NOT o.is_express AND o.slot_starts_at > ${from} AND o.slot_starts_at <= ${to}
        -- Confirmed with its slot already within the horizon: the trigger announced it then.
        AND NOT EXISTS (SELECT 1 FROM order_status_history h WHERE h.order_id = o.id AND h.status = 'confirmed'
          AND h.occurred_at > o.slot_starts_at - make_interval(hours => ${horizonHours}))
    ), inserted AS (${announcement})
    SELECT count(*) FROM inserted`.execute(trx);
  await trx.updateTable('picker_queue_horizon').set({ swept_until: to }).where('id', '=', 1).execute();
  return Number(announced.rows[0]!.count);
}
