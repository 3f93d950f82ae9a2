// The HTTP SMS gateway adapter, with the gateway played by msw: success, refusal (502),
// outage and timeout (503), and that a failed send leaves no usable half-state.
import { http, HttpResponse, delay } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { randomPhone } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { passLocalFailOthers } from '../support/msw.js';

const GATEWAY = 'https://sms-gateway.example.test/v1/messages';
const received: { to: string; text: string; auth: string | null }[] = [];
const gateway = setupServer();

let svc: TestService;
beforeAll(async () => {
  // Requests to the service under test (127.0.0.1) pass through; anything else unhandled fails.
  gateway.listen(passLocalFailOthers);
  svc = await startTestService({ env: { SMS_PROVIDER: 'http', SMS_HTTP_URL: GATEWAY, SMS_HTTP_TOKEN: 'gw-token', SMS_TIMEOUT_MS: '300' } });
});
afterEach(() => {
  gateway.resetHandlers();
  received.length = 0;
});
afterAll(async () => {
  await svc?.close();
  gateway.close();
});

const accept = http.post(GATEWAY, async ({ request }) => {
  const body = (await request.json()) as { to: string; text: string };
  received.push({ to: body.to, text: body.text, auth: request.headers.get('authorization') });
  return HttpResponse.json({ id: 'msg-1' }, { status: 202 });
});
const send = (phone: string) => svc.client.call.POST('/api/auth/otp/send', { body: { phone }, headers: { 'accept-language': 'ru' } });
const codesOf = (phone: string) => svc.deps.db.selectFrom('otp_codes').select('id').where('phone', '=', phone).execute();

describe('HTTP SMS gateway', () => {
  it('delivers the code in the requested language with the gateway token', async () => {
    gateway.use(accept);
    const phone = randomPhone();
    expect((await send(phone)).status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ to: phone, auth: 'Bearer gw-token' });
    expect(received[0]!.text).toMatch(/^Код для входа: [0-9]{6}\./);
  });

  it('answers 502 SMS_DELIVERY_FAILED when the gateway refuses, and keeps nothing', async () => {
    gateway.use(http.post(GATEWAY, () => HttpResponse.json({ error: 'invalid number' }, { status: 400 })));
    const phone = randomPhone();
    const r = await send(phone);
    expect(r.status).toBe(502);
    expect(r.body.code).toBe('SMS_DELIVERY_FAILED');
    expect(await codesOf(phone)).toEqual([]);
    // No cooldown started: the next try goes out at once.
    gateway.resetHandlers(accept);
    expect((await send(phone)).status).toBe(200);
  });

  it('answers 503 SMS_PROVIDER_UNAVAILABLE with Retry-After on a gateway outage', async () => {
    gateway.use(http.post(GATEWAY, () => new HttpResponse('down', { status: 503 })));
    const phone = randomPhone();
    const r = await send(phone);
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('SMS_PROVIDER_UNAVAILABLE');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await codesOf(phone)).toEqual([]);
  });

  it('answers 503 when the gateway does not answer in time', async () => {
    gateway.use(
      http.post(GATEWAY, async () => {
        await delay(2000);
        return HttpResponse.json({});
      }),
    );
    const phone = randomPhone();
    const r = await send(phone);
    expect(r.status).toBe(503);
    expect(await codesOf(phone)).toEqual([]);
  });

  it('answers 503 when the gateway cannot be reached', async () => {
    gateway.use(http.post(GATEWAY, () => HttpResponse.error()));
    const r = await send(randomPhone());
    expect(r.status).toBe(503);
  });
});
