// npm run bench:sockets (also part of npm run bench): the order tracking sockets at a rush's scale,
// on a real PostgreSQL (BENCH_DATABASE_URL, or an embedded one in a temporary folder). Not a test.
//   BENCH_SOCKETS (10,000) tracking sockets, one customer each, held by the service in a child
//   process pinned to core 0; outbox events committed at BENCH_EVENTS_PER_SECOND (10,000) in total
//   for 2 x BENCH_SECONDS (5) seconds, each to one random customer, built in SQL by up to 4
//   writers and announced by the writer pool's wake-up, as the service's own writes are.
// Figures: RSS per socket (after GC; target < 8 KB) and the commit-to-delivery latency (p50, p99,
// max; target p99 < 150 ms). An event's clock starts when the INSERT that wrote it has committed
// (its promise resolved here), not at its occurred_at, which is set before the insert is even sent;
// it stops when the socket's message arrives. An event that never arrives fails the run.
import { spawnSync } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { connect, type Database } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { outboxInsertSql, type TrackingEnvelope } from '../db/queries/outbox.js';
import { loadConfig } from '../platform/config.js';
import { TokenService } from '../platform/tokens.js';
import { insertBenchCustomers } from './lib/bench-accounts.js';
import { openBenchDatabase } from './lib/bench-database.js';
import { BENCH_JWT_SECRET, startBenchService, type BenchService } from './lib/bench-service.js';

/** How long after the last commit the run waits for events still on their way. */
const DRAIN_MS = 10_000;
const CONNECT_BATCH = 250;
const EVENT_ID_KEY = Buffer.from('"event_id":"');
const MAX_INSERT_ROWS = 2000;
/** Inserts in flight at once (the bench's pool has 4 connections). */
const WRITERS = 4;

export interface SocketBenchResult {
  connectSeconds: number;
  rssBefore: number;
  rssAfter: number;
  rssPerSocketBytes: number;
  /** RSS after the events were delivered (after GC): what the fan-out left behind. */
  rssAfterEvents: number;
  expected: number;
  /** The rate the events were committed at (below the one asked for when the writer fell behind). */
  committedPerSecond: number;
  delivered: number;
  duplicates: number;
  p50: number;
  p99: number;
  max: number;
  /** Event loop delay p99 of this process (the clients and the writer) while the events ran: a slow client inflates the latency. */
  clientLagP99Ms: number;
  /** Event loop delay p99 of the service since its previous RSS report, i.e. while the events ran. */
  serviceLagP99Ms: number;
}

/**
 * One INSERT of an `order.changed` for each of `customerIds` (a random order each), built by
 * PostgreSQL as the service's own order changes build theirs (outboxInsertSql): the writer sends
 * only the customers, so that building 10,000 events a second does not slow the clients sharing
 * this process. Answers the events' ids once committed.
 */
