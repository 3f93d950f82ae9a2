// Refreshing and verifying a customer's tokens. Rotation and its reuse detection are in
// services/sessions.ts, shared with pickers.
import { isSessionActive, lockSession } from '../../db/queries/auth.js';
import { TokenError, type TokenClaims } from '../../platform/tokens.js';
import type { AppDeps } from '../deps.js';
import { AppError } from '../errors.js';
import { activePrincipal } from '../principal.js';
import { invalidRefresh, rotateRefreshToken, type TokenPair } from '../sessions.js';

const customerOwner = (claims: TokenClaims) => ({ kind: 'customer' as const, customerId: claims.sub });

/** Exchanges a customer refresh token for a new pair (see rotateRefreshToken). */
export async function refreshCustomerTokens(
  deps: Pick<AppDeps, 'db' | 'config' | 'tokens' | 'clock'>,
  refresh: string,
): Promise<TokenPair> {
  const { db, config, tokens } = deps;
  const outcome = await db
    .transaction()
    .execute((trx) =>
      rotateRefreshToken(trx, tokens, refresh, 'customer_refresh', customerOwner, config.jwt.refreshReuseGraceSeconds, deps.clock.now()),
    );
  if (outcome === 'reused') throw invalidRefresh('REFRESH_TOKEN_REUSED', 'Refresh token already used; the session was ended');
  if (outcome === 'invalid') throw invalidRefresh();
  return outcome;
}

/**
 * Throws 401 TOKEN_INVALID unless `token` is a customer access token of an active session, or
 * the current refresh token of one (a rotated refresh token is no longer valid).
 */
export async function verifyCustomerToken(deps: Pick<AppDeps, 'db' | 'tokens'>, token: string): Promise<void> {
  const { db, tokens } = deps;
  const valid = await activePrincipal(deps, token, 'customer_access').then(
    () => true,
    async () => {
      try {
        const claims = tokens.verify(token, 'customer_refresh');
        const session = await lockSession(db, claims.sid);
        return session?.refresh_jti === claims.jti && (await isSessionActive(db, claims.sid, customerOwner(claims)));
      } catch (err) {
        if (err instanceof TokenError) return false;
        throw err;
      }
    },
  );
  if (!valid)
    throw new AppError(401, 'TOKEN_INVALID', 'The token is not valid', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
}
