// One-time codes: POST /api/auth/otp/send, /confirm, /verify and the QA read of a test phone's code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPhone, randomTestPhone } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
/** The same service with the resend cooldown off, for tests that send several codes. */
let fast: TestService;
beforeAll(async () => {
  [svc, fast] = await Promise.all([startTestService(), startTestService({ env: { OTP_RESEND_COOLDOWN_SECONDS: '0' } })]);
});
afterAll(async () => {
  await Promise.all([svc?.close(), fast?.close()]);
});

const send = (s: TestService, phone: string) => s.client.call.POST('/api/auth/otp/send', { body: { phone } });
const lastCode = async (s: TestService, phone: string, purpose: 'login' | 'update_pin' = 'login') => {
  const r = await s.client.call.GET('/api/qa/otp/last', { params: { query: { phone, purpose } } });
  expect(r.status).toBe(200);
  return r.body as { code: string; state: string; attempts_left: number; purpose: string };
};
const confirm = (s: TestService, phone: string, code: string) => s.client.call.POST('/api/auth/otp/confirm', { body: { phone, code } });

describe('sendOtp', () => {
  it('sends a 6-digit code, stored only as a hash', async () => {
    const phone = randomTestPhone();
    const { data, response } = await svc.client.api.POST('/api/auth/otp/send', { body: { phone } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ message: 'Code sent', data: { resend_after_seconds: 60, expires_in_seconds: 300, code_length: 6 } });
    const { code, state, attempts_left } = await lastCode(svc, phone);
    expect(code).toMatch(/^[0-9]{6}$/);
    expect(state).toBe('active');
    expect(attempts_left).toBe(5);
    const row = await svc.deps.db.selectFrom('otp_codes').selectAll().where('phone', '=', phone).executeTakeFirstOrThrow();
    expect(row.code_hash).not.toContain(code);
  });

  it('keeps no readable code for a phone that is not a test phone', async () => {
    const phone = randomPhone();
    expect((await send(svc, phone)).status).toBe(200);
    const row = await svc.deps.db.selectFrom('otp_codes').selectAll().where('phone', '=', phone).executeTakeFirstOrThrow();
    expect(row.plain_code).toBeNull();
    expect(row.delivered).toBe(true);
    expect((await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone } } })).status).toBe(404);
  });

  it('answers the same whether or not the phone has an account', async () => {
    const registered = await send(svc, '+79990000001'); // the demo customer
    const unknown = await send(svc, randomTestPhone());
    expect(registered.status).toBe(200);
    expect(registered.body).toEqual(unknown.body);
  });

  it('refuses a resend within the cooldown with 429 and Retry-After', async () => {
    const phone = randomTestPhone();
    expect((await send(svc, phone)).status).toBe(200);
    const again = await send(svc, phone);
    expect(again.status).toBe(429);
    expect(again.body.code).toBe('OTP_RESEND_COOLDOWN');
    const retryAfter = Number(again.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    // The IETF RateLimit fields name the limit (one code per 60 s) and when it frees, as Retry-After.
    expect(again.headers.get('ratelimit-policy')).toBe('"otp-resend";q=1;w=60');
    expect(again.headers.get('ratelimit')).toBe(`"otp-resend";r=0;t=${retryAfter}`);
    expect(again.body.retry_after_seconds).toBe(retryAfter);
  });

  it('allows at most 5 sends per phone per hour', async () => {
    const phone = randomTestPhone();
    for (let i = 0; i < 5; i++) expect((await send(fast, phone)).status).toBe(200);
    const sixth = await send(fast, phone);
    expect(sixth.status).toBe(429);
    expect(sixth.body.code).toBe('OTP_SEND_LIMIT');
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(sixth.headers.get('ratelimit-policy')).toBe('"otp-hourly";q=5;w=3600');
    expect(sixth.headers.get('ratelimit')).toBe(`"otp-hourly";r=0;t=${sixth.headers.get('retry-after')}`);
    // Both purposes count together.
    expect((await fast.client.call.POST('/api/auth/otp/update-pin/send', { body: { phone } })).body.code).toBe('OTP_SEND_LIMIT');
  });

  it('rejects a phone outside the pattern with 422', async () => {
    for (const phone of ['79990000001', '+0123456789', '+7999', '+7999000000000000']) {
      const r = await send(svc, phone);
      expect(r.status, phone).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', 'phone']);
    }
  });

  it('serialises concurrent sends for one phone: one code, the rest hit the cooldown', async () => {
    const phone = randomTestPhone();
    const results = await Promise.all(Array.from({ length: 5 }, () => send(svc, phone)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 429)).toHaveLength(4);
    const rows = await svc.deps.db.selectFrom('otp_codes').select('id').where('phone', '=', phone).execute();
    expect(rows).toHaveLength(1);
  });
});

