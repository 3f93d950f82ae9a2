// Courier delivery behind a small interface: `simulator` (default, driven by the TEST QA
// operation) or `http`, a courier service API.
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
