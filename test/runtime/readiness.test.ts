// An instance whose event loop is blocked says so: /readyz turns 503 while the loop's delay is above
// READINESS_MAX_EVENT_LOOP_DELAY_MS, so a balancer stops sending it traffic, and turns back when
// the loop has caught up; /healthz (liveness) stays 200, and /metrics shows the delay. The test
// runs in the service's own process, so blocking the test's thread blocks the service's loop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchEventLoop } from '../../platform/event-loop.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { READINESS_MAX_EVENT_LOOP_DELAY_MS: '300' } });
});
afterAll(() => svc?.close());

/** Keeps the thread (and so the service's event loop) busy for `ms`. */
function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* busy */
  }
}

const tick = () => new Promise((r) => setTimeout(r, 20));

describe('/readyz and the event loop', () => {
  it('answers 503 event_loop_delayed after the loop was blocked beyond the limit, then ready again once it caught up', async () => {
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    await tick();
    blockFor(700);
    await tick();
    const stalled = await fetch(`${svc.url}/readyz`);
    expect(stalled.status).toBe(503);
    expect(stalled.headers.get('retry-after')).toBe('1');
    const body = (await stalled.json()) as { status: string; event_loop_delay_ms: number };
    expect(body.status).toBe('event_loop_delayed');
    expect(body.event_loop_delay_ms).toBeGreaterThanOrEqual(500);
    // Liveness is not readiness: a restart would not help a loop that is only behind.
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    const delay = Number(/^grocery_event_loop_delay_seconds (\S+)$/m.exec(metrics)?.[1]);
    expect(delay).toBeGreaterThanOrEqual(0.5);

    // Two windows of about a second without a long delay: ready again.
    const deadline = performance.now() + 5000;
    let status = 503;
    while (status === 503 && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      status = (await fetch(`${svc.url}/readyz`)).status;
    }
    expect(status).toBe(200);
  });

  it('never calls the loop stalled with a limit of 0, and reports its delay all the same', async () => {
    const watch = watchEventLoop({ limitMs: 0, windowMs: 1000 });
    try {
      await tick();
      blockFor(300);
      await tick();
      expect(watch.delayMs()).toBeGreaterThanOrEqual(200);
      expect(watch.stalled()).toBe(false);
    } finally {
      watch.stop();
    }
  });
});
