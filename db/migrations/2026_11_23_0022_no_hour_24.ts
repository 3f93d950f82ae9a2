// Frozen migration: never edit after it has landed; add a new one instead.
// PostgreSQL's `time` takes 24:00, "midnight at the end of the day", and the checks
// `end_time > start_time` let it in as the natural way to write "until midnight". The API cannot
// say it: RFC 3339 times stop at 23:59:59, so a 22:00-24:00 window was published ending at
// "00:00:00+03:00", before it starts, and a store closing at 24:00 answered a `closes_at` that
// breaks the contract. Hours and windows are entered up to 23:59:59 ("until midnight"); a store
// open past midnight says so with closes_at < opens_at, as its table already allows.
// Windows of a day whose local start does not exist (a DST spring-forward gap) are skipped when
// the calendar is made (materializeSlots), not here.
import { sql, type Kysely } from 'kysely';

const CHECKS = [
  ['slot_templates', 'slot_templates_before_midnight', `end_time < '24:00' AND start_time < '24:00'`],
  ['store_express_schedule', 'store_express_schedule_before_midnight', `end_time < '24:00' AND start_time < '24:00'`],
  ['store_working_hours', 'store_working_hours_before_midnight', `opens_at < '24:00' AND closes_at < '24:00'`],
] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  // Rows that already say 24:00 meant "until midnight": 23:59:59 says the same and can be written.
  await sql`UPDATE slot_templates SET end_time = '23:59:59' WHERE end_time = '24:00'`.execute(db);
  await sql`UPDATE store_express_schedule SET end_time = '23:59:59' WHERE end_time = '24:00'`.execute(db);
  await sql`UPDATE store_working_hours SET closes_at = '23:59:59' WHERE closes_at = '24:00'`.execute(db);
  for (const [table, name, check] of CHECKS) {
    await sql`ALTER TABLE ${sql.table(table)} ADD CONSTRAINT ${sql.ref(name)} CHECK (${sql.raw(check)})`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const [table, name] of CHECKS) await sql`ALTER TABLE ${sql.table(table)} DROP CONSTRAINT ${sql.ref(name)}`.execute(db);
}
