// A real acquiring API over JSON/HTTP (the shape common to Russian acquirers' invoice APIs):
//   POST {url}/invoices                 {amount:{value,currency}, order_id, description, expires_at, return_url}
//                                        -> {id, payment_url}
//   POST {url}/invoices/{id}/cancel      -> 2xx
//   POST {url}/refunds                   {invoice_id, amount:{value,currency}} -> {id, status: succeeded|pending}
//   GET  {url}/invoices/{id}             -> {id, status: pending|paid|failed|expired|cancelled}
// Every request carries the bearer token, and every POST an Idempotency-Key, so a retry after a
// lost answer does not issue or refund twice. Network errors, timeouts, 429 and 5xx are BankUnavailableError;
// other non-2xx answers and bodies of the wrong shape are BankRefusedError / BankUnavailableError.
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import {
  BankRefusedError,
  BankUnavailableError,
  type BankGateway,
  type InvoiceOutcome,
  type IssueInvoiceRequest,
  type IssuedInvoice,
  type RefundRequest,
} from './types.js';

export class HttpBankGateway implements BankGateway {
  readonly name = 'http' as const;
  constructor(
    private readonly cfg: OrdersConfig['bank'],
    private readonly log: Logger,
  ) {}

  /** A POST with its Idempotency-Key and JSON body, or (no key) a GET. */
  private async call(path: string, idempotencyKey: string | null, body?: unknown): Promise<Record<string, unknown>> {
    let response: Response;
    const auth: Record<string, string> = this.cfg.httpToken ? { authorization: `Bearer ${this.cfg.httpToken}` } : {};
    try {
      response = await fetch(`${this.cfg.httpUrl}${path}`, {
        ...(idempotencyKey === null
          ? { method: 'GET', headers: auth }
          : {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey, ...auth },
              body: JSON.stringify(body),
            }),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
      });
    } catch (err) {
      this.log.warn('bank unreachable', { path, err: (err as Error).message });
      throw new BankUnavailableError('The bank did not answer');
    }
    const text = await response.text().catch(() => '');
    if (response.status === 429 || response.status >= 500) {
      this.log.warn('bank unavailable', { path, status: response.status });
      throw new BankUnavailableError(`The bank answered ${response.status}`);
    }
    if (!response.ok) {
      this.log.warn('bank refused', { path, status: response.status });
      throw new BankRefusedError(`The bank refused the request (${response.status})`);
    }
    try {
      const parsed: unknown = text ? JSON.parse(text) : {};
      if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
      return parsed as Record<string, unknown>;
    } catch {
      throw new BankUnavailableError('The bank answered with a body that is not JSON');
    }
  }

  async issueInvoice(r: IssueInvoiceRequest): Promise<IssuedInvoice> {
    const body = await this.call('/invoices', r.invoiceId, {
      amount: { value: r.amount, currency: r.currency },
      order_id: r.orderId,
      description: r.description,
      expires_at: r.expiresAt.toISOString(),
      return_url: r.returnUrl,
      metadata: { invoice_id: r.invoiceId, order_no: r.orderNo },
    });
    if (typeof body.id !== 'string' || typeof body.payment_url !== 'string' || !/^https?:\/\//.test(body.payment_url)) {
      throw new BankUnavailableError('The bank answered without an invoice id and payment link');
    }
    return { providerRef: body.id, link: body.payment_url };
  }

  async cancelInvoice(invoice: { invoiceId: string; providerRef: string }): Promise<void> {
    await this.call(`/invoices/${encodeURIComponent(invoice.providerRef)}/cancel`, `cancel-${invoice.invoiceId}`, {});
  }

  async refund(r: RefundRequest): Promise<{ status: 'succeeded' | 'pending' }> {
    const body = await this.call('/refunds', r.refundId, { invoice_id: r.providerRef, amount: { value: r.amount, currency: r.currency } });
    if (body.status === 'succeeded' || body.status === 'pending') return { status: body.status };
    throw new BankUnavailableError(`The bank answered a refund status "${String(body.status)}"`);
  }

  async invoiceStatus(invoice: { invoiceId: string; providerRef: string }): Promise<InvoiceOutcome> {
    const body = await this.call(`/invoices/${encodeURIComponent(invoice.providerRef)}`, null);
    const outcome = BANK_STATUSES[String(body.status)];
    if (!outcome) throw new BankUnavailableError(`The bank answered an invoice status "${String(body.status)}"`);
    return outcome;
  }
}

/** The bank's invoice statuses as the service's outcomes (a cancelled invoice was never paid). */
const BANK_STATUSES: Record<string, InvoiceOutcome> = {
  pending: 'open',
  paid: 'paid',
  failed: 'failed',
  expired: 'expired',
  cancelled: 'expired',
};
