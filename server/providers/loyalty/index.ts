// The loyalty provider of a running service: the local ledger (default) or the CDP over HTTP,
// and the programs cache shared by GET programs/, its strict variant and wallet synchronization.
import type pg from 'pg';
import { connect } from '../../../db/connection.js';
import type { AppDeps } from '../../deps.js';
import { CdpHttpLoyaltyProvider } from './cdp-http.js';
import { LocalLoyaltyLedger } from './local.js';
import type { LoyaltyProvider, ProviderProgram } from './types.js';

export * from './types.js';
export { CdpHttpLoyaltyProvider } from './cdp-http.js';
export { LocalLoyaltyLedger } from './local.js';

/** Connections of the local ledger's own pool. */
const LEDGER_POOL_MAX = 5;

export function createLoyaltyProvider(deps: Pick<AppDeps, 'config' | 'pool' | 'log'>): LoyaltyProvider {
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
  const { connectionString } = (deps.pool as unknown as { options: pg.PoolConfig }).options;
  if (!connectionString) throw new Error('the local loyalty ledger needs the connection string of the service pool');
  const ledger = connect(connectionString, { max: LEDGER_POOL_MAX, applicationName: 'grocery-loyalty-ledger' });
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
  ) {}

  async get(): Promise<ProviderProgram[]> {
    if (this.cached && Date.now() - this.cached.at < this.ttlSeconds * 1000) return this.cached.programs;
    // Concurrent misses share one provider call.
    this.inflight ??= this.provider
      .listPrograms()
      .then((programs) => {
        this.cached = { at: Date.now(), programs };
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

// One provider and one cache per running service (tests run several services in one process).
const perService = new Map<AppDeps, Loyalty>();
export function loyaltyOf(deps: AppDeps): Loyalty {
  let loyalty = perService.get(deps);
  if (!loyalty) {
    const provider = createLoyaltyProvider(deps);
    loyalty = { provider, programs: new ProgramsCache(provider, deps.config.loyalty.programsCacheSeconds) };
    perService.set(deps, loyalty);
  }
  return loyalty;
}

/** Releases what the provider holds (the local ledger's pool); called once the service stopped. */
export async function closeLoyalty(deps: AppDeps): Promise<void> {
  const loyalty = perService.get(deps);
  perService.delete(deps);
  await loyalty?.provider.close();
}
