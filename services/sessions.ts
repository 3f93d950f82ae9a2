// Starting and rotating sign-in sessions. A session is one refresh-token family; its id is the
// `sid` of every token it issues, which is how revocation reaches access tokens too.
import { randomUUID } from 'node:crypto';
import { insertSession, isSessionActive, lockSession, revokeSessions, rotateSession, type SessionOwner } from '../db/queries/auth.js';
import type { Executor } from '../db/executor.js';
import { TokenError, type TokenClaims, type TokenService } from '../platform/tokens.js';
import { AppError, type CodeWithStatus } from './errors.js';

export interface TokenPair {
  access: string;
  refresh: string;
  sessionId: string;
}

const kindsOf = (owner: SessionOwner) =>
  owner.kind === 'customer'
    ? ({ access: 'customer_access', refresh: 'customer_refresh' } as const)
    : ({ access: 'picker_access', refresh: 'picker_refresh' } as const);

const subjectOf = (owner: SessionOwner) => (owner.kind === 'customer' ? owner.customerId : String(owner.pickerId));

export async function startSession(db: Executor, tokens: TokenService, owner: SessionOwner, now: Date): Promise<TokenPair> {
  const sessionId = randomUUID();
  const refreshJti = randomUUID();
  const kinds = kindsOf(owner);
  await insertSession(db, {
    id: sessionId,
    owner,
    refreshJti,
    expiresAt: new Date(now.getTime() + tokens.ttlSeconds(kinds.refresh) * 1000),
  });
  return {
    sessionId,
    access: tokens.sign(kinds.access, subjectOf(owner), sessionId),
    refresh: tokens.sign(kinds.refresh, subjectOf(owner), sessionId, refreshJti),
  };
}

export const invalidRefresh = (code: CodeWithStatus<401> = 'TOKEN_INVALID', detail = 'The refresh token is not valid') =>
  new AppError(401, code, detail, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });

/**
 * Exchanges a refresh token for a new pair. The family's current token rotates; presenting an
 * already rotated one means it leaked (or a client bug): the whole family is revoked.
 *
 * Except the token exchanged last, within `graceSeconds` of that exchange: on a phone network an
 * answer is lost often enough, and the app retries with the token it still holds (or two screens
 * refreshed at once). It gets a pair carrying the family's current refresh token again and
 * nothing rotates, so whichever answer the app keeps, its token is the current one. Reuse of
 * that token later, or of any older one, is still reuse.
 * Returns `reused` instead of throwing so the caller can commit the revocation first.
 */
export async function rotateRefreshToken(
  db: Executor,
  tokens: TokenService,
  refreshToken: string,
  kind: 'customer_refresh' | 'picker_refresh',
  ownerOf: (claims: TokenClaims) => SessionOwner,
  graceSeconds: number,
  now: Date,
): Promise<TokenPair | 'reused' | 'invalid'> {
  let claims: TokenClaims;
  try {
    claims = tokens.verify(refreshToken, kind);
  } catch (err) {
    if (err instanceof TokenError) return 'invalid';
    throw err;
  }
  const session = await lockSession(db, claims.sid);
  const owner = ownerOf(claims);
  const ownerMatches =
    session && (owner.kind === 'customer' ? session.customer_id === owner.customerId : session.picker_id === owner.pickerId);
  if (!session || !ownerMatches || session.revoked_at || session.expires_at <= now) return 'invalid';
  // A disabled or deleted account gets no new pair, as its access tokens get no answer.
  if (!(await isSessionActive(db, session.id, owner))) return 'invalid';
  const kinds = kindsOf(owner);
  const pairWith = (refreshJti: string): TokenPair => ({
    sessionId: session.id,
    access: tokens.sign(kinds.access, claims.sub, session.id),
    refresh: tokens.sign(kinds.refresh, claims.sub, session.id, refreshJti),
  });
  if (session.refresh_jti !== claims.jti) {
    if (isRetryOfLastExchange(session, claims.jti, graceSeconds)) return pairWith(session.refresh_jti);
    await revokeSessions(db, { sessionId: session.id }, 'refresh_token_reused');
    return 'reused';
  }
  const newJti = randomUUID();
  await rotateSession(db, session.id, newJti, new Date(now.getTime() + tokens.ttlSeconds(kind) * 1000));
  return pairWith(newJti);
}

/** Whether `jti` is the token the family's last rotation exchanged, presented within the grace (by the database's clock). */
function isRetryOfLastExchange(
  session: { previous_refresh_jti: string | null; rotated_at: Date | null; db_now: Date },
  jti: string,
  graceSeconds: number,
): boolean {
  if (graceSeconds <= 0 || session.previous_refresh_jti !== jti || session.rotated_at === null) return false;
  return session.db_now.getTime() - session.rotated_at.getTime() <= graceSeconds * 1000;
}
