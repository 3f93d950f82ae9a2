// The service's business time: every "now" a handler, job or query parameter uses is read here,
// through `deps.clock`, so a test can move time forward instead of sleeping. Pure rules in
// domain/ take `now` as a parameter. Not business time: the logger's timestamps (always
// `systemClock`, never a test's clock) and the latency measurements of metrics and tracing
// (performance.now, hrtime) are observability; timers (setTimeout for polling, retries, back-off)
// wait real time; SQL now() is the database's clock.

export interface Clock {
  now(): Date;
  /** Epoch milliseconds. */
  nowMs(): number;
}

/** The wall clock. */
export const systemClock: Clock = {
  now: () => new Date(),
  nowMs: () => Date.now(),
};

/**
 * The clock of a test service: the wall clock shifted by what the test advanced (so time still
 * passes, and rows written with SQL now() stay close), or a fixed time once `set`.
 */
export class TestClock implements Clock {
  private offsetMs = 0;
  private fixedMs: number | null = null;

  now(): Date {
    return new Date(this.nowMs());
  }

  nowMs(): number {
    return this.fixedMs ?? Date.now() + this.offsetMs;
  }

  /** Moves time forward (or back, with a negative `ms`). */
  advance(ms: number): void {
    if (this.fixedMs !== null) this.fixedMs += ms;
    else this.offsetMs += ms;
  }

  /** Stops time at `at`; `advance` moves it from there. */
  set(at: Date | number): void {
    this.fixedMs = typeof at === 'number' ? at : at.getTime();
  }

  /** Back to the wall clock. */
  reset(): void {
    this.offsetMs = 0;
    this.fixedMs = null;
  }
}
