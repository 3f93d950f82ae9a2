// The outbox as a live feed for this instance's WebSocket channels. Events are written to
// `outbox_events` in the transaction that changes state; after the commit, the writer's pool sends
// a NOTIFY of its own (db/connection.ts: not in the writing transaction, whose commit would
// otherwise take the database-wide notify lock); this feed LISTENs on one dedicated connection and,
// woken (or every POLL_MS regardless), reads the rows after the last id it read, and hands every
// row, once, to each subscriber (order tracking, the picker channel). So N instances behind a load
// balancer behave as one.
//
// Ids are taken at insert and commits come in another order: a row with a lower id may become
// visible after a higher one was read. Ids skipped by a read are gaps, asked for again by every
// read for GAP_MS (a rolled-back insert leaves one for good).
//
// A NOTIFY reaches only listeners connected at commit, so what the instance may have missed is
// read back from the outbox: rows no instance published (one died between commit and fan-out),
// and after a reconnect every row written since shortly before the connection broke.
//
// Rows are handed out in the order they were read, batch after batch, so that per order they
// arrive in version order (OrderTrackingMessage promises it): one order's changes are serialized
// by its row lock, so their ids and commits come in version order, and a read that sees a version
// sees every earlier one. One read runs at a time; after a (re)connect, the catch-up scan is
// handed out before any read that follows it.
import { sql } from 'kysely';
import pg from 'pg';
import { CONTENT_CHANGED_CHANNEL } from '../../db/queries/content.js';
import { markOutboxEventsPublished, type OutboxEvent } from '../../db/queries/outbox.js';
import type { AppDeps } from '../../services/deps.js';

/**
 * An outbox row as subscribers get it: its `type` decides its `payload` (db/queries/outbox.ts,
 * derived from the spec's message schemas). The reads below are where the stored jsonb takes
 * that type; rows of a type no producer writes any more are handed out too, and ignored.
 */
export type OutboxRow = OutboxEvent;

export interface OutboxFeed {
  /** Calls `deliver` with every event from now on; returns the unsubscribe function. */
  subscribe(deliver: (row: OutboxRow) => void): () => void;
  /** Stops listening and marks what was delivered as published. */
  close(): Promise<void>;
}

/** Application name of the LISTEN connection (tests cut it to simulate a lost connection). */
export const LISTENER_APPLICATION_NAME = 'grocery-service-listener';
/** How many delivered event ids an instance remembers to fan each event out once. */
const RECENT_EVENTS = 10_000;
const MARK_PUBLISHED_EVERY_MS = 250;
/** The catch-up scan reads back at most this far and this many rows. */
const CATCH_UP_WINDOW_SECONDS = 3600;
const CATCH_UP_LIMIT = 10_000;
/** created_at is the writing transaction's start: a longer transaction may commit after the break. */
const CATCH_UP_MARGIN_MS = 60_000;
const RECONNECT_DELAY_MS = 1000;
/**
 * A read without a wake-up, for writers outside the service's pools (psql) and wake-ups lost with
 * the listener's connection: every pool of the service wakes the feeds after its commits.
 */
const POLL_MS = 10_000;
/** How long an id skipped by a read is asked for again (a transaction this long after its insert is missed until a catch-up). */
const GAP_MS = 60_000;
const GAPS_MAX = 10_000;
/** Rows per read; a full read is followed by the next at once. */
const READ_LIMIT = 5000;
/**
 * Reads whose rows wait to be handed out, at most: the next read starts as soon as the previous
 * one's rows are in (not after they were handed out), so reading and fanning out overlap, but
 * rows never pile up in memory faster than the sockets take them.
 */
const READS_AHEAD = 2;
/** Rows handed out before the feed yields to the event loop (pings, upgrades, requests wait no longer). */
export const HAND_OUT_SLICE = 250;
const GAP_WINDOW = 1000;

/**
 * The catch-up scan: the last hour's events that no instance published (and, after a broken
 * connection, every event since shortly before it broke). Read through the BRIN index of
 * created_at (outbox_events_created): the hour's pages, whatever the week of events kept.
 */
