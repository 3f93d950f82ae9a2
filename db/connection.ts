// One way to reach PostgreSQL: a pg Pool wrapped by Kysely. Type parsers are set here, once,
// so numeric, int8 and dates come back the same way in every query.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

const { types } = pg;
// numeric -> decimal string ("89.90"): money and quantities never become JS floats.
types.setTypeParser(types.builtins.NUMERIC, (v) => v);
// int8 -> number: used only for counters and ids far below 2^53; parsed strictly.
types.setTypeParser(types.builtins.INT8, (v) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new RangeError(`int8 value ${v} exceeds the safe integer range`);
  return n;
});
// date -> "YYYY-MM-DD" string, as the API writes dates; no time-zone shift through JS Date.
types.setTypeParser(types.builtins.DATE, (v) => v);
// time -> "HH:MM:SS" string.
types.setTypeParser(types.builtins.TIME, (v) => v);
// timestamptz stays a Date (pg's default) and is written out with toISOString().

export type Database = Kysely<DB>;

export interface DatabaseHandle {
  db: Database;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function connect(connectionString: string, options: { max?: number; applicationName?: string } = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'grocery-service',
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    async close() {
      await db.destroy();
    },
  };
}
