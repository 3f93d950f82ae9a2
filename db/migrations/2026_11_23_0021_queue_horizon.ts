// Frozen migration: never edit after it has landed; add a new one instead.
// A slot order is in the picker queue once its slot starts within PICKING_QUEUE_HORIZON_HOURS,
// but nothing told the pickers when that moment came: `order_added` went out at confirmation
// (days ahead, while the card was not shown) and never again. A sweep now announces the orders
// whose slot start crossed the horizon since the last sweep; `swept_until` is where it stopped.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE picker_queue_horizon (
    id smallint PRIMARY KEY CHECK (id = 1),
    swept_until timestamptz NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX orders_confirmed_slot_start ON orders (slot_starts_at) WHERE status = 'confirmed'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX orders_confirmed_slot_start`.execute(db);
  await sql`DROP TABLE picker_queue_horizon`.execute(db);
}
