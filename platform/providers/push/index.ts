// Push notifications behind a small interface: `recording` (default, recording.ts) or `http`,
// a JSON push gateway (http.ts). The order worker's push fan-out (server/jobs/push-fan-out.ts)
// decides what to send.
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import { HttpPushSender } from './http.js';
import { RecordingPushSender } from './recording.js';
import type { PushSender } from './types.js';

export * from './types.js';
export { HttpPushSender } from './http.js';
export { RecordingPushSender } from './recording.js';

export function createPushSender(cfg: OrdersConfig['push'], log: Logger): PushSender {
  return cfg.provider === 'http' ? new HttpPushSender(cfg, log) : new RecordingPushSender(log);
}
