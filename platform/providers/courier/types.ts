// The courier adapter's interface, shared by the simulator and the HTTP adapter.
import type { TrackingState } from '../../../db/tables/orders.js';

export interface GeoPoint {
  lon: number;
  lat: number;
}

export interface ExpressQuoteRequest {
  storeId: string;
  pickup: GeoPoint;
  dropoff: GeoPoint;
  /** What the store promises (ExpressDeliveryOutput `minutes`). */
  promisedMinutes: number;
}

export interface CourierRequest {
  orderId: string;
  orderNo: number;
  storeId: string;
  pickup: GeoPoint;
  dropoff: GeoPoint;
  addressLine: string;
  isExpress: boolean;
  /** The delivery window for a scheduled delivery; null for express. */
  window: { startsAt: string; endsAt: string } | null;
  /** Totes to collect, when the order was picked into totes before the request; null otherwise. */
  toteCount: number | null;
}

/** Where a delivery is, as the courier service says (its answer to a status question). */
export interface CourierStatus {
  state: TrackingState;
  comment: string | null;
  courier: { name: string; phone: string | null; transport: 'foot' | 'bicycle' | 'scooter' | 'car' | null } | null;
  location: GeoPoint | null;
  eta: Date | null;
  route: [number, number][] | null;
}

export interface CourierService {
  readonly name: 'simulator' | 'http';
  /** Whether an express delivery can be taken now and in how many minutes. */
  quoteExpress(request: ExpressQuoteRequest): Promise<{ available: boolean; minutes: number }>;
  /** Asks for a courier; the answer is the service's id of the request. */
  requestCourier(request: CourierRequest): Promise<{ ref: string }>;
  /** Asks to withdraw the request; the service confirms later with a `cancelled` event (or `en_route` if too late). */
  withdraw(request: { orderId: string; ref: string | null }): Promise<void>;
  /**
   * Where the delivery of a request is, for the orders worker to follow. Null from a service
   * that tells by itself instead (the simulator's events come from the TEST QA operation).
   */
  deliveryStatus(ref: string): Promise<CourierStatus | null>;
}

/** The courier service gave no usable answer (network, timeout, 429, 5xx, wrong shape). */
export class CourierUnavailableError extends Error {}
/** The courier service declined the request. */
export class CourierRefusedError extends Error {}
