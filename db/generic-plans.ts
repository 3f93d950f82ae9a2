// Write transactions whose statements PostgreSQL plans once per connection, not once per call.
//
// The pool sends the service's statements as named prepared statements (db/connection.ts), but
// PostgreSQL's default plan_cache_mode (`auto`) keeps planning a statement for its parameters
// whenever the generic plan looks dearer than the custom ones - and it always does for statements
// that take their rows from `unnest($1)` (a generic plan assumes 100 elements, a custom one sees
// the one or two given), so checkout's statements would be planned afresh on every order, and
// planning would be a large part of the order's write.
//
// A generic plan is made once per connection, for the table sizes of that moment, and kept until
// ANALYZE changes the table's statistics - and the plans of the foreign-key checks the writes fire
// are made under the same setting. Made while a table was small (a new database, a table that
// grew since its last ANALYZE) such a plan reads the whole table for every lookup, and the cost
// grows with every row. So the transaction also turns sequential scans off: its statements are
// key lookups and index joins, and every table they read has the index for them, so the plans
// made at any size read by index.
//
// Both settings are the transaction's own (SET LOCAL), sent with BEGIN in one round trip (the simple
// protocol takes the three statements in one message), so they hold behind a transaction-mode
// pooler and never outlive the transaction. Use it for short transactions of known statements
// whose plans are key lookups and index joins whatever the parameters; test/orders/generic-plans.test.ts
// holds checkout's plans with a large catalog and in a nearly empty database.
import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * Runs `work` in a transaction on one connection of `db`, its statements planned generically and
 * by index: committed when `work` resolves, rolled back when it throws (the error is what `work`
 * threw).
 */
export async function transactionWithGenericPlans<T>(db: Kysely<DB>, work: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    await sql`BEGIN; SET LOCAL plan_cache_mode = force_generic_plan; SET LOCAL enable_seqscan = off`.execute(conn);
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
