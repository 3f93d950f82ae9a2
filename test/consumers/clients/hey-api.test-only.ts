// TEST-only tooling on the @hey-api/openapi-ts client of the TEST spec (compiled for TEST only;
// PROD has no QA operations): read the sign-in code of a TEST phone, settle a sandbox invoice.
import { createClient, createConfig } from 'consumer-client/client';
import { getLastOtpCode, settleSandboxBankInvoice } from 'consumer-client';

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
