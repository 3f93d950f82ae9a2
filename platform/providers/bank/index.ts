// Online payment by bank invoice behind a small interface: `sandbox` (default, sandbox.ts) or
// `http`, a real acquiring API (http.ts).
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
