// compiledOnce (db/compiled-once.ts): the statement's text is built on the first call only, and
// every call sends it with its own values in the places of the stand-ins, constants kept.
import { CompiledQuery, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type DatabaseConnection } from 'kysely';
import { describe, expect, it } from 'vitest';
import { compiledOnce } from '../../db/compiled-once.js';
import type { DB } from '../../db/schema.js';

/** A Kysely whose connection records what it is sent and answers no rows. */
function recordingDb() {
  const sent: CompiledQuery[] = [];
  const connection: DatabaseConnection = {
    executeQuery: (query) => {
      sent.push(query);
      return Promise.resolve({ rows: [] });
    },
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => ({
        init: () => Promise.resolve(),
        acquireConnection: () => Promise.resolve(connection),
        beginTransaction: () => Promise.resolve(),
        commitTransaction: () => Promise.resolve(),
        rollbackTransaction: () => Promise.resolve(),
        releaseConnection: () => Promise.resolve(),
        destroy: () => Promise.resolve(),
      }),
      createIntrospector: (k) => new PostgresIntrospector(k),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  });
  return { db, sent };
}

describe('compiledOnce', () => {
  it('builds the text once and sends each call its own values, the constants kept in place', async () => {
    const { db, sent } = recordingDb();
    let builds = 0;
    const statement = compiledOnce<{ id: string; limit: number }, unknown>((_, v) => {
      builds++;
      return sql`SELECT ${'constant'} AS c FROM t WHERE id = ${v.id} OR parent = ${v.id} LIMIT ${v.limit}`;
    });
    await statement(db, { id: 'a', limit: 1 });
    await statement(db, { id: 'b', limit: 2 });
    expect(builds).toBe(1);
    expect(sent.map((q) => q.sql)).toEqual([
      'SELECT $1 AS c FROM t WHERE id = $2 OR parent = $3 LIMIT $4',
      'SELECT $1 AS c FROM t WHERE id = $2 OR parent = $3 LIMIT $4',
    ]);
    expect(sent.map((q) => q.parameters)).toEqual([
      ['constant', 'a', 'a', 1],
      ['constant', 'b', 'b', 2],
    ]);
  });

  it('builds statements that embed a query builder the same way', async () => {
    const { db, sent } = recordingDb();
    const statement = compiledOnce<{ id: number }, unknown>(
      (k, v) => sql`SELECT * FROM (${k.selectFrom('picking_items').select('id').where('session_id', '=', v.id)}) i`,
    );
    await statement(db, { id: 1 });
    await statement(db, { id: 2 });
    expect(sent[0]!.sql).toBe(sent[1]!.sql);
    expect(sent.map((q) => q.parameters)).toEqual([[1], [2]]);
  });
});
