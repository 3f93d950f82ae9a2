// A burst of sign-in attempts at one phone or login is checked one attempt at a time, and the
// attempts waiting their turn hold no database connection: the rest of the instance is served as
// usual meanwhile, and attempts beyond the few that may wait are refused at once with 429.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAITING_ATTEMPTS } from '../../services/limits.js';
import { randomTestPhone, signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  // Its own service: 60 sign-ins from one address stay under the per-minute budget.
  svc = await startTestService({ env: { SIGN_IN_IP_REQUESTS_PER_MINUTE: '1000' } });
});
afterAll(() => svc?.close());

describe('a burst of wrong PINs at one phone', () => {
  it('checks the first few one by one, refuses the rest at once, and starves nobody else of connections', async () => {
    const bystander = await signInCustomer(svc);
    const phone = randomTestPhone();
    const burst = 4 * svc.config.dbPoolMax;
    const [attempts, others] = await Promise.all([
      Promise.all(Array.from({ length: burst }, () => svc.client.call.POST('/api/token/pair', { body: { phone, password: '2468' } }))),
      Promise.all(
        Array.from({ length: svc.config.dbPoolMax }, () => svc.client.call.GET('/api/accounts/me/', { headers: bystander.auth })),
      ),
    ]);
    expect(others.map((r) => r.status)).toEqual(others.map(() => 200));
    // Five wrong PINs were checked and counted; every other attempt was refused.
    expect(attempts.filter((r) => r.status === 401)).toHaveLength(5);
    expect(attempts.filter((r) => r.status === 429)).toHaveLength(burst - 5);
    const atOnce = attempts.filter((r) => r.headers.get('ratelimit-policy')?.startsWith('"pin-at-once"'));
    // Attempts arrive over a few milliseconds and the queue frees as they finish, so a few more than
    // MAX_WAITING_ATTEMPTS get their turn (and meet the lockout); most are refused without one.
    expect(atOnce.length).toBeGreaterThan(burst / 2);
    expect(burst - atOnce.length).toBeGreaterThanOrEqual(MAX_WAITING_ATTEMPTS);
    for (const r of atOnce) {
      expect(r.body.code).toBe('LOGIN_RATE_LIMITED');
      expect(r.headers.get('retry-after')).toBe('1');
    }
  });
});
