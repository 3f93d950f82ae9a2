// Picker sign-in: POST /api/picker/auth/login, /refresh, GET /api/picker/auth/me.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PICKERS } from '../../db/seed/accounts.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { signInCustomer } from '../support/accounts.js';
import { command, createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const login = (l: string, password: string) => svc.client.call.POST('/api/picker/auth/login', { body: { login: l, password } });
const refresh = (token: string) => svc.client.call.POST('/api/picker/auth/refresh', { body: { refresh: token } });
const me = (access: string) => svc.client.call.GET('/api/picker/auth/me', { headers: { authorization: `Bearer ${access}` } });

describe('loginPicker', () => {
  it('signs in the demo picker with its stores', async () => {
    const p = DEMO_PICKERS[0];
    const r = await login(p!.login, p!.password);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ token_type: 'Bearer', access_expires_in: 900, refresh_expires_in: 2592000 });
    expect(r.body.picker).toMatchObject({
      login: p!.login,
      display_name: p!.display_name,
      is_active: true,
      default_store_id: DEMO_STORES[0]!.id,
      active_session_id: null,
    });
    expect(r.body.picker.stores.map((s: { id: string }) => s.id).sort()).toEqual([...p!.stores].sort());
  });

  it('compares the login case-insensitively after trimming spaces, as PickerLoginInput says', async () => {
    const p = DEMO_PICKERS[0];
    for (const typed of [p!.login.toUpperCase(), p!.login[0]!.toUpperCase() + p!.login.slice(1), `${p!.login} `, ` ${p!.login}\t`]) {
      const r = await login(typed, p!.password);
      expect([typed, r.status]).toEqual([typed, 200]);
      expect(r.body.picker.login).toBe(p!.login);
    }
  });

  it('answers 401 INVALID_CREDENTIALS for a wrong password or an unknown login', async () => {
    for (const [l, pw] of [
      [DEMO_PICKERS[1]!.login, 'wrong-password'],
      ['nobody', 'whatever'],
    ]) {
      const r = await login(l!, pw!);
      expect(r.status).toBe(401);
      expect(r.body.code).toBe('INVALID_CREDENTIALS');
    }
  });

  it('answers 403 PICKER_INACTIVE for a disabled picker after a correct password', async () => {
    const p = DEMO_PICKERS[1];
    await svc.deps.db.updateTable('pickers').set({ is_active: false }).where('login', '=', p!.login).execute();
    try {
      const r = await login(p!.login, p!.password);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('PICKER_INACTIVE');
    } finally {
      await svc.deps.db.updateTable('pickers').set({ is_active: true }).where('login', '=', p!.login).execute();
    }
  });

  it('locks a login after 10 failures', async () => {
    const locked = await startTestService();
    try {
      const p = DEMO_PICKERS[0];
      // Typed differently, still one login: its failures count together.
      const typed = (i: number) => (i % 2 ? p!.login.toUpperCase() : `${p!.login}${' '.repeat(i)}`);
      for (let i = 0; i < 10; i++)
        expect((await locked.client.call.POST('/api/picker/auth/login', { body: { login: typed(i), password: 'bad' } })).status).toBe(401);
      const r = await locked.client.call.POST('/api/picker/auth/login', { body: { login: p!.login, password: p!.password } });
      expect(r.status).toBe(429);
      expect(r.body.code).toBe('TOO_MANY_ATTEMPTS');
      expect(r.headers.get('retry-after')).toBeTruthy();
    } finally {
      await locked.close();
    }
  });

  it('stops an address after 50 failed attempts, whatever the logins', async () => {
    const locked = await startTestService();
    try {
      const attempt = (l: string, password: string) => locked.client.call.POST('/api/picker/auth/login', { body: { login: l, password } });
      for (let i = 0; i < 50; i++) expect((await attempt(`nobody-${i}`, 'bad')).status).toBe(401);
      const r = await attempt(DEMO_PICKERS[1]!.login, DEMO_PICKERS[1]!.password);
      expect([r.status, r.body.code]).toEqual([429, 'TOO_MANY_ATTEMPTS']);
      expect(r.headers.get('retry-after')).toBeTruthy();
    } finally {
      await locked.close();
    }
  });

  it('answers 422 for a body without password', async () => {
    expect((await svc.client.invalid('POST', '/api/picker/auth/login', { body: { login: 'picker1' } })).status).toBe(422);
  });
});

