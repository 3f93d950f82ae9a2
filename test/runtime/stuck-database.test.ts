// A stuck database is a quick 503, for the phones, while the background jobs wait as long as a job
// may: requests get the request pool's short lock timeout and pool wait (a 503 with Retry-After
// within 2 s, whatever holds the lock and however many requests queue behind it), jobs their own
// pool with longer limits.
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
let blocker: pg.Client;
beforeAll(async () => {
  // The service's own defaults: the test is about them.
  svc = await startTestService();
  blocker = new pg.Client(svc.database.url);
  await blocker.connect();
});
afterAll(async () => {
  await blocker?.end();
  await svc?.close();
});

describe('a table locked by someone else', () => {
  it('answers every request 503 DATABASE_UNAVAILABLE with Retry-After within 2 s, even twice as many as the pool has connections', async () => {
    const customers = await Promise.all(Array.from({ length: 4 }, () => signInCustomer(svc)));
    const requests = 2 * svc.config.dbPoolMax;
    // A running instance's pool is warm: open its connections first, so the figure is the waits alone.
    await Promise.all(
      Array.from({ length: requests }, (_, i) =>
        svc.client.call.GET('/api/accounts/me/', { headers: customers[i % customers.length]!.auth }),
      ),
    );
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE auth_sessions IN ACCESS EXCLUSIVE MODE');
    let answers: { status: number; code: string; retryAfter: number; ms: number }[];
    try {
      answers = await Promise.all(
        Array.from({ length: requests }, async (_, i) => {
          const started = performance.now();
          const r = await svc.client.call.GET('/api/accounts/me/', { headers: customers[i % customers.length]!.auth });
          return {
            status: r.status,
            code: r.body.code as string,
            retryAfter: Number(r.headers.get('retry-after')),
            ms: performance.now() - started,
          };
        }),
      );
    } finally {
      await blocker.query('ROLLBACK');
    }
    for (const a of answers) expect(a).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    for (const a of answers) expect(a.retryAfter).toBeGreaterThan(0);
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(2000);
    expect((await svc.client.call.GET('/api/accounts/me/', { headers: customers[0]!.auth })).status).toBe(200);
  });

  it('lets a background job wait for the lock as long as a job may, on connections of its own', async () => {
    const settings = await sql<{ name: string; setting: string }>`
      SELECT name, setting FROM pg_settings WHERE name IN ('lock_timeout', 'statement_timeout') ORDER BY name`.execute(svc.jobsDatabase.db);
    expect(settings.rows).toEqual([
      { name: 'lock_timeout', setting: String(svc.config.dbJobLimits.lockTimeoutMs) },
      { name: 'statement_timeout', setting: String(svc.config.dbJobLimits.statementTimeoutMs) },
    ]);
    expect(svc.config.dbJobLimits.lockTimeoutMs).toBeGreaterThan(svc.config.dbLimits.lockTimeoutMs);

    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE auth_sessions IN ACCESS EXCLUSIVE MODE');
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        void blocker.query('ROLLBACK').then(() => resolve());
      }, 2 * svc.config.dbLimits.lockTimeoutMs),
    );
    const started = performance.now();
    // What housekeeping does to the table: it waits past a request's lock timeout, and succeeds.
    const deleted = await svc.jobsDatabase.db.deleteFrom('auth_sessions').where('expires_at', '<', new Date(0)).executeTakeFirst();
    await released;
    expect(Number(deleted.numDeletedRows)).toBe(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * svc.config.dbLimits.lockTimeoutMs - 50);
  });
});

describe('a phone whose code is being sent', () => {
  it('makes a second send wait for the SMS (longer than a request may wait for other locks) and answers it by the rules, not 503', async () => {
    // An SMS gateway that takes three times a request's lock timeout to answer.
    const smsMs = 3 * svc.config.dbLimits.lockTimeoutMs;
    const slow = await startTestService({
      providers: { sms: { send: () => new Promise((resolve) => setTimeout(resolve, smsMs)) } },
    });
    try {
      // Not a test phone: its code goes out by SMS.
      const phone = `+7916${String(Date.now()).slice(-7)}`;
      const [first, second] = await Promise.all([
        slow.client.call.POST('/api/auth/otp/send', { body: { phone } }),
        new Promise((r) => setTimeout(r, 50)).then(() => slow.client.call.POST('/api/auth/otp/send', { body: { phone } })),
      ]);
      // Under load the later request can reach the row first; either way exactly one code is sent.
      const [sent, refused] = first.status === 200 ? [first, second] : [second, first];
      expect(sent.status).toBe(200);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('OTP_RESEND_COOLDOWN');
    } finally {
      await slow.close();
    }
  });
});
