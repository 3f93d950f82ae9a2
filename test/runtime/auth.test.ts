// Security fails closed: a request that does not satisfy an operation's security never reaches
// its handler, whatever the token looks like (DESIGN.md §7).
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenKind } from '../../platform/tokens.js';
import { startTestService, type TestService } from '../support/service.js';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { tokensFor } from '../support/tokens.js';

let svc: TestService;
const calls: string[] = [];
const customerId = randomUUID();

beforeAll(async () => {
  svc = await startTestService({
    handlers: {
      // Spies standing in for the real handlers: they record that they ran and answer a body
      // that the spec accepts, so the test sees whether security let the request through.
      getProfile: (ctx) => {
        calls.push(`getProfile:${ctx.principal?.kind}`);
        return {
          status: 200,
          body: {
            phone: '+79990000000',
            first_name: '',
            last_name: '',
            patronymic: '',
            email: '',
            birth_date: null,
            gender: null,
            marital_status: null,
          },
        };
      },
      // Must never run in these tests: if it did, the 500 would fail the 401 expectations.
      getPickerMe: () => {
        throw new Error('getPickerMe ran although security should have refused the request');
      },
    },
  });
});
afterAll(() => svc?.close());

const get = (path: '/api/accounts/me/' | '/api/picker/auth/me' | '/api/picker/session/active', token?: string) =>
  svc.client.call.GET(path, { headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('customer operations', () => {
  it('run the handler for a valid customer access token of an active session', async () => {
    const customer = await signInCustomer(svc);
    calls.length = 0;
    const r = await get('/api/accounts/me/', customer.access);
    expect(r.status).toBe(200);
    expect(calls).toEqual(['getProfile:customer']);
  });

  it('answer 401 to a validly signed token of an active session that has no expiry', async () => {
    const customer = await signInCustomer(svc);
    const { exp: _exp, ...claims } = jwt.decode(customer.access) as jwt.JwtPayload;
    const eternal = tokensFor(svc.config).forge({ alg: 'HS256', typ: 'JWT' }, claims);
    calls.length = 0;
    const r = await get('/api/accounts/me/', eternal);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('UNAUTHORIZED');
    expect(calls).toEqual([]);
  });

  it('answer 401 to a validly signed token of an active session whose times were never ours', async () => {
    const customer = await signInCustomer(svc);
    const { iat: _iat, exp: _exp, ...claims } = jwt.decode(customer.access) as jwt.JwtPayload;
    // Signed with the service's key by jsonwebtoken, which keeps the `iat` it is given; without
    // one, noTimestamp leaves it out.
    const signed = (payload: object, noTimestamp = false) => jwt.sign(payload, svc.config.jwt.secret, { algorithm: 'HS256', noTimestamp });
    const now = Math.floor(Date.now() / 1000);
    const ttl = svc.config.jwt.accessTtlSeconds;
    const day = 24 * 3600;
    // The same claims re-signed with the times the service gives pass, so only the times are refused below.
    calls.length = 0;
    expect((await get('/api/accounts/me/', signed({ ...claims, iat: now, exp: now + ttl }))).status).toBe(200);
    expect(calls).toEqual(['getProfile:customer']);
    const forged: Record<string, string> = {
      'issued a day from now': signed({ ...claims, iat: now + day, exp: now + day + ttl }),
      'expiring in 1e20 seconds': signed({ ...claims, iat: now, exp: 1e20 }),
      'living an hour longer than an access token': signed({ ...claims, iat: now, exp: now + ttl + 3600 }),
      'without iat': signed({ ...claims, exp: now + ttl }, true),
    };
    calls.length = 0;
    for (const [name, token] of Object.entries(forged)) {
      expect(jwt.decode(token), name).toMatchObject({ sub: customer.customerId });
      const r = await get('/api/accounts/me/', token);
      expect(r.status, name).toBe(401);
      expect(r.body.code, name).toBe('UNAUTHORIZED');
    }
    expect(calls).toEqual([]);
  });

  it('answer 401 and never run the handler for every token attack', async () => {
    const t = tokensFor(svc.config);
    const now = Math.floor(Date.now() / 1000);
    const claims = {
      typ: 'customer_access',
      sub: customerId,
      sid: randomUUID(),
      jti: randomUUID(),
      iss: svc.config.jwt.issuer,
      aud: 'customer',
      iat: now,
      exp: now + 600,
    };
    const valid = t.sign('customer_access', customerId);
    const [head, body] = valid.split('.');
    const tamperedPayload = Buffer.from(JSON.stringify({ ...claims, sub: randomUUID() })).toString('base64url');
    const attacks: Record<string, string | undefined> = {
      'no token': undefined,
      garbage: 'not-a-jwt',
      'alg none': t.forge({ alg: 'none', typ: 'JWT' }, claims),
      'alg NONE': t.forge({ alg: 'NONE', typ: 'JWT' }, claims),
      'alg nOnE': t.forge({ alg: 'nOnE', typ: 'JWT' }, claims),
      'HS256 with a wrong key': t.forge({ alg: 'HS256', typ: 'JWT' }, claims, 'another-key-another-key-another-key-0000'),
      'HS512 with the right key': t.forge({ alg: 'HS512', typ: 'JWT' }, claims),
      expired: t.forge({ alg: 'HS256', typ: 'JWT' }, { ...claims, iat: now - 7200, exp: now - 3600 }),
      'tampered payload': `${head}.${tamperedPayload}.${valid.split('.')[2]}`,
      'signature stripped': `${head}.${body}.`,
      'wrong typ': t.forge({ alg: 'HS256', typ: 'JWT' }, { ...claims, typ: 'picker_access' }),
      'wrong aud': t.forge({ alg: 'HS256', typ: 'JWT' }, { ...claims, aud: 'picker' }),
      'wrong issuer': t.forge({ alg: 'HS256', typ: 'JWT' }, { ...claims, iss: 'someone-else' }),
      'customer refresh token': t.sign('customer_refresh', customerId),
      'recovery token': t.sign('recovery', customerId),
      'picker access token': t.sign('picker_access', randomUUID()),
      'picker refresh token': t.sign('picker_refresh', randomUUID()),
      'validly signed, but no such session': t.sign('customer_access', customerId),
    };
    calls.length = 0;
    for (const [name, token] of Object.entries(attacks)) {
      const r = await get('/api/accounts/me/', token);
      expect(r.status, name).toBe(401);
      expect(r.body.code, name).toBe('UNAUTHORIZED');
      expect(r.headers.get('www-authenticate'), name).toMatch(/^Bearer/);
    }
    expect(calls).toEqual([]);
  });
});

describe('the 401 challenge (RFC 6750 3.1)', () => {
  it('has no error when no credentials were sent, error="invalid_token" when a token was', async () => {
    const bad = 'not.a.token';
    for (const path of ['/api/accounts/me/', '/api/picker/auth/me'] as const) {
      const none = await svc.client.invalid('GET', path);
      expect(none.status, path).toBe(401);
      expect(none.headers.get('www-authenticate'), path).toBe('Bearer');
      // Another scheme is no bearer token either.
      const basic = await svc.client.invalid('GET', path, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
      expect(basic.status, path).toBe(401);
      expect(basic.headers.get('www-authenticate'), path).toBe('Bearer');
      const invalid = await get(path, bad);
      expect(invalid.status, path).toBe(401);
      expect(invalid.headers.get('www-authenticate'), path).toBe('Bearer error="invalid_token"');
    }
    // A customer token on a picker operation was sent, and is not accepted there.
    const customer = await signInCustomer(svc);
    expect((await get('/api/picker/auth/me', customer.access)).headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });
});

describe('picker operations', () => {
  it('refuse customer tokens and accept picker tokens at the security layer', async () => {
    const t = tokensFor(svc.config);
    const kinds: TokenKind[] = ['customer_access', 'customer_refresh', 'recovery', 'picker_refresh'];
    for (const kind of kinds) {
      const r = await get('/api/picker/auth/me', t.sign(kind));
      expect(r.status, kind).toBe(401);
    }
    // A picker token of an active session passes security and reaches the operation (a fresh
    // picker has no active session: 204).
    const picker = await signInPicker(svc);
    const ok = await get('/api/picker/session/active', picker.access);
    expect(ok.status).toBe(204);
    const customer = await signInCustomer(svc);
    expect((await get('/api/picker/session/active', customer.access)).status).toBe(401);
    expect((await get('/api/accounts/me/', picker.access)).status).toBe(401);
  });
});

describe('optional authorization', () => {
  it('lets a Public operation run without a token', async () => {
    const r = await svc.client.call.GET('/api/catalog/features/units/');
    expect(r.status).toBe(200);
  });

  it('refuses an invalid token on an optionally authorized operation instead of serving a guest', async () => {
    const r = await svc.client.call.GET('/api/catalog/products/', {
      params: { query: { page: 1 } },
      headers: { authorization: 'Bearer not-a-valid-token' },
    });
    expect(r.status).toBe(401);
  });
});
