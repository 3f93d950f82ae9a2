// Graceful shutdown: in-flight requests finish, new connections are refused, WebSockets close
// with 1001, and the service reports it is not ready while draining.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTestService } from '../support/service.js';
import { signInCustomer } from '../support/accounts.js';

describe('shutdown', () => {
  it('drains in-flight requests and closes sockets with 1001', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inHandler = new Promise<void>((r) => (entered = r));
    const svc = await startTestService({
      handlers: {
        getMapConfig: async () => {
          entered();
          await gate;
          return {
            status: 200,
            body: {
              enabled: true,
              map_public_token: null,
              style_uri: null,
              search_min_length: 2,
              search_max_results: 7,
              search_debounce_ms: 400,
            },
          };
        },
      },
    });
    const customer = await signInCustomer(svc);
    const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/`, { headers: customer.auth });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const wsClosed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));

    const slow = svc.client.call.GET('/api/logistics/map/config');
    await inHandler;
    const stopped = svc.close();
    expect(await wsClosed).toBe(1001);
    await sleep(50);
    // While draining: the in-flight request is still running; new connections are refused.
    await expect(fetch(`${svc.url}/healthz`)).rejects.toThrow();
    release();
    const r = await slow;
    expect(r.status).toBe(200);
    expect(r.body.enabled).toBe(true);
    await stopped;
  });
});
