// One way to reach PostgreSQL: a pg Pool wrapped by Kysely. Type parsers are set here, once,
// so numeric, int8 and dates come back the same way in every query.
import { createHash } from 'node:crypto';
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

// Named (server-side prepared) statements. Kysely sends every query as an unnamed statement, so
// PostgreSQL parses and plans it again on every execution; named, each connection parses a text
// once and reuses the plan (about a third of the database's time per checkout was planning). The
// name is a hash of the text, so equal texts share one statement and different texts never clash.
// Texts that vary with their input (multi-row VALUES, IN lists) would each become a statement, so
// only the first PREPARED_TEXTS_MAX texts of the process are named; the rest go unnamed as before.
// Texts with a `*` stay unnamed too: a prepared `SELECT *` / `RETURNING *` fails ("cached plan
// must not change result type") once another instance's migration adds a column to its table,
// which would break the running instances of a rolling deploy; explicit column lists do not.
const PREPARED_TEXTS_MAX = 1000;
const PREPARED_TEXT_MAX_LENGTH = 16_000;
const statementNames = new Map<string, string | null>();

function statementNameOf(text: string): string | null {
  let name = statementNames.get(text);
  if (name !== undefined) return name;
  name = statementNames.size < PREPARED_TEXTS_MAX && text.length <= PREPARED_TEXT_MAX_LENGTH && !text.includes('*')
    ? `k_${createHash('sha1').update(text).digest('base64url')}`
    : null;
  if (name) statementNames.set(text, name);
  return name;
}

/** Routes a client's parameterised text queries (Kysely's) through named statements. */
function prepareStatementsOf(client: pg.PoolClient): void {
  const plain = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (first: unknown, values?: unknown, callback?: unknown) => {
    if (typeof first === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = statementNameOf(first);
      if (name) return plain({ name, text: first, values });
    }
    return plain(first, values, callback);
  };
}

export interface DatabaseHandle {
  db: Database;
  pool: pg.Pool;
  close(): Promise<void>;
}

export function connect(connectionString: string, options: { max?: number; applicationName?: string; preparedStatements?: boolean } = {}): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'grocery-service',
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  if (options.preparedStatements !== false) pool.on('connect', prepareStatementsOf);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    async close() {
      await db.destroy();
    },
  };
}
