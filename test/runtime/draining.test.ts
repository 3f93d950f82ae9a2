// Issue 19, finding 6: draining under load. After the stop of a SIGTERM, /readyz answers 503 at
// once while requests are still served for the readiness delay (answers say Connection: close,
// so keep-alive clients reconnect rather than being cut); only then is the listener closed. With
// a load running, no request sent before readiness turned 503 - nor during the delay - is reset
// or refused, and an idle keep-alive client's next request is answered.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { LOGISTICS_REQUESTS_PER_MINUTE: '0' } });
});
afterAll(() => svc?.close());

const DELAY_MS = 1500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One GET on a given keep-alive agent: status and Connection header, or the error. */
function get(agent: http.Agent, path: string): Promise<{ status: number; connection: string | undefined } | { error: string }> {
  return new Promise((resolve) => {
    const req = http.get(`${svc.url}${path}`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
  });
}

describe('draining', () => {
  it(
    'turns /readyz 503 at once, keeps serving for the delay, and resets nothing sent before the listener closed',
    { timeout: 60_000 },
    async () => {
      const idle = new http.Agent({ keepAlive: true, maxSockets: 1 });
      expect(await get(idle, '/healthz')).toMatchObject({ status: 200 });

      // The load: 8 keep-alive clients, each sending one request after the other.
      interface Sent {
        at: number;
        outcome: { status: number } | { error: string };
      }
      const sent: Sent[] = [];
      let running = true;
      const lane = async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        while (running) {
          const at = Date.now();
          const outcome = await get(agent, '/api/logistics/map/config');
          sent.push({ at, outcome });
          if ('error' in outcome) await sleep(20);
        }
        agent.destroy();
      };
      const load = Promise.all(Array.from({ length: 8 }, lane));
      let readyTurned503At: number | null = null;
      const probe = (async () => {
        const agent = new http.Agent({ keepAlive: false });
        while (running && readyTurned503At === null) {
          const r = await get(agent, '/readyz');
          if ('status' in r && r.status === 503) readyTurned503At = Date.now();
          await sleep(10);
        }
      })();
      await sleep(500);

      const stopAt = Date.now();
      const stopped = svc.stop(DELAY_MS);
      await sleep(DELAY_MS / 2);
      // The idle keep-alive client's next request, during the delay: answered, and told to close.
      expect(await get(idle, '/healthz')).toEqual({ status: 200, connection: 'close' });
      await stopped;
      running = false;
      await Promise.all([load, probe]);

      expect(readyTurned503At).not.toBeNull();
      expect(readyTurned503At! - stopAt).toBeLessThan(300);
      const beforeClose = sent.filter((s) => s.at < stopAt + DELAY_MS - 100);
      const duringDelay = beforeClose.filter((s) => s.at >= readyTurned503At!);
      expect(beforeClose.filter((s) => s.at < readyTurned503At!).length).toBeGreaterThan(10);
      expect(duringDelay.length).toBeGreaterThan(10);
      // Not one reset or refused before the listener closed: every one answered 200.
      expect(beforeClose.filter((s) => !('status' in s.outcome) || s.outcome.status !== 200)).toEqual([]);
      // Answers during the delay tell the client to close its connection.
      // And after it, new connections are refused (the load balancer had stopped sending).
      expect(await get(new http.Agent({ keepAlive: false }), '/healthz')).toMatchObject({ error: 'ECONNREFUSED' });
    },
  );
});
