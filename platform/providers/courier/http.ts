// A courier service over JSON/HTTP:
//   POST {url}/quotes                  {pickup, dropoff, express: true, promised_minutes} -> {available, minutes}
//   POST {url}/deliveries              {external_id, pickup, dropoff, address, express, window} -> {id}
//   POST {url}/deliveries/{id}/cancel  -> 2xx
//   GET  {url}/deliveries/{id}         -> {state, comment?, courier?: {name, phone?, transport?},
//                                          location?: {lon, lat}, eta?, route?: [[lon, lat], ...]}
// with the bearer token; creation carries Idempotency-Key (the order id). Network errors,
// timeouts, 429 and 5xx are CourierUnavailableError, other 4xx CourierRefusedError; an answer of
// the wrong shape is CourierUnavailableError too (asked again later, never half applied).
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import { isTrackingState } from '../../../domain/orders/delivery-tracking.js';
import {
  CourierRefusedError,
  CourierUnavailableError,
  type CourierRequest,
  type CourierService,
  type CourierStatus,
  type ExpressQuoteRequest,
} from './types.js';

const TRANSPORTS = ['foot', 'bicycle', 'scooter', 'car'] as const;
const isPoint = (v: unknown): v is { lon: number; lat: number } =>
  typeof v === 'object' &&
  v !== null &&
  Number.isFinite((v as { lon: unknown }).lon) &&
  Number.isFinite((v as { lat: unknown }).lat) &&
  Math.abs((v as { lon: number }).lon) <= 180 &&
  Math.abs((v as { lat: number }).lat) <= 90;

/** A status answer read strictly: what does not fit is null (then the answer is refused whole). */
export function readCourierStatus(body: Record<string, unknown>): CourierStatus | null {
  const state = body.state;
  if (typeof state !== 'string' || !isTrackingState(state)) return null;
  const c = body.courier as Record<string, unknown> | null | undefined;
  if (
    c != null &&
    (typeof c !== 'object' ||
      typeof c.name !== 'string' ||
      !c.name ||
      (c.phone != null && typeof c.phone !== 'string') ||
      (c.transport != null && !(TRANSPORTS as readonly unknown[]).includes(c.transport)))
  )
    return null;
  if (body.location != null && !isPoint(body.location)) return null;
  if (body.comment != null && typeof body.comment !== 'string') return null;
  const eta = body.eta == null ? null : typeof body.eta === 'string' ? new Date(body.eta) : null;
  if (body.eta != null && (eta === null || Number.isNaN(eta.getTime()))) return null;
  const route = body.route;
  if (
    route != null &&
    (!Array.isArray(route) ||
      !route.every((p: unknown) => Array.isArray(p) && p.length === 2 && isPoint({ lon: p[0] as unknown, lat: p[1] as unknown })))
  )
    return null;
  return {
    state,
    comment: body.comment ?? null,
    courier: c
      ? {
          name: c.name as string,
          phone: (c.phone as string | null | undefined) ?? null,
          transport: (c.transport as (typeof TRANSPORTS)[number] | null | undefined) ?? null,
        }
      : null,
    location: body.location ? { lon: (body.location as { lon: number }).lon, lat: (body.location as { lat: number }).lat } : null,
    eta,
    route: (route as [number, number][] | null | undefined) ?? null,
  };
}

export class HttpCourierService implements CourierService {
  readonly name = 'http' as const;
  constructor(
    private readonly cfg: OrdersConfig['courier'],
    private readonly log: Logger,
  ) {}

  /** POST with a JSON body, or GET when `body` is undefined. */
  private async call(path: string, body: unknown, idempotencyKey?: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(`${this.cfg.httpUrl}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          ...(this.cfg.httpToken ? { authorization: `Bearer ${this.cfg.httpToken}` } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
      });
    } catch (err) {
      this.log.warn('courier service unreachable', { path, err: (err as Error).message });
      throw new CourierUnavailableError('The courier service did not answer');
    }
    const text = await response.text().catch(() => '');
    if (response.status === 429 || response.status >= 500)
      throw new CourierUnavailableError(`The courier service answered ${response.status}`);
    if (!response.ok) throw new CourierRefusedError(`The courier service refused the request (${response.status})`);
    try {
      const parsed: unknown = text ? JSON.parse(text) : {};
      if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
      return parsed as Record<string, unknown>;
    } catch {
      throw new CourierUnavailableError('The courier service answered with a body that is not JSON');
    }
  }

  async quoteExpress(r: ExpressQuoteRequest): Promise<{ available: boolean; minutes: number }> {
    const body = await this.call('/quotes', {
      pickup: r.pickup,
      dropoff: r.dropoff,
      express: true,
      promised_minutes: r.promisedMinutes,
      store_id: r.storeId,
    });
    if (typeof body.available !== 'boolean' || (body.available && (!Number.isInteger(body.minutes) || (body.minutes as number) < 1))) {
      throw new CourierUnavailableError('The courier service answered a quote of the wrong shape');
    }
    return { available: body.available, minutes: body.available ? (body.minutes as number) : r.promisedMinutes };
  }

  async requestCourier(r: CourierRequest): Promise<{ ref: string }> {
    const body = await this.call(
      '/deliveries',
      {
        external_id: r.orderId,
        order_no: r.orderNo,
        pickup: r.pickup,
        dropoff: r.dropoff,
        address: r.addressLine,
        express: r.isExpress,
        window: r.window,
        tote_count: r.toteCount,
      },
      r.orderId,
    );
    if (typeof body.id !== 'string' || !body.id) throw new CourierUnavailableError('The courier service answered without a request id');
    return { ref: body.id };
  }

  async withdraw(r: { orderId: string; ref: string | null }): Promise<void> {
    if (!r.ref) return; // never reached the service: nothing to withdraw there
    await this.call(`/deliveries/${encodeURIComponent(r.ref)}/cancel`, { external_id: r.orderId });
  }

  async deliveryStatus(ref: string): Promise<CourierStatus> {
    const status = readCourierStatus(await this.call(`/deliveries/${encodeURIComponent(ref)}`, undefined));
    if (!status) throw new CourierUnavailableError('The courier service answered a delivery status of the wrong shape');
    return status;
  }
}
