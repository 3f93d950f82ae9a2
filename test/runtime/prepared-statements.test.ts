// Kysely's queries run as named prepared statements (db/connection.ts), except those whose result
// is `*` / `t.*` (such a prepared statement would fail once another instance's migration adds a
// column) and those with a long IN or VALUES list (one text per length would spend the names).
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
    // A star inside parentheses does not shape the result: that statement is named.
    const nested = () =>
      sql<{
        id: string;
      }>`SELECT s.id FROM stores s CROSS JOIN LATERAL (SELECT * FROM stores x WHERE x.id = s.id) y WHERE s.is_active = ${true} LIMIT 1`.execute(
        single.db,
      );
    await nested();
    const prepared = await preparedTexts();
    expect(prepared.some((t) => t.includes('select * from "stores"'))).toBe(false);
    expect(prepared.some((t) => t.includes('CROSS JOIN LATERAL (SELECT * FROM stores x'))).toBe(true);
    // Another instance migrates while this one runs.
    await sql`ALTER TABLE stores ADD COLUMN prepared_statements_probe integer`.execute(database.db);
    try {
      expect(await store()).toMatchObject({ id: before!.id, prepared_statements_probe: null });
      expect((await named())!.id).toBe(before!.id);
      expect((await nested()).rows[0]!.id).toBe(before!.id);
    } finally {
      await sql`ALTER TABLE stores DROP COLUMN prepared_statements_probe`.execute(database.db);
    }
  });

  it('names short lists but leaves long IN and VALUES lists unnamed, so list lengths do not spend the names', async () => {
    const codes = (n: number) => Array.from({ length: n }, (_, i) => `probe-${n}-${i}`);
    const inList = (n: number) => single.db.selectFrom('measurement_units').select('id').where('code', 'in', codes(n)).execute();
    const values = (n: number) =>
      sql`SELECT v.code FROM (VALUES ${sql.join(codes(n).map((c) => sql`(${c})`))}) AS v(code)`.execute(single.db);
    for (const n of [3, 9]) {
      await inList(n);
      await values(n);
    }
    const prepared = await preparedTexts();
    const withParams = (n: number) => (t: string) => t.includes(`$${n})`) && !t.includes(`$${n + 1}`);
    expect(prepared.filter((t) => t.includes(' in (') && withParams(3)(t))).toHaveLength(1);
    expect(prepared.filter((t) => t.includes('(VALUES ') && withParams(3)(t))).toHaveLength(1);
    expect(prepared.filter((t) => t.includes(' in (') && withParams(9)(t))).toHaveLength(0);
    expect(prepared.filter((t) => t.includes('(VALUES ') && withParams(9)(t))).toHaveLength(0);
  });
});
