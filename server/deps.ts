// What handlers may use. Built once by server/runtime.ts; tests build it the same way.
import type pg from 'pg';
import type { Database } from '../db/connection.js';
import type { TokenService } from './auth/tokens.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type { SmsSender } from './providers/sms/index.js';
import type { Telemetry } from './telemetry.js';

export interface AppDeps {
  config: Config;
  db: Database;
  pool: pg.Pool;
  log: Logger;
  tokens: TokenService;
  sms: SmsSender;
  /** Tracing (server/telemetry.ts): `noTelemetry` unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  telemetry: Telemetry;
}
