// The local sandbox bank (the default): invoices are links to its page, settled in TEST by
// POST /api/qa/payments/bank/{order_id}/settle as the bank's notification would; refunds succeed at once.
import type { Logger } from '../../logger.js';
import type { BankGateway, InvoiceOutcome, IssueInvoiceRequest, IssuedInvoice, RefundRequest } from './types.js';

export class SandboxBank implements BankGateway {
  readonly name = 'sandbox' as const;
  constructor(
    private readonly pageUrl: string,
    private readonly log: Logger,
  ) {}

  async issueInvoice(request: IssueInvoiceRequest): Promise<IssuedInvoice> {
    this.log.info('sandbox bank invoice issued', { invoice_id: request.invoiceId, order_id: request.orderId, amount: request.amount });
    return { providerRef: `sandbox-${request.invoiceId}`, link: `${this.pageUrl}/${request.invoiceId}` };
  }

  async cancelInvoice(invoice: { invoiceId: string }): Promise<void> {
    this.log.info('sandbox bank invoice cancelled', { invoice_id: invoice.invoiceId });
  }

  async refund(request: RefundRequest): Promise<{ status: 'succeeded' }> {
    this.log.info('sandbox bank refund', { invoice_id: request.invoiceId, amount: request.amount });
    return { status: 'succeeded' };
  }

  /** Settled only by POST /api/qa/payments/bank/{order_id}/settle: until then it is open. */
  async invoiceStatus(): Promise<InvoiceOutcome> {
    return 'open';
  }
}
