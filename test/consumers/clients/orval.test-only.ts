// TEST-only operations on the orval client of the TEST spec (compiled for TEST only; PROD has none
// of them): the QA tools (read the sign-in code of a TEST phone, settle a sandbox invoice) and "the
// customer decides" (change an order before picking, answer a picker's proposal).
import {
  changeOrderItems,
  decideItemApproval,
  getLastOtpCode,
  getOrder,
  settleSandboxBankInvoice,
  type ItemApprovalSchema,
  type OrderLineChangeInput,
} from 'consumer-client';

export async function lastCode(phone: string): Promise<string> {
  const otp = await getLastOtpCode({ phone });
  if (otp.status !== 200) throw new Error(`getLastOtpCode answered ${otp.status}`);
  if (otp.data.purpose !== 'login' || otp.data.state !== 'active') throw new Error(`no usable code (${otp.data.state})`);
  return otp.data.code;
}

export async function settlePaid(access: string, orderId: string): Promise<boolean> {
  const settled = await settleSandboxBankInvoice(orderId, { outcome: 'paid' }, { headers: { Authorization: `Bearer ${access}` } });
  if (settled.status !== 200) throw new Error(`settleSandboxBankInvoice answered ${settled.status}`);
  return settled.data.status === 'paid' && settled.data.payment_status === 'paid' && settled.data.order_id === orderId;
}

/** Changes the order's lines on the copy just read (its order_version); false once a picker has started. */
export async function changeBeforePicking(access: string, orderId: string, changes: OrderLineChangeInput[], key: string): Promise<boolean> {
  const auth = { Authorization: `Bearer ${access}` };
  const order = await getOrder(orderId, { headers: auth });
  if (order.status !== 200) throw new Error(`getOrder answered ${order.status}`);
  if (!order.data.can_change || order.data.order_version === undefined) return false;
  const changed = await changeOrderItems(
    orderId,
    { changes },
    { headers: { ...auth, 'X-Expected-Version': String(order.data.order_version), 'Idempotency-Key': key } },
  );
  if (changed.status === 409 && changed.data.code === 'PICKING_STARTED') return false;
  // VERSION_CONFLICT: the copy was stale; the app re-reads and asks the customer again.
  if (changed.status !== 200) throw new Error(`changeOrderItems answered ${changed.status}`);
  return changed.data.order_version !== order.data.order_version;
}

/** The pending proposals of the order (items[].approval), and the customer's answer to one. */
export async function pendingApprovals(access: string, orderId: string): Promise<ItemApprovalSchema[]> {
  const order = await getOrder(orderId, { headers: { Authorization: `Bearer ${access}` } });
  if (order.status !== 200) throw new Error(`getOrder answered ${order.status}`);
  return order.data.items.flatMap((line) => (line.approval?.status === 'pending' ? [line.approval] : []));
}

export async function decide(access: string, orderId: string, approval: ItemApprovalSchema, approve: boolean): Promise<string> {
  const answered = await decideItemApproval(
    orderId,
    approval.id,
    { decision: approve ? 'approve' : 'reject' },
    { headers: { Authorization: `Bearer ${access}` } },
  );
  // PICKING_FINISHED, APPROVAL_ALREADY_DECIDED, APPROVAL_WITHDRAWN: re-read and show the outcome.
  if (answered.status === 409) return answered.data.code;
  if (answered.status !== 200) throw new Error(`decideItemApproval answered ${answered.status}`);
  const line = answered.data.items.find((l) => l.id === approval.item_id);
  return line?.approval?.status ?? 'unknown';
}
