// A running service on its own database and a free port, as a test file uses it.
import type { HandlerMap } from '../../server/handler-types.js';
import { handlers as defaultHandlers } from '../../handlers/index.js';
import { TestClock } from '../../platform/clock.js';
import { loadConfig, type Config } from '../../platform/config.js';
import { createLogger, type Logger } from '../../platform/logger.js';
import type { Providers } from '../../platform/providers/index.js';
import { startService, type RunningService } from '../../server/runtime.js';
import { ContractClient } from './client.js';
import { createTestDatabase } from './db.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-0123456789';

export interface TestService extends RunningService {
  client: ContractClient;
  config: Config;
  /** The service's clock: the wall clock until the test moves it (`clock.advance(ms)`). */
  clock: TestClock;
  /** Stops the service and drops its database. */
  close(): Promise<void>;
}

export interface TestServiceOptions {
  env?: Record<string, string>;
  handlers?: Partial<HandlerMap>;
  log?: Logger;
  /** Providers to use instead of the configured ones (a recording push sender, a stub bank...). */
  providers?: Partial<Providers>;
  clock?: TestClock;
}

export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  // The pool gets the time limits the test's environment asks for (DB_STATEMENT_TIMEOUT_MS, ...)
  // and the size it asks for (DB_POOL_MAX), else 10.
  const asked = loadConfig({ DATABASE_URL: 'postgres://placeholder/x', JWT_SECRET: TEST_JWT_SECRET, ...opts.env });
  const database = await createTestDatabase(asked.dbLimits, opts.env?.DB_POOL_MAX ? asked.dbPoolMax : 10);
  const config = loadConfig({
    APP_ENV: 'TEST',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: database.url,
    JWT_SECRET: TEST_JWT_SECRET,
    LOG_LEVEL: 'silent',
    SEED_DEMO_DATA: 'false',
    WARM_VALIDATORS: 'false',
    BUILD_COMMIT: 'testcommit',
    ...opts.env,
  });
  const clock = opts.clock ?? new TestClock();
  const service = await startService({
    config,
    clock,
    providers: opts.providers,
    log: opts.log ?? createLogger('silent'),
    handlers: { ...defaultHandlers, ...opts.handlers },
    database,
  });
  const client = new ContractClient({ baseUrl: service.url, env: config.env, notImplemented: service.app.notImplemented });
  return {
    ...service,
    client,
    config,
    clock,
    async close() {
      await service.stop();
      await database.shutdown();
    },
  };
}
