// TEST-only operations on the @hey-api/openapi-ts client of the TEST spec (compiled for TEST only;
// PROD has none of them): the QA tools (read the sign-in code of a TEST phone, settle a sandbox
// invoice) and "the customer decides" (change an order before picking, answer a picker's proposal).
import { createClient, createConfig } from 'consumer-client/client';
import {
  changeOrderItems,
  decideItemApproval,
  getLastOtpCode,
  getOrder,
  settleSandboxBankInvoice,
  type ItemApprovalSchema,
  type OrderLineChangeInput,
} from 'consumer-client';

const qa = createClient(createConfig({ baseUrl: 'https://api.test.grocery.example' }));

export async function lastCode(phone: string): Promise<string> {
  const { data } = await getLastOtpCode({ client: qa, query: { phone }, throwOnError: true });
  if (data.purpose !== 'login' || data.state !== 'active') throw new Error(`no usable code (${data.state})`);
  return data.code;
}

export async function settlePaid(access: string, orderId: string): Promise<boolean> {
  const { data } = await settleSandboxBankInvoice({
    client: qa,
    headers: { Authorization: `Bearer ${access}` },
    path: { order_id: orderId },
    body: { outcome: 'paid' },
    throwOnError: true,
  });
  return data.status === 'paid' && data.payment_status === 'paid' && data.order_id === orderId;
}

const app = createClient(createConfig({ baseUrl: 'https://api.test.grocery.example' }));

/** Changes the order's lines on the copy just read (its order_version); false once a picker has started. */
export async function changeBeforePicking(access: string, orderId: string, changes: OrderLineChangeInput[], key: string): Promise<boolean> {
  const auth = { Authorization: `Bearer ${access}` };
  const { data: order } = await getOrder({ client: app, headers: auth, path: { order_id: orderId }, throwOnError: true });
  if (!order.can_change || order.order_version === undefined) return false;
  const changed = await changeOrderItems({
    client: app,
    headers: { ...auth, 'X-Expected-Version': order.order_version, 'Idempotency-Key': key },
    path: { order_id: orderId },
    body: { changes },
  });
  if (changed.error) {
    const code = 'code' in changed.error ? changed.error.code : undefined;
    if (code === 'PICKING_STARTED') return false;
    // VERSION_CONFLICT: the copy was stale; the app re-reads and asks the customer again.
    throw new Error(`change failed: ${changed.response?.status} ${code}`);
  }
  return changed.data.order_version !== order.order_version;
}

/** The pending proposals of the order (items[].approval), and the customer's answer to one. */
export async function pendingApprovals(access: string, orderId: string): Promise<ItemApprovalSchema[]> {
  const { data: order } = await getOrder({ client: app, headers: { Authorization: `Bearer ${access}` }, path: { order_id: orderId }, throwOnError: true });
  return order.items.flatMap((line) => (line.approval?.status === 'pending' ? [line.approval] : []));
}

export async function decide(access: string, orderId: string, approval: ItemApprovalSchema, approve: boolean): Promise<string> {
  const answered = await decideItemApproval({
    client: app,
    headers: { Authorization: `Bearer ${access}` },
    path: { order_id: orderId, approval_id: approval.id },
    body: { decision: approve ? 'approve' : 'reject' },
  });
  if (answered.error) {
    // PICKING_FINISHED, APPROVAL_ALREADY_DECIDED, APPROVAL_WITHDRAWN: re-read and show the outcome.
    return 'code' in answered.error ? String(answered.error.code) : 'error';
  }
  const line = answered.data.items.find((l) => l.id === approval.item_id);
  return line?.approval?.status ?? 'unknown';
}
