// WebSocket fan-out. Events are written to `outbox_events` in the transaction that changes state;
// the insert trigger NOTIFYs on commit; every instance LISTENs and delivers each event to its own
// sockets. So N instances behind a load balancer behave as one (DESIGN.md §5).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { sql } from 'kysely';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import { activePrincipal } from './auth/principal.js';
import { bearerToken, type Principal } from './auth/tokens.js';
import type { AppDeps } from './deps.js';
import { preferredLanguage } from './http.js';
import { redactUrl } from './logger.js';
import { isPickerChannel } from './picker-realtime.js';

export const TRACKING_PATH = '/ws/orders/tracking/';
const PING_INTERVAL_MS = 30_000;
/** How many delivered event ids an instance remembers to fan each event out once. */
const RECENT_EVENTS = 10_000;
const MARK_PUBLISHED_EVERY_MS = 250;
/** The catch-up scan reads back at most this far and this many rows. */
const CATCH_UP_WINDOW_SECONDS = 3600;
const CATCH_UP_LIMIT = 10_000;
/** created_at is the writing transaction's start: a longer transaction may commit after the break. */
const CATCH_UP_MARGIN_MS = 60_000;

interface OutboxRow {
  id: number;
  event_id: string;
  type: string;
  customer_id: string | null;
  payload: unknown;
}

export interface Realtime {
  /** Open sockets, for metrics and tests. */
  connections(): number;
  /** Closes every socket with 1001 and stops listening. */
  close(): Promise<void>;
}

export async function attachRealtime(server: Server, deps: AppDeps, connectionString: string): Promise<Realtime> {
  const { log } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const byCustomer = new Map<string, Set<WebSocket>>();
  const languageOf = new WeakMap<WebSocket, 'ru' | 'en'>();
  const alive = new WeakMap<WebSocket, boolean>();

  const authenticate = async (req: IncomingMessage, url: URL): Promise<Principal | null> => {
    const token = bearerToken(req.headers.authorization) ?? url.searchParams.get('access_token');
    if (!token) return null;
    try {
      return await activePrincipal(deps, token, 'customer_access');
    } catch {
      return null;
    }
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
    if (path !== TRACKING_PATH) {
      if (isPickerChannel(url.pathname)) return; // answered by server/picker-realtime.ts
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const principal = await authenticate(req, url);
    wss.handleUpgrade(req, socket, head, (ws) => {
      log.info('websocket connect', { path: redactUrl(req.url ?? ''), authorized: principal !== null });
      // The spec: unauthorized connections are closed with 1008 (policy violation).
      if (!principal || principal.kind !== 'customer') {
        ws.close(1008, 'unauthorized');
        return;
      }
      languageOf.set(ws, preferredLanguage(url.searchParams.get('lang') ?? req.headers['accept-language']));
      const set = byCustomer.get(principal.customerId) ?? new Set<WebSocket>();
      set.add(ws);
      byCustomer.set(principal.customerId, set);
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      // The channel is server-to-client; messages from clients are ignored.
      ws.on('message', () => {});
      ws.on('close', () => {
        set.delete(ws);
        if (set.size === 0) byCustomer.delete(principal.customerId);
      });
      ws.on('error', () => ws.terminate());
    });
  };
  server.on('upgrade', onUpgrade);

  // Drop peers that stopped answering pings (a phone that lost its network).
  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, PING_INTERVAL_MS);
  pinger.unref();

  const deliver = (row: OutboxRow) => {
    if (!row.customer_id) return;
    const sockets = byCustomer.get(row.customer_id);
    if (!sockets?.size) return;
    // An envelope may carry per-language overrides of `data` (`i18n`); each socket gets its own
    // language and never sees the `i18n` block itself.
    const { i18n, ...envelope } = row.payload as { i18n?: Record<string, object>; data?: object };
    const messages = new Map<string, string>();
    const messageFor = (lang: 'ru' | 'en') => {
      let m = messages.get(lang);
      if (!m) {
        m = JSON.stringify(i18n ? { ...envelope, data: { ...envelope.data, ...i18n[lang] } } : envelope);
        messages.set(lang, m);
      }
      return m;
    };
    for (const ws of sockets) if (ws.readyState === ws.OPEN) ws.send(messageFor(languageOf.get(ws) ?? 'en'));
  };

  // Each event is fanned out once per instance (a catch-up scan may meet rows a notification
  // already brought), and marked published once some instance has fanned it out.
  const delivered = new Set<number>();
  let toMark: number[] = [];
  const deliverOnce = (row: OutboxRow) => {
    if (delivered.has(row.id)) return;
    delivered.add(row.id);
    if (delivered.size > RECENT_EVENTS) delivered.delete(delivered.values().next().value!);
    toMark.push(row.id);
    deliver(row);
  };
  const markPublished = async () => {
    if (!toMark.length) return;
    const ids = toMark;
    toMark = [];
    await deps.db
      .updateTable('outbox_events')
      .set({ published_at: sql<Date>`now()` })
      .where('id', 'in', ids)
      .where('published_at', 'is', null)
      .execute()
      .catch((err) => log.warn('marking outbox events published failed', { err: (err as Error).message }));
  };
  const marker = setInterval(() => void markPublished(), MARK_PUBLISHED_EVERY_MS);
  marker.unref();

  /**
   * A NOTIFY reaches only listeners connected at commit. What this instance may have missed is
   * read back from the outbox: rows nobody published (an instance died between commit and
   * fan-out), and after a reconnect every row written since shortly before the connection broke.
   */
  const catchUp = async (brokenAt: Date | null) => {
    const rows = await deps.db
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
    deps.db
      .selectFrom('outbox_events')
      .select(['id', 'event_id', 'type', 'customer_id', 'payload'])
      .where('id', 'in', ids)
      .orderBy('id')
      .execute()
      .then((rows) => rows.forEach((row) => deliverOnce(row as OutboxRow)))
      .catch((err) => log.error('outbox delivery failed', { err }));
  };

  // A dedicated connection for LISTEN (a pooled one could be handed to a query mid-listen).
  let listener: pg.Client | null = null;
  let closed = false;
  let brokenAt: Date | null = null;
  const reconnectLater = () => {
    if (!closed) setTimeout(() => void listen().catch(() => reconnectLater()), 1000).unref();
  };
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString, application_name: 'grocery-service-listener' });
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
    connections: () => wss.clients.size,
    close: async () => {
      closed = true;
      clearInterval(pinger);
      server.off('upgrade', onUpgrade);
      for (const ws of wss.clients) ws.close(1001, 'server shutting down');
      await new Promise<void>((resolve) => {
        const deadline = setTimeout(() => {
          for (const ws of wss.clients) ws.terminate();
          resolve();
        }, 2000);
        deadline.unref();
        const check = () => (wss.clients.size === 0 ? (clearTimeout(deadline), resolve()) : setTimeout(check, 20).unref());
        check();
      });
      wss.close();
      clearInterval(marker);
      await markPublished();
      const last = listener;
      listener = null;
      await last?.end().catch(() => {});
    },
  };
}
