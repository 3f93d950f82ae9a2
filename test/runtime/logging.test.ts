// Logs are JSON lines with request id, operationId, status and duration, and never contain an
// Authorization header, an access_token query value, an X-Recovery-Key, a token in any other
// place a client can put one, or a whole phone number.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger, redactUrl } from '../../platform/logger.js';
import { signInPicker } from '../support/accounts.js';
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

  it('never contain a token sent in another query shape, in the path or percent-encoded, nor a whole phone', async () => {
    const t = tokensFor(svc.config);
    const picker = await signInPicker(svc);
    const sign = () => t.sign('customer_access');
    const jwts = {
      bracketed: sign(),
      indexed: sign(),
      authorization: sign(),
      inPath: sign(),
      dotsEncoded: sign(),
      allEncoded: sign(),
      anyName: sign(),
      wsTracking: sign(),
      wsPicker: sign(),
    };
    const opaque = 'opaque-secret-3e1f9a';
    lines.length = 0;
    const requests = [
      `/api/core/pages/?access_token[]=${jwts.bracketed}&page=1`,
      `/api/core/pages/?access_token[0]=${jwts.indexed}`,
      `/api/core/pages/?Authorization=Bearer%20${jwts.authorization}`,
      `/api/core/pages/?ACCESS%5FTOKEN%5B%5D=${opaque}`,
      `/api/orders/${jwts.inPath}`,
      `/api/core/pages/?q=${jwts.dotsEncoded.replaceAll('.', '%2E')}`,
      `/api/orders/${percentEncodeAll(jwts.allEncoded)}`,
      `/api/core/pages/?note=Bearer%20${jwts.anyName}`,
      '/api/qa/otp/last?phone=%2B79990001234&purpose=login',
    ];
    for (const path of requests) await svc.client.invalid('GET', path);
    await openAndClose(`/ws/orders/tracking/?access_token[]=${jwts.wsTracking}`);
    await openAndClose(`/ws/picker/?access_token[]=${jwts.wsPicker}&access_token=${picker.access}`);
    const records = lines.map((l) => JSON.parse(l));
    // Every request and both connections were logged, so what is missing below was masked.
    expect(records.filter((r) => r.msg === 'request')).toHaveLength(requests.length);
    expect(records.filter((r) => r.msg === 'websocket connect')).toHaveLength(2);
    const all = lines.join('\n');
    for (const jwt of [...Object.values(jwts), picker.access]) {
      const [, body, sig] = jwt.split('.');
      expect(all).not.toContain(body);
      expect(all).not.toContain(sig);
    }
    expect(all).not.toContain(percentEncodeAll(jwts.allEncoded).slice(0, 60));
    expect(all).not.toContain(opaque);
    expect(all).not.toContain('7999000');
    expect(all).toContain('phone=[redacted]1234');
    expect(all).toContain('/ws/orders/tracking/?access_token[]=[redacted]');
  });
});

/** Opens a WebSocket on the service and closes it (or waits for the service to close it). */
function openAndClose(path: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const ws = new WebSocket(`${svc.url.replace('http', 'ws')}${path}`);
    ws.on('open', () => ws.close());
    ws.on('close', () => resolve());
    ws.on('error', () => resolve());
  });
}

