// TokenService.verify refuses a correctly signed token whose times this service never signs: an
// `iat` in the future or missing, or a lifetime longer than its kind's.
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { describe, expect, it } from 'vitest';
import { AUDIENCE, TokenError, type TokenKind } from '../../platform/tokens.js';
import { loadConfig } from '../../platform/config.js';
import { tokensFor } from '../support/tokens.js';

const config = loadConfig({
  DATABASE_URL: 'postgres://placeholder/x',
  JWT_SECRET: 'unit-secret-that-is-long-enough-for-hs256-0123456789',
  ACCESS_TOKEN_TTL_SECONDS: '900',
  REFRESH_TOKEN_TTL_SECONDS: '86400',
});
const t = tokensFor(config);

/**
 * A token of `kind` signed with the service's key by jsonwebtoken, which keeps the `iat` it is
 * given; with `iat` null, noTimestamp leaves it out.
 */
function signed(kind: TokenKind, iat: number | null, exp: number): string {
  const claims = { typ: kind, sub: randomUUID(), sid: randomUUID(), jti: randomUUID(), iss: config.jwt.issuer, aud: AUDIENCE[kind], exp };
  return jwt.sign(iat === null ? claims : { ...claims, iat }, config.jwt.secret, { algorithm: 'HS256', noTimestamp: iat === null });
}

const now = () => Math.floor(Date.now() / 1000);

describe('TokenService.verify', () => {
  it('accepts the tokens it signs and the same claims re-signed with their times', () => {
    for (const kind of Object.keys(AUDIENCE) as TokenKind[]) {
      expect(t.service.verify(t.sign(kind), kind).typ).toBe(kind);
      expect(t.service.verify(signed(kind, now(), now() + t.service.ttlSeconds(kind)), kind).typ).toBe(kind);
    }
  });

  it('accepts an iat a few seconds ahead (another instance’s clock) and refuses one further ahead or missing', () => {
    const ttl = t.service.ttlSeconds('customer_access');
    expect(() => t.service.verify(signed('customer_access', now() + 5, now() + 5 + ttl), 'customer_access')).not.toThrow();
    for (const [name, token] of Object.entries({
      'a day ahead': signed('customer_access', now() + 24 * 3600, now() + 24 * 3600 + ttl),
      'five minutes ahead': signed('customer_access', now() + 300, now() + 300 + ttl),
      missing: signed('customer_access', null, now() + ttl),
    }))
      expect(() => t.service.verify(token, 'customer_access'), name).toThrow(TokenError);
  });

  it('refuses a lifetime longer than the kind’s, measured by each kind’s own TTL', () => {
    const access = t.service.ttlSeconds('customer_access');
    const refresh = t.service.ttlSeconds('customer_refresh');
    expect(() => t.service.verify(signed('customer_access', now(), now() + access + 5), 'customer_access')).not.toThrow();
    for (const [name, token] of Object.entries({
      'exp 1e20': signed('customer_access', now(), 1e20),
      'five minutes longer': signed('customer_access', now(), now() + access + 300),
      'a refresh token’s lifetime': signed('customer_access', now(), now() + refresh),
      'issued long ago, expiring now': signed('customer_access', now() - 10 * access, now() + 60),
    }))
      expect(() => t.service.verify(token, 'customer_access'), name).toThrow(TokenError);
    // A refresh token's lifetime is a refresh token's.
    expect(() => t.service.verify(signed('customer_refresh', now(), now() + refresh), 'customer_refresh')).not.toThrow();
    expect(() => t.service.verify(signed('picker_refresh', now(), now() + 2 * refresh), 'picker_refresh')).toThrow(TokenError);
    expect(() => t.service.verify(signed('recovery', now(), now() + access + 3600), 'recovery')).toThrow(TokenError);
  });
});
