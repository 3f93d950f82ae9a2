// One way to reach PostgreSQL: a pg Pool wrapped by Kysely. Type parsers are set here, once,
// so numeric, int8 and dates come back the same way in every query.
import { AsyncResource } from 'node:async_hooks';
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
// once and reuses the plan. The name is a hash of the text, so equal texts share one statement and different texts never clash.
// Texts that vary with their input (multi-row VALUES, IN lists) would each become a statement, so
// only the first PREPARED_TEXTS_MAX texts of the process are considered; the rest go unnamed. And
// a list longer than LONG_LIST is left unnamed at once: a list's length follows its input, and
// every length would otherwise take a name from that budget (a batch job's lists of 1 to 50 ids
// could spend it before a request path's statements are first seen). Short lists - constant ones
// like `status in ($1, $2)` and the common small counts of variable ones - still get names. Lists
// that should be one statement whatever their length are passed as arrays (`= ANY($1::uuid[])`).
// Texts whose result has every column of a table stay unnamed too: a prepared `SELECT *`, `t.*`
// or `RETURNING *` fails ("cached plan must not change result type") once another instance's
// migration adds a column to the table, which would break the running instances of a rolling
// deploy. Only the statement's own result counts: a star inside parentheses (a subquery, a CTE
// body) does not change it, nor does `count(*)`.
const PREPARED_TEXTS_MAX = 1000;
const LONG_LIST = 8;
/** An IN list, or a multi-row VALUES, longer than LONG_LIST (as Kysely writes them). */
const LONG_IN_LIST = new RegExp(`\\bin \\(\\$\\d+(, \\$\\d+){${LONG_LIST},}\\)`, 'i');
const LONG_VALUES = new RegExp(`\\bvalues (\\([^()]*\\), ){${LONG_LIST},}\\(`, 'i');
const PREPARED_TEXT_MAX_LENGTH = 16_000;
/** The name of each text seen (null: left unnamed), for the first PREPARED_TEXTS_MAX texts. */
const statementNames = new Map<string, string | null>();
const STAR_COLUMNS = /\bselect\s+(distinct\s+)?\*|\breturning\s+\*|\.\*|,\s*\*(?!\))/gi;

/** Whether the statement's own result (outside any parentheses) includes a `*` or `t.*`. */
function resultHasStar(text: string): boolean {
  for (const m of text.matchAll(STAR_COLUMNS)) {
    let depth = 0;
    for (let i = 0; i < m.index; i++) {
      if (text[i] === '(') depth++;
      else if (text[i] === ')') depth--;
    }
    if (depth === 0) return true;
  }
  return false;
}

