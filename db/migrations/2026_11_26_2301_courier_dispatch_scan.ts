// Frozen migration: never edit after it has landed; add a new one instead.
// Courier dispatch (server/jobs/courier-dispatch.ts) asks, on every pass of every instance's order
// worker (ORDER_WORKER_INTERVAL_MS, 500 ms), which delivery orders need a courier now. It found
// them through order_deliveries_pending - every delivery not yet handed to a courier, that is every
// scheduled order of the days ahead - each joined to its order to be judged: a pass grew with the
// orders booked ahead, taken from the same PostgreSQL that places orders. The orders that can be
// due are the confirmed, picking or picked ones whose slot starts within the lead, and express
// ones (no slot) under way:
// one index of those orders by slot start answers both with a range (NULLs for express). It
// replaces orders_confirmed_slot_start, whose readers (the picker queue's horizon sweep) read
// confirmed orders by slot start from it as before; order_deliveries_pending, read by nothing
// else, is dropped, so a delivery order writes one index entry fewer.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX orders_active_slot_start ON orders (slot_starts_at) WHERE status IN ('confirmed', 'picking', 'picked')`.execute(
    db,
  );
  await sql`DROP INDEX IF EXISTS orders_confirmed_slot_start`.execute(db);
  await sql`DROP INDEX IF EXISTS order_deliveries_pending`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX order_deliveries_pending ON order_deliveries (order_id) WHERE tracking_state = 'pending'`.execute(db);
  await sql`CREATE INDEX orders_confirmed_slot_start ON orders (slot_starts_at) WHERE status = 'confirmed'`.execute(db);
  await sql`DROP INDEX IF EXISTS orders_active_slot_start`.execute(db);
}
