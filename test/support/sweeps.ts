// Shared by the sweeps of test/runtime (bad input, order states): one request whose answer must
// be declared by the contract and never a 500.
import type { CheckedResponse } from './client.js';

/**
 * Sends one request and records it in `failures` when it is a 500 or breaks the contract (the
 * contract client throws then). Returns the status, or null when the request broke the contract.
 */
export async function attempt(failures: string[], label: string, send: () => Promise<CheckedResponse>): Promise<number | null> {
  try {
    const r = await send();
    if (r.status >= 500 && r.status !== 501) failures.push(`${label.slice(0, 240)} -> ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    return r.status;
  } catch (err) {
    failures.push(`${label.slice(0, 240)} -> ${(err as Error).message.slice(0, 300)}`);
    return null;
  }
}
