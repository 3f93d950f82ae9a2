// What handlers may use. Built once by server/runtime.ts; tests build it the same way.
import type pg from 'pg';
import type { Database } from '../db/connection.js';
import type { TokenService } from './auth/tokens.js';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';
import type { BankGateway } from './providers/bank/types.js';
import type { CourierService } from './providers/courier/types.js';
import type { Geocoder } from './providers/geocoder/types.js';
import type { Loyalty } from './providers/loyalty/index.js';
import type { PushSender } from './providers/push/types.js';
import type { SmsSender } from './providers/sms/index.js';
import type { Telemetry } from './telemetry.js';

export interface AppDeps {
  config: Config;
  db: Database;
  pool: pg.Pool;
  log: Logger;
  tokens: TokenService;
  /** Business time (server/clock.ts): `systemClock`, or a TestClock in tests. */
  clock: Clock;
  // The providers (server/providers/index.ts), built once with the deps.
  sms: SmsSender;
  bank: BankGateway;
  courier: CourierService;
  push: PushSender;
  geocoder: Geocoder;
  /** The loyalty provider and its programs cache. */
  loyalty: Loyalty;
  /** Tracing (server/telemetry.ts): `noTelemetry` unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  telemetry: Telemetry;
}
