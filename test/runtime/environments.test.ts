// TEST and PROD: PROD is a strict subset of TEST with identical operations, and a PROD service
// does not route TEST-only operations.
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { OPERATIONS } from '../../generated/operations.js';
import { withoutTestOnlyProperties } from '../../scripts/lib/test-only.js';
import { loadSpec } from '../../server/contract.js';
import { startTestService, type TestService } from '../support/service.js';

describe('the two specs', () => {
  const test = loadSpec('TEST');
  const prod = loadSpec('PROD');

  it('PROD is a strict subset of TEST, and shared operations are identical', () => {
    const prodPaths = Object.keys(prod.paths);
    expect(prodPaths.length).toBeGreaterThan(0);
    expect(prodPaths.length).toBeLessThan(Object.keys(test.paths).length);
    for (const p of prodPaths) {
      expect(test.paths[p], p).toBeDefined();
      expect(isDeepStrictEqual(prod.paths[p], test.paths[p]), `${p} differs between PROD and TEST`).toBe(true);
    }
    // Components PROD uses are the same as TEST's, without the properties still in TEST.
    for (const [kind, entries] of Object.entries<Record<string, unknown>>(prod.components)) {
      for (const [name, value] of Object.entries(entries)) {
        const inTest = withoutTestOnlyProperties(test.components[kind]![name]);
        expect(isDeepStrictEqual(value, inTest), `components.${kind}.${name}`).toBe(true);
      }
    }
  });

  it('marks exactly the operations PROD lacks as x-test-only', () => {
    const testOnly = Object.entries(OPERATIONS)
      .filter(([, o]) => o.testOnly)
      .map(([id]) => id);
    const absentFromProd = Object.entries(OPERATIONS)
      .filter(([, o]) => !o.inProd)
      .map(([id]) => id);
    expect(testOnly.sort()).toEqual(absentFromProd.sort());
    expect(testOnly).toEqual(expect.arrayContaining(['getLastOtpCode']));
    expect(
      Object.values(OPERATIONS)
        .filter((o) => o.testOnly)
        .map((o) => o.path),
    ).toEqual(expect.arrayContaining(['/api/picker/catalog/products/v2', '/api/loaylty/programs/strict/']));
  });
});

describe('routing by environment', () => {
  let testSvc: TestService;
  let prodSvc: TestService;
  beforeAll(async () => {
    [testSvc, prodSvc] = await Promise.all([startTestService(), startTestService({ env: { APP_ENV: 'PROD' } })]);
  });
  afterAll(async () => {
    await Promise.all([testSvc?.close(), prodSvc?.close()]);
  });

  it('PROD answers 404 for every TEST-only operation that TEST routes', async () => {
    const testOnly = Object.values(OPERATIONS).filter((o) => o.testOnly);
    expect(testOnly.length).toBeGreaterThanOrEqual(5);
    // Every operation, without token or body: a routing sweep, not a valid request.
    for (const op of testOnly) {
      const path = op.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const inProd = await prodSvc.client.invalid(op.method.toUpperCase(), path);
      expect(inProd.status, `PROD ${op.method} ${op.path}`).toBe(404);
      const inTest = await testSvc.client.invalid(op.method.toUpperCase(), path);
      expect(inTest.status, `TEST ${op.method} ${op.path}`).not.toBe(404);
    }
  });

  it('each serves its own stamped spec', async () => {
    const prodDoc = await (await fetch(`${prodSvc.url}/openapi.json`)).json();
    expect(prodDoc['x-environment']).toBe('PROD');
    expect(prodDoc.paths['/api/qa/otp/last']).toBeUndefined();
    const testDoc = await (await fetch(`${testSvc.url}/openapi.json`)).json();
    expect(testDoc.paths['/api/qa/otp/last']).toBeDefined();
  });

  it('list the service they were fetched from first, then the documented public hosts', async () => {
    for (const [svc, env] of [
      [prodSvc, 'PROD'],
      [testSvc, 'TEST'],
    ] as const) {
      const documented = loadSpec(env).servers as { url: string }[];
      const json = await (await fetch(`${svc.url}/openapi.json`)).json();
      const yaml = YAML.parse(await (await fetch(`${svc.url}/openapi.yaml`)).text());
      for (const doc of [json, yaml]) {
        expect(doc.servers[0].url).toBe('/');
        expect(doc.servers.slice(1)).toEqual(documented);
        // A relative server resolves against the document's own URL: this service.
        expect(new URL(doc.servers[0].url, `${svc.url}/openapi.json`).origin).toBe(new URL(svc.url).origin);
      }
    }
  });
});
