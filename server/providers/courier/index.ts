// Courier delivery behind a small interface: `simulator` (default, driven by the TEST QA
// operation) or `http`, a courier service API.
import type { AppDeps } from '../../deps.js';
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import { HttpCourierService } from './http.js';
import { CourierSimulator } from './simulator.js';
import type { CourierService } from './types.js';

export * from './types.js';
export { HttpCourierService } from './http.js';
export { CourierSimulator, simulatedCourier, simulatedEta } from './simulator.js';

export function createCourierService(cfg: OrdersConfig['courier'], log: Logger): CourierService {
  return cfg.provider === 'http' ? new HttpCourierService(cfg, log) : new CourierSimulator(log);
}

const perService = new WeakMap<AppDeps, CourierService>();
/** The courier service of a running service, built on first use. */
export function courierOf(deps: Pick<AppDeps, 'config' | 'log'>): CourierService {
  let service = perService.get(deps as AppDeps);
  if (!service) {
    service = createCourierService(deps.config.orders.courier, deps.log);
    perService.set(deps as AppDeps, service);
  }
  return service;
}
