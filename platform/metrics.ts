// GET /metrics in the Prometheus text format.
//
// Per request the service only records its latency and status in plain per-operation arrays
// (RequestFigures: map lookups, a bucket search and a few additions), many times cheaper than
// prom-client's labelled histogram and counter, which check and hash the labels on every call. Everything else is read at scrape time: open WebSocket connections,
// the outbox backlog and lag (one indexed query, skipped when the pool is exhausted so that a
// scrape never queues behind requests), the picking rates of the last hour (one bounded query,
// kept for PICKING_RATES_TTL_MS), and the pool's counters. prom-client provides those gauges and
// the process metrics.
//
// Labels are bounded and carry no secrets: operationIds come from the spec (anything else is
// `none`), statuses are HTTP status codes, stores are the chain's stores and modes are two; no
// paths, tokens, connection strings or people.
import { createHash, timingSafeEqual } from 'node:crypto';
import type express from 'express';
import client from 'prom-client';
import type pg from 'pg';
import type { Executor } from '../db/executor.js';
import type { ReadFigures } from '../db/read-replica.js';
import { recentWalksByStore } from '../db/queries/picking/history.js';
import { pickingRate } from '../domain/picking/rates.js';
import { bearerToken } from './tokens.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { EventLoopWatch } from './event-loop.js';
import type { Logger } from './logger.js';

/** Latency buckets in seconds: from a cached read (a few ms) to a slow provider call (10 s). */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** A scrape-time query (outbox, picking rates) must not hold a scrape longer than this. */
const SCRAPE_QUERY_TIMEOUT_MS = 1000;
/** The outbox figures look at this many newest events (a scrape reads at most these rows). */
const OUTBOX_RECENT_EVENTS = 10_000;
/**
 * The outbox backlog and lag, among the newest events, read backwards along the primary key: no
 * index follows published_at, so that marking an event published is a heap-only update
 * (migration 2026_11_28_1301). Ids grow with time, so the lowest unpublished id is the oldest
 * waiting event. A fan-out that stopped leaves every new event unpublished: the backlog climbs to
 * the window and the lag to the age of its oldest event.
 */
export const OUTBOX_FIGURES_SQL = `
  WITH waiting AS (
    SELECT id, created_at FROM (SELECT id, created_at, published_at FROM outbox_events ORDER BY id DESC LIMIT ${OUTBOX_RECENT_EVENTS}) AS recent
    WHERE published_at IS NULL)
  SELECT (SELECT count(*) FROM waiting) AS backlog,
         (SELECT extract(epoch FROM now() - created_at) FROM waiting ORDER BY id LIMIT 1) AS lag_seconds`;

/** The picking rates look at the walks that ended in this trailing window. */
const PICKING_RATES_WINDOW_SECONDS = 3600;
/** The picking rates read at most this many newest sessions (and the other sessions of their batches). */
const PICKING_RATES_RECENT_SESSIONS = 10_000;
/** A scrape reuses the picking rates read less than this long ago: several scrapers cost one query. */
export const PICKING_RATES_TTL_MS = 30_000;

/** The label of requests that matched no operation (health checks, docs, unknown paths, /metrics). */
export const NO_OPERATION = 'none';

