// Push-device registration (ApplicationJWTAuth: customer or picker access token).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import type { components } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

// The generated type requires app_kind because the schema gives it a default (openapi-typescript's
// defaultNonNullable); the spec lets the app leave it out, and the tests rely on that default.
type PushDeviceInput = components['schemas']['PushDeviceInput'];
type PushDeviceSent = Omit<PushDeviceInput, 'app_kind'> & Partial<Pick<PushDeviceInput, 'app_kind'>>;
const device = (over: Partial<PushDeviceInput> = {}): PushDeviceSent => ({
  push_token: `tok-${randomUUID()}`,
  device_id: randomUUID(),
  platform: 'android',
  app_version: '3.14.0',
  build_number: '3140',
  ...over,
});
const put = (auth: Record<string, string>, body: PushDeviceSent) =>
  svc.client.call.PUT('/api/accounts/me/push-devices', { headers: auth, body: body as PushDeviceInput });
/** Deliberately invalid: values outside the schema's limits, or no token. */
const putInvalid = (auth: Record<string, string>, body: object) =>
  svc.client.invalid('PUT', '/api/accounts/me/push-devices', { headers: auth, body });
const del = (auth: Record<string, string>, id: string) =>
  svc.client.call.DELETE('/api/accounts/me/push-devices/{device_id}', { params: { path: { device_id: id } }, headers: auth });

describe('registerPushDevice', () => {
  it('registers and re-registers one installation per device_id', async () => {
    const c = await signInCustomer(svc);
    const d = device();
    const first = await put(c.auth, d);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ device_id: d.device_id, platform: 'android', app_kind: 'customer', environment: 'TEST' });
    const again = await put(c.auth, { ...d, push_token: 'tok-rotated', app_version: '3.15.0' });
    expect(again.body.app_version).toBe('3.15.0');
    const rows = await svc.deps.db.selectFrom('push_devices').selectAll().where('customer_id', '=', c.customerId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.push_token).toBe('tok-rotated');
  });

  it('registers a picker installation with a picker token', async () => {
    const p = await signInPicker(svc);
    const r = await put(p.auth, device({ app_kind: 'picker', environment: 'TEST' }));
    expect(r.status).toBe(200);
    expect(r.body.app_kind).toBe('picker');
  });

  it('answers 409 PUSH_ENVIRONMENT_MISMATCH for a PRODUCTION device on TEST', async () => {
    const c = await signInCustomer(svc);
    const r = await put(c.auth, device({ environment: 'PRODUCTION' }));
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('PUSH_ENVIRONMENT_MISMATCH');
  });

  it('answers 422 APP_KIND_MISMATCH when app_kind does not match the token', async () => {
    const c = await signInCustomer(svc);
    const r = await put(c.auth, device({ app_kind: 'picker' }));
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('APP_KIND_MISMATCH');
  });

  it('answers 422 for values outside the limits', async () => {
    const c = await signInCustomer(svc);
    for (const over of [
      { push_token: 'ab' },
      { device_id: 'not-a-uuid' },
      { platform: 'web' },
      { app_version: '' },
      { build_number: 'x'.repeat(65) },
    ]) {
      expect((await putInvalid(c.auth, { ...device(), ...over })).status, JSON.stringify(over)).toBe(422);
    }
  });

  it('moves an installation to the principal now signed in on it, and gives a push token to one device only', async () => {
    const a = await signInCustomer(svc);
    const b = await signInCustomer(svc);
    const d = device();
    await put(a.auth, d);
    await put(b.auth, d);
    const row = await svc.deps.db.selectFrom('push_devices').selectAll().where('device_id', '=', d.device_id).executeTakeFirstOrThrow();
    expect(row.customer_id).toBe(b.customerId);
    const other = device({ push_token: d.push_token });
    await put(b.auth, other);
    const withToken = await svc.deps.db.selectFrom('push_devices').select('device_id').where('push_token', '=', d.push_token).execute();
    expect(withToken).toEqual([{ device_id: other.device_id }]);
  });

  it('answers 401 without an access token', async () => {
    expect((await putInvalid({}, device())).status).toBe(401);
  });
});

describe('deletePushDevice', () => {
  it("removes the caller's installation, and answers 404 for another principal's", async () => {
    const a = await signInCustomer(svc);
    const b = await signInCustomer(svc);
    const d = device();
    await put(a.auth, d);
    expect((await del(b.auth, d.device_id)).status).toBe(404);
    expect((await del(a.auth, d.device_id)).status).toBe(204);
    expect((await del(a.auth, d.device_id)).status).toBe(404);
  });

  it('answers 422 for a malformed id and 401 without a token', async () => {
    const a = await signInCustomer(svc);
    expect((await del(a.auth, 'nope')).status).toBe(422);
    expect((await del({}, randomUUID())).status).toBe(401);
  });

  it("drops a session's devices when the session is revoked", async () => {
    const c = await signInCustomer(svc);
    const d = device();
    await put(c.auth, d);
    const first = await svc.client.call.POST('/api/token/refresh', { body: { refresh: c.refresh } });
    await svc.client.call.POST('/api/token/refresh', { body: { refresh: first.body.refresh } });
    // Two exchanges old (not a retry of the last one): reuse, the family is revoked.
    expect((await svc.client.call.POST('/api/token/refresh', { body: { refresh: c.refresh } })).body.code).toBe('REFRESH_TOKEN_REUSED');
    const rows = await svc.deps.db.selectFrom('push_devices').select('device_id').where('device_id', '=', d.device_id).execute();
    expect(rows).toEqual([]);
  });
});

describe('deletePushToken', () => {
  it("removes the customer's registration with that token", async () => {
    const c = await signInCustomer(svc);
    const d = device();
    await put(c.auth, d);
    const r = await svc.client.call.DELETE('/api/accounts/me/preferences/push', {
      params: { query: { token: d.push_token } },
      headers: c.auth,
    });
    expect(r.status).toBe(204);
    expect(await svc.deps.db.selectFrom('push_devices').select('device_id').where('device_id', '=', d.device_id).execute()).toEqual([]);
  });

  it('answers 422 without the token query and 401 without a customer token', async () => {
    const c = await signInCustomer(svc);
    expect((await svc.client.invalid('DELETE', '/api/accounts/me/preferences/push', { headers: c.auth })).status).toBe(422);
    expect((await svc.client.invalid('DELETE', '/api/accounts/me/preferences/push?token=abc')).status).toBe(401);
  });
});
