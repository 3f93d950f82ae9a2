// The default courier service: a simulator. It accepts every request at once and leaves the
// courier's progress to POST /api/qa/orders/{order_id}/delivery-tracking (TEST), which applies
// each step as a real courier-service event. What a real service would report - who the courier
// is, where they are, when they arrive - is derived here from the order and the map, so the
// simulated tracking moves plausibly.
import { createHash } from 'node:crypto';
import { haversineKm } from '../../../domain/geo/geometry.js';
import type { Logger } from '../../logger.js';
import type { CourierRequest, CourierService, CourierStatus, ExpressQuoteRequest, GeoPoint } from './types.js';

export type Transport = 'foot' | 'bicycle' | 'scooter' | 'car';

const NAMES = ['Ivan', 'Aigul', 'Timur', 'Olga', 'Sergey', 'Dilnoza', 'Pavel', 'Marina'];
const TRANSPORTS: Transport[] = ['foot', 'bicycle', 'scooter', 'car'];
/** City speeds in km/h, door to door. */
const SPEED_KMH: Record<Transport, number> = { foot: 5, bicycle: 14, scooter: 18, car: 22 };
/** Minutes a courier spends at the store collecting an order. */
export const HANDOVER_MINUTES = 5;

export interface SimulatedCourier {
  name: string;
  /** A proxy number of the courier service, E.164. */
  phone: string;
  transport: Transport;
}

/** The courier the simulator assigns to an order: the same one for the same order (and attempt). */
export function simulatedCourier(orderId: string, attempt = 0): SimulatedCourier {
  const h = createHash('sha256').update(`${orderId}:${attempt}`).digest();
  return {
    name: NAMES[h[0]! % NAMES.length]!,
    phone: `+7495${String(h.readUInt32BE(1) % 10_000_000).padStart(7, '0')}`,
    transport: TRANSPORTS[h[5]! % TRANSPORTS.length]!,
  };
}

const travelMs = (from: GeoPoint, to: GeoPoint, transport: Transport) => (haversineKm(from, to) / SPEED_KMH[transport]) * 3_600_000;

/** When the courier reaches the address, from where they are and what is left to do. */
export function simulatedEta(
  stage: 'to_store' | 'at_store' | 'to_customer' | 'at_customer',
  at: { courier: GeoPoint; store: GeoPoint; customer: GeoPoint },
  transport: Transport,
  now: Date,
): Date {
  const t = now.getTime();
  const handover = HANDOVER_MINUTES * 60_000;
  switch (stage) {
    case 'to_store':
      return new Date(t + travelMs(at.courier, at.store, transport) + handover + travelMs(at.store, at.customer, transport));
    case 'at_store':
      return new Date(t + handover + travelMs(at.store, at.customer, transport));
    case 'to_customer':
      return new Date(t + travelMs(at.courier, at.customer, transport));
    case 'at_customer':
      return now;
  }
}

export class CourierSimulator implements CourierService {
  readonly name = 'simulator' as const;
  constructor(private readonly log: Logger) {}

  async quoteExpress(request: ExpressQuoteRequest): Promise<{ available: boolean; minutes: number }> {
    // The simulated fleet always has someone free; it keeps the store's promise.
    return { available: true, minutes: request.promisedMinutes };
  }

  async requestCourier(request: CourierRequest): Promise<{ ref: string }> {
    this.log.info('courier simulator: courier requested', { order_id: request.orderId, express: request.isExpress });
    return { ref: `sim-${request.orderId}` };
  }

  async withdraw(request: { orderId: string; ref: string | null }): Promise<void> {
    this.log.info('courier simulator: withdrawal requested', { order_id: request.orderId });
  }

  /** The simulator's deliveries move by the QA operation's events; there is nothing to ask. */
  async deliveryStatus(): Promise<CourierStatus | null> {
    return null;
  }
}
