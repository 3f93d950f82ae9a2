// The whole service in one process: database (embedded or DATABASE_URL), migrations, demo data,
// HTTP + WebSocket on one port, graceful shutdown.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type DatabaseHandle } from '../db/connection.js';
import { connectReadReplica, type ReadReplica } from '../db/read-replica.js';
import { openDatabase, type OpenedDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { handlers as defaultHandlers, steps } from '../handlers/index.js';
import { createInstanceCaches } from '../services/caches.js';
import type { HandlerMap } from './handler-types.js';
import { createApp, type App } from './app.js';
import { TokenService } from '../platform/tokens.js';
import { systemClock, type Clock } from '../platform/clock.js';
import { developmentProvidersIn, type Config } from '../platform/config.js';
import type { AppDeps } from '../services/deps.js';
import { watchEventLoop } from '../platform/event-loop.js';
import { startHousekeeping } from './jobs/housekeeping.js';
import { createLogger, type Logger } from '../platform/logger.js';
import { startOrderWorker } from './jobs/order-worker.js';
import { startLoyaltyWorker } from './jobs/loyalty-worker.js';
import { createProviders, type Providers } from '../platform/providers/index.js';
import { startOutboxFeed } from './realtime/outbox-feed.js';
import { attachPickerRealtime, type PickerRealtime } from './realtime/picker.js';
import { startApprovalExpiry } from './jobs/approval-expiry.js';
import { startPickingExpiry } from './jobs/picking-expiry.js';
import { attachRealtime, type Realtime } from './realtime/order-tracking.js';
import { noTelemetry, type Telemetry } from '../platform/telemetry.js';

/** Longest a client may take to send a request's headers. */
const HEADERS_TIMEOUT_MS = 20_000;

export interface RunningService {
  url: string;
  port: number;
  app: App;
  deps: AppDeps;
  database: OpenedDatabase;
  /** The background jobs' pool (their own connections and time limits). */
  jobsDatabase: DatabaseHandle;
  /** The read replica of DATABASE_READ_URL, or null when reads that may be stale go to the primary too. */
  readReplica: ReadReplica | null;
  realtime: Realtime;
  pickerRealtime: PickerRealtime;
  server: http.Server;
  /** Timings of start-up, in milliseconds. */
  timings: Record<string, number>;
  /**
   * Graceful stop: /readyz answers 503 at once while requests are still served for
   * `readinessDelayMs` (SIGTERM: SHUTDOWN_DELAY_MS); then new connections are refused, in-flight
   * requests finish, sockets close with 1001, then the pool and the embedded database.
   */
  stop(readinessDelayMs?: number): Promise<void>;
}

export interface StartOptions {
  config: Config;
  log?: Logger;
  handlers?: Partial<HandlerMap>;
  /** Use this database instead of opening one (tests hand in their per-file database). */
  database?: OpenedDatabase;
  /** Tracing started by scripts/serve.ts; none by default. */
  telemetry?: Telemetry;
  /** Business time; the wall clock by default (tests hand in a TestClock). */
  clock?: Clock;
  /** Providers to use instead of the ones the configuration names. */
  providers?: Partial<Providers>;
}

export async function startService({
  config,
  log: givenLog,
  handlers,
  database: givenDb,
  telemetry = noTelemetry,
  clock = systemClock,
  providers,
}: StartOptions): Promise<RunningService> {
  const log = givenLog ?? createLogger(config.logLevel);
  const timings: Record<string, number> = {};
  const t0 = performance.now();
  const mark = (name: string, since: number) => (timings[name] = Math.round(performance.now() - since));

  let t = performance.now();
  const database =
    givenDb ??
    (await openDatabase(
      {
        databaseUrl: config.databaseUrl,
        directUrl: config.databaseDirectUrl,
        namedStatements: config.dbNamedStatements,
        dataDir: config.dataDir,
        poolMax: config.dbPoolMax,
        limits: config.dbLimits,
        report: (level, message, fields) => log[level](message, fields),
      },
      (line) => log.debug('postgres', { line }),
    ));
  mark('database', t);

  // Migrations and the demo data run on a connection of their own, without the request pool's
  // time limits (a migration may rightly take longer than any request may).
  const maintenance = connect(database.directUrl, { max: 1, applicationName: 'grocery-migrations', namedStatements: false });
  try {
    t = performance.now();
    await migrateToLatest(maintenance.db);
    mark('migrations', t);

    if (config.seedDemoData) {
      t = performance.now();
      const { seeded } = await seedDemoData(maintenance.db, clock.now());
      mark('demo_data', t);
      if (seeded) log.info('demo data seeded');
    }
  } finally {
    await maintenance.close();
  }

  // The background jobs' own pool, with a job's time limits: a job may wait for a lock longer than
  // a request may, and a busy job never takes the connections requests need.
  const jobsDatabase = connect(database.url, {
    max: config.dbJobsPoolMax,
    applicationName: 'grocery-jobs',
    limits: config.dbJobLimits,
    namedStatements: config.dbNamedStatements,
  });

  // Optional: a replica that is down or behind only sends its reads back to the primary, and
  // readiness never depends on it.
  const readReplica = config.databaseReadUrl
    ? connectReadReplica(config.databaseReadUrl, {
        primary: database.pool,
        max: config.dbPoolMax,
        limits: config.dbLimits,
        namedStatements: config.dbNamedStatements,
        maxLagSeconds: config.readReplica.maxLagSeconds,
        retryMs: config.readReplica.retrySeconds * 1000,
        report: (level, message, fields) => log[level](message, fields),
      })
    : null;

  const base = { config, db: database.db, readDb: readReplica?.db ?? database.db, pool: database.pool, log, clock };
  const deps: AppDeps = {
    ...base,
    tokens: new TokenService(config.jwt),
    ...createProviders(base, providers),
    telemetry,
    caches: createInstanceCaches(config.logistics.requestsPerMinute),
  };

  t = performance.now();
  const eventLoop = watchEventLoop({ limitMs: config.readinessMaxEventLoopDelayMs });
  const app = await createApp({ deps, handlers: handlers ?? defaultHandlers, steps, eventLoop });
  mark('app_init', t);

  // A request (headers and body) must arrive within REQUEST_TIMEOUT_MS, checked every second:
  // Node's defaults (300 s, checked every 30 s) let a slow or stalled client hold a request that long.
  const server = http.createServer(
    {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, config.requestTimeoutMs),
      connectionsCheckingInterval: 1000,
    },
    app.listener,
  );
  server.keepAliveTimeout = 65_000; // longer than typical load balancer idle timeouts
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // LISTEN needs a session: behind a transaction-mode pooler it succeeds and then hears nothing.
  const outboxFeed = await startOutboxFeed(deps, database.directUrl);
  const realtime = attachRealtime(server, deps, outboxFeed);
  const pickerRealtime = attachPickerRealtime(server, deps, outboxFeed);
  const jobDeps: AppDeps = { ...deps, db: jobsDatabase.db, pool: jobsDatabase.pool };
  const pickingExpiry = startPickingExpiry(jobDeps);
  const approvalExpiry = startApprovalExpiry(jobDeps);
  app.metrics.trackWebSockets(() => realtime.connections());
  if (readReplica) app.metrics.trackReads(() => readReplica.figures());
  mark('total', t0);

  const port = (server.address() as AddressInfo).port;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${host}:${port}`;

  const housekeeping = startHousekeeping(jobsDatabase.db, log, telemetry);
  const loyaltyWorker = startLoyaltyWorker(jobDeps);
  const orderWorker = startOrderWorker(jobDeps);

  const pretending = developmentProvidersIn(config);
  if (pretending.length) log.warn('PROD runs with development providers', { providers: pretending });

  if (config.warmValidators) {
    void app.warmValidators().catch((err) => log.warn('validator warm-up failed', { err }));
  }

  let stopping: Promise<void> | null = null;
  const stop = (readinessDelayMs = 0) =>
    (stopping ??= (async () => {
      log.info('shutting down', { in_flight: app.inFlight(), readiness_delay_ms: readinessDelayMs });
      // Each step is logged (debug) so that a shutdown that hangs shows where.
      const step = (name: string) => log.debug('shutdown step', { step: name });
      // From now on /readyz answers 503 and every response says `Connection: close`, so a
      // keep-alive client is told to reconnect (to another instance) rather than having its
      // connection cut under its next request.
      app.beginShutdown();
      await housekeeping.stop();
      await loyaltyWorker.stop();
      step('loyalty worker stopped');
      await orderWorker.stop();
      step('order worker stopped');
      // Requests are still served (and sockets kept) while the load balancer notices /readyz
      // and stops sending: closing the listener at once would refuse its last requests. Idle
      // keep-alive connections are let go sooner than usual meanwhile.
      if (readinessDelayMs > 0) {
        server.keepAliveTimeout = Math.min(server.keepAliveTimeout, 1000);
        await new Promise((r) => setTimeout(r, readinessDelayMs));
        step('readiness delay over');
      }
      // Stop accepting connections; idle keep-alive sockets are closed, busy ones finish first
      // (their answers carry Connection: close).
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await realtime.close();
      await pickingExpiry.stop();
      await approvalExpiry.stop();
      await pickerRealtime.close();
      step('sockets closed');
      await outboxFeed.close();
      step('outbox feed closed');
      // Real time elapsing (a timer), not business time: not the clock.
      const deadline = performance.now() + config.shutdownGraceMs;
      while (app.inFlight() > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      server.closeAllConnections();
      await closed;
      step('http server closed');
      await deps.loyalty.provider.close();
      eventLoop.stop();
      await jobsDatabase.close();
      await readReplica?.close();
      if (!givenDb) await database.shutdown();
      // Last: the spans of the shutdown itself are exported too.
      await telemetry.shutdown().catch((err) => log.warn('trace export failed at shutdown', { err: (err as Error).message }));
      log.info('stopped');
    })());

  return { url, port, app, deps, database, jobsDatabase, readReplica, realtime, pickerRealtime, server, timings, stop };
}
