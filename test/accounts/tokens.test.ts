// PIN sign-in (POST /api/token/pair), rotation (/refresh), /verify, and PIN recovery.
import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_CUSTOMER } from '../../db/seed/accounts.js';
import { randomTestPhone, signInCustomer, signInPicker } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { tokensFor } from '../support/tokens.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { OTP_RESEND_COOLDOWN_SECONDS: '0' } });
});
afterAll(() => svc?.close());

const pair = (phone: string, password: string) => svc.client.call.POST('/api/token/pair', { body: { phone, password } });
const refresh = (token: string) => svc.client.call.POST('/api/token/refresh', { body: { refresh: token } });
const me = (access: string) => svc.client.call.GET('/api/accounts/me/', { headers: { authorization: `Bearer ${access}` } });
const verify = (token: string) => svc.client.call.POST('/api/token/verify', { body: { token } });

describe('obtainTokenPair', () => {
  it('signs in with phone and PIN', async () => {
    const { data, response } = await svc.client.api.POST('/api/token/pair', {
      body: { phone: DEMO_CUSTOMER.phone, password: DEMO_CUSTOMER.pin },
    });
    expect(response.status).toBe(200);
    expect(data?.phone).toBe(DEMO_CUSTOMER.phone);
    expect((await me(data!.access)).status).toBe(200);
  });

  it('answers 401 INVALID_CREDENTIALS for a wrong PIN, an unknown phone or an account without PIN', async () => {
    const noPin = await signInCustomer(svc);
    for (const [phone, pin] of [
      [DEMO_CUSTOMER.phone, '9999'],
      ['+79160000000', '1357'],
      [noPin.phone, '1357'],
    ]) {
      const r = await pair(phone!, pin!);
      expect(r.status, phone).toBe(401);
      expect(r.body.code).toBe('INVALID_CREDENTIALS');
    }
  });

  it('locks the phone after 5 wrong PINs, even for the right one', async () => {
    const c = await signInCustomer(svc);
    await svc.deps.db
      .updateTable('customers')
      .set({
        pin_hash: (
          await svc.deps.db.selectFrom('customers').select('pin_hash').where('phone', '=', DEMO_CUSTOMER.phone).executeTakeFirstOrThrow()
        ).pin_hash,
      })
      .where('id', '=', c.customerId)
      .execute();
    for (let i = 0; i < 5; i++) expect((await pair(c.phone, '2468')).status).toBe(401);
    const locked = await pair(c.phone, DEMO_CUSTOMER.pin);
    expect(locked.status).toBe(429);
    expect(locked.body.code).toBe('LOGIN_RATE_LIMITED');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
  });

  it('counts wrong PINs sent at once one by one: five answer 401, the rest 429', async () => {
    // A service of its own: 40 attempts from one address stay under its per-minute budget.
    const fresh = await startTestService();
    try {
      const phone = randomTestPhone();
      const statuses = await Promise.all(
        Array.from({ length: 40 }, () =>
          fresh.client.call.POST('/api/token/pair', { body: { phone, password: '2468' } }).then((r) => r.status),
        ),
      );
      expect(statuses.filter((s) => s === 401)).toHaveLength(5);
      expect(statuses.filter((s) => s === 429)).toHaveLength(35);
    } finally {
      await fresh.close();
    }
  });

  it('refuses extra properties with 422', async () => {
    const r = await svc.client.call.POST('/api/token/pair', { body: { phone: DEMO_CUSTOMER.phone, password: '1357', remember: true } });
    expect(r.status).toBe(422);
  });
});

