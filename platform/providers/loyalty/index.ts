// The loyalty provider of a running service: the local ledger (default) or the CDP over HTTP,
// and the programs cache shared by GET programs/, its strict variant and wallet synchronization.
import type pg from 'pg';
import { connect } from '../../../db/connection.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { CdpHttpLoyaltyProvider } from './cdp-http.js';
import { LocalLoyaltyLedger } from './local.js';
import type { LoyaltyProvider, ProviderProgram } from './types.js';

export * from './types.js';
export { CdpHttpLoyaltyProvider } from './cdp-http.js';
export { LocalLoyaltyLedger } from './local.js';

/** Connections of the local ledger's own pool. */
const LEDGER_POOL_MAX = 5;

/**
 * The configured provider. The local ledger connects to `ledgerDatabaseUrl`, by default the
 * database of the service pool.
 */
export function createLoyaltyProvider(
  deps: { config: Config; pool: pg.Pool; log: Logger },
  ledgerDatabaseUrl: string | undefined = deps.pool.options.connectionString,
): LoyaltyProvider {
  const cfg = deps.config.loyalty;
  if (cfg.provider === 'cdp') {
    return new CdpHttpLoyaltyProvider(
      { url: cfg.cdpUrl!, token: cfg.cdpToken, readTimeoutMs: cfg.readTimeoutMs, commandTimeoutMs: cfg.commandTimeoutMs },
      deps.log,
    );
  }
  // The ledger stands in for an outside system, so it gets a pool of its own: a card command holds
  // a request connection (under the customer's lock) while it calls the provider, and must never
  // wait for a second connection from the same pool (a burst of commands would starve them all).
  if (!ledgerDatabaseUrl) throw new Error('the local loyalty ledger needs the connection string of the service pool');
  const ledger = connect(ledgerDatabaseUrl, { max: LEDGER_POOL_MAX, applicationName: 'grocery-loyalty-ledger' });
  return new LocalLoyaltyLedger(ledger.db, cfg.qrBaseUrl, () => ledger.close());
}

/**
 * The provider's programs, cached for `ttlSeconds` per instance. A failed refresh is never
 * papered over with stale data: the caller decides (empty list, 502, or a fallback tier scale).
 */
export class ProgramsCache {
  private cached: { at: number; programs: ProviderProgram[] } | null = null;
  private inflight: Promise<ProviderProgram[]> | null = null;

  constructor(
    private readonly provider: LoyaltyProvider,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {}

  async get(): Promise<ProviderProgram[]> {
    if (this.cached && this.clock.nowMs() - this.cached.at < this.ttlSeconds * 1000) return this.cached.programs;
    // Concurrent misses share one provider call.
    this.inflight ??= this.provider
      .listPrograms()
      .then((programs) => {
        this.cached = { at: this.clock.nowMs(), programs };
        return programs;
      })
      .finally(() => {
        this.inflight = null;
      });
    return this.inflight;
  }
}

export interface Loyalty {
  provider: LoyaltyProvider;
  programs: ProgramsCache;
}

/** The provider and its programs cache, one per running service (built with its AppDeps). */
export function createLoyalty(
  deps: { config: Config; pool: pg.Pool; log: Logger; clock: Clock },
  ledgerDatabaseUrl: string | undefined = deps.pool.options.connectionString,
): Loyalty {
  const provider = createLoyaltyProvider(deps, ledgerDatabaseUrl);
  return { provider, programs: new ProgramsCache(provider, deps.config.loyalty.programsCacheSeconds, deps.clock) };
}