describe('redactUrl', () => {
  it('masks secret query values and keeps the rest', () => {
    expect(redactUrl('/ws/orders/tracking/?access_token=abc.def&x=1')).toBe('/ws/orders/tracking/?access_token=[redacted]&x=1');
    expect(redactUrl('/api/accounts/me/preferences/push?token=tok123')).toBe('/api/accounts/me/preferences/push?token=[redacted]');
    expect(redactUrl('/api/core/pages/')).toBe('/api/core/pages/');
    expect(redactUrl('/x?ACCESS_TOKEN=1')).toBe('/x?ACCESS_TOKEN=[redacted]');
  });

  it('masks a secret query name with [] or [0] suffixes, in any case, percent-encoded or not', () => {
    expect(redactUrl('/ws/orders/tracking/?access_token[]=opaque1&lang=en')).toBe('/ws/orders/tracking/?access_token[]=[redacted]&lang=en');
    expect(redactUrl('/x?access_token[0]=opaque1')).toBe('/x?access_token[0]=[redacted]');
    expect(redactUrl('/x?Access_Token[a][b]=opaque1')).toBe('/x?Access_Token[a][b]=[redacted]');
    expect(redactUrl('/x?ACCESS%5FTOKEN%5B%5D=opaque1')).toBe('/x?ACCESS%5FTOKEN%5B%5D=[redacted]');
    expect(redactUrl('/x?%61ccess_token=opaque1')).toBe('/x?%61ccess_token=[redacted]');
    expect(redactUrl('/x?Authorization=Bearer%20opaque1')).toBe('/x?Authorization=[redacted]');
    expect(redactUrl('/x?code=123456&purpose=login')).toBe('/x?code=[redacted]&purpose=login');
  });

  it('masks a JWT wherever it is: any query value, the path, percent-encoded, after Bearer', () => {
    const jwt = tokensFor(svc.config).sign('customer_access');
    const [head, body, sig] = jwt.split('.') as [string, string, string];
    expect(redactUrl(`/api/orders/${jwt}`)).toBe('/api/orders/[redacted]');
    expect(redactUrl(`/api/orders/${jwt}/cancel?x=1`)).toBe('/api/orders/[redacted]/cancel?x=1');
    expect(redactUrl(`/x?note=${jwt}&page=2`)).toBe('/x?note=[redacted]&page=2');
    expect(redactUrl(`/x?note=Bearer%20${jwt}`)).toBe('/x?note=Bearer%20[redacted]');
    expect(redactUrl(`/x?note=Bearer+${jwt}`)).toBe('/x?note=Bearer+[redacted]');
    expect(redactUrl(`/x?note=Bearer${jwt}`)).toBe('/x?note=Bearer[redacted]');
    expect(redactUrl(`/x?note=${head}%2E${body}%2e${sig}`)).toBe('/x?note=[redacted]');
    // Every character percent-encoded: the server decodes it into the token, so the log must not keep it.
    const encoded = percentEncodeAll(jwt);
    expect(redactUrl(`/api/orders/${encoded}`)).not.toContain(encoded);
    expect(redactUrl(`/api/orders/${encoded}`)).not.toContain(sig);
    expect(redactUrl(`/x?note=${encoded}`)).not.toContain(encoded);
    // An unsigned (alg none) token still carries its claims.
    expect(redactUrl(`/x?note=${head}.${body}.`)).toBe('/x?note=[redacted]');
  });

  it('keeps only the last 4 digits of a phone in the query', () => {
    expect(redactUrl('/api/qa/otp/last?phone=%2B79990001234&purpose=login')).toBe('/api/qa/otp/last?phone=[redacted]1234&purpose=login');
    expect(redactUrl('/api/qa/otp/last?phone=+79990001234')).toBe('/api/qa/otp/last?phone=[redacted]1234');
    expect(redactUrl('/api/qa/otp/last?PHONE[]=89990001234')).toBe('/api/qa/otp/last?PHONE[]=[redacted]1234');
    // A value shaped like an international number is a phone whatever the parameter is called.
    expect(redactUrl('/x?contact=%2B79990001234')).toBe('/x?contact=[redacted]1234');
    // Too short to keep any digits.
    expect(redactUrl('/x?phone=123')).toBe('/x?phone=[redacted]');
  });

  it('leaves URLs without secrets as they are', () => {
    for (const url of [
      '/api/catalog/products/?page=2&q=milk%20tea&barcode=4601234567890',
      '/api/orders/0f8fad5b-d9cb-469f-a165-70867728950e/cancel',
      '/api/catalog/products/?q=key.value.thing&sort=-price',
      '/api/core/pages/?q=%D0%BC%D0%BE%D0%BB%D0%BE%D0%BA%D0%BE',
      '/x?eyJ=1&y=eyJ.a',
      '/x?bad=%E0%A4%A',
    ])
      expect(redactUrl(url)).toBe(url);
  });

  it('takes linear time on hostile input', () => {
    // About 100,000 characters each (more than a request line can be): a scan that went back over
    // what it read would take seconds on them, a linear one takes milliseconds.
    const hostile = [
      '/x?' + 'eyJ'.repeat(33_000),
      '/x?a=' + 'eyJa.'.repeat(20_000),
      '/' + 'eyJa.eyJb'.repeat(11_000),
      '/x?' + 'access_token[[[['.repeat(6_000),
      '/x?' + '%65%79%4A'.repeat(11_000),
      '/x?phone=' + '%2B7'.repeat(25_000),
    ];
    for (const url of hostile) {
      const started = performance.now();
      redactUrl(url);
      expect(performance.now() - started, url.slice(0, 12)).toBeLessThan(500);
    }
  });
});

describe('the logger', () => {
  it('masks JWTs in every string it writes: messages, fields, errors, nested values, bindings', () => {
    const jwt = tokensFor(svc.config).sign('customer_access');
    const out: string[] = [];
    const log = createLogger('debug', (l) => out.push(l)).child({ origin: `from ${jwt}` });
    log.error(`refused ${jwt}`, {
      err: new Error(`jwt ${jwt} is not accepted`),
      detail: `Authorization: Bearer ${jwt}`,
      nested: { list: [jwt, { deeper: `url /x?note=${jwt}` }] },
      path: `/api/orders/${jwt}`,
    });
    expect(out).toHaveLength(1);
    expect(out[0]).not.toContain(jwt.split('.')[1]);
    expect(out[0]).not.toContain(jwt.split('.')[2]);
    const record = JSON.parse(out[0]!);
    expect(record.msg).toBe('refused [redacted]');
    expect(record.err.message).toBe('jwt [redacted] is not accepted');
    expect(record.detail).toBe('Authorization: Bearer [redacted]');
    expect(record.nested).toEqual({ list: ['[redacted]', { deeper: 'url /x?note=[redacted]' }] });
    expect(record.origin).toBe('from [redacted]');
  });

  it('writes no secret of an object nested deeper than it looks', () => {
    const out: string[] = [];
    createLogger('debug', (l) => out.push(l)).info('deep', { a: { b: { c: { d: { e: { f: { pin: '8642', password: '9753' } } } } } } });
    expect(out[0]).not.toContain('8642');
    expect(out[0]).not.toContain('9753');
  });
});

/** `%65%79...`: every character percent-encoded, as a client may send it. */
function percentEncodeAll(s: string): string {
  return [...s].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
}
