// Logs are JSON lines with request id, operationId, status and duration, and never contain an
// Authorization header, an access_token query value or an X-Recovery-Key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger, redactUrl } from '../../server/logger.js';
import { startTestService, type TestService } from '../support/service.js';
import { tokensFor } from '../support/tokens.js';

const lines: string[] = [];
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ log: createLogger('debug', (l) => lines.push(l)) });
});
afterAll(() => svc?.close());

describe('request logs', () => {
  it('write one JSON line per request with id, operation, status and duration', async () => {
    lines.length = 0;
    const r = await svc.client.call.GET('/api/core/pages/', { headers: { 'x-request-id': 'req-logging-0001' } });
    expect(r.headers.get('x-request-id')).toBe('req-logging-0001');
    const record = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.request_id === 'req-logging-0001');
    expect(record).toMatchObject({ level: 'info', method: 'GET', path: '/api/core/pages/', operation_id: 'listPages', status: 200 });
    expect(typeof record.duration_ms).toBe('number');
  });

  it('never contain tokens, access_token values or recovery keys', async () => {
    const t = tokensFor(svc.config);
    const access = t.sign('customer_access');
    const recovery = t.sign('recovery');
    lines.length = 0;
    await svc.client.call.GET('/api/accounts/me/', { headers: { authorization: `Bearer ${access}` } });
    await svc.client.invalid('GET', `/api/core/pages/?access_token=${access}&page=1`); // parameters the operation does not have
    await svc.client.call.PATCH('/api/auth/recovery/update-pin', {
      headers: { 'x-recovery-key': recovery },
      body: { password: '2468', password_repeat: '2468' },
    });
    await new Promise<void>((resolve) => {
      const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/?access_token=${access}`);
      ws.on('open', () => ws.close());
      ws.on('close', () => resolve());
      ws.on('error', () => resolve());
    });
    const all = lines.join('\n');
    expect(all.length).toBeGreaterThan(0);
    expect(all).toContain('access_token=[redacted]');
    for (const secret of [access, recovery, access.split('.')[2], recovery.split('.')[2]]) expect(all).not.toContain(secret);
    expect(all).not.toContain('2468');
  });
});

describe('redactUrl', () => {
  it('masks secret query values and keeps the rest', () => {
    expect(redactUrl('/ws/orders/tracking/?access_token=abc.def&x=1')).toBe('/ws/orders/tracking/?access_token=[redacted]&x=1');
    expect(redactUrl('/api/accounts/me/preferences/push?token=tok123')).toBe('/api/accounts/me/preferences/push?token=[redacted]');
    expect(redactUrl('/api/core/pages/')).toBe('/api/core/pages/');
    expect(redactUrl('/x?ACCESS_TOKEN=1')).toBe('/x?ACCESS_TOKEN=[redacted]');
  });
});
