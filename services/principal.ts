// From an access token to the caller: the signature, kind and expiry are checked by the token
// service; the session is checked in the database on every request, so sign-out, PIN change,
// refresh-token reuse and account deletion take effect at once.
import { isSessionActive } from '../db/queries/auth.js';
import type { AppDeps } from './deps.js';
import { TokenError, type Principal } from '../platform/tokens.js';

export async function activePrincipal(
  deps: Pick<AppDeps, 'db' | 'tokens'>,
  token: string,
  kind: 'customer_access' | 'picker_access',
): Promise<Principal> {
  const principal = deps.tokens.principalFrom(token, kind);
  const owner =
    principal.kind === 'customer'
      ? { kind: 'customer' as const, customerId: principal.customerId }
      : { kind: 'picker' as const, pickerId: Number(principal.pickerId) };
  if (owner.kind === 'picker' && !Number.isSafeInteger(owner.pickerId)) throw new TokenError('malformed subject');
  if (owner.kind === 'customer' && !/^[0-9a-f-]{36}$/i.test(owner.customerId)) throw new TokenError('malformed subject');
  if (!(await isSessionActive(deps.db, principal.sessionId, owner))) throw new TokenError('session is not active');
  return principal;
}
