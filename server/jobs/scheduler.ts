// The one way a background job runs periodically: a pass, then a pause of `intervalMs`, then the
// next pass (passes never overlap, so a slow pass delays the next instead of piling up). A pass
// that says it left work behind (`again`) is followed by the next at once: a backlog drains at
// the pace of the work, not of the interval. Each pass is traced and a failing one is logged and
// retried at the next interval. Timers are unref'd, so a job never keeps the process alive; stop()
// waits for the pass in progress (before the pool closes).
import type { Logger } from '../../platform/logger.js';
import type { Telemetry } from '../../platform/telemetry.js';

export interface ScheduledJob {
  /** Stops scheduling and waits for the running pass to finish. */
  stop(): Promise<void>;
}

export interface JobSchedule<T> {
  /** Names the span and the log lines of a pass. */
  name: string;
  intervalMs: number;
  /** False: the job is off and stop() is a no-op. */
  enabled?: boolean;
  pass(): Promise<T>;
  /** What to log of a pass that did something (nothing is logged when it returns undefined). */
  describe?(result: T): { level: 'debug' | 'info'; fields: Record<string, unknown> } | undefined;
  /** True: the pass stopped with work still waiting, so the next one starts without the pause. */
  again?(result: T): boolean;
}

export function scheduleJob<T>(deps: { log: Logger; telemetry: Telemetry }, job: JobSchedule<T>): ScheduledJob {
  if (job.enabled === false || job.intervalMs <= 0) return { stop: async () => {} };
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  const next = (delayMs = job.intervalMs) => {
    if (stopped) return;
    timer = setTimeout(run, delayMs);
    timer.unref();
  };
  const run = () => {
    let again = false;
    running = deps.telemetry
      .inSpan(`${job.name} pass`, () => job.pass())
      .then((result) => {
        const line = job.describe?.(result);
        if (line) deps.log[line.level](job.name, line.fields);
        again = job.again?.(result) ?? false;
      })
      // A failed pass always waits the interval: a failure repeated at once would only add load.
      .catch((err: unknown) => deps.log.warn(`${job.name} pass failed`, { err: (err as Error).message }))
      .finally(() => {
        running = null;
        // A timer even when at once: the event loop serves requests between passes.
        next(again ? 0 : job.intervalMs);
      });
  };
  next();
  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