describe('confirmOtp', () => {
  it('signs in a new phone: creates the customer and issues a working token pair', async () => {
    const phone = randomTestPhone();
    await send(svc, phone);
    const { code } = await lastCode(svc, phone);
    const r = await confirm(svc, phone, code);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ phone, is_new_user: true, has_pin: false });
    expect(r.headers.get('cache-control')).toBe('no-store');
    const me = await svc.client.call.GET('/api/accounts/me/', { headers: { authorization: `Bearer ${r.body.access}` } });
    expect(me.status).toBe(200);
    expect(me.body.phone).toBe(phone);
    // The code is single use.
    expect((await confirm(svc, phone, code)).body.code).toBe('OTP_EXPIRED');
    expect((await lastCode(svc, phone)).state).toBe('used');
  });

  it('signs in an existing customer as not new', async () => {
    const phone = '+79990000001';
    await send(fast, phone);
    const r = await confirm(fast, phone, (await lastCode(fast, phone)).code);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ is_new_user: false, has_pin: true });
  });

  it('counts wrong codes and burns the code at the fifth', async () => {
    const phone = randomTestPhone();
    await send(svc, phone);
    const { code } = await lastCode(svc, phone);
    const wrong = code === '000000' ? '111111' : '000000';
    for (const left of [4, 3, 2, 1]) {
      const r = await confirm(svc, phone, wrong);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ code: 'OTP_INVALID', attempts_left: left });
    }
    expect((await confirm(svc, phone, wrong)).body.code).toBe('OTP_ATTEMPTS_EXCEEDED');
    // Even the right code no longer works.
    expect((await confirm(svc, phone, code)).body).toMatchObject({ code: 'OTP_ATTEMPTS_EXCEEDED', attempts_left: 0 });
    expect((await lastCode(svc, phone)).state).toBe('attempts_exceeded');
  });

  it('accepts only the latest code of a phone', async () => {
    const phone = randomTestPhone();
    await send(fast, phone);
    const first = (await lastCode(fast, phone)).code;
    await send(fast, phone);
    const second = (await lastCode(fast, phone)).code;
    if (first !== second) expect((await confirm(fast, phone, first)).status).toBe(422);
    expect((await confirm(fast, phone, second)).status).toBe(200);
  });

  it('answers OTP_INVALID with attempts_left null when no sign-in code was sent to the phone', async () => {
    const phone = randomTestPhone();
    const none = await confirm(svc, phone, '123456');
    expect([none.status, none.body.code, none.body.attempts_left]).toEqual([422, 'OTP_INVALID', null]);
    // A recovery code is another purpose's: still no sign-in code.
    await svc.client.call.POST('/api/auth/otp/update-pin/send', { body: { phone } });
    const again = await confirm(svc, phone, '123456');
    expect([again.status, again.body.code, again.body.attempts_left]).toEqual([422, 'OTP_INVALID', null]);
  });

  it('refuses an expired code', async () => {
    const phone = randomTestPhone();
    await send(svc, phone);
    const { code } = await lastCode(svc, phone);
    await svc.deps.db
      .updateTable('otp_codes')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('phone', '=', phone)
      .execute();
    const r = await confirm(svc, phone, code);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('OTP_EXPIRED');
  });

  it('refuses a disabled account with 403 after a correct code, and uses the code up', async () => {
    const phone = randomTestPhone();
    await send(fast, phone);
    await confirm(fast, phone, (await lastCode(fast, phone)).code);
    const disabled = (is_disabled: boolean) =>
      fast.deps.db.updateTable('customers').set({ is_disabled }).where('phone', '=', phone).execute();
    await disabled(true);
    await send(fast, phone);
    const code = (await lastCode(fast, phone)).code;
    const r = await confirm(fast, phone, code);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('ACCOUNT_DISABLED');
    // Re-enabled by support: the code that met the disabled account no longer signs in.
    await disabled(false);
    expect((await confirm(fast, phone, code)).body.code).toBe('OTP_EXPIRED');
  });

  it('rejects a malformed code with 422 without costing an attempt', async () => {
    const phone = randomTestPhone();
    await send(svc, phone);
    const r = await confirm(svc, phone, '12ab');
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('VALIDATION_ERROR');
    expect((await lastCode(svc, phone)).attempts_left).toBe(5);
  });
});

