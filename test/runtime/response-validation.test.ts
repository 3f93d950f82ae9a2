// The TEST environment checks its own responses against the spec and logs violations; PROD does
// not spend the time. The contract client fails the test on the same violation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HandlerMap } from '../../server/handler-types.js';
import { createLogger } from '../../platform/logger.js';
import { ContractViolation } from '../support/client.js';
import { startTestService, type TestService } from '../support/service.js';

// A handler that breaks the contract: MapConfigOutput.enabled must be a boolean.
const broken = { getMapConfig: () => ({ status: 200, body: { enabled: 'yes' } }) } as unknown as Partial<HandlerMap>;

describe('response checking', () => {
  const testLines: string[] = [];
  const prodLines: string[] = [];
  let testSvc: TestService;
  let prodSvc: TestService;
  beforeAll(async () => {
    [testSvc, prodSvc] = await Promise.all([
      startTestService({ handlers: broken, log: createLogger('info', (l) => testLines.push(l)) }),
      startTestService({ handlers: broken, env: { APP_ENV: 'PROD' }, log: createLogger('info', (l) => prodLines.push(l)) }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([testSvc?.close(), prodSvc?.close()]);
  });

  it('TEST logs a violation and the contract client rejects the response', async () => {
    await expect(testSvc.client.call.GET('/api/logistics/map/config')).rejects.toThrow(ContractViolation);
    const violation = testLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'response violates the contract');
    expect(violation).toMatchObject({ level: 'error', operation_id: 'getMapConfig' });
    expect(violation.problems.join(' ')).toMatch(/enabled/);
  });

  it('PROD does not check its responses', async () => {
    const r = await fetch(`${prodSvc.url}/api/logistics/map/config`);
    expect(r.status).toBe(200);
    expect(prodLines.some((l) => l.includes('response violates the contract'))).toBe(false);
  });
});