describe('refreshToken', () => {
  it('gives a disabled account no new pair', async () => {
    const c = await signInCustomer(svc);
    await svc.deps.db.updateTable('customers').set({ is_disabled: true }).where('id', '=', c.customerId).execute();
    const r = await refresh(c.refresh);
    expect(r.status).toBe(401);
  });

  it('rotates: the new pair works and the old refresh token is used up', async () => {
    const c = await signInCustomer(svc);
    const r = await refresh(c.refresh);
    expect(r.status).toBe(200);
    expect(r.body.refresh).not.toBe(c.refresh);
    expect((await me(r.body.access)).status).toBe(200);
    const again = await refresh(r.body.refresh);
    expect(again.status).toBe(200);
  });

  it('revokes the whole family when a rotated refresh token is presented again', async () => {
    const c = await signInCustomer(svc);
    const first = await refresh(c.refresh);
    const rotated = await refresh(first.body.refresh);
    // c.refresh was exchanged two rotations ago: no retry explains it.
    const reuse = await refresh(c.refresh);
    expect(reuse.status).toBe(401);
    expect(reuse.body.code).toBe('REFRESH_TOKEN_REUSED');
    // The family is gone: its newest refresh token and its access tokens no longer work.
    expect((await refresh(rotated.body.refresh)).status).toBe(401);
    expect((await me(rotated.body.access)).status).toBe(401);
    expect((await me(c.access)).status).toBe(401);
  });

  it('answers a retry of the last exchange within 30 s with the current token, and keeps the user signed in', async () => {
    const c = await signInCustomer(svc);
    const lost = await refresh(c.refresh); // the app never saw this answer
    const retry = await refresh(c.refresh);
    expect(retry.status).toBe(200);
    // Both answers are good: each access token works, and the refresh tokens are one token.
    expect((await me(lost.body.access)).status).toBe(200);
    expect((await me(retry.body.access)).status).toBe(200);
    const next = await refresh(retry.body.refresh);
    expect(next.status).toBe(200);
    expect((await me(next.body.access)).status).toBe(200);
  });

  it('treats the last exchanged token as reuse once 30 s have passed', async () => {
    const c = await signInCustomer(svc);
    const rotated = await refresh(c.refresh);
    await svc.deps.db
      .updateTable('auth_sessions')
      .set({ rotated_at: new Date(Date.now() - 31_000) })
      .where('customer_id', '=', c.customerId)
      .execute();
    const late = await refresh(c.refresh);
    expect([late.status, late.body.code]).toEqual([401, 'REFRESH_TOKEN_REUSED']);
    expect((await me(rotated.body.access)).status).toBe(401);
  });

  it('lets two refreshes sent at once with one token both succeed, and either answer carry on', async () => {
    const c = await signInCustomer(svc);
    const results = await Promise.all([refresh(c.refresh), refresh(c.refresh)]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    for (const r of results) expect((await me(r.body.access)).status).toBe(200);
    const [kept, other] = results;
    expect((await refresh(kept.body.refresh)).status).toBe(200);
    // The other answer's refresh token was the same token, now the one just exchanged: a retry.
    expect((await refresh(other.body.refresh)).status).toBe(200);
  });

  it('answers 401 TOKEN_INVALID for access, picker and garbage tokens', async () => {
    const c = await signInCustomer(svc);
    const p = await signInPicker(svc);
    for (const token of [c.access, p.refresh, 'garbage', tokensFor(svc.config).sign('customer_refresh')]) {
      const r = await refresh(token);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('TOKEN_INVALID');
    }
  });
});

describe('verifyToken', () => {
  it('answers 200 {} for a valid access or current refresh token', async () => {
    const c = await signInCustomer(svc);
    expect(await verify(c.access)).toMatchObject({ status: 200, body: {} });
    expect((await verify(c.refresh)).status).toBe(200);
  });

  it('answers 401 for rotated, revoked, picker, recovery and malformed tokens', async () => {
    const c = await signInCustomer(svc);
    await refresh(c.refresh);
    const p = await signInPicker(svc);
    const t = tokensFor(svc.config);
    for (const token of [c.refresh, p.access, t.sign('recovery', c.customerId), 'x.y.z', t.sign('customer_access')]) {
      const r = await verify(token);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('TOKEN_INVALID');
    }
  });
});

describe('PIN recovery', () => {
  async function recoveryToken(phone: string): Promise<string> {
    expect((await svc.client.call.POST('/api/auth/otp/update-pin/send', { body: { phone } })).status).toBe(200);
    const code = (await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone, purpose: 'update_pin' } } })).body.code;
    const r = await svc.client.call.POST('/api/auth/otp/update-pin/verify', { body: { phone, code } });
    expect(r.status).toBe(200);
    expect(r.body.phone).toBe(phone);
    return r.body.token;
  }
  const updatePin = (token: string, password: string, repeat = password) =>
    svc.client.call.PATCH('/api/auth/recovery/update-pin', {
      headers: { 'x-recovery-key': token },
      body: { password, password_repeat: repeat },
    });

  it('sets a PIN, ends the other sessions and signs in', async () => {
    const c = await signInCustomer(svc, randomTestPhone());
    const token = await recoveryToken(c.phone);
    expect((await updatePin(token, '2580', '2581')).body.code).toBe('PIN_MISMATCH');
    expect((await updatePin(token, '1234')).body.code).toBe('PIN_TOO_WEAK');
    expect((await updatePin(token, '7777')).body.code).toBe('PIN_TOO_WEAK');
    const ok = await updatePin(token, '2580');
    expect(ok.status).toBe(200);
    expect(ok.body.phone).toBe(c.phone);
    expect((await me(ok.body.access)).status).toBe(200);
    expect((await me(c.access)).status).toBe(401);
    // Single use.
    expect((await updatePin(token, '3690')).status).toBe(401);
    // The new PIN signs in.
    expect((await pair(c.phone, '2580')).status).toBe(200);
  });

  it('lifts the wrong-PIN lockout: the new PIN signs in at once', async () => {
    const c = await signInCustomer(svc, randomTestPhone());
    for (let i = 0; i < 5; i++) expect((await pair(c.phone, '2468')).status).toBe(401);
    expect((await pair(c.phone, '2468')).body.code).toBe('LOGIN_RATE_LIMITED');
    expect((await updatePin(await recoveryToken(c.phone), '2580')).status).toBe(200);
    expect((await pair(c.phone, '2580')).status).toBe(200);
  });

  it('answers the same for a phone without an account and never delivers its code', async () => {
    const phone = '+79161234567';
    const r = await svc.client.call.POST('/api/auth/otp/update-pin/send', { body: { phone } });
    expect(r.status).toBe(200);
    const row = await svc.deps.db.selectFrom('otp_codes').selectAll().where('phone', '=', phone).executeTakeFirstOrThrow();
    expect(row.delivered).toBe(false);
  });

  it('refuses tokens that are not a live recovery token', async () => {
    const c = await signInCustomer(svc, randomTestPhone());
    const t = tokensFor(svc.config);
    for (const token of [c.access, c.refresh, t.sign('recovery', c.customerId), 'garbage']) {
      const r = await updatePin(token, '2580');
      expect([r.status, r.body.code]).toEqual([401, 'RECOVERY_TOKEN_INVALID']);
    }
    // A recovery token is no access token.
    const token = await recoveryToken(c.phone);
    expect((await me(token)).status).toBe(401);
    // Expired.
    await svc.deps.db
      .updateTable('recovery_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('customer_id', '=', c.customerId)
      .execute();
    expect((await updatePin(token, '2580')).body.code).toBe('RECOVERY_TOKEN_INVALID');
  });

  it('refuses its genuine token re-signed with other claims, and leaves the recovery unused', async () => {
    const c = await signInCustomer(svc, randomTestPhone());
    const other = await signInCustomer(svc, randomTestPhone());
    expect((await updatePin(await recoveryToken(c.phone), '2580')).status).toBe(200);
    const genuine = await recoveryToken(c.phone);
    const claims = jwt.decode(genuine) as jwt.JwtPayload & { iat: number; exp: number };
    const ttl = svc.config.jwt.recoveryTtlSeconds;
    // Each is signed with the service's key by jsonwebtoken (which keeps the `iat` it is given) and
    // has the times of a token just issued, so only the check against the recovery record refuses it.
    const resign = (payload: object) => jwt.sign(payload, svc.config.jwt.secret, { algorithm: 'HS256' });
    const forged: Record<string, Record<string, unknown>> = {
      'another session': { ...claims, sid: randomUUID() },
      'its id in capitals': { ...claims, jti: claims.jti!.toUpperCase(), sid: claims.jti!.toUpperCase() },
      'an id that is no UUID': { ...claims, jti: 'not-a-uuid', sid: 'not-a-uuid' },
      'another customer': { ...claims, sub: other.customerId },
      'issued before its record': { ...claims, iat: claims.iat - 120, exp: claims.iat - 120 + ttl },
      'outliving its record': { ...claims, iat: claims.iat + 50, exp: claims.iat + 50 + ttl + 50 },
    };
    for (const [name, payload] of Object.entries(forged)) {
      const r = await updatePin(resign(payload), '3690');
      expect([r.status, r.body.code], name).toEqual([401, 'RECOVERY_TOKEN_INVALID']);
    }
    // Nothing changed: the record is unused, the old PIN still signs in, the new one does not.
    const record = await svc.deps.db.selectFrom('recovery_tokens').selectAll().where('jti', '=', claims.jti!).executeTakeFirstOrThrow();
    expect(record.used_at).toBeNull();
    expect((await pair(c.phone, '2580')).status).toBe(200);
    expect((await pair(c.phone, '3690')).status).toBe(401);
    // The genuine token still works.
    expect((await updatePin(genuine, '3690')).status).toBe(200);
    expect((await pair(c.phone, '3690')).status).toBe(200);
  });

  it('retires an older recovery token when a new one is issued', async () => {
    const c = await signInCustomer(svc, randomTestPhone());
    const first = await recoveryToken(c.phone);
    const second = await recoveryToken(c.phone);
    expect((await updatePin(first, '2580')).status).toBe(401);
    expect((await updatePin(second, '2580')).status).toBe(200);
  });

  it('answers 401 without the X-Recovery-Key header', async () => {
    const r = await svc.client.invalid('PATCH', '/api/auth/recovery/update-pin', { body: { password: '2580', password_repeat: '2580' } });
    expect([r.status, r.body.code]).toEqual([401, 'RECOVERY_TOKEN_INVALID']);
  });
});