// Process metrics (CPU, memory, event-loop lag, GC) are one set per process, however many
// services a process runs (the tests run several): they live in their own registry, created once.
let processRegistry: client.Registry | null = null;
function processMetrics(): client.Registry {
  if (!processRegistry) {
    processRegistry = new client.Registry();
    client.collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface MetricsSources {
  pool: pg.Pool;
  /** Runs the picking rates' query (over `pool`). */
  db: Executor;
  /** Ages the kept picking rates. */
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'env' | 'buildCommit' | 'dbPoolMax'>;
  eventLoop?: EventLoopWatch;
}

export interface Metrics {
  readonly contentType: string;
  /** Records one finished request. `operationId` is undefined when no operation matched. */
  observeRequest(operationId: string | undefined, status: number, seconds: number): void;
  /** Reports the open WebSocket connections of this instance (wired once realtime is attached). */
  trackWebSockets(connections: () => number): void;
  /** Reports which database answered the reads that may go to the read replica (wired when DATABASE_READ_URL is set). */
  trackReads(figures: () => ReadFigures): void;
  /** The whole exposition, process metrics first. */
  render(): Promise<string>;
}

export function createMetrics({ pool, db, clock, log, config, eventLoop }: MetricsSources): Metrics {
  const registry = new client.Registry();
  const requests = new RequestFigures();
  new client.Gauge({
    name: 'grocery_build_info',
    help: 'Always 1; the labels say which build and environment this instance runs.',
    labelNames: ['environment', 'commit'] as const,
    registers: [registry],
  }).set({ environment: config.env, commit: config.buildCommit }, 1);

  let websocketConnections: (() => number) | null = null;
  new client.Gauge({
    name: 'grocery_websocket_connections',
    help: 'Open order-tracking WebSocket connections on this instance.',
    registers: [registry],
    collect() {
      this.set(websocketConnections ? websocketConnections() : 0);
    },
  });

  new client.Gauge({
    name: 'grocery_db_pool_connections',
    help: "Connections of this instance's PostgreSQL pool: all open ones (total) and those not lent to a query (idle).",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
    },
  });
  new client.Gauge({
    name: 'grocery_db_pool_waiting_clients',
    help: 'Queries waiting for a pool connection (above 0 means the pool is exhausted).',
    registers: [registry],
    collect() {
      this.set(pool.waitingCount);
    },
  });
  new client.Gauge({
    name: 'grocery_db_pool_max_connections',
    help: 'Configured size of the pool (DB_POOL_MAX).',
    registers: [registry],
  }).set(config.dbPoolMax);

  const collectFailures = new client.Counter({
    name: 'grocery_metrics_collect_failures_total',
    help: 'Scrapes in which a source could not be read (its gauges are then absent from that scrape).',
    labelNames: ['source', 'reason'] as const,
    registers: [registry],
  });
  if (eventLoop) {
    new client.Gauge({
      name: 'grocery_event_loop_delay_seconds',
      help: 'Longest event-loop delay of the last one to two seconds: what /readyz judges (503 above READINESS_MAX_EVENT_LOOP_DELAY_MS).',
      registers: [registry],
      collect() {
        this.set(eventLoop.delayMs() / 1000);
      },
    });
  }
  const backlog = new client.Gauge({
    name: 'grocery_outbox_backlog_events',
    help: `Outbox events not yet published (published_at is null) among the newest ${OUTBOX_RECENT_EVENTS}.`,
    registers: [registry],
  });
  const lag = new client.Gauge({
    name: 'grocery_outbox_lag_seconds',
    help: `Age of the oldest unpublished outbox event among the newest ${OUTBOX_RECENT_EVENTS}; 0 when none is waiting.`,
    registers: [registry],
  });

  /**
   * Runs one scrape-time query, or reports why it did not: an exhausted pool is when metrics
   * matter most, so a scrape never waits in its queue, nor longer than the timeout for an answer.
   */
  const boundedQuery = async <T>(source: string, run: () => Promise<T>): Promise<T | undefined> => {
    if (pool.waitingCount > 0) {
      collectFailures.inc({ source, reason: 'pool_exhausted' });
      return undefined;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const query = run();
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), SCRAPE_QUERY_TIMEOUT_MS);
      });
      query.catch(() => {}); // settled later than the timeout: nothing waits for it any more
      return await Promise.race([query, timeout]);
    } catch (err) {
      const reason = err instanceof Error && err.message === 'timeout' ? 'timeout' : 'query_failed';
      collectFailures.inc({ source, reason });
      log.warn(`metrics: ${source} figures unavailable`, { reason, err: err instanceof Error ? err.message : String(err) });
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  };

  const readOutbox = async () => {
    // Unknown figures are absent from the scrape, not 0 (which would read as "nothing waiting").
    backlog.remove();
    lag.remove();
    const rows = await boundedQuery(
      'outbox',
      async () => (await pool.query<{ backlog: string; lag_seconds: string | null }>(OUTBOX_FIGURES_SQL)).rows,
    );
    if (!rows) return;
    backlog.set(Number(rows[0]!.backlog));
    lag.set(Math.max(0, Number(rows[0]!.lag_seconds ?? 0)));
  };

  // No picker label: it grows with every person ever employed; a picker's own rates are in their history summary.
  const pickingLabels = ['store_id', 'mode'] as const;
  const pickingGauges = {
    walks: new client.Gauge({
      name: 'grocery_picking_walks',
      help: `Walks (sessions started on their own, or batches) that ended in the last ${PICKING_RATES_WINDOW_SECONDS / 60} minutes, among the newest ${PICKING_RATES_RECENT_SESSIONS} sessions.`,
      labelNames: pickingLabels,
      registers: [registry],
    }),
    seconds: new client.Gauge({
      name: 'grocery_picking_seconds',
      help: 'Picking time of those walks (each from its start to the last closure of its sessions), seconds.',
      labelNames: pickingLabels,
      registers: [registry],
    }),
    items: new client.Gauge({
      name: 'grocery_picking_items_per_hour',
      help: 'Items that ended picked in the completed sessions of those walks, per hour of their picking time.',
      labelNames: pickingLabels,
      registers: [registry],
    }),
    orders: new client.Gauge({
      name: 'grocery_picking_orders_per_hour',
      help: 'Completed sessions (orders) of those walks, per hour of their picking time.',
      labelNames: pickingLabels,
      registers: [registry],
    }),
  };
  let pickingReadUntil = 0;
  let pickingRead: Promise<void> | null = null;
  const readPickingRates = async () => {
    if (clock.nowMs() < pickingReadUntil) return; // the gauges still hold the last reading
    // Concurrent scrapes share one reading.
    pickingRead ??= (async () => {
      const rows = await boundedQuery('picking_rates', () =>
        recentWalksByStore(db, PICKING_RATES_WINDOW_SECONDS, PICKING_RATES_RECENT_SESSIONS),
      );
      for (const gauge of Object.values(pickingGauges)) gauge.reset();
      if (!rows) return; // unknown: absent from the scrape, and read again by the next one
      for (const r of rows) {
        const labels = { store_id: r.store_id, mode: r.mode };
        const rate = pickingRate(r);
        pickingGauges.walks.set(labels, r.walks_count);
        pickingGauges.seconds.set(labels, r.picking_seconds);
        // Without picking time a rate is unknown, so it is absent rather than 0.
        if (rate.items_per_hour !== null) pickingGauges.items.set(labels, Number(rate.items_per_hour));
        if (rate.orders_per_hour !== null) pickingGauges.orders.set(labels, Number(rate.orders_per_hour));
      }
      pickingReadUntil = clock.nowMs() + PICKING_RATES_TTL_MS;
    })().finally(() => {
      pickingRead = null;
    });
    await pickingRead;
  };

  return {
    contentType: registry.contentType,
    observeRequest(operationId, status, seconds) {
      requests.observe(operationId ?? NO_OPERATION, status, seconds);
    },
    trackWebSockets(connections) {
      websocketConnections = connections;
    },
    trackReads(figures) {
      trackReplicaReads(registry, figures);
    },
    async render() {
      await readOutbox();
      await readPickingRates();
      const [processText, appText] = await Promise.all([processMetrics().metrics(), registry.metrics()]);
      return `${processText}\n${requests.render()}${appText}`;
    },
  };
}

