// The outside systems of a running service, built once with its AppDeps (server/runtime.ts;
// tests pass their own in place of any of them through StartOptions.providers).
import type pg from 'pg';
import type { Database } from '../../db/connection.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createBankGateway, type BankGateway } from './bank/index.js';
import { createCourierService, type CourierService } from './courier/index.js';
import { createGeocoder, type Geocoder } from './geocoder/index.js';
import { createLoyalty, type Loyalty } from './loyalty/index.js';
import { createPushSender, type PushSender } from './push/index.js';
import { createSmsSender, type SmsSender } from './sms/index.js';

export interface Providers {
  sms: SmsSender;
  bank: BankGateway;
  courier: CourierService;
  push: PushSender;
  geocoder: Geocoder;
  /** The loyalty provider and its programs cache. */
  loyalty: Loyalty;
}

/** The providers the configuration names; any given in `overrides` are used instead. */
export function createProviders(
  base: { config: Config; db: Database; pool: pg.Pool; log: Logger; clock: Clock },
  overrides: Partial<Providers> = {},
): Providers {
  const { config, log } = base;
  return {
    sms: overrides.sms ?? createSmsSender(config.sms, log),
    bank: overrides.bank ?? createBankGateway(config.orders.bank, log),
    courier: overrides.courier ?? createCourierService(config.orders.courier, log),
    push: overrides.push ?? createPushSender(config.orders.push, log),
    geocoder: overrides.geocoder ?? createGeocoder(base),
    loyalty: overrides.loyalty ?? createLoyalty(base),
  };
}
