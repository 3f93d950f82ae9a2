// The service under load in a benchmark: the whole service (startService) in a child process
// pinned to core 0, configured as in PROD where it matters for cost (no response re-validation,
// no request log), on a database the scenario prepared. The load generator stays in the parent.
//
// The child answers two IPC messages: `rss` (its RSS after a GC, and its tracking sockets) and
// `exit`. BENCH_CPU_PROF=<dir> makes the child write a V8 CPU profile there when it ends, to see
// where a request's CPU goes.
import { fork, type ChildProcess } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { askRoundTrips, countRoundTrips } from './round-trips.js';

export const BENCH_JWT_SECRET = 'bench-secret-bench-secret-bench-secret-00';

const CHILD_FLAG = '--bench-service';

export interface BenchService {
  proc: ChildProcess;
  port: number;
  /**
   * RSS of the service after a full GC, how many tracking sockets it holds, and the p99 of its
   * event loop delay since the previous call (or its start).
   */
  rss(): Promise<{ rss: number; sockets: number; loopDelayP99Ms: number }>;
  /**
   * PostgreSQL round trips per request since the last call, by route (method and path with ids
   * as `{id}`): every query the service's pg clients sent while serving a request of that route,
   * counted at the client (so through the pool, BEGIN and COMMIT included), divided by the
   * requests of the route that finished. Background passes (workers, the outbox feed) are not
   * counted: they run outside any request.
   */
  roundTrips(): Promise<Record<string, { requests: number; queries: number; perRequest: number }>>;
  /** Ends the service: cleanly when profiling (so the profile is written), else at once. */
  stop(): Promise<void>;
}

const cpuProfileFlags = () => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []);

/** `env` adds settings of the service (e.g. a cache turned off for one measurement). */
export async function startBenchService(databaseUrl: string, env: Record<string, string> = {}): Promise<BenchService> {
  const proc = fork(import.meta.filename, [CHILD_FLAG], {
    env: {
      ...process.env,
      APP_ENV: 'TEST',
      DATABASE_URL: databaseUrl,
      JWT_SECRET: BENCH_JWT_SECRET,
      LOG_LEVEL: 'silent',
      // As in PROD: responses are not re-validated against the spec on every request.
      VALIDATE_RESPONSES: 'false',
      SEED_DEMO_DATA: 'false',
      // Compiled before the child reports ready (below), not in the background during a measurement.
      WARM_VALIDATORS: 'false',
      HOST: '127.0.0.1',
      PORT: '0',
      DB_POOL_MAX: '20',
      // The load generator saturates the pinned core on purpose, so requests queue for a connection
      // (and a scenario's 32 finishes for the same stock rows) longer than production lets them
      // before answering 503: the bench measures throughput, not the shedding.
      DB_POOL_TIMEOUT_MS: '10000',
      DB_LOCK_TIMEOUT_MS: '10000',
      // One load generator is one client address: the public per-IP budget would measure the limiter.
      LOGISTICS_REQUESTS_PER_MINUTE: '0',
      ...env,
    },
    execPath: 'taskset',
    execArgv: ['-c', '0', process.execPath, '--expose-gc', ...cpuProfileFlags(), '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.on('message', (m: { type: string; port: number }) => m.type === 'ready' && resolve(m.port));
    proc.on('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  return {
    proc,
    port,
    rss: () =>
      new Promise((resolve) => {
        const onMessage = (m: { type: string; rss: number; sockets: number; loopDelayP99Ms: number }) => {
          if (m.type !== 'rss') return;
          proc.off('message', onMessage);
          resolve(m);
        };
        proc.on('message', onMessage);
        proc.send({ type: 'rss' });
      }),
    roundTrips: () => askRoundTrips(proc),
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      if (!process.env.BENCH_CPU_PROF) {
        proc.kill('SIGKILL');
        return;
      }
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.send({ type: 'exit' });
      await exited;
    },
  };
}

/** Child side: the service on DATABASE_URL, reporting its port over IPC. */
async function serveInChild(): Promise<void> {
  const roundTrips = await countRoundTrips();
  const { startService } = await import('../../server/runtime.js');
  const { loadConfig } = await import('../../platform/config.js');
  const service = await startService({ config: loadConfig(process.env) });
  await service.app.warmValidators();
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  process.on('message', (m: { type: string }) => {
    // A clean exit writes the CPU profile (node --cpu-prof writes it on exit).
    if (m.type === 'exit') process.exit(0);
    if (m.type === 'round-trips') {
      process.send!({ type: 'round-trips', routes: roundTrips() });
      return;
    }
    if (m.type !== 'rss') return;
    (globalThis as { gc?: () => void }).gc?.();
    const loopDelayP99Ms = loopDelay.percentile(99) / 1e6;
    loopDelay.reset();
    process.send!({ type: 'rss', rss: process.memoryUsage().rss, sockets: service.realtime.connections(), loopDelayP99Ms });
  });
  process.send!({ type: 'ready', port: service.port });
}

if (process.argv.includes(CHILD_FLAG)) await serveInChild();
