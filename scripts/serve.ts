// npm start: the service with zero configuration (embedded PostgreSQL, migrations, demo data,
// TEST environment). Configuration is the environment; see README.md.
//
// Only configuration and logging are imported statically: with OTEL_EXPORTER_OTLP_ENDPOINT set,
// tracing must be in place before the modules it instruments (pg, express over node:http) load,
// so the service itself is imported after it.
import { loadConfig, type Config } from '../platform/config.js';
import { createLogger, type Logger } from '../platform/logger.js';
import type { RunningService } from '../server/runtime.js';
import { startFailureLine } from '../server/startup-failure.js';

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * A start that fails ends with one plain line on stderr naming the cause and the fix, and exit
 * code 1; the error with its stack is logged as well only with LOG_LEVEL=debug.
 */
function startFailed(err: unknown, logger: Logger | null): never {
  if (process.env.LOG_LEVEL === 'debug') (logger ?? createLogger('debug')).error('start failed', { err });
  process.stderr.write(`Cannot start: ${startFailureLine(err)}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  startFailed(err, null);
}
const log = createLogger(config.logLevel);

// The signal handlers are in place before anything starts and stay in place: a signal that
// arrives while its last listener is being swapped for another is lost (node stops listening
// for it in between), and the service would then never drain - seen when Ctrl-C came just as
// the service said it was listening.
// A second Ctrl-C forces the exit. A signal within a second of the first is the same one
// delivered twice (a terminal signals the whole process group, and npm passes it on too).
let service: RunningService | null = null;
let firstSignalAt = 0;
let stopSignal = '';
// SIGTERM is how an orchestrator stops an instance behind a load balancer: readiness turns 503
// and requests are still served for SHUTDOWN_DELAY_MS first. Ctrl-C and SIGHUP drain at once.
const stop = (running: RunningService) =>
  running.stop(stopSignal === 'SIGTERM' ? config.shutdownDelayMs : 0).then(
    () => process.exit(0),
    (err) => {
      log.error('shutdown failed', { err });
      process.exit(1);
    },
  );
const onSignal = (signal: string) => {
  if (firstSignalAt) {
    if (Date.now() - firstSignalAt >= 1000) process.exit(1);
    return;
  }
  firstSignalAt = Date.now();
  stopSignal = signal;
  log.info('signal received', { signal });
  // During start-up the stop waits until the service is up (see below).
  if (service) void stop(service);
};
// SIGHUP: its terminal closed. Without a handler the process would die at once, leaving the
// embedded PostgreSQL running on DATA_DIR (the next start stops such a leftover, db/embedded.ts).
const handlers = new Map(SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const));
for (const [signal, handler] of handlers) process.on(signal, handler);

try {
  const telemetry = config.tracing.otlpEndpoint
    ? (await import('../platform/telemetry-otel.js')).startOpenTelemetry(config.tracing.serviceName, config.buildCommit)
    : undefined;
  if (telemetry) log.info('tracing', { endpoint: config.tracing.otlpEndpoint });
  const { startService } = await import('../server/runtime.js');
  // Any other listener a library added on import (an exit hook that stops the database and exits
  // on the first signal, cutting short the drain) goes; ours stay. The service stops the
  // database itself, last.
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) if (listener !== handlers.get(signal)) process.off(signal, listener);
  }
  const started = await startService({ config, log, telemetry });
  service = started;
  // Told to stop while starting: it started only to stop cleanly (stop() exits the process).
  if (firstSignalAt) await stop(started);
  log.info('listening', {
    url: started.url,
    node: process.version,
    env: config.env,
    commit: config.buildCommit,
    database: config.databaseUrl ? 'DATABASE_URL' : 'embedded',
    startup_ms: started.timings,
  });
  process.stdout.write(
    `\nGrocery service (${config.env}) is listening on ${started.url}  (Node ${process.version})\n` +
      `  API docs: ${started.url}/docs    spec: ${started.url}/openapi.json    metrics: ${started.url}/metrics    health: ${started.url}/healthz\n\n`,
  );
} catch (err) {
  startFailed(err, log);
}
