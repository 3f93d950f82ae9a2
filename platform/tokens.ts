// JWTs of five kinds. Each kind has its own `typ` and audience, so no kind is accepted where
// another is expected; the algorithm is pinned, so `alg: none` and key-confusion tokens fail.
import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { systemClock } from './clock.js';
import type { Config } from './config.js';

export type TokenKind = 'customer_access' | 'customer_refresh' | 'picker_access' | 'picker_refresh' | 'recovery';

/** The audience (`aud`) of each kind: a token of one kind is refused where another is expected. */
export const AUDIENCE: Record<TokenKind, string> = {
  customer_access: 'customer',
  customer_refresh: 'customer-refresh',
  picker_access: 'picker',
  picker_refresh: 'picker-refresh',
  recovery: 'recovery',
};

const ALGORITHM = 'HS256' as const;

/**
 * How far ahead of this instance's clock a token's `iat` may be, and how much longer than its
 * kind's TTL it may live: the instances' clocks differ by seconds, and a token further off was
 * not signed by any of them.
 */
export const CLOCK_SKEW_SECONDS = 60;

export interface TokenClaims {
  typ: TokenKind;
  sub: string;
  /** Session (refresh family) the token belongs to. */
  sid: string;
  jti: string;
  iat: number;
  exp: number;
}

export type Principal =
  | { kind: 'customer'; customerId: string; sessionId: string; tokenId: string }
  | { kind: 'picker'; pickerId: string; sessionId: string; tokenId: string };

export class TokenError extends Error {}

type ClaimsBeforeIssueTime = jwt.JwtPayload & Omit<TokenClaims, 'iat'>;

/**
 * Whether a verified payload carries the claims of a token of `kind`. A token without `exp` would
 * never expire: jsonwebtoken accepts one, this service never signs one, so it is refused like any
 * token that is not ours.
 */
function hasClaimsOf(payload: string | jwt.JwtPayload, kind: TokenKind): payload is ClaimsBeforeIssueTime {
  return (
    typeof payload === 'object' &&
    payload.typ === kind &&
    typeof payload.sub === 'string' &&
    typeof payload.sid === 'string' &&
    typeof payload.jti === 'string' &&
    typeof payload.exp === 'number'
  );
}

function hasIssueTime(payload: ClaimsBeforeIssueTime): payload is jwt.JwtPayload & TokenClaims {
  return typeof payload.iat === 'number' && Number.isFinite(payload.iat);
}

export class TokenService {
  // A KeyObject made once: given the secret as a string, jsonwebtoken first tries (and fails) to
  // parse it as a public key on every verify, which cost ~0.7 ms per authenticated request.
  private readonly key: KeyObject;

  constructor(private readonly cfg: Config['jwt']) {
    this.key = createSecretKey(Buffer.from(cfg.secret, 'utf8'));
  }

  ttlSeconds(kind: TokenKind): number {
    if (kind === 'customer_refresh' || kind === 'picker_refresh') return this.cfg.refreshTtlSeconds;
    if (kind === 'recovery') return this.cfg.recoveryTtlSeconds;
    return this.cfg.accessTtlSeconds;
  }

  sign(kind: TokenKind, subject: string, sessionId: string, tokenId: string = randomUUID()): string {
    return jwt.sign({ typ: kind, sid: sessionId }, this.key, {
      algorithm: ALGORITHM,
      audience: AUDIENCE[kind],
      issuer: this.cfg.issuer,
      subject,
      jwtid: tokenId,
      expiresIn: this.ttlSeconds(kind),
    });
  }

  /**
   * Verifies signature, algorithm, issuer, audience, expiry, kind and times; throws TokenError
   * otherwise.
   */
  verify(token: string, kind: TokenKind): TokenClaims {
    // The wall clock, not the business clock (`deps.clock`): `sign` stamps `iat` and `exp` with it
    // (jsonwebtoken reads Date.now()), so a test that moves its clock changes no token's times.
    // One reading for every check here, handed to jsonwebtoken for `exp` and `nbf` too.
    const now = Math.floor(systemClock.nowMs() / 1000);
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.key, {
        algorithms: [ALGORITHM],
        audience: AUDIENCE[kind],
        issuer: this.cfg.issuer,
        clockTimestamp: now,
        complete: false,
      });
    } catch (err) {
      throw new TokenError((err as Error).message);
    }
    if (!hasClaimsOf(payload, kind)) throw new TokenError('token is not of the expected kind');
    // Every token this service signs has an `iat` of its signing time and lives its kind's TTL;
    // jsonwebtoken checks neither, so a correctly signed token with other times was signed with a
    // leaked key, and without this it could live for ever (exp 1e20).
    if (!hasIssueTime(payload)) throw new TokenError('token has no issue time');
    if (payload.iat > now + CLOCK_SKEW_SECONDS) throw new TokenError('token is issued in the future');
    if (payload.exp - payload.iat > this.ttlSeconds(kind) + CLOCK_SKEW_SECONDS) throw new TokenError('token lives longer than its kind');
    return payload;
  }

  principalFrom(token: string, kind: 'customer_access' | 'picker_access'): Principal {
    const c = this.verify(token, kind);
    return kind === 'customer_access'
      ? { kind: 'customer', customerId: c.sub, sessionId: c.sid, tokenId: c.jti }
      : { kind: 'picker', pickerId: c.sub, sessionId: c.sid, tokenId: c.jti };
  }
}

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return null;
  const m = /^Bearer\s+([A-Za-z0-9\-_.~+/]+=*)\s*$/i.exec(value);
  return m ? m[1]! : null;
}
