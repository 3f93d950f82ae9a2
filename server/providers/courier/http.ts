// A courier service over JSON/HTTP:
//   POST {url}/quotes                  {pickup, dropoff, express: true, promised_minutes} -> {available, minutes}
//   POST {url}/deliveries              {external_id, pickup, dropoff, address, express, window} -> {id}
//   POST {url}/deliveries/{id}/cancel  -> 2xx
// with the bearer token; creation carries Idempotency-Key (the order id). Network errors,
// timeouts, 429 and 5xx are CourierUnavailableError, other 4xx CourierRefusedError.
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import { CourierRefusedError, CourierUnavailableError, type CourierRequest, type CourierService, type ExpressQuoteRequest } from './types.js';

export class HttpCourierService implements CourierService {
  readonly name = 'http' as const;
  constructor(
    private readonly cfg: OrdersConfig['courier'],
    private readonly log: Logger,
  ) {}

  private async call(path: string, body: unknown, idempotencyKey?: string): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(`${this.cfg.httpUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          ...(this.cfg.httpToken ? { authorization: `Bearer ${this.cfg.httpToken}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
      });
    } catch (err) {
      this.log.warn('courier service unreachable', { path, err: (err as Error).message });
      throw new CourierUnavailableError('The courier service did not answer');
    }
    const text = await response.text().catch(() => '');
    if (response.status === 429 || response.status >= 500) throw new CourierUnavailableError(`The courier service answered ${response.status}`);
    if (!response.ok) throw new CourierRefusedError(`The courier service refused the request (${response.status})`);
    try {
      const parsed = text ? JSON.parse(text) : {};
      if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
      return parsed as Record<string, unknown>;
    } catch {
      throw new CourierUnavailableError('The courier service answered with a body that is not JSON');
    }
  }

  async quoteExpress(r: ExpressQuoteRequest): Promise<{ available: boolean; minutes: number }> {
    const body = await this.call('/quotes', { pickup: r.pickup, dropoff: r.dropoff, express: true, promised_minutes: r.promisedMinutes, store_id: r.storeId });
    if (typeof body.available !== 'boolean' || (body.available && (!Number.isInteger(body.minutes) || (body.minutes as number) < 1))) {
      throw new CourierUnavailableError('The courier service answered a quote of the wrong shape');
    }
    return { available: body.available, minutes: body.available ? (body.minutes as number) : r.promisedMinutes };
  }

  async requestCourier(r: CourierRequest): Promise<{ ref: string }> {
    const body = await this.call(
      '/deliveries',
      { external_id: r.orderId, order_no: r.orderNo, pickup: r.pickup, dropoff: r.dropoff, address: r.addressLine, express: r.isExpress, window: r.window },
      r.orderId,
    );
    if (typeof body.id !== 'string' || !body.id) throw new CourierUnavailableError('The courier service answered without a request id');
    return { ref: body.id };
  }

  async withdraw(r: { orderId: string; ref: string | null }): Promise<void> {
    if (!r.ref) return; // never reached the service: nothing to withdraw there
    await this.call(`/deliveries/${encodeURIComponent(r.ref)}/cancel`, { external_id: r.orderId });
  }
}
