// Issue 19, findings 1 and 8: a session check that cannot reach the database is no verdict on the
// token. While the pool cannot hand out a connection, or PostgreSQL does not answer within the
// connection's time limits (a lock held, a statement too slow), a request with a valid token
// answers 503 DATABASE_UNAVAILABLE with Retry-After - never 401, which signs the user out - and
// the sockets close with 1013 (try again later), never 1008.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

const STORE = '83700fcf-3c4c-5665-ac4f-8901ac83cc64'; // a demo store

function closeCode(ws: WebSocket): Promise<number> {
  return new Promise((resolve) => ws.on('close', (code) => resolve(code)));
}

/** The answers of the secured operations of each kind of security, with a valid token. */
async function securedAnswers(svc: TestService, customer: { authorization: string }, picker: { authorization: string }) {
  return {
    // CustomerJWTAuth
    getProfile: await svc.client.call.GET('/api/accounts/me/', { headers: customer }),
    // PickerJWTAuth
    getPickerMe: await svc.client.call.GET('/api/picker/auth/me', { headers: picker }),
    // Optional sign-in (anonymous allowed, a token sent must be valid)
    listProducts: await svc.client.call.GET('/api/catalog/products/', {
      params: { query: { page_size: 1 } },
      headers: { ...customer, 'x-store-id': STORE },
    }),
  };
}

function expectAllUnavailable(answers: Awaited<ReturnType<typeof securedAnswers>>) {
  for (const [op, r] of Object.entries(answers)) {
    expect(r.status, op).toBe(503);
    expect(r.body.code, op).toBe('DATABASE_UNAVAILABLE');
    expect(Number(r.headers.get('retry-after')), op).toBeGreaterThan(0);
    expect(r.headers.get('www-authenticate'), op).toBeNull();
  }
}

describe('the pool cannot hand out a connection in time', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { DB_POOL_TIMEOUT_MS: '300' } });
  });
  afterAll(() => svc?.close());

  it('answers 503 DATABASE_UNAVAILABLE, never 401, and the sockets close with 1013; all is well once a connection is free', async () => {
    const customer = await signInCustomer(svc);
    const picker = await signInPicker(svc);
    const wsBase = svc.url.replace('http', 'ws');
    // Every connection of the pool taken (as by a load the database is too slow for).
    const held = await Promise.all(
      Array.from({ length: (svc.database.pool as unknown as { options: { max: number } }).options.max }, () => svc.database.pool.connect()),
    );
    try {
      expectAllUnavailable(await securedAnswers(svc, customer.auth, picker.auth));
      const tracking = new WebSocket(`${wsBase}/ws/orders/tracking/`, { headers: customer.auth });
      const pickerSocket = new WebSocket(`${wsBase}/ws/picker/`, { headers: picker.auth });
      expect(await Promise.all([closeCode(tracking), closeCode(pickerSocket)])).toEqual([1013, 1013]);
    } finally {
      for (const client of held) client.release();
    }
    const after = await securedAnswers(svc, customer.auth, picker.auth);
    expect(Object.values(after).map((r) => r.status)).toEqual([200, 200, 200]);
  });
});

describe('the connection time limits', () => {
  let svc: TestService;
  let blocker: pg.Client;
  beforeAll(async () => {
    svc = await startTestService({
      env: { DB_LOCK_TIMEOUT_MS: '300', DB_STATEMENT_TIMEOUT_MS: '20000', DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '4000' },
    });
    blocker = new pg.Client(svc.database.url);
    await blocker.connect();
  });
  afterAll(async () => {
    await blocker?.end();
    await svc?.close();
  });

  it('are startup options of each connection (no session SET, so PgBouncer in transaction mode keeps them)', async () => {
    const client = await svc.database.pool.connect();
    try {
      const { rows } = await client.query(
        `SELECT name, setting, source FROM pg_settings WHERE name IN ('statement_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout') ORDER BY name`,
      );
      expect(rows).toEqual([
        { name: 'idle_in_transaction_session_timeout', setting: '4000', source: 'client' },
        { name: 'lock_timeout', setting: '300', source: 'client' },
        { name: 'statement_timeout', setting: '20000', source: 'client' },
      ]);
    } finally {
      client.release();
    }
  });

  it('a held lock answers 503 within lock_timeout instead of holding the request (and never 401)', async () => {
    const customer = await signInCustomer(svc);
    const picker = await signInPicker(svc);
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE auth_sessions IN ACCESS EXCLUSIVE MODE');
    try {
      const started = Date.now();
      expectAllUnavailable(await securedAnswers(svc, customer.auth, picker.auth));
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await blocker.query('ROLLBACK');
    }
    expect((await svc.client.call.GET('/api/accounts/me/', { headers: customer.auth })).status).toBe(200);
  });
});

describe('statement_timeout', () => {
  let svc: TestService;
  let blocker: pg.Client;
  beforeAll(async () => {
    svc = await startTestService({ env: { DB_LOCK_TIMEOUT_MS: '0', DB_STATEMENT_TIMEOUT_MS: '300' } });
    blocker = new pg.Client(svc.database.url);
    await blocker.connect();
  });
  afterAll(async () => {
    await blocker?.end();
    await svc?.close();
  });

  it('a statement running past it answers 503, never 401', async () => {
    const customer = await signInCustomer(svc);
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE auth_sessions IN ACCESS EXCLUSIVE MODE');
    try {
      const r = await svc.client.call.GET('/api/accounts/me/', { headers: customer.auth });
      expect(r.status).toBe(503);
      expect(r.body.code).toBe('DATABASE_UNAVAILABLE');
    } finally {
      await blocker.query('ROLLBACK');
    }
  });
});
