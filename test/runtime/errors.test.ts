// The error model of the runtime (DESIGN.md §3), through the contract client: each answer is
// also checked against the spec (declared status, ErrorResponse body).
import { sql } from 'kysely';
import pg from 'pg';
import { connect } from '../../db/connection.js';
import { isDatabaseUnavailable } from '../../server/http/responses.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notImplemented } from '../../server/handler-types.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({
    handlers: {
      // A handler that fails the way a database bug would: the message carries SQL.
      getMapConfig: () => {
        throw new Error('syntax error at or near "SELEC" in SELECT secret FROM customers');
      },
      // Stands for an operation whose issue is still open, whichever that is when this runs.
      listPickupStores: notImplemented('a test of the 501 answer'),
      // A database that went away (restart, failover): the pool's real error, connection refused.
      getBanner: async () => {
        const gone = new pg.Pool({ connectionString: 'postgres://grocery@127.0.0.1:1/grocery', connectionTimeoutMillis: 500 });
        try {
          await gone.query('SELECT 1');
        } finally {
          await gone.end();
        }
        throw new Error('unreachable');
      },
    },
  });
});
afterAll(() => svc?.close());

describe('request errors', () => {
  it('answers 400 MALFORMED_JSON for a body that is not JSON', async () => {
    const r = await svc.client.invalid('POST', '/api/auth/otp/send', {
      body: '{"phone": "+7999',
      headers: { 'content-type': 'application/json' },
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('MALFORMED_JSON');
    expect(r.operationId).toBe('sendOtp');
  });

  it('answers 503 DATABASE_UNAVAILABLE with Retry-After when the database cannot be reached, which the app retries', async () => {
    const r = await svc.client.call.GET('/api/core/banners/');
    expect([r.status, r.body.code]).toEqual([503, 'DATABASE_UNAVAILABLE']);
    expect(r.headers.get('retry-after')).toBe('5');
  });

  it('survives the database ending a connection a transaction holds between two queries (a restart, a failover)', async () => {
    const handle = connect(svc.config.databaseUrl!, { max: 2 });
    try {
      const outcome = handle.db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        await sql`SELECT pg_terminate_backend(${rows[0]!.pid})`.execute(svc.deps.db);
        await new Promise((r) => setTimeout(r, 300)); // the FATAL arrives while no query runs
        await sql`SELECT 1`.execute(trx);
      });
      // The transaction fails (and would answer 503); the process goes on. Without a listener on
      // the checked-out client, its 'error' event would have ended the test run.
      await expect(outcome).rejects.toThrow();
      const err = await outcome.catch((e: unknown) => e);
      expect(isDatabaseUnavailable(err), `${(err as any)?.code} ${(err as Error)?.message}`).toBe(true);
    } finally {
      await handle.close().catch(() => {});
    }
  });

  it('answers 404 for a path whose percent-escapes do not decode, never 500', async () => {
    for (const path of ['/api/catalog/products/%ZZ', '/api/orders/%E0%A4%A', '/api/picker/orders/%/session']) {
      const r = await svc.client.invalid('GET', path);
      expect([path, r.status, r.body.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
  });

  it('answers 404 NOT_FOUND for an unknown path, inside and outside /api', async () => {
    for (const path of ['/api/does-not-exist', '/nothing-here']) {
      const r = await svc.client.invalid('GET', path);
      expect(r.status).toBe(404);
      expect(r.body).toMatchObject({ code: 'NOT_FOUND' });
      expect(typeof r.body.request_id).toBe('string');
    }
  });

  it('answers HEAD on a GET operation as GET without the body', async () => {
    const head = await fetch(`${svc.url}/api/core/pages/`, { method: 'HEAD' });
    const get = await fetch(`${svc.url}/api/core/pages/`);
    expect([head.status, head.headers.get('content-type')]).toEqual([200, get.headers.get('content-type')]);
    expect(await head.text()).toBe('');
  });

  it('answers 405 with Allow for a method the path does not have', async () => {
    const r = await svc.client.invalid('DELETE', '/api/core/pages/');
    expect(r.status).toBe(405);
    expect(r.body.code).toBe('METHOD_NOT_ALLOWED');
    expect(r.headers.get('allow')).toBe('GET');
    const me = await svc.client.invalid('POST', '/api/accounts/me/');
    expect(me.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'PATCH']);
  });

  it('answers 413 PAYLOAD_TOO_LARGE over the body limit', async () => {
    const big = JSON.stringify({ phone: '+79990000000', pad: 'x'.repeat(svc.config.bodyLimitBytes + 10) });
    const r = await svc.client.invalid('POST', '/api/auth/otp/send', { body: big });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('answers 422 VALIDATION_ERROR with a {loc, msg, type} list', async () => {
    const r = await svc.client.invalid('POST', '/api/auth/otp/send', { body: { phone: '12345' } });
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('VALIDATION_ERROR');
    expect(r.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', 'phone'], type: 'pattern' })]));
  });

  it('answers 415 UNSUPPORTED_MEDIA_TYPE, naming the expected type, to a body that is not sent as JSON', async () => {
    const json = new TextEncoder().encode('{"phone":"+79990000000"}');
    const cases: [string, { headers?: Record<string, string>; body: string | Uint8Array }, string][] = [
      ['no content type', { body: json }, 'no Content-Type was sent'],
      ['text/plain', { body: '{"phone":"+79990000000"}', headers: { 'content-type': 'text/plain;charset=UTF-8' } }, 'it was text/plain'],
      [
        'a form',
        { body: 'phone=%2B79990000000', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
        'it was application/x-www-form-urlencoded',
      ],
    ];
    for (const [name, init, said] of cases) {
      const r = await svc.client.invalid('POST', '/api/auth/otp/send', init);
      expect(r.status, name).toBe(415);
      expect(r.body.code, name).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(r.body.detail, name).toContain('Content-Type: application/json');
      expect(r.body.detail, name).toContain(said);
    }
    // A JSON media type with a suffix is JSON.
    const suffixed = await svc.client.invalid('POST', '/api/auth/otp/send', {
      body: { phone: '12345' },
      headers: { 'content-type': 'application/vnd.api+json' },
    });
    expect(suffixed.status).toBe(422);
  });

  it('reports a missing body, an extra property and a bad path id each at its location', async () => {
    const missing = await svc.client.invalid('POST', '/api/auth/otp/send');
    expect(missing.status).toBe(422);
    // A sentence a person understands, not "must have required property 'requestBody'".
    expect(missing.body.detail).toEqual([
      { loc: ['body'], msg: 'a JSON body is required (Content-Type: application/json)', type: 'required' },
    ]);
    const empty = await svc.client.invalid('POST', '/api/auth/otp/send', { headers: { 'content-type': 'application/json' } });
    expect(empty.status).toBe(422);
    expect(empty.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'phone'], type: 'required' })]);
    const extra = await svc.client.invalid('POST', '/api/token/pair', { body: { phone: '+79990000000', password: '1234', admin: true } });
    expect(extra.status).toBe(422);
    expect(extra.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc: ['body', 'admin'], type: 'additionalProperties' })]),
    );
    const bad = await svc.client.invalid('GET', '/api/logistics/stores/pickup/not-a-uuid');
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['path', 'store_id'], type: 'format' })]));
  });

  it('answers 501 NOT_IMPLEMENTED for an operation this build does not serve yet', async () => {
    expect(svc.app.notImplemented.has('listPickupStores')).toBe(true);
    const r = await svc.client.call.GET('/api/logistics/stores/pickup/');
    expect(r.status).toBe(501);
    expect(r.body.code).toBe('NOT_IMPLEMENTED');
  });

  it('answers 500 without the error message, stack or SQL', async () => {
    const r = await svc.client.call.GET('/api/logistics/map/config');
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ detail: 'Internal server error', code: 'INTERNAL_ERROR', request_id: r.headers.get('x-request-id') });
    expect(JSON.stringify(r.body)).not.toMatch(/SELECT|secret|at .*\.ts/);
  });
});

