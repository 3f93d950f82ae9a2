// How late the event loop runs, for readiness and metrics. A loop that is blocked (a request that
// computes for seconds, a saturated instance) serves every request that late, so the instance
// says it is not ready and the balancer sends its traffic elsewhere until the loop catches up.
// The figure is the longest delay of the current and the previous window (about a second each),
// as @fastify/under-pressure samples it, so one GC pause does not stay reported for long.
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface EventLoopWatch {
  /** The longest event-loop delay of the last one to two windows, in milliseconds. */
  delayMs(): number;
  /** Whether that delay is above the configured limit (never, when the limit is 0). */
  stalled(): boolean;
  stop(): void;
}

/** Resolution of the delay histogram: delays below it are not told apart. */
const RESOLUTION_MS = 10;

export function watchEventLoop({ limitMs, windowMs = 1000 }: { limitMs: number; windowMs?: number }): EventLoopWatch {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let previousMaxMs = 0;
  const timer = setInterval(() => {
    previousMaxMs = histogram.max / 1e6;
    histogram.reset();
  }, windowMs);
  timer.unref();
  // The histogram reports its maximum as 0 before its first sample, and the delay of a tick
  // includes the resolution itself.
  const delayMs = () => Math.max(0, Math.max(previousMaxMs, histogram.max / 1e6) - RESOLUTION_MS);
  return {
    delayMs,
    stalled: () => limitMs > 0 && delayMs() > limitMs,
    stop() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
