// The scheduler of background jobs (server/jobs/scheduler.ts): passes never overlap and a pause
// of the interval follows each, except after a pass that left work waiting (`again`), which is
// followed by the next at once; a failed pass always waits the interval.
import { describe, expect, it } from 'vitest';
import { scheduleJob } from '../../server/jobs/scheduler.js';
import { createLogger } from '../../platform/logger.js';
import { noTelemetry } from '../../platform/telemetry.js';

const deps = { log: createLogger('silent'), telemetry: noTelemetry };
const INTERVAL_MS = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (done: () => boolean) => {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 10 * INTERVAL_MS) throw new Error('the passes did not come');
    await sleep(10);
  }
};

/** A job whose first `waiting` passes say work is left; returns when each pass started, relative to the schedule. */
function job(waiting: number, opts: { fail?: boolean } = {}) {
  const starts: number[] = [];
  const t0 = performance.now();
  let running = 0;
  let overlapped = false;
  const scheduled = scheduleJob(deps, {
    name: 'test-job',
    intervalMs: INTERVAL_MS,
    pass: async () => {
      overlapped ||= running > 0;
      running++;
      starts.push(performance.now() - t0);
      await sleep(5);
      running--;
      if (opts.fail) throw new Error('the database is away');
      return { left: starts.length <= waiting };
    },
    again: (r) => r.left,
  });
  return { starts, scheduled, overlapped: () => overlapped };
}

describe('the job scheduler', () => {
  it('runs the next pass at once while a pass leaves work waiting, then waits the interval again', async () => {
    const j = job(3);
    await until(() => j.starts.length === 4); // the first pass, then three more at once
    await sleep(INTERVAL_MS / 2); // the fourth left nothing: the fifth comes an interval later
    await j.scheduled.stop();
    expect(j.starts.length).toBe(4);
    for (let i = 1; i < 4; i++) expect(j.starts[i]! - j.starts[i - 1]!).toBeLessThan(INTERVAL_MS / 2);
    expect(j.overlapped()).toBe(false);
  });

  it('waits the interval after a pass that left nothing, and after a failed one', async () => {
    for (const start of [() => job(0), () => job(10, { fail: true })]) {
      const j = start();
      await until(() => j.starts.length === 2);
      await j.scheduled.stop();
      expect(j.starts.length).toBe(2);
      expect(j.starts[1]! - j.starts[0]!).toBeGreaterThanOrEqual(INTERVAL_MS - 5);
    }
  });
});