export function outboxCatchUpQuery(db: AppDeps['db'], brokenAt: Date | null) {
  return db
    .selectFrom('outbox_events')
    .select(['id', 'event_id', 'type', 'customer_id', 'payload'])
    .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${CATCH_UP_WINDOW_SECONDS})`)
    .where((eb) =>
      brokenAt
        ? eb.or([eb('published_at', 'is', null), eb('created_at', '>=', new Date(brokenAt.getTime() - CATCH_UP_MARGIN_MS))])
        : eb('published_at', 'is', null),
    )
    .orderBy('id')
    .limit(CATCH_UP_LIMIT);
}

/**
 * `caches`, when given, hears on the same connection which content tables changed (the triggers'
 * NOTIFY content_changed, services/content-cache.ts), and after every (re)connect that it may
 * have missed some.
 */
export async function startOutboxFeed(
  deps: Pick<AppDeps, 'db' | 'log' | 'clock'> & Partial<Pick<AppDeps, 'caches'>>,
  connectionString: string,
): Promise<OutboxFeed> {
  const { db, log } = deps;
  const subscribers = new Set<(row: OutboxRow) => void>();

  // Each event is handed out once per instance (a catch-up scan may meet rows a notification
  // already brought), and marked published once some instance has handed it out.
  const delivered = new Set<number>();
  let toMark: number[] = [];
  const deliverOnce = (row: OutboxRow) => {
    if (delivered.has(row.id)) return;
    delivered.add(row.id);
    if (delivered.size > RECENT_EVENTS) delivered.delete(delivered.values().next().value!);
    toMark.push(row.id);
    for (const deliver of subscribers) {
      try {
        deliver(row);
      } catch (err) {
        log.error('outbox event delivery failed', { err: (err as Error).message, event_id: row.event_id });
      }
    }
  };
  // One marking at a time: under a backlog an UPDATE of thousands of rows outlasts the interval,
  // and overlapping ones would only compete for the pool and PostgreSQL's CPU.
  let marking: Promise<void> | null = null;
  const markPublished = (): Promise<void> => {
    if (marking || !toMark.length) return marking ?? Promise.resolve();
    const ids = toMark;
    toMark = [];
    marking = markOutboxEventsPublished(db, ids)
      .catch((err: Error) => log.warn('marking outbox events published failed', { err: err.message }))
      .finally(() => {
        marking = null;
      });
    return marking;
  };
  const marker = setInterval(() => void markPublished(), MARK_PUBLISHED_EVERY_MS);
  marker.unref();

  // Batches are handed out in the order their reads began, whatever order the reads end in.
  let handedOut: Promise<void> = Promise.resolve();
  const handOutInOrder = (read: Promise<OutboxRow[]>, failure: string, then?: (rows: OutboxRow[]) => void) => {
    // Settled at once: a read failing while an earlier batch is pending is no unhandled rejection.
    const outcome = read.then(
      (rows) => ({ rows }),
      (err: Error) => ({ err }),
    );
    handedOut = handedOut.then(async () => {
      const result = await outcome;
      if ('err' in result) {
        log.error(failure, { err: result.err.message });
        return;
      }
      const { rows } = result;
      for (let i = 0; i < rows.length; i += HAND_OUT_SLICE) {
        if (i > 0) await new Promise((resolve) => setImmediate(resolve));
        for (const row of rows.slice(i, i + HAND_OUT_SLICE)) deliverOnce(row);
      }
      then?.(rows);
    });
  };

  const catchUp = (brokenAt: Date | null) => {
    const read = outboxCatchUpQuery(db, brokenAt).execute() as Promise<OutboxRow[]>;
    handOutInOrder(read, 'outbox catch-up failed', (rows) => {
      if (rows.length) log.info('outbox catch-up delivered events', { events: rows.length, reconnect: brokenAt !== null });
    });
  };

  // New rows: those after the last id read, and the gaps it left. Wake-ups arriving together (or
  // during a read) make one read (at 1,000 events/s, one query per event would be the fan-out's
  // bottleneck). While a new connection's catch-up scan is not yet queued, reads wait for it.
  let lastId: number | null = null; // set by the first catch-up
  const gaps = new Map<number, number>(); // id -> until when it is asked for
  let reading = false;
  let wanted = false;
  let awaitingCatchUp = true;
  let readsAwaitingHandOut = 0;
  const mayRead = () => !reading && !awaitingCatchUp && lastId !== null && readsAwaitingHandOut < READS_AHEAD;
  const readSoon = () => {
    wanted = true;
    if (mayRead()) setImmediate(readNew);
  };
  const readNew = () => {
    if (!wanted || !mayRead() || lastId === null) return;
    reading = true;
    wanted = false;
    readsAwaitingHandOut++;
    const now = performance.now(); // gap deadlines: a monotonic clock, not the wall clock
    for (const [id, until] of gaps) if (until < now) gaps.delete(id);
    const after = lastId;
    const asked = [...gaps.keys()];
    // Two index scans of the primary key (an OR of both could plan as a scan of a week's events).
    const read = sql<OutboxRow>`
      SELECT r.id, r.event_id, r.type, r.customer_id, r.payload FROM (
        (SELECT id, event_id, type, customer_id, payload FROM outbox_events WHERE id > ${after} ORDER BY id LIMIT ${READ_LIMIT})
        UNION ALL
        (SELECT id, event_id, type, customer_id, payload FROM outbox_events WHERE id = ANY(${asked}::bigint[]) AND id <= ${after})
      ) r ORDER BY r.id`
      .execute(db)
      .then((r) => r.rows);
    // Where the next read starts is known once the rows are in; it may begin while these are
    // still being handed out (handOutInOrder keeps the batches in order).
    const advanced = read.then(
      (rows) => {
        let last = after;
        for (const row of rows) {
          gaps.delete(row.id);
          if (row.id > last) {
            for (let id = last + 1; id < row.id && gaps.size < GAPS_MAX; id++) gaps.set(id, now + GAP_MS);
            last = row.id;
          }
        }
        lastId = Math.max(lastId ?? last, last);
        if (rows.length >= READ_LIMIT) wanted = true;
      },
      () => {},
    );
    handOutInOrder(read, 'outbox delivery failed');
    const handedOutHere = handedOut;
    void advanced.then(() => {
      reading = false;
      if (wanted) readSoon();
    });
    void handedOutHere.finally(() => {
      readsAwaitingHandOut--;
      if (wanted) readSoon();
    });
  };
  const poller = setInterval(readSoon, POLL_MS);
  poller.unref();
  /**
   * The first read starts after the newest row (older ones are the catch-up's); ids missing among
   * the last GAP_WINDOW may belong to transactions still open: they are gaps.
   */
  const startFromTheEnd = async () => {
    const { rows } = await sql<{ last: number; missing: string[] | null }>`
      WITH m AS (SELECT coalesce(max(id), 0) AS last FROM outbox_events)
      SELECT m.last, (SELECT array_agg(g) FROM generate_series(greatest(m.last - ${GAP_WINDOW}, 1), m.last) g
                      WHERE NOT EXISTS (SELECT 1 FROM outbox_events e WHERE e.id = g)) AS missing
      FROM m`.execute(db);
    const until = performance.now() + GAP_MS;
    for (const id of rows[0]!.missing ?? []) gaps.set(Number(id), until);
    lastId = Number(rows[0]!.last);
  };

  // A dedicated connection for LISTEN (a pooled one could be handed to a query mid-listen).
  // Lost, it is reconnected every RECONNECT_DELAY_MS until it is back (a failover takes a while).
  let listener: pg.Client | null = null;
  let closed = false;
  let brokenAt: Date | null = null;
  const reconnectLater = () => {
    if (!closed) setTimeout(() => void listen().catch(() => reconnectLater()), RECONNECT_DELAY_MS).unref();
  };
  const listen = async (): Promise<void> => {
    // TCP keep-alive: a connection that died without a FIN (a NAT's idle timeout, a failover that
    // sends no RST) is found by the kernel's probes and ends, instead of listening to nothing.
    const client = new pg.Client({
      connectionString,
      application_name: LISTENER_APPLICATION_NAME,
      keepAlive: true,
      keepAliveInitialDelayMillis: 30_000,
    });
    client.on('error', (err) => {
      log.warn('outbox listener lost its connection', { err: err.message });
    });
    client.on('end', () => {
      if (listener === client) {
        listener = null;
        brokenAt ??= deps.clock.now();
        awaitingCatchUp = true;
        reconnectLater();
      }
    });
    // A wake-up (db/connection.ts OUTBOX_WAKE_CHANNEL); its payload says nothing: rows are read by id.
    client.on('notification', (n) => {
      if (n.channel === CONTENT_CHANGED_CHANNEL) deps.caches?.content.changed(n.payload ?? null);
      else readSoon();
    });
    try {
      await client.connect();
      await client.query('LISTEN outbox_events');
      if (deps.caches) await client.query(`LISTEN ${CONTENT_CHANGED_CHANNEL}`);
      if (lastId === null) await startFromTheEnd();
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    listener = client;
    // Content changed while nobody listened is not read back: what was kept is read again.
    deps.caches?.content.changed(null);
    // Listening first, then scanning: a row committed in between is seen twice, never missed.
    const since = brokenAt;
    brokenAt = null;
    catchUp(since);
    awaitingCatchUp = false;
    readSoon();
    await handedOut;
  };
  await listen();

  return {
    subscribe(deliver) {
      subscribers.add(deliver);
      return () => subscribers.delete(deliver);
    },
    async close() {
      closed = true;
      clearInterval(marker);
      clearInterval(poller);
      await markPublished(); // the one in flight, if any
      await markPublished();
      const last = listener;
      listener = null;
      await last?.end().catch(() => {});
    },
  };
}
