// Kysely's queries run as named prepared statements (db/connection.ts), except texts with a `*`:
// a prepared `SELECT *` would fail once another instance's migration adds a column.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type DatabaseHandle } from '../../db/connection.js';
import type { OpenedDatabase } from '../../db/database.js';
import { createTestDatabase } from '../support/db.js';

let database: OpenedDatabase;
let single: DatabaseHandle;
beforeAll(async () => {
  database = await createTestDatabase();
  // One connection, so the statements prepared by one query are visible to the next.
  single = connect(database.url, { max: 1 });
});
afterAll(async () => {
  await single?.close();
  await database?.shutdown();
});

const preparedTexts = async () =>
  (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(single.db)).rows.map((r) => r.statement);

describe('named statements', () => {
  it('prepares a parameterised query once per connection and reuses it', async () => {
    const unit = () => single.db.selectFrom('measurement_units').select(['id', 'code']).where('code', '=', 'pc').executeTakeFirst();
    const first = await unit();
    expect(await unit()).toEqual(first);
    const prepared = (await preparedTexts()).filter((t) => t.includes('"measurement_units"'));
    expect(prepared).toHaveLength(1);
  });

  it('leaves SELECT * unnamed, so a column added by a migration elsewhere breaks nothing', async () => {
    const store = () => single.db.selectFrom('stores').selectAll().where('is_active', '=', true).limit(1).executeTakeFirst();
    const named = () => single.db.selectFrom('stores').select(['id', 'code']).where('is_active', '=', true).limit(1).executeTakeFirst();
    const before = await store();
    await named();
    expect((await preparedTexts()).some((t) => t.includes('select * from "stores"'))).toBe(false);
    // Another instance migrates while this one runs.
    await sql`ALTER TABLE stores ADD COLUMN prepared_statements_probe integer`.execute(database.db);
    try {
      expect(await store()).toMatchObject({ id: before!.id, prepared_statements_probe: null });
      expect((await named())!.id).toBe(before!.id);
    } finally {
      await sql`ALTER TABLE stores DROP COLUMN prepared_statements_probe`.execute(database.db);
    }
  });
});
