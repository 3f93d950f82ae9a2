// TEST-only tooling on the orval client of the TEST spec (compiled for TEST only; PROD has no QA
// operations): read the sign-in code of a TEST phone, settle a sandbox invoice.
import { getLastOtpCode, settleSandboxBankInvoice } from 'consumer-client';

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
