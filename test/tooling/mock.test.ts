// npm run mock: every operation of the chosen environment answers from the spec alone, with a
// declared status, the declared content type and a body that matches the schema (checked by the
// same contract client as the service's tests). Requests are validated as the service does.
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../generated/operations.js';
import { sampleSchema, resolveRef } from '../../scripts/lib/examples.js';
import { createMockApp, type MockApp } from '../../scripts/lib/mock-server.js';
import { projectRoot, type AppEnv } from '../../platform/config.js';
import { loadSpec } from '../../server/contract.js';
import { ContractClient } from '../support/client.js';

interface RunningMock {
  mock: MockApp;
  server: http.Server;
  url: string;
  client: ContractClient;
}

async function startMock(env: AppEnv): Promise<RunningMock> {
  const mock = await createMockApp({ env, buildCommit: 'mockcommit' });
  const server = http.createServer(mock.express);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The mock answers every operation: none may hide behind a 501. Its answers say nothing about
  // the service's handlers, so they stay out of the contract coverage report.
  return { mock, server, url, client: new ContractClient({ baseUrl: url, env, notImplemented: new Set(), recordCoverage: false }) };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** A request that satisfies the operation's contract, built from the spec's examples. */
function validRequest(doc: any, template: string, item: any, op: any) {
  const headers: Record<string, string> = {};
  const query = new URLSearchParams();
  let url = template;
  // Path-item parameters apply to every operation of the path.
  for (const p of [...(item.parameters ?? []), ...(op.parameters ?? [])].map((x: any) => (x.$ref ? resolveRef(doc, x.$ref) : x))) {
    const value = p.example ?? sampleSchema(p.schema, { root: doc, direction: 'request' });
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
    else if (p.in === 'query' && p.required) query.set(p.name, String(value));
    else if (p.in === 'header' && p.required) headers[p.name] = String(value);
  }
  const security: Record<string, string[]>[] = op.security ?? doc.security ?? [];
  const anonymous = security.length === 0 || security.some((req) => Object.keys(req).length === 0);
  if (!anonymous) {
    for (const scheme of Object.keys(security[0]!)) {
      const s = doc.components.securitySchemes[scheme];
      if (s.type === 'http') headers.authorization = 'Bearer mock-access-token';
      else headers[s.name] = 'mock-key';
    }
  }
  const body = op.requestBody ? (op.requestBody.$ref ? resolveRef(doc, op.requestBody.$ref) : op.requestBody) : undefined;
  const schema = body?.content?.['application/json']?.schema;
  return {
    path: query.size ? `${url}?${query}` : url,
    headers,
    body: schema ? (sampleSchema(schema, { root: doc, direction: 'request' }) as object) : undefined,
  };
}

for (const env of ['TEST', 'PROD'] as const) {
  describe(`mock of the ${env} contract`, () => {
    let m: RunningMock;
    beforeAll(async () => {
      m = await startMock(env);
    });
    afterAll(() => new Promise<void>((resolve) => (m ? m.server.close(() => resolve()) : resolve())));

    it('finds a schema-valid answer for every declared response (the spec examples match their schemas)', () => {
      expect(m.mock.problems).toEqual([]);
      const doc = loadSpec(env);
      const ids = Object.values<any>(doc.paths).flatMap((item) => METHODS.filter((x) => item[x]).map((x) => item[x].operationId));
      expect([...m.mock.answers.keys()].sort()).toEqual(ids.sort());
    });

    it('answers every operation with its success status, content type and a conforming body', async () => {
      const doc = loadSpec(env);
      let answered = 0;
      for (const [template, item] of Object.entries<any>(doc.paths)) {
        for (const method of METHODS) {
          const op = item[method];
          if (!op) continue;
          const request = validRequest(doc, template, item, op);
          const res = await m.client.untyped(method.toUpperCase(), request.path, { headers: request.headers, body: request.body });
          const success = Object.keys(op.responses)
            .map(Number)
            .filter((s) => s >= 200 && s < 300)
            .sort((a, b) => a - b)[0];
          expect(res.status, `${method.toUpperCase()} ${request.path}: ${JSON.stringify(res.body)}`).toBe(success);
          expect(res.operationId).toBe(op.operationId);
          expect(res.headers.get('x-mock')).toBe('true');
          answered++;
        }
      }
      expect(answered).toBe(Object.values(OPERATIONS).filter((o) => env === 'TEST' || o.inProd).length);
    });
  });
}

describe('mock behaviour', () => {
  let m: RunningMock;
  let prod: RunningMock;
  beforeAll(async () => {
    [m, prod] = await Promise.all([startMock('TEST'), startMock('PROD')]);
  });
  afterAll(async () => {
    await Promise.all([m, prod].map((x) => new Promise<void>((resolve) => (x ? x.server.close(() => resolve()) : resolve()))));
  });

  it('answers 401 to a secured operation called without credentials', async () => {
    const res = await m.client.invalid('GET', '/api/accounts/me/');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: expect.any(String), request_id: res.headers.get('x-request-id') });
  });

  it('answers another declared status on `Prefer: code=`, and notes an undeclared one', async () => {
    const auth = { authorization: 'Bearer mock-access-token' };
    const unavailable = await m.client.call.GET('/api/accounts/me/', { headers: { ...auth, prefer: 'code=503' } });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toMatch(/^\d+$/);
    // Its body says what the status means (the app picks its reaction by `code`): the shared
    // 503's own example, the code the service answers when its database is out of reach.
    expect(unavailable.body.code).toBe('DATABASE_UNAVAILABLE');
    for (const [status, code] of [
      [404, 'NOT_FOUND'],
      [500, 'INTERNAL_ERROR'],
    ] as const) {
      const r = await m.client.call.GET('/api/orders/roadmap/{order_id}/detail', {
        params: { path: { order_id: '6f1d0c8e-2b4a-4c7d-9e3f-0a1b2c3d4e5f' } },
        headers: { ...auth, prefer: `code=${status}` },
      });
      expect([r.status, r.body.code]).toEqual([status, code]);
    }
    const undeclared = await m.client.call.GET('/api/accounts/me/', { headers: { ...auth, prefer: 'code=418' } });
    expect(undeclared.status).toBe(200);
    expect(undeclared.headers.get('x-mock-note')).toContain('418 is not declared');
  });

  it('validates requests as the service does: 422 with {loc, msg, type}, 400 for malformed JSON', async () => {
    const auth = { authorization: 'Bearer mock-access-token' };
    const invalid = await m.client.invalid('PATCH', '/api/accounts/me/', { headers: auth, body: { not_a_field: 1 } });
    expect(invalid.status).toBe(422);
    expect(invalid.body.code).toBe('VALIDATION_ERROR');
    expect(invalid.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: ['body', 'not_a_field'] })]));
    const malformed = await m.client.invalid('PATCH', '/api/accounts/me/', {
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"first_name":',
    });
    expect(malformed.status).toBe(400);
  });

  it('walks "the customer decides" (TEST only) with its named examples: a change, its conflicts, a decision', async () => {
    const auth = { authorization: 'Bearer mock-access-token' };
    const order_id = '4d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d';
    const change = (prefer?: string) =>
      m.client.call.POST('/api/orders/{order_id}/items/changes', {
        params: { path: { order_id }, header: { 'X-Expected-Version': 5, 'Idempotency-Key': 'a1b2c3' } },
        headers: { ...auth, ...(prefer ? { prefer } : {}) },
        body: { changes: [{ op: 'set_quantity', item_id: 90871, quantity: '1.000' }] },
      });
    const changed = await change();
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ can_change: true, order_version: 6 });
    expect(changed.body.items[0]).toMatchObject({ id: 90871, replacement: { policy: 'named_products', approval_required: true } });
    expect((await change('code=409')).body.code).toBe('PICKING_STARTED');
    expect((await change('code=409, example=versionConflict')).body.code).toBe('VERSION_CONFLICT');
    // X-Expected-Version is required: the mock validates requests as the service does.
    const unversioned = await m.client.invalid('POST', `/api/orders/${order_id}/items/changes`, {
      headers: auth,
      body: { changes: [{ op: 'remove', item_id: 90869 }] },
    });
    expect(unversioned.status).toBe(422);

    const decide = (decision: 'approve' | 'reject', prefer?: string) =>
      m.client.call.POST('/api/orders/{order_id}/approvals/{approval_id}/decision', {
        params: { path: { order_id, approval_id: 5521 } },
        headers: { ...auth, ...(prefer ? { prefer } : {}) },
        body: { decision },
      });
    const approved = await decide('approve');
    expect(approved.status).toBe(200);
    expect(approved.body.items[0].approval).toMatchObject({ id: 5521, status: 'approved', decided_by: 'customer' });
    const rejected = await decide('reject', 'example=rejected');
    expect(rejected.body.items[0].approval.status).toBe('rejected');
    for (const [example, code] of [
      ['pickingFinished', 'PICKING_FINISHED'],
      ['alreadyDecided', 'APPROVAL_ALREADY_DECIDED'],
      ['withdrawn', 'APPROVAL_WITHDRAWN'],
    ] as const) {
      const r = await decide('approve', `code=409, example=${example}`);
      expect([r.status, r.body.code]).toEqual([409, code]);
    }
    // PROD has neither operation.
    expect((await prod.client.invalid('POST', `/api/orders/${order_id}/approvals/5521/decision`, { headers: auth })).status).toBe(404);
  });

  it('answers 404 for unknown paths, 405 with Allow for wrong methods, and 404 in PROD for TEST-only operations', async () => {
    expect((await m.client.invalid('GET', '/api/no/such/thing')).status).toBe(404);
    const wrong = await m.client.invalid('PUT', '/api/accounts/me/');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')?.split(', ').sort()).toEqual(['DELETE', 'GET', 'PATCH']);
    const testOnly = Object.values(OPERATIONS).find((o) => o.testOnly && !o.path.includes('{'))!;
    // A routing check: sent without the operation's body or a real token.
    expect((await prod.client.invalid(testOnly.method.toUpperCase(), testOnly.path)).status).toBe(404);
    expect(
      (await m.client.invalid(testOnly.method.toUpperCase(), testOnly.path, { headers: { authorization: 'Bearer x' } })).status,
    ).not.toBe(404);
  });

  it('serves its stamped spec and docs page', async () => {
    const doc = await (await fetch(`${prod.url}/openapi.json`)).json();
    expect(doc['x-environment']).toBe('PROD');
    expect(doc['x-build-commit']).toBe('mockcommit');
    const docs = await fetch(`${prod.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('<b data-environment>PROD</b>');
  });
});

describe('npm run mock (the command)', () => {
  it('starts from the spec alone on the requested port and environment', { timeout: 60_000 }, async () => {
    // The script itself, as `npm run mock -- --env PROD --port 0` runs it (tsx, no database).
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(projectRoot, 'scripts', 'mock.ts'), '--env', 'PROD', '--port', '0'],
      {
        cwd: projectRoot,
        env: { ...process.env, BUILD_COMMIT: 'clicommit' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const first = await new Promise<{ port: number; env: string; operations: number }>((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (d) => {
          buf += d;
          const nl = buf.indexOf('\n');
          if (nl >= 0) resolve(JSON.parse(buf.slice(0, nl)));
        });
        child.on('exit', (code) => reject(new Error(`mock exited with ${code}`)));
      });
      expect(first.env).toBe('PROD');
      expect(first.operations).toBe(Object.values(OPERATIONS).filter((o) => o.inProd).length);
      const client = new ContractClient({
        baseUrl: `http://127.0.0.1:${first.port}`,
        env: 'PROD',
        notImplemented: new Set(),
        recordCoverage: false,
      });
      const res = await client.call.GET('/api/logistics/map/config');
      expect(res.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