describe('service endpoints outside /api', () => {
  it('serves /healthz and /readyz', async () => {
    expect(await (await fetch(`${svc.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${svc.url}/readyz`)).json()).toEqual({ status: 'ready' });
  });

  it('serves the spec stamped with its environment and build', async () => {
    const doc = await (await fetch(`${svc.url}/openapi.json`)).json();
    expect(doc['x-environment']).toBe('TEST');
    expect(doc['x-build-commit']).toBe('testcommit');
    expect(doc.info.version).toMatch(/\+testcommit$/);
    const yaml = await (await fetch(`${svc.url}/openapi.yaml`)).text();
    expect(yaml).toContain('x-environment: TEST');
  });

  it('lets a client revalidate the spec by its ETag (304), JSON and YAML apart', async () => {
    const json = await fetch(`${svc.url}/openapi.json`);
    const yaml = await fetch(`${svc.url}/openapi.yaml`);
    const [jsonTag, yamlTag] = [json.headers.get('etag')!, yaml.headers.get('etag')!];
    expect(jsonTag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(yamlTag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(jsonTag).not.toBe(yamlTag);
    expect(json.headers.get('cache-control')).toBe('no-cache');
    const again = await fetch(`${svc.url}/openapi.json`, { headers: { 'if-none-match': jsonTag } });
    expect([again.status, await again.text()]).toEqual([304, '']);
    expect((await fetch(`${svc.url}/openapi.yaml`, { headers: { 'if-none-match': `W/${yamlTag}` } })).status).toBe(304);
    // Another build's tag gets the document.
    const stale = await fetch(`${svc.url}/openapi.json`, { headers: { 'if-none-match': '"0123456789abcdef0123456789abcdef"' } });
    expect(stale.status).toBe(200);
    expect((await stale.json())['x-build-commit']).toBe('testcommit');
  });
});
