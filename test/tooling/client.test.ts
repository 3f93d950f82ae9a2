// The typed client the package exports (index.ts), used the way a TypeScript consumer would:
// imported by the package name, three lines to a call. Its typing is checked by `tsc` (CI's
// typecheck covers this file): a TEST-only path on the PROD client, a wrong body or a missing
// path parameter are compile errors, marked with @ts-expect-error below.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroceryClient, type Schema } from 'grocery-service';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

describe('createGroceryClient', () => {
  it('calls the service in three lines, with typed data', async () => {
    const customer = await signInCustomer(svc);
    const api = createGroceryClient({ baseUrl: svc.url, accessToken: () => customer.access });
    const { data, error, response } = await api.GET('/api/accounts/me/');
    expect(response.status).toBe(200);
    expect(error).toBeUndefined();
    const profile: Schema<'ProfileSchema'> | undefined = data;
    expect(profile?.phone).toBe(customer.phone);
  });

  it('returns the typed error body on failure, and asks the token provider before every request', async () => {
    let token: string | null = null;
    const api = createGroceryClient({ baseUrl: svc.url, accessToken: () => token });
    const anonymous = await api.GET('/api/accounts/me/');
    expect(anonymous.response.status).toBe(401);
    expect(anonymous.error?.code).toBe('UNAUTHORIZED');
    expect(anonymous.data).toBeUndefined();
    token = (await signInCustomer(svc)).access; // e.g. refreshed by the app's session layer
    expect((await api.GET('/api/accounts/me/')).response.status).toBe(200);
  });

  it('sends the default store, language and token unless a request sets its own', async () => {
    const sent: Request[] = [];
    const api = createGroceryClient({
      baseUrl: svc.url,
      accessToken: 'token-from-options',
      storeId: '5f3c1a9e-8a51-4c3e-9a57-3d2f0c6b7a10',
      language: 'ru',
      fetch: (request) => {
        sent.push(request.clone());
        return fetch(request);
      },
    });
    const config = await api.GET('/api/logistics/map/config');
    expect(config.response.status).toBe(200);
    expect(config.data?.search_min_length).toBeTypeOf('number');
    await api.GET('/api/logistics/map/config', {
      headers: { authorization: 'Bearer per-request', 'accept-language': 'en', 'x-store-id': '00000000-0000-4000-8000-000000000001' },
    });
    const headers = sent.map((r) =>
      Object.fromEntries(['authorization', 'x-store-id', 'accept-language'].map((h) => [h, r.headers.get(h)])),
    );
    expect(headers).toEqual([
      { authorization: 'Bearer token-from-options', 'x-store-id': '5f3c1a9e-8a51-4c3e-9a57-3d2f0c6b7a10', 'accept-language': 'ru' },
      { authorization: 'Bearer per-request', 'x-store-id': '00000000-0000-4000-8000-000000000001', 'accept-language': 'en' },
    ]);
  });

  it('is typed by the PROD contract unless TEST is chosen', async () => {
    const prodApi = createGroceryClient({ baseUrl: svc.url });
    const testApi = createGroceryClient({ baseUrl: svc.url, env: 'TEST' });
    const typeChecks = () => {
      // @ts-expect-error the QA tools are TEST-only: not in the PROD contract
      void prodApi.GET('/api/qa/otp/last', { params: { query: { phone: '+79990000001' } } });
      // @ts-expect-error a path parameter is required
      void prodApi.DELETE('/api/accounts/me/push-devices/{device_id}', {});
      // @ts-expect-error the body must be a ProfileInput (first_name is a string)
      void prodApi.PATCH('/api/accounts/me/', { body: { first_name: 42 } });
      // "The customer decides" is TEST-only: changing an order and answering a proposal.
      const order_id = '4d2c1b0a-9e8f-4a7b-8c6d-5e4f3a2b1c0d';
      const changes = [{ op: 'remove' as const, item_id: 90869 }];
      // @ts-expect-error not in the PROD contract
      void prodApi.POST('/api/orders/{order_id}/items/changes', {
        params: { path: { order_id }, header: { 'X-Expected-Version': 5 } },
        body: { changes },
      });
      // @ts-expect-error not in the PROD contract
      void prodApi.POST('/api/orders/{order_id}/approvals/{approval_id}/decision', {
        params: { path: { order_id, approval_id: 5521 } },
        body: { decision: 'approve' },
      });
      void testApi.POST('/api/orders/{order_id}/items/changes', {
        params: { path: { order_id }, header: { 'X-Expected-Version': 5 } },
        body: { changes },
      });
      // @ts-expect-error X-Expected-Version is required
      void testApi.POST('/api/orders/{order_id}/items/changes', { params: { path: { order_id } }, body: { changes } });
      const decision = { params: { path: { order_id, approval_id: 5521 } } };
      void testApi.POST('/api/orders/{order_id}/approvals/{approval_id}/decision', { ...decision, body: { decision: 'approve' } });
      // @ts-expect-error a decision is approve or reject
      void testApi.POST('/api/orders/{order_id}/approvals/{approval_id}/decision', { ...decision, body: { decision: 'maybe' } });
    };
    expect(typeChecks).toBeTypeOf('function');
    const qa = await testApi.GET('/api/qa/otp/last', { params: { query: { phone: '+79990000001' } } });
    expect([200, 404]).toContain(qa.response.status);
  });
});
