// The outbox as a live feed for this instance's WebSocket channels (DESIGN.md §5). Events are
// written to `outbox_events` in the transaction that changes state; the insert trigger NOTIFYs on
// commit; this feed LISTENs on one dedicated connection, reads the notified rows back in batches
// and hands every row, once, to each subscriber (order tracking, the picker channel). So N
// instances behind a load balancer behave as one.
//
// A NOTIFY reaches only listeners connected at commit, so what the instance may have missed is
// read back from the outbox: rows no instance published (one died between commit and fan-out),
// and after a reconnect every row written since shortly before the connection broke.
import { sql } from 'kysely';
import pg from 'pg';
import type { AppDeps } from './deps.js';

export interface OutboxRow {
  id: number;
  event_id: string;
  type: string;
  customer_id: string | null;
  payload: unknown;
}

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

  const catchUp = async (brokenAt: Date | null) => {
    const rows = await db
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
      .execute();
    for (const row of rows) deliverOnce(row as OutboxRow);
    if (rows.length) log.info('outbox catch-up delivered events', { events: rows.length, reconnect: brokenAt !== null });
  };

  // Notifications arriving together are read back in one query (at 1,000 events/s, one query
  // per event would be the fan-out's bottleneck), in id order: per order, the version order.
  let notified: number[] = [];
  const fetchSoon = (id: number) => {
    notified.push(id);
    if (notified.length === 1) setImmediate(fetchNotified);
  };
  const fetchNotified = () => {
    const ids = notified;
    notified = [];
    db.selectFrom('outbox_events')
      .select(['id', 'event_id', 'type', 'customer_id', 'payload'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute()
      .then((rows) => rows.forEach((row) => deliverOnce(row as OutboxRow)))
      .catch((err) => log.error('outbox delivery failed', { err }));
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
    await catchUp(since).catch((err) => log.error('outbox catch-up failed', { err: (err as Error).message }));
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
