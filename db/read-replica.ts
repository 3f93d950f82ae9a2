// Reads that may be a moment stale (catalog listings and search, product cards, categories) can be
// sent to a streaming replica of the primary (DATABASE_READ_URL), taking their load off it. The
// replica is optional: whatever becomes of it, those reads are answered, by the primary if need be,
// never with the replica's error.
//   - A read that cannot get a connection to the replica, or whose connection breaks before its
//     first answer, runs again on the primary, and the replica is taken out of use (a breaker).
//   - A check in the background asks the replica every second whether it still streams from the
//     primary and how far behind it is; not streaming, unreachable or further behind than the bound
//     (READ_REPLICA_MAX_LAG_SECONDS), it is taken out of use too.
//   - Out of use, it is asked again every READ_REPLICA_RETRY_SECONDS by that check alone (no
//     request waits for a dead replica) and taken back once it answers within the bound.
import { Kysely, PostgresDialect, type PostgresCursor, type PostgresPool, type PostgresPoolClient, type PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { createPool, type ConnectionLimits, type Database } from './connection.js';
import type { DB } from './schema.js';

export type ReadTarget = 'replica' | 'primary';

/** Why the replica is out of use. */
export type ReplicaDownReason = 'starting' | 'unreachable' | 'not_streaming' | 'lagging' | 'closed';

/** What the metrics report of the reads (counters since the start). */
export interface ReadFigures {
  /** Queries of the routed reads answered by each database. */
  served: Record<ReadTarget, number>;
  /** Reads the replica failed (no connection, or one that broke before its first answer), sent to the primary instead. */
  fallbacks: number;
  /** Whether reads go to the replica now. */
  up: boolean;
  /** How far behind the replica was at the last check (seconds); null before one succeeded. */
  lagSeconds: number | null;
}

export interface ReadReplicaOptions {
  /** The primary's request pool: where reads go while the replica is out of use. */
  primary: pg.Pool;
  max?: number;
  limits?: Partial<ConnectionLimits>;
  namedStatements?: boolean;
  /** Further behind than this (seconds), the replica is out of use. */
  maxLagSeconds: number;
  /** How long the replica stays out of use before it is asked again (ms). */
  retryMs: number;
  /** How often a replica in use is checked (ms). */
  checkIntervalMs?: number;
  report?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

export interface ReadReplica {
  /** Routes each read to the replica while it is in use, else (or when it fails) to the primary. */
  db: Database;
  /** The replica's own pool. */
  pool: pg.Pool;
  figures(): ReadFigures;
  close(): Promise<void>;
}

const CHECK_INTERVAL_MS = 1000;
/** A check that cannot connect or get its answer within this counts the replica unreachable. */
const CHECK_TIMEOUT_MS = 2000;

/**
 * Whether the replica is in recovery, has a WAL receiver that streams, and how far its replay is
 * behind. Replay caught up with what was received is no lag at all: on a quiet primary the last
 * replayed transaction gets old without the replica falling behind. Without pg_read_all_stats a
 * role sees a WAL receiver's row but not its status, so an unknown status counts as streaming.
 */
const CHECK_SQL = `
  SELECT pg_is_in_recovery() AS in_recovery,
         EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE coalesce(status, 'streaming') = 'streaming') AS streaming,
         (CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
               ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) END)::float8 AS lag_seconds`;

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin shutdown
  '57P02', // crash shutdown
  '57P03', // cannot connect now (starting up, not yet consistent)
  '53300', // too many connections
]);

/** An error that says the connection to the replica broke or could not be had: class 08 (not a protocol violation), refusals, shutdowns. */
export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || (code.startsWith('08') && code !== '08P01'))) return true;
  return /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Query read timeout)/.test(
    err.message,
  );
}

/** A query the replica cancelled because it conflicted with replaying the primary's changes: the primary can answer it. */
function isRecoveryConflict(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (code === '40001' || code === '40P01') && /conflict with recovery/i.test(err.message);
}

/** Whether the replica is in use, and the background check that decides it. */
class ReplicaHealth {
  up = false;
  reason: ReplicaDownReason = 'starting';
  lagSeconds: number | null = null;
  #timer: NodeJS.Timeout | null = null;
  #client: pg.Client | null = null;
  #checking = false;
  #closed = false;

  constructor(
    private readonly url: string,
    private readonly options: ReadReplicaOptions,
  ) {
    // Out of use until the first check says otherwise, which runs at once.
    this.#schedule(0);
  }

  /** Takes the replica out of use (a read failed on it); the next check comes after the retry interval. */
  markDown(reason: ReplicaDownReason, err?: unknown): void {
    if (this.#closed) return;
    if (this.up) {
      this.up = false;
      this.options.report?.('warn', 'read replica out of use; reads go to the primary', {
        reason,
        err: err instanceof Error ? err.message : undefined,
        lag_seconds: this.lagSeconds,
        retry_in_ms: this.options.retryMs,
      });
      // A failed read is news the running check does not have: wait a whole interval from now.
      this.#schedule(this.options.retryMs);
    }
    this.reason = reason;
  }

  #markUp(): void {
    if (!this.up) {
      this.options.report?.('info', 'read replica in use', { was: this.reason, lag_seconds: this.lagSeconds });
      this.up = true;
    }
  }

  #schedule(ms: number): void {
    if (this.#closed) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#check(), ms);
    this.#timer.unref();
  }