/**
 * The read replica's figures, counted in db/read-replica.ts and copied in at scrape time. Registered
 * only when a replica is configured: without one there is nothing to report, not a replica that is down.
 */
function trackReplicaReads(registry: client.Registry, figures: () => ReadFigures): void {
  new client.Counter({
    name: 'grocery_db_reads_total',
    help: 'Queries of the reads that may go to the read replica (DATABASE_READ_URL), by the database that answered them.',
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      const { served } = figures();
      this.reset();
      this.inc({ database: 'replica' }, served.replica);
      this.inc({ database: 'primary' }, served.primary);
    },
  });
  new client.Counter({
    name: 'grocery_db_read_fallbacks_total',
    help: 'Reads the read replica failed (no connection, or one that broke before its first answer), sent to the primary instead.',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(figures().fallbacks);
    },
  });
  new client.Gauge({
    name: 'grocery_db_read_replica_up',
    help: 'Whether reads go to the read replica now (0: it is unreachable, not streaming or behind, and the primary answers them).',
    registers: [registry],
    collect() {
      this.set(figures().up ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'grocery_db_read_replica_lag_seconds',
    help: "How far the read replica's replay was behind at its last successful check (absent before one).",
    registers: [registry],
    collect() {
      const lag = figures().lagSeconds;
      if (lag === null) this.remove();
      else this.set(lag);
    },
  });
}

interface OperationFigures {
  /** Observations per latency bucket (not cumulative; rendered cumulatively). */
  buckets: Float64Array;
  sum: number;
  count: number;
  byStatus: Map<number, number>;
}

/**
 * The request histogram and status counter, kept as plain numbers per operationId (bounded: the
 * spec's operations and `none`) and written in the Prometheus text format at scrape time.
 */
export class RequestFigures {
  private readonly byOperation = new Map<string, OperationFigures>();

  observe(operationId: string, status: number, seconds: number): void {
    let figures = this.byOperation.get(operationId);
    if (!figures) {
      figures = { buckets: new Float64Array(LATENCY_BUCKETS.length + 1), sum: 0, count: 0, byStatus: new Map() };
      this.byOperation.set(operationId, figures);
    }
    let bucket = 0;
    while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
    figures.buckets[bucket]!++; // the last slot is +Inf
    figures.sum += seconds;
    figures.count++;
    figures.byStatus.set(status, (figures.byStatus.get(status) ?? 0) + 1);
  }

  render(): string {
    const ops = [...this.byOperation.keys()].sort();
    const label = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    const lines = [
      '# HELP grocery_http_request_duration_seconds Time from receiving a request to finishing its response, per operationId.',
      '# TYPE grocery_http_request_duration_seconds histogram',
    ];
    for (const op of ops) {
      const f = this.byOperation.get(op)!;
      let cumulative = 0;
      for (let i = 0; i <= LATENCY_BUCKETS.length; i++) {
        cumulative += f.buckets[i]!;
        const le = i < LATENCY_BUCKETS.length ? String(LATENCY_BUCKETS[i]) : '+Inf';
        lines.push(`grocery_http_request_duration_seconds_bucket{le="${le}",operation_id="${label(op)}"} ${cumulative}`);
      }
      lines.push(`grocery_http_request_duration_seconds_sum{operation_id="${label(op)}"} ${f.sum}`);
      lines.push(`grocery_http_request_duration_seconds_count{operation_id="${label(op)}"} ${f.count}`);
    }
    lines.push(
      '',
      '# HELP grocery_http_requests_total Finished requests per operationId and HTTP status.',
      '# TYPE grocery_http_requests_total counter',
    );
    for (const op of ops) {
      const statuses = [...this.byOperation.get(op)!.byStatus].sort(([a], [b]) => a - b);
      for (const [status, n] of statuses) lines.push(`grocery_http_requests_total{operation_id="${label(op)}",status="${status}"} ${n}`);
    }
    return `${lines.join('\n')}\n\n`;
  }
}

/** The GET /metrics route: the exposition, behind a bearer token when METRICS_TOKEN is set. */
export function metricsHandler(metrics: Metrics, token: string | null): express.RequestHandler {
  const expected = token === null ? null : createHash('sha256').update(token).digest();
  return async (req, res, next) => {
    if (expected) {
      const given = bearerToken(req.headers.authorization);
      // Digests of equal length, compared in constant time: the token does not leak by timing.
      if (!given || !timingSafeEqual(createHash('sha256').update(given).digest(), expected)) {
        res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        res.json({
          detail: 'GET /metrics needs the metrics bearer token',
          code: 'UNAUTHORIZED',
          request_id: res.locals.requestId as string | undefined,
        });
        return;
      }
    }
    try {
      const text = await metrics.render();
      res.setHeader('Cache-Control', 'no-store');
      res.type(metrics.contentType).send(text);
    } catch (err) {
      next(err);
    }
  };
}
