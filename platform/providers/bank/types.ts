// The bank adapter's interface, shared by the sandbox and the HTTP adapter.

export interface IssueInvoiceRequest {
  /** Our invoice id; also the idempotency key at the bank, so a retried issue makes one invoice. */
  invoiceId: string;
  orderId: string;
  orderNo: number;
  /** Decimal string ("2679.50"). */
  amount: string;
  currency: string;
  expiresAt: Date;
  returnUrl: string | null;
  description: string;
}

export interface IssuedInvoice {
  /** The bank's id of the invoice. */
  providerRef: string;
  /** The payment page. */
  link: string;
}

export interface RefundRequest {
  /** Our idempotency key of the refund (the provider command's id). */
  refundId: string;
  invoiceId: string;
  providerRef: string;
  amount: string;
  currency: string;
}

export interface BankGateway {
  readonly name: 'sandbox' | 'http';
  issueInvoice(request: IssueInvoiceRequest): Promise<IssuedInvoice>;
  /** Stops an open invoice from accepting payment (the order was cancelled). */
  cancelInvoice(invoice: { invoiceId: string; providerRef: string }): Promise<void>;
  /** Returns money of a paid invoice; `pending` means the bank confirms later. */
  refund(request: RefundRequest): Promise<{ status: 'succeeded' | 'pending' }>;
  /**
   * The bank's word on an invoice: still `open` (payable), `paid`, `failed` (declined; a new
   * invoice may be issued) or `expired` (no longer payable, never paid). The orders worker asks
   * it of open invoices; the sandbox, settled by its QA operation, answers `open`.
   */
  invoiceStatus(invoice: { invoiceId: string; providerRef: string }): Promise<InvoiceOutcome>;
}

export type InvoiceOutcome = 'open' | 'paid' | 'failed' | 'expired';

/** The bank did not answer usefully (network, timeout, 5xx, 429): retrying may help. */
export class BankUnavailableError extends Error {}
/** The bank answered and declined the request: retrying the same request will not help. */
export class BankRefusedError extends Error {}