describe('verifyOtp', () => {
  it('checks a code without using it up and without issuing tokens', async () => {
    const phone = randomTestPhone();
    await send(svc, phone);
    const { code } = await lastCode(svc, phone);
    const r = await svc.client.call.POST('/api/auth/otp/verify', { body: { phone, code } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ phone, verified: true, is_new_user: true });
    expect(r.body).not.toHaveProperty('access');
    expect((await confirm(svc, phone, code)).status).toBe(200);
  });

  it('answers 422 OTP_INVALID for a wrong code', async () => {
    const phone = randomTestPhone();
    await send(svc, phone);
    const { code } = await lastCode(svc, phone);
    const r = await svc.client.call.POST('/api/auth/otp/verify', { body: { phone, code: code === '999999' ? '999998' : '999999' } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: 'OTP_INVALID', attempts_left: 4 });
  });
});

describe('getLastOtpCode (QA)', () => {
  it('answers 404 for a phone that is not a configured test phone, or that has no code', async () => {
    expect((await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone: randomPhone() } } })).status).toBe(404);
    expect((await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone: randomTestPhone() } } })).status).toBe(404);
  });

  it('answers 422 for a missing or malformed phone', async () => {
    expect((await svc.client.invalid('GET', '/api/qa/otp/last')).status).toBe(422);
    expect((await svc.client.invalid('GET', '/api/qa/otp/last?phone=123&purpose=login')).status).toBe(422);
    expect((await svc.client.invalid('GET', `/api/qa/otp/last?phone=%2B79990001234&purpose=other`)).status).toBe(422);
  });
});

describe('per-client limit', () => {
  it('admits exactly the limit of a burst from one address and refuses the rest, none waiting out the pool (250 parallel verifications, limit 120, 4 connections)', async () => {
    const burst = await startTestService({ env: { SIGN_IN_IP_REQUESTS_PER_MINUTE: '120', DB_POOL_MAX: '4' } });
    try {
      const answers = await Promise.all(
        Array.from({ length: 250 }, () =>
          burst.client.call.POST('/api/auth/otp/verify', { body: { phone: randomPhone(), code: '000000' } }),
        ),
      );
      const outcomes: Record<string, number> = {};
      for (const r of answers) outcomes[`${r.status} ${r.body.code}`] = (outcomes[`${r.status} ${r.body.code}`] ?? 0) + 1;
      expect(outcomes).toEqual({ '422 OTP_INVALID': 120, '429 RATE_LIMITED': 130 });
      const counted = await burst.deps.db
        .selectFrom('rate_events')
        .select((e) => e.fn.countAll<number>().as('n'))
        .where('subject', 'like', 'ip:verifyOtp:%')
        .executeTakeFirstOrThrow();
      expect(Number(counted.n)).toBe(120);
    } finally {
      await burst.close();
    }
  });

  it('answers 429 RATE_LIMITED past the per-minute budget of a client IP', async () => {
    const limited = await startTestService({ env: { SIGN_IN_IP_REQUESTS_PER_MINUTE: '3' } });
    try {
      for (let i = 0; i < 3; i++) expect((await send(limited, randomTestPhone())).status).toBe(200);
      const r = await send(limited, randomTestPhone());
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('ratelimit-policy')).toBe('"ip";q=3;w=60');
      expect(r.headers.get('ratelimit')).toBe(`"ip";r=0;t=${r.headers.get('retry-after')}`);
      expect(r.body.retry_after_seconds).toBe(Number(r.headers.get('retry-after')));
    } finally {
      await limited.close();
    }
  });
});
