// What the service keeps in express's `res.locals` for one request (set by server/app.ts's first
// middleware; the operation once routed), typed for every reader instead of express's `any`.
import type { Logger } from '../../platform/logger.js';

declare global {
  namespace Express {
    interface Locals {
      requestId: string;
      log: Logger;
      operationId?: string;
    }
  }
}

export {};
