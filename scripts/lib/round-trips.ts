// PostgreSQL round trips per request, counted at the pg client (through the pool, not by hand).
// Used by the benchmark's service (scripts/lib/bench-service.ts) and by the test that keeps the
// write paths within their budget (test/runtime/round-trips.test.ts).
//
// Every pg Client query made within a request's async context counts - Kysely's statements,
// BEGIN and COMMIT alike, whatever connection of the pool runs them; queries outside any request
// (workers, the outbox feed) do not, unless run under queriesMadeBy (a worker's batch in a test or
// a benchmark). Install before the service opens its first connection: the pool's clients bind
// `query` when they connect.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';

export type RoundTrips = Record<string, { requests: number; queries: number; perRequest: number }>;

/** A request's route: its method and path with ids (UUIDs, numbers) as `{id}`. */
export const routeOf = (method: string | undefined, url: string | undefined) =>
  `${method} ${(url ?? '')
    .split('?')[0]!
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '{id}')
    .replace(/\/\d+(?=\/|$)/g, '/{id}')}`;

let installed: (() => RoundTrips) | null = null;
const current = new AsyncLocalStorage<{ queries: number }>();

/** Starts counting (once per process); the function returned answers the counts by route since its last call, and resets them. */
export async function countRoundTrips(): Promise<() => RoundTrips> {
  if (installed) return installed;
  const routes = new Map<string, { requests: number; queries: number }>();
  // The originals are kept as plain functions, called with the instance as `this`.
  const client: { query: (this: unknown, ...a: unknown[]) => unknown } = pg.Client.prototype;
  const query = client.query;
  client.query = function (this: unknown, ...args: unknown[]) {
    const request = current.getStore();
    if (request) request.queries++;
    return query.apply(this, args);
  };
  const emit = (http.Server.prototype as { emit: (this: unknown, event: string, ...args: unknown[]) => boolean }).emit;
  http.Server.prototype.emit = function (this: unknown, event: string, ...args: unknown[]) {
    if (event !== 'request') return emit.call(this, event, ...args);
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    const counted = { queries: 0 };
    res.once('finish', () => {
      const route = routeOf(req.method, req.url);
      const r = routes.get(route) ?? { requests: 0, queries: 0 };
      r.requests++;
      r.queries += counted.queries;
      routes.set(route, r);
    });
    return current.run(counted, () => emit.call(this, event, ...args));
  } as typeof http.Server.prototype.emit;
  installed = () => {
    const out = Object.fromEntries([...routes].map(([route, r]) => [route, { ...r, perRequest: r.queries / r.requests }]));
    routes.clear();
    return out;
  };
  return installed;
}

/** The queries `work` makes (a background job's pass, say), counted as a request's are: countRoundTrips() must be installed first. */
export async function queriesMadeBy<T>(work: () => Promise<T>): Promise<{ result: T; queries: number }> {
  if (!installed) throw new Error('countRoundTrips() first, before the pool opens a connection');
  const counted = { queries: 0 };
  const result = await current.run(counted, work);
  return { result, queries: counted.queries };
}

/** Parent side: asks a child process that counts (and answers `round-trips` messages) for its counts since the last ask. */
export function askRoundTrips(proc: ChildProcess): Promise<RoundTrips> {
  return new Promise((resolve) => {
    const onMessage = (m: { type: string; routes: RoundTrips }) => {
      if (m.type !== 'round-trips') return;
      proc.off('message', onMessage);
      resolve(m.routes);
    };
    proc.on('message', onMessage);
    proc.send({ type: 'round-trips' });
  });
}