async function insertBenchEvents(db: Database, customerIds: string[]): Promise<string[]> {
  const insert = outboxInsertSql(
    {
      type: 'order.changed',
      event_id: sql`e.event_id`,
      customer_id: sql`e.customer_id`,
      order_id: sql`e.order_id`,
      payload: sql<TrackingEnvelope<'order.changed'>>`jsonb_build_object(
        'type', 'order.changed', 'event_id', e.event_id, 'notification_id', NULL,
        'occurred_at', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'data', jsonb_build_object('event_id', e.event_id, 'order_id', e.order_id, 'order_version', 2, 'status', 'confirmed', 'changes', jsonb_build_array('status')))`,
    },
    sql`FROM e RETURNING event_id`,
  );
  const { rows } = await sql<{ event_id: string }>`
    WITH e AS (SELECT gen_random_uuid() AS event_id, gen_random_uuid() AS order_id, c AS customer_id FROM unnest(${customerIds}::uuid[]) c)
    ${insert}`.execute(db);
  return rows.map((r) => r.event_id);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

export async function benchSockets(
  child: BenchService,
  db: Database,
  { sockets: count, eventsPerSecond, seconds }: { sockets: number; eventsPerSecond: number; seconds: number },
): Promise<SocketBenchResult> {
  const tokens = new TokenService(loadConfig({ ...process.env, JWT_SECRET: BENCH_JWT_SECRET }).jwt);
  const customers = await insertBenchCustomers(db, tokens, count);
  const before = await child.rss();
  const url = `ws://127.0.0.1:${child.port}/ws/orders/tracking/`;
  const arrivedAt = new Map<string, number>();
  let duplicates = 0;
  const sockets: WebSocket[] = [];
  const t0 = performance.now();
  for (let i = 0; i < customers.length; i += CONNECT_BATCH) {
    await Promise.all(
      customers.slice(i, i + CONNECT_BATCH).map(
        (c) =>
          new Promise<void>((resolve, reject) => {
            // The clients share this process with the writer: each message costs them as little as it
            // can (no UTF-8 validation, the event id found rather than the JSON parsed), or their own
            // delay would be measured as the service's.
            const ws = new WebSocket(url, {
              headers: { authorization: `Bearer ${c.token}` },
              perMessageDeflate: false,
              skipUTF8Validation: true,
            });
            ws.on('message', (m: Buffer) => {
              const now = performance.now();
              const at = m.indexOf(EVENT_ID_KEY) + EVENT_ID_KEY.length;
              const eventId = m.toString('latin1', at, at + 36);
              if (arrivedAt.has(eventId)) duplicates++;
              else arrivedAt.set(eventId, now);
            });
            ws.once('open', () => resolve());
            ws.once('error', reject);
            ws.once('close', (code) => reject(new Error(`socket closed with ${code}`)));
            sockets.push(ws);
          }),
      ),
    );
  }
  const connectSeconds = (performance.now() - t0) / 1000;
  const after = await child.rss();
  if (after.sockets !== count) throw new Error(`the service holds ${after.sockets} sockets, expected ${count}`);

  // Events at a steady rate: every 10 ms one INSERT of the events due by then, each to one random
  // customer, with up to WRITERS inserts in flight (as many writers commit at once in a rush).
  const committedAt = new Map<string, number>();
  const total = eventsPerSecond * seconds;
  let written = 0;
  const inFlight = new Set<Promise<void>>();
  const clientLag = monitorEventLoopDelay({ resolution: 10 });
  clientLag.enable();
  const started = performance.now();
  while (written < total) {
    if (inFlight.size < WRITERS) {
      // At most MAX_INSERT_ROWS per INSERT: a writer that fell behind catches up in several.
      const due = Math.min(total, written + MAX_INSERT_ROWS, Math.floor(((performance.now() - started) / 1000) * eventsPerSecond) + 1);
      const customerIds: string[] = [];
      for (; written < due; written++) customerIds.push(customers[Math.floor(Math.random() * customers.length)]!.customerId);
      if (customerIds.length) {
        const insert = insertBenchEvents(db, customerIds).then((eventIds) => {
          const now = performance.now();
          for (const id of eventIds) committedAt.set(id, now);
          inFlight.delete(insert);
        });
        inFlight.add(insert);
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(inFlight);
  const writeSeconds = (performance.now() - started) / 1000;
  const deadline = performance.now() + DRAIN_MS;
  while (arrivedAt.size < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  clientLag.disable();
  const afterEvents = await child.rss();
  for (const ws of sockets) {
    ws.removeAllListeners('close');
    ws.terminate();
  }
  const latencies: number[] = [];
  for (const [eventId, at] of arrivedAt) {
    const committed = committedAt.get(eventId);
    if (committed !== undefined) latencies.push(Math.max(0, at - committed));
  }
  latencies.sort((a, b) => a - b);
  return {
    connectSeconds,
    rssBefore: before.rss,
    rssAfter: after.rss,
    rssPerSocketBytes: (after.rss - before.rss) / count,
    rssAfterEvents: afterEvents.rss,
    expected: total,
    committedPerSecond: total / writeSeconds,
    delivered: latencies.length,
    duplicates,
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    max: Math.round(latencies.at(-1) ?? NaN),
    clientLagP99Ms: clientLag.percentile(99) / 1e6,
    serviceLagP99Ms: afterEvents.loopDelayP99Ms,
  };
}

/**
 * The scenario on a database of its own and a fresh service, printed with its figures. Sets a
 * failing exit code when an event was lost. BENCH_SOCKETS=0 skips it.
 */
export async function runSocketBench(): Promise<SocketBenchResult | null> {
  const count = Number(process.env.BENCH_SOCKETS ?? 10_000);
  if (count === 0) return null;
  const eventsPerSecond = Number(process.env.BENCH_EVENTS_PER_SECOND ?? 10_000);
  const seconds = Number(process.env.BENCH_SECONDS ?? 5) * 2;
  const database = await openBenchDatabase('grocery_bench_sockets');
  const handle = connect(database.url, { max: 4 });
  let child: BenchService | null = null;
  try {
    await migrateToLatest(handle.db);
    child = await startBenchService(database.url);
    const s = await benchSockets(child, handle.db, { sockets: count, eventsPerSecond, seconds });
    const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
    console.log('');
    console.log(
      `${count} tracking sockets connected in ${s.connectSeconds.toFixed(1)} s; service RSS ${mib(s.rssBefore)} -> ${mib(s.rssAfter)} MiB, ${mib(s.rssAfterEvents)} MiB after the events`,
    );
    console.log(`RSS per socket    ${(s.rssPerSocketBytes / 1024).toFixed(2)} KB  (target < 8 KB)`);
    console.log(
      `events at ${eventsPerSecond}/s for ${seconds} s (committed at ${Math.round(s.committedPerSecond)}/s): ${s.delivered}/${s.expected} delivered (${s.duplicates} duplicates); commit-to-socket p50 ${s.p50} ms, p99 ${s.p99} ms (target < 150), max ${s.max} ms`,
    );
    console.log(`event loop delay p99: service ${s.serviceLagP99Ms.toFixed(1)} ms, bench clients ${s.clientLagP99Ms.toFixed(1)} ms`);
    const rate = eventsPerSecond % 1000 === 0 ? `${eventsPerSecond / 1000}k` : String(eventsPerSecond);
    console.log(`figure rss-per-socket-kb ${(s.rssPerSocketBytes / 1024).toFixed(2)}`);
    console.log(`figure socket-p50-ms-${rate}-eps ${s.p50}`);
    console.log(`figure socket-p99-ms-${rate}-eps ${s.p99}`);
    console.log(`figure socket-max-ms-${rate}-eps ${s.max}`);
    console.log(`figure socket-events-delivered ${s.delivered}/${s.expected}`);
    console.log(`figure socket-events-lost ${s.expected - s.delivered}`);
    if (s.delivered < s.expected) {
      console.error(`FAIL: ${s.expected - s.delivered} of ${s.expected} events never reached their socket`);
      process.exitCode = 1;
    }
    return s;
  } finally {
    if (child) await child.stop();
    await handle.close();
    await database.close();
  }
}

if (process.argv[1] === import.meta.filename) {
  // The clients run on the other core than the service's (scripts/bench.ts does the same).
  spawnSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  await runSocketBench();
}
