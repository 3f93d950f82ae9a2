// Write transactions whose statements PostgreSQL plans once per connection, not once per call.
//
// The pool sends the service's statements as named prepared statements (db/connection.ts), but
// PostgreSQL's default plan_cache_mode (`auto`) keeps planning a statement for its parameters
// whenever the generic plan looks dearer than the custom ones - and it always does for statements
// that take their rows from `unnest($1)` (a generic plan assumes 100 elements, a custom one sees
// the one or two given). Checkout's statements were planned afresh on every order: planning was
// 45 % of lockCheckout's time in PostgreSQL and 17 % of the order's write (pg_stat_statements with
// track_planning), and in an interleaved run (`force_generic_plan` on and off every 5 s, issue 23)
// order creation made 14 % more orders per second with PostgreSQL's CPU per order 13 % lower.
//
// The setting is the transaction's own (SET LOCAL), sent with BEGIN in one round trip (the simple
// protocol takes both statements in one message), so it holds behind a transaction-mode pooler and
// never outlives the transaction. Use it for short transactions of known statements whose plans
// are key lookups and index joins whatever the parameters; the plans of checkout's statements with
// a large catalog are held by test/orders/generic-plans.test.ts.
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * Runs `work` in a transaction on one connection of `db`, its statements planned generically:
 * committed when `work` resolves, rolled back when it throws (the error is what `work` threw).
 */
export async function transactionWithGenericPlans<T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`BEGIN; SET LOCAL plan_cache_mode = force_generic_plan`.execute(conn);
    let result: T;
    try {
      result = await work(conn);
    } catch (err) {
      // A connection that broke meanwhile fails here too; pg's pool does not hand it out again.
      await sql`ROLLBACK`.execute(conn).catch(() => {});
      throw err;
    }
    await sql`COMMIT`.execute(conn);
    return result;
  });
}
