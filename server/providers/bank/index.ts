// Online payment by bank invoice behind a small interface: `sandbox` (default, sandbox.ts) or
// `http`, a real acquiring API (http.ts).
import type { AppDeps } from '../../deps.js';
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import { HttpBankGateway } from './http.js';
import { SandboxBank } from './sandbox.js';
import type { BankGateway } from './types.js';

export * from './types.js';
export { HttpBankGateway } from './http.js';
export { SandboxBank } from './sandbox.js';

export function createBankGateway(cfg: OrdersConfig['bank'], log: Logger): BankGateway {
  return cfg.provider === 'http' ? new HttpBankGateway(cfg, log) : new SandboxBank(cfg.sandboxPageUrl, log);
}

const perService = new WeakMap<AppDeps, BankGateway>();
/** The bank of a running service, built on first use. */
export function bankOf(deps: Pick<AppDeps, 'config' | 'log'>): BankGateway {
  let bank = perService.get(deps as AppDeps);
  if (!bank) {
    bank = createBankGateway(deps.config.orders.bank, deps.log);
    perService.set(deps as AppDeps, bank);
  }
  return bank;
}