  async #check(): Promise<void> {
    if (this.#checking || this.#closed) return;
    this.#checking = true;
    try {
      const status = await this.#ask();
      this.lagSeconds = status.lag_seconds;
      if (status.in_recovery && !status.streaming) this.markDown('not_streaming');
      else if (status.lag_seconds > this.options.maxLagSeconds) this.markDown('lagging');
      else this.#markUp();
    } catch (err) {
      this.#client?.end().catch(() => {});
      this.#client = null;
      this.markDown('unreachable', err);
    } finally {
      this.#checking = false;
    }
    this.#schedule(this.up ? (this.options.checkIntervalMs ?? CHECK_INTERVAL_MS) : this.options.retryMs);
  }

  /** One connection of its own, kept between checks and replaced when it fails. */
  async #ask(): Promise<{ in_recovery: boolean; streaming: boolean; lag_seconds: number }> {
    if (!this.#client) {
      const client = new pg.Client({
        connectionString: this.url,
        application_name: 'grocery-replica-check',
        connectionTimeoutMillis: CHECK_TIMEOUT_MS,
        query_timeout: CHECK_TIMEOUT_MS,
      });
      client.on('error', () => {}); // met by the next check's query
      this.#client = client;
      await client.connect();
    }
    const { rows } = await this.#client.query<{ in_recovery: boolean; streaming: boolean; lag_seconds: number }>(CHECK_SQL);
    return rows[0]!;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.up = false;
    this.reason = 'closed';
    if (this.#timer) clearTimeout(this.#timer);
    await this.#client?.end().catch(() => {});
  }
}

/** The pool Kysely sees: each lease is a replica connection while the replica is in use, else a primary one. */
class ReadRouter implements PostgresPool {
  readonly options: object;
  readonly served: Record<ReadTarget, number> = { replica: 0, primary: 0 };
  fallbacks = 0;

  constructor(
    readonly replica: pg.Pool,
    readonly primary: pg.Pool,
    readonly health: ReplicaHealth,
  ) {
    this.options = replica.options;
  }

  async connect(): Promise<PostgresPoolClient> {
    if (this.health.up) {
      try {
        return new RoutedClient(this, await this.replica.connect(), 'replica');
      } catch (err) {
        this.replicaFailed(err);
        this.fallbacks++;
      }
    }
    return new RoutedClient(this, await this.primary.connect(), 'primary');
  }

  /** A read failed on the replica for a reason of the replica's: out of use, unless it merely had every connection busy. */
  replicaFailed(err: unknown): void {
    const saturated = /^timeout exceeded when trying to connect/.test((err as Error).message ?? '') && this.replica.totalCount > 0;
    if (!saturated) this.health.markDown('unreachable', err);
  }

  async end(): Promise<void> {
    await this.replica.end();
  }
}

/**
 * One lease. Its first query may run again on the primary when the replica fails it; once a query
 * has been answered (a transaction may have begun on the replica) the lease stays where it is.
 */
class RoutedClient implements PostgresPoolClient {
  #client: pg.PoolClient | null;
  #on: ReadTarget;
  #answered = false;

  constructor(
    private readonly router: ReadRouter,
    client: pg.PoolClient,
    on: ReadTarget,
  ) {
    this.#client = client;
    this.#on = on;
  }

  get processID(): number | undefined {
    return (this.#client as { processID?: number } | null)?.processID;
  }

  query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(first: string | PostgresCursor<R>, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof first !== 'string') {
      this.#answered = true; // a cursor streams from where it began
      return (this.#client as unknown as { query(c: PostgresCursor<R>): PostgresCursor<R> }).query(first);
    }
    return this.#run<R>(first, parameters ?? []);
  }

  async #run<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    try {
      return await this.#query<R>(sql, parameters);
    } catch (err) {
      const broken = isConnectionFailure(err);
      if (this.#on !== 'replica' || this.#answered || !(broken || isRecoveryConflict(err))) throw err;
      // A connection that broke is not given back to the pool; one whose query was cancelled is.
      this.#client!.release(broken ? (err as Error) : undefined);
      this.#client = null;
      if (broken) this.router.replicaFailed(err);
      this.router.fallbacks++;
      this.#client = await this.router.primary.connect();
      this.#on = 'primary';
      return await this.#query<R>(sql, parameters);
    }
  }

  async #query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    const result = await this.#client!.query(sql, parameters as unknown[]);
    this.#answered = true;
    this.router.served[this.#on]++;
    return result as unknown as PostgresQueryResult<R>;
  }

  release(destroy?: boolean): void {
    const client = this.#client;
    this.#client = null;
    client?.release(destroy);
  }
}

/** The replica's pool, its check, and the Kysely that routes reads between it and the primary. */
export function connectReadReplica(url: string, options: ReadReplicaOptions): ReadReplica {
  const pool = createPool(url, {
    max: options.max,
    applicationName: 'grocery-service-reads',
    limits: options.limits,
    namedStatements: options.namedStatements,
  });
  const health = new ReplicaHealth(url, options);
  const router = new ReadRouter(pool, options.primary, health);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: router }) });
  return {
    db,
    pool,
    figures: () => ({
      served: { ...router.served },
      fallbacks: router.fallbacks,
      up: health.up,
      lagSeconds: health.lagSeconds,
    }),
    async close() {
      await health.close();
      await db.destroy(); // ends the replica's pool only: the primary's belongs to its own handle
    },
  };
}
