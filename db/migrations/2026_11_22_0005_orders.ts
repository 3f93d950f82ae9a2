// Frozen migration: never edit after it has landed; add a new one instead.
// Orders: the purchase (status), its lines, its delivery (tracking state, independent of the
// purchase status), and the history of both for the roadmap.
import { sql, type Kysely } from 'kysely';

const ORDER_STATUSES = [
  'created',
  'awaiting_payment',
  'confirmed',
  'picking',
  'picked',
  'ready_for_pickup',
  'en_route',
  'completed',
  'cancellation_requested',
  'cancelled',
];
const TRACKING_STATES = [
  'pending',
  'searching_courier',
  'courier_assigned',
  'courier_at_store',
  'en_route',
  'arrived',
  'delivered',
  'cancelled',
  'returning',
  'returned',
];
const list = (values: string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('orders')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // The number a person reads out on the phone; starts at 100001.
    .addColumn('no', 'integer', (c) =>
      c
        .notNull()
        .unique()
        .modifyEnd(sql`GENERATED ALWAYS AS IDENTITY (START WITH 100001)`),
    )
    .addColumn('customer_id', 'uuid', (c) => c.notNull().references('customers.id'))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id'))
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type IN ('delivery', 'pickup')`))
    .addColumn('payment_method', 'text', (c) => c.notNull().check(sql`payment_method IN ('cash', 'online')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status IN (${list(ORDER_STATUSES)})`))
    .addColumn('status_comment', 'text')
    // Why the order entered its status, as a code the API renders in the reader's language
    // (`not_paid_in_time`, `cancellation_queued`, ...); `status_comment` is free text (back office).
    .addColumn('status_reason', 'text')
    .addColumn('payment_status', 'text', (c) =>
      c.notNull().check(sql`payment_status IN ('not_required', 'awaiting', 'paid', 'refund_pending', 'refunded')`),
    )
    .addColumn('absence_action', 'text', (c) =>
      c
        .notNull()
        .defaultTo('call')
        .check(sql`absence_action IN ('remove', 'call')`),
    )
    .addColumn('comment', 'text')
    .addColumn('change_amount', 'numeric(12, 2)')
    // Delivery address (for pickup: the store's address, so lists show where to go).
    .addColumn('address_line', 'text', (c) => c.notNull())
    .addColumn('delivery_lon', 'double precision')
    .addColumn('delivery_lat', 'double precision')
    .addColumn('entrance', 'text')
    .addColumn('floor', 'text')
    .addColumn('apartment', 'text')
    .addColumn('intercom', 'text')
    .addColumn('courier_comment', 'text')
    .addColumn('delivery_zone_id', 'uuid')
    .addColumn('is_express', 'boolean', (c) => c.notNull().defaultTo(false))
    // Express promise in minutes from creation (the eta before a courier is assigned).
    .addColumn('express_minutes', 'integer')
    // The chosen slot (delivery or pickup) and its window, copied so the order keeps it.
    .addColumn('slot_id', 'uuid')
    .addColumn('slot_date', 'date')
    .addColumn('slot_start', 'time')
    .addColumn('slot_end', 'time')
    // The same window as instants (eta of a scheduled delivery, courier dispatch time).
    .addColumn('slot_starts_at', 'timestamptz')
    .addColumn('slot_ends_at', 'timestamptz')
    // Online orders: unpaid after this instant they are cancelled (BankPreferencesSchema payment_window_minutes).
    .addColumn('payment_due_at', 'timestamptz')
    .addColumn('goods_total', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('delivery_cost', 'numeric(12, 2)', (c) => c.notNull().defaultTo(0))
    .addColumn('total_price', 'numeric(12, 2)', (c) => c.notNull())
    // The total after picking (weights and changes); the amount charged and the loyalty base.
    .addColumn('final_total', 'numeric(12, 2)')
    .addColumn('items_count', 'integer', (c) => c.notNull())
    .addColumn('picking_result_state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`picking_result_state IN ('pending', 'in_progress', 'completed', 'cancelled')`),
    )
    .addColumn('has_picking_changes', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('picking_completed_at', 'timestamptz')
    // Rises by one with every committed change clients should hear about (events carry it).
    .addColumn('order_version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addColumn('cancelled_at', 'timestamptz')
    .addColumn('cancellation_reason', 'text')
    .execute();
  await sql`CREATE INDEX orders_customer ON orders (customer_id, created_at DESC, id)`.execute(db);
  await sql`CREATE INDEX orders_store_status ON orders (store_id, status)`.execute(db);

  await db.schema
    .createTable('order_items')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('line_no', 'integer', (c) => c.notNull())
    .addColumn('product_id', 'uuid', (c) => c.notNull())
    .addColumn('unit_id', 'uuid', (c) => c.notNull())
    .addColumn('inventory_id', 'uuid')
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('unit_name_ru', 'text', (c) => c.notNull())
    .addColumn('unit_name_en', 'text', (c) => c.notNull())
    .addColumn('image', 'text')
    .addColumn('barcode', 'text')
    .addColumn('plu_code', 'text')
    .addColumn('weight_based', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('weight', 'numeric(12, 3)', (c) => c.notNull().defaultTo(0))
    .addColumn('quantity', 'numeric(12, 3)', (c) => c.notNull().check(sql`quantity > 0`))
    .addColumn('unit_price', 'numeric(12, 2)', (c) => c.notNull())
    .addColumn('old_price', 'numeric(12, 2)')
    .addColumn('line_total', 'numeric(12, 2)', (c) => c.notNull())
    .addUniqueConstraint('order_items_line', ['order_id', 'line_no'])
    .execute();

  await db.schema
    .createTable('order_status_history')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('comment', 'text')
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX order_status_history_order ON order_status_history (order_id, occurred_at, id)`.execute(db);

  await db.schema
    .createTable('order_deliveries')
    .addColumn('order_id', 'uuid', (c) => c.primaryKey().references('orders.id').onDelete('cascade'))
    .addColumn('tracking_state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pending')
        .check(sql`tracking_state IN (${list(TRACKING_STATES)})`),
    )
    .addColumn('tracking_comment', 'text')
    .addColumn('courier_name', 'text')
    .addColumn('courier_phone', 'text')
    .addColumn('courier_transport', 'text', (c) => c.check(sql`courier_transport IN ('foot', 'bicycle', 'scooter', 'car')`))
    // Remaining route as [[lon, lat], ...] when the courier service gives one.
    .addColumn('courier_route', 'jsonb')
    // The courier service's id of the delivery request.
    .addColumn('courier_request_ref', 'text')
    .addColumn('courier_lon', 'double precision')
    .addColumn('courier_lat', 'double precision')
    .addColumn('courier_location_at', 'timestamptz')
    .addColumn('eta', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('order_tracking_history')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('order_id', 'uuid', (c) => c.notNull().references('orders.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX order_tracking_history_order ON order_tracking_history (order_id, occurred_at, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of ['order_tracking_history', 'order_deliveries', 'order_status_history', 'order_items', 'orders'])
    await db.schema.dropTable(t).execute();
}
