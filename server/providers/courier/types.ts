// The courier adapter's interface, shared by the simulator and the HTTP adapter.

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
}

export interface CourierService {
  readonly name: 'simulator' | 'http';
  /** Whether an express delivery can be taken now and in how many minutes. */
  quoteExpress(request: ExpressQuoteRequest): Promise<{ available: boolean; minutes: number }>;
  /** Asks for a courier; the answer is the service's id of the request. */
  requestCourier(request: CourierRequest): Promise<{ ref: string }>;
  /** Asks to withdraw the request; the service confirms later with a `cancelled` event (or `en_route` if too late). */
  withdraw(request: { orderId: string; ref: string | null }): Promise<void>;
}

/** The courier service gave no usable answer (network, timeout, 429, 5xx, wrong shape). */
export class CourierUnavailableError extends Error {}
/** The courier service declined the request. */
export class CourierRefusedError extends Error {}
