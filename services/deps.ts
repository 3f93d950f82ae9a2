// What handlers may use. Built once by server/runtime.ts; tests build it the same way.
import type pg from 'pg';
import type { Database } from '../db/connection.js';
import type { TokenService } from '../platform/tokens.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Logger } from '../platform/logger.js';
import type { Providers } from '../platform/providers/index.js';
import type { Telemetry } from '../platform/telemetry.js';
import type { InstanceCaches } from './caches.js';

/** The providers (platform/providers/index.ts: sms, bank, courier, push, geocoder, loyalty), built once with the deps. */
export interface AppDeps extends Providers {
  config: Config;
  db: Database;
  /**
   * For reads that may be a moment stale (catalog listings, search, product cards, categories):
   * the read replica while it is in use (DATABASE_READ_URL, db/read-replica.ts), else `db`.
   * Never for writes, nor for reads that must see a write just made.
   */
  readDb: Database;
  pool: pg.Pool;
  log: Logger;
  tokens: TokenService;
  /** Business time (platform/clock.ts): `systemClock`, or a TestClock in tests. */
  clock: Clock;
  /** Tracing (platform/telemetry.ts): `noTelemetry` unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  telemetry: Telemetry;
  /** What this instance keeps in memory between requests (services/caches.ts). */
  caches: InstanceCaches;
}
