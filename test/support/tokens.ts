// Tokens for tests, signed the way the service signs them (and some the way an attacker would).
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { TokenService, type TokenKind } from '../../platform/tokens.js';
import type { Config } from '../../platform/config.js';

export function tokensFor(config: Config) {
  const service = new TokenService(config.jwt);
  return {
    service,
    sign: (kind: TokenKind, subject: string = randomUUID(), session: string = randomUUID()) => service.sign(kind, subject, session),
    /** A token with a chosen header and payload, signed with `key` (or unsigned for alg none). */
    forge(header: Record<string, unknown>, payload: Record<string, unknown>, key = config.jwt.secret): string {
      const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const head = b64(header);
      const body = b64(payload);
      if (String(header.alg).toLowerCase() === 'none') return `${head}.${body}.`;
      return jwt.sign(payload, key, {
        algorithm: header.alg as jwt.Algorithm,
        noTimestamp: payload.iat === undefined,
        header: header as unknown as jwt.JwtHeader,
      });
    },
  };
}