describe('refreshPickerToken', () => {
  it('rotates, answers a retry of the last exchange with the current token, and revokes the family on reuse', async () => {
    const first = await login(DEMO_PICKERS[0]!.login, DEMO_PICKERS[0]!.password);
    const lost = await refresh(first.body.refresh);
    expect(lost.status).toBe(200);
    // The answer was lost on the shop floor's network: the app retries with the token it holds.
    const retried = await refresh(first.body.refresh);
    expect(retried.status).toBe(200);
    expect((await me(retried.body.access)).status).toBe(200);
    const rotated = await refresh(retried.body.refresh);
    expect(rotated.status).toBe(200);
    expect((await me(rotated.body.access)).status).toBe(200);
    // first.body.refresh is now two exchanges old: reuse.
    const reuse = await refresh(first.body.refresh);
    expect(reuse.status).toBe(401);
    expect(reuse.body.code).toBe('REFRESH_TOKEN_REUSED');
    expect((await me(rotated.body.access)).status).toBe(401);
  });

  it('stops a token family refreshing more than 30 times a minute with 429 TOO_MANY_REQUESTS', async () => {
    let token = (await login(DEMO_PICKERS[1]!.login, DEMO_PICKERS[1]!.password)).body.refresh;
    for (let i = 0; i < 30; i++) {
      const r = await refresh(token);
      expect(r.status).toBe(200);
      token = r.body.refresh;
    }
    const stopped = await refresh(token);
    expect([stopped.status, stopped.body.code]).toEqual([429, 'TOO_MANY_REQUESTS']);
    expect(stopped.headers.get('retry-after')).toBeTruthy();
    // Another session is not affected.
    const other = await login(DEMO_PICKERS[0]!.login, DEMO_PICKERS[0]!.password);
    expect((await refresh(other.body.refresh)).status).toBe(200);
  });

  it('refuses a customer refresh token', async () => {
    const c = await signInCustomer(svc);
    const r = await refresh(c.refresh);
    expect(r.status).toBe(401);
    expect(r.body.code).toBe('INVALID_REFRESH_TOKEN');
  });
});

describe('getPickerMe', () => {
  it('returns the signed-in picker, in Russian on request', async () => {
    const first = await login(DEMO_PICKERS[0]!.login, DEMO_PICKERS[0]!.password);
    const r = await svc.client.call.GET('/api/picker/auth/me', {
      headers: { authorization: `Bearer ${first.body.access}`, 'accept-language': 'ru' },
    });
    expect(r.status).toBe(200);
    expect(r.body.stores.map((s: { name: string }) => s.name)).toContain(DEMO_STORES[0]!.name_ru);
  });

  it('answers 401 to a customer token', async () => {
    const c = await signInCustomer(svc);
    expect((await me(c.access)).status).toBe(401);
  });
});

describe('the demo pickers', () => {
  // Last in the file: the demo picker keeps the session it opens here.
  it('share a store, so one of them meets ORDER_BUSY on an order the other is picking', async () => {
    const [one, two] = await Promise.all(DEMO_PICKERS.map((p) => login(p.login, p.password)));
    const storesOf = (r: typeof one) => r!.body.picker.stores.map((s: { id: string }) => s.id) as string[];
    const shared = storesOf(one).filter((id) => storesOf(two).includes(id));
    expect(shared.length).toBeGreaterThan(0);
    const [line] = await stockedProducts(svc, { storeId: shared[0], weight: false, count: 1 });
    const order = await createConfirmedOrder(svc, { storeId: shared[0], lines: [{ inventoryId: line!.inventoryId, quantity: '1' }] });
    const start = (r: typeof one) =>
      svc.client.call.POST('/api/picker/orders/{order_id}/start', {
        params: { path: { order_id: order.orderId } },
        headers: command({ authorization: `Bearer ${r!.body.access}` }),
      });
    expect((await start(one)).status).toBe(200);
    const busy = await start(two);
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe('ORDER_BUSY');
  });
});
