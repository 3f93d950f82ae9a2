// The outbox as a live feed for this instance's WebSocket channels (DESIGN.md §5). Events are
// written to `outbox_events` in the transaction that changes state; the insert trigger NOTIFYs on
// commit; this feed LISTENs on one dedicated connection, reads the notified rows back in batches
// and hands every row, once, to each subscriber (order tracking, the picker channel). So N
// instances behind a load balancer behave as one.
//
// A NOTIFY reaches only listeners connected at commit, so what the instance may have missed is
// read back from the outbox: rows no instance published (one died between commit and fan-out),
// and after a reconnect every row written since shortly before the connection broke.
//
// Rows are handed out in the order they were read, batch after batch, so that per order they
// arrive in version order (OrderTrackingMessage promises it): one order's changes are serialized
// by its row lock, so their ids and commits, and hence their notifications, come in version order.
// Reads may overlap, but a batch waits for every batch read before it; after a (re)connect, the
// catch-up scan is handed out before any notification that came with the new connection.
import { sql } from 'kysely';
import pg from 'pg';
import type { OutboxEvent } from '../../db/queries/outbox.js';
import type { AppDeps } from '../deps.js';

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

export async function startOutboxFeed(deps: Pick<AppDeps, 'db' | 'log'>, connectionString: string): Promise<OutboxFeed> {
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
  const markPublished = async () => {
    if (!toMark.length) return;
    const ids = toMark;
    toMark = [];
    await db
      .updateTable('outbox_events')
      .set({ published_at: sql<Date>`now()` })
      .where('id', 'in', ids)
      .where('published_at', 'is', null)
      .execute()
      .catch((err) => log.warn('marking outbox events published failed', { err: (err as Error).message }));
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
      result.rows.forEach(deliverOnce);
      then?.(result.rows);
    });
  };

  const catchUp = (brokenAt: Date | null) => {
    const read = db
      .selectFrom('outbox_events')
      .select(['id', 'event_id', 'type', 'customer_id', 'payload'])
      .where('created_at', '>', sql<Date>`now() - make_interval(secs => ${CATCH_UP_WINDOW_SECONDS})`)
      .where((eb) =>
        brokenAt
          ? eb.or([eb('published_at', 'is', null), eb('created_at', '>=', new Date(brokenAt.getTime() - CATCH_UP_MARGIN_MS))])
          : eb('published_at', 'is', null),
      )
      .orderBy('id')
      .limit(CATCH_UP_LIMIT)
      .execute() as Promise<OutboxRow[]>;
    handOutInOrder(read, 'outbox catch-up failed', (rows) => {
      if (rows.length) log.info('outbox catch-up delivered events', { events: rows.length, reconnect: brokenAt !== null });
    });
  };

  // Notifications arriving together are read back in one query (at 1,000 events/s, one query
  // per event would be the fan-out's bottleneck), in id order: per order, the version order.
  // While a new connection's catch-up scan is not yet queued, notifications wait for it.
  let notified: number[] = [];
  let awaitingCatchUp = true;
  const fetchSoon = (id: number) => {
    notified.push(id);
    if (notified.length === 1 && !awaitingCatchUp) setImmediate(fetchNotified);
  };
  const fetchNotified = () => {
    const ids = notified;
    notified = [];
    if (!ids.length) return;
    const read = db
      .selectFrom('outbox_events')
      .select(['id', 'event_id', 'type', 'customer_id', 'payload'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute() as Promise<OutboxRow[]>;
    handOutInOrder(read, 'outbox delivery failed');
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
    const client = new pg.Client({ connectionString, application_name: LISTENER_APPLICATION_NAME, keepAlive: true, keepAliveInitialDelayMillis: 30_000 });
    client.on('error', (err) => {
      log.warn('outbox listener lost its connection', { err: err.message });
    });
    client.on('end', () => {
      if (listener === client) {
        listener = null;
        brokenAt ??= new Date();
        awaitingCatchUp = true;
        reconnectLater();
      }
    });
    client.on('notification', (msg) => {
      const id = Number(msg.payload);
      if (Number.isSafeInteger(id)) fetchSoon(id);
    });
    try {
      await client.connect();
      await client.query('LISTEN outbox_events');
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    listener = client;
    // Listening first, then scanning: a row committed in between is seen twice, never missed.
    const since = brokenAt;
    brokenAt = null;
    catchUp(since);
    awaitingCatchUp = false;
    if (notified.length) setImmediate(fetchNotified);
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
      await markPublished();
      const last = listener;
      listener = null;
      await last?.end().catch(() => {});
    },
  };
}