function statementNameOf(text: string): string | null {
  const known = statementNames.get(text);
  if (known !== undefined) return known;
  // One of a family of texts (one per list length): neither named nor remembered.
  if (LONG_IN_LIST.test(text) || LONG_VALUES.test(text)) return null;
  if (statementNames.size >= PREPARED_TEXTS_MAX) return null;
  const name =
    text.length <= PREPARED_TEXT_MAX_LENGTH && !resultHasStar(text) ? `k_${createHash('sha1').update(text).digest('base64url')}` : null;
  statementNames.set(text, name);
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

/** The channel the outbox feeds LISTEN on (server/realtime/outbox-feed.ts). */
export const OUTBOX_WAKE_CHANNEL = 'outbox_events';
const READ_ONLY = /^\s*(select|show|begin|start|savepoint|release|rollback|set\s+local|declare|fetch|close)\b/i;
const COMMIT = /^\s*(commit|end)\b/i;
const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const ROLLBACK = /^\s*rollback\s*;?\s*$/i;
const WAKE_RETRY_MS = 1000;

/**
 * Wakes the outbox feeds of every instance after this pool commits a write: the outbox rows are
 * written in the writing transaction, but the NOTIFY that tells the feeds is sent after it, on its
 * own (autocommit, through the pool: fine behind a transaction-mode pooler), so writers do not
 * queue for the database-wide lock a notifying transaction holds at commit. Wake-ups coalesce:
 * at most one NOTIFY is in flight per pool, and writes committed meanwhile send one more after it.
 * The feeds read the outbox by id, so a wake-up needs no payload and one covers any number of rows.
 */
function wakeOutboxAfterCommit(pool: pg.Pool): void {
  let inFlight = false;
  let again = false;
  let wakeClient: Promise<pg.Client> | null = null;
  const connectWakeClient = async () => {
    const client = new pg.Client(pool.options);
    // An error of an idle connection (the server went away) is met by the next wake-up's query.
    client.on('error', () => {});
    try {
      await client.connect();
      return client;
    } catch (err) {
      wakeClient = null;
      throw err;
    }
  };
  // The pool's end ends the wake-up connection too.
  const end = pool.end.bind(pool);
  pool.end = async () => {
    const client = wakeClient;
    wakeClient = null;
    await Promise.all([end(), client?.then((c) => c.end()).catch(() => {})]);
  };
  // Sent in the context of the pool's creation, not of the request whose commit woke it: no
  // request waits for it, and none counts it among its round trips.
  const outside = new AsyncResource('OutboxWake');
  const wake = () => {
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    again = false;
    // A connection of its own, kept open: a pooled one would wait behind the requests queued for
    // the pool, and the feeds would hear of a commit only when the pool next had a connection free.
    const send = async () => {
      if (pool.ending) return;
      wakeClient ??= connectWakeClient();
      const client = await wakeClient;
      try {
        await client.query(`SELECT pg_notify('${OUTBOX_WAKE_CHANNEL}', '')`);
      } catch (err) {
        wakeClient = null; // a broken connection is replaced on the next wake-up
        void client.end().catch(() => {});
        throw err;
      }
    };
    outside.runInAsyncScope(
      () =>
        void send().then(
          () => {
            inFlight = false;
            if (again) wake();
          },
          () => {
            // Pool exhausted or database away: tried again in a second (the feeds also poll, slowly).
            inFlight = false;
            if (!pool.ending) setTimeout(wake, WAKE_RETRY_MS).unref();
          },
        ),
    );
  };
  pool.on('connect', (client) => {
    let inTransaction = false;
    let wrote = false;
    const plain = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (first: unknown, ...rest: unknown[]) => {
      const text =
        typeof first === 'string' ? first : typeof first === 'object' && first !== null && 'text' in first ? String(first.text) : '';
      const result = plain(first, ...rest);
      let wakes = false;
      if (BEGIN.test(text)) {
        inTransaction = true;
        wrote = false;
      } else if (COMMIT.test(text)) {
        wakes = inTransaction && wrote;
        inTransaction = false;
      } else if (ROLLBACK.test(text)) {
        inTransaction = false;
      } else if (!READ_ONLY.test(text)) {
        if (inTransaction) wrote = true;
        else wakes = true;
      }
      if (wakes && result instanceof Promise) void result.then(wake, () => {});
      return result;
    };
  });
}

export interface DatabaseHandle {
  db: Database;
  pool: pg.Pool;
  close(): Promise<void>;
}

/**
 * Time limits of the service's connections (0: none). They are sent as startup options of each
 * connection (`-c name=value`), never as session `SET`s: behind PgBouncer in transaction mode a
 * session setting would stay on whichever server connection ran it. When one fires,
 * the request answers 503 DATABASE_UNAVAILABLE (server/http/responses.ts isDatabaseUnavailable).
 */
export interface ConnectionLimits {
  /** Longest a statement may run (SQLSTATE 57014 past it). */
  statementTimeoutMs: number;
  /** Longest a statement waits for a lock (55P03 past it). */
  lockTimeoutMs: number;
  /** Longest a transaction may sit idle between statements; PostgreSQL then ends the connection (25P03). */
  idleInTransactionTimeoutMs: number;
  /** Longest a request waits for a free connection of the pool. */
  poolTimeoutMs: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  statementTimeoutMs: 0,
  lockTimeoutMs: 0,
  idleInTransactionTimeoutMs: 0,
  poolTimeoutMs: 10_000,
};

/** The `options` startup parameter carrying the limits, or undefined when none is set. */
export function limitOptions(limits: ConnectionLimits): string | undefined {
  const settings = [
    ['statement_timeout', limits.statementTimeoutMs],
    ['lock_timeout', limits.lockTimeoutMs],
    ['idle_in_transaction_session_timeout', limits.idleInTransactionTimeoutMs],
  ].filter(([, v]) => Number(v) > 0);
  return settings.length ? settings.map(([k, v]) => `-c ${k}=${v}`).join(' ') : undefined;
}

/** How a pool of the service connects (see createPool). */
export interface PoolOptions {
  max?: number;
  applicationName?: string;
  limits?: Partial<ConnectionLimits>;
  /**
   * Route parameterised queries through named prepared statements (default true). False behind
   * a transaction-mode pooler that cannot keep them (PgBouncer < 1.21, Supavisor): a statement
   * prepared on one server connection does not exist on the next (DB_NAMED_STATEMENTS).
   */
  namedStatements?: boolean;
}

/** A pg Pool with the service's time limits and named statements, whose broken connections never crash the process. */
export function createPool(connectionString: string, options: PoolOptions = {}): pg.Pool {
  const limits = { ...DEFAULT_CONNECTION_LIMITS, ...options.limits };
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    application_name: options.applicationName ?? 'grocery-service',
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: limits.poolTimeoutMs,
    options: limitOptions(limits),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor a checked-out one (the pool listens only while a client is idle): PostgreSQL shutting
  // down or failing over sends FATAL 57P01 to every connection, and one held by a transaction
  // between two queries would emit 'error' to nobody, which ends the process. Its next query
  // fails instead, and that answers 503 (server/http/responses.ts isDatabaseUnavailable).
  pool.on('connect', (client) => client.on('error', () => {}));
  if (options.namedStatements !== false) pool.on('connect', prepareStatementsOf);
  return pool;
}

export function connect(connectionString: string, options: PoolOptions = {}): DatabaseHandle {
  const pool = createPool(connectionString, options);
  wakeOutboxAfterCommit(pool);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    pool,
    async close() {
      await db.destroy();
    },
  };
}
