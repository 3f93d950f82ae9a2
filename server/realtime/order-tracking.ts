// The order tracking channel, a WebSocket at /ws/orders/tracking/: each customer's sockets get
// the outbox events of their orders (server/realtime/outbox-feed.ts brings every committed event
// to every instance, so N instances behind a load balancer behave as one).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { activePrincipal } from '../../services/principal.js';
import type { Principal } from '../../platform/tokens.js';
import type { AppDeps } from '../../services/deps.js';
import { isDatabaseUnavailable, preferredLanguage } from '../http/responses.js';
import { redactUrl } from '../../platform/logger.js';
import { isTrackingEvent, trackingMessage } from '../../db/queries/outbox.js';
import type { OutboxFeed, OutboxRow } from './outbox-feed.js';
import { isPickerChannel } from './picker.js';
import {
  closeAllSockets,
  closeDatabaseUnavailable,
  DATABASE_UNAVAILABLE,
  keepAlive,
  listenForUpgrades,
  revokedSessions,
  sendUnlessBacklogged,
  socketsByAccount,
  tokenExpiry,
  upgradeToken,
} from './socket-channel.js';
import { TRACKING_PATH } from '../../platform/socket-paths.js';

const PING_INTERVAL_MS = 30_000;

export interface Realtime {
  /** Open sockets, for metrics and tests. */
  connections(): number;
  /** Closes every socket with 1001 and stops listening. */
  close(): Promise<void>;
}

export function attachRealtime(server: Server, deps: AppDeps, feed: OutboxFeed): Realtime {
  const { log } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const byCustomer = socketsByAccount(deps.config.wsMaxSocketsPerAccount);
  const languageOf = new WeakMap<WebSocket, 'ru' | 'en'>();
  const sessionOf = new WeakMap<WebSocket, string>();
  const heartbeat = keepAlive(PING_INTERVAL_MS);
  const expiry = tokenExpiry(() => deps.clock.nowMs());

  /** The customer behind the token and when the token expires; null when not allowed in. */
  const authenticate = async (
    req: IncomingMessage,
    url: URL,
  ): Promise<{ principal: Principal; expiresAt: number } | typeof DATABASE_UNAVAILABLE | null> => {
    const token = upgradeToken(req, url);
    if (!token) return null;
    try {
      const principal = await activePrincipal(deps, token, 'customer_access');
      return { principal, expiresAt: deps.tokens.verify(token, 'customer_access').exp * 1000 };
    } catch (err) {
      if (isDatabaseUnavailable(err)) return DATABASE_UNAVAILABLE;
      return null;
    }
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`;
    if (path !== TRACKING_PATH) {
      if (isPickerChannel(url.pathname)) return; // answered by server/realtime/picker.ts
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const who = await authenticate(req, url);
    if (who === DATABASE_UNAVAILABLE) {
      wss.handleUpgrade(req, socket, head, (ws) => closeDatabaseUnavailable(ws, log));
      return;
    }
    const principal = who?.principal;
    wss.handleUpgrade(req, socket, head, (ws) => {
      log.info('websocket connect', { path: redactUrl(req.url ?? ''), authorized: principal !== undefined });
      // The spec: unauthorized or inactive connections are closed with 1008 (policy violation):
      // at once, when the token expires, or when its session is revoked (see deliver).
      if (!principal || principal.kind !== 'customer') {
        ws.close(1008, 'unauthorized');
        return;
      }
      expiry.add(ws, who.expiresAt);
      sessionOf.set(ws, principal.sessionId);
      languageOf.set(ws, preferredLanguage(url.searchParams.get('lang') ?? req.headers['accept-language']));
      byCustomer.add(principal.customerId, ws);
      heartbeat.track(ws);
      // The channel is server-to-client; messages from clients are ignored.
      ws.on('message', () => {});
      ws.on('error', () => ws.terminate());
    });
  };
  const stopListening = listenForUpgrades(server, onUpgrade, log);

  const deliver = (row: OutboxRow) => {
    const revoked = revokedSessions(row);
    if (revoked) {
      for (const ws of wss.clients) if (revoked.has(sessionOf.get(ws) ?? '')) ws.close(1008, 'session revoked');
      return;
    }
    // Customers hear the order tracking envelopes of their orders (the rows with a customer).
    if (!row.customer_id || !isTrackingEvent(row)) return;
    const sockets = byCustomer.of(row.customer_id);
    if (!sockets?.size) return;
    // An envelope may carry per-language overrides of `data` (`i18n`); each socket gets its own
    // language and never sees the `i18n` block itself.
    const { envelope, i18n } = trackingMessage(row.payload);
    // Serialised once per language into a buffer that every socket of the customer shares (a
    // string would be encoded again for each send).
    const messages = new Map<string, Buffer>();
    const messageFor = (lang: 'ru' | 'en') => {
      let m = messages.get(lang);
      if (!m) {
        m = Buffer.from(JSON.stringify(i18n ? { ...envelope, data: { ...envelope.data, ...i18n[lang] } } : envelope));
        messages.set(lang, m);
      }
      return m;
    };
    for (const ws of sockets) sendUnlessBacklogged(ws, messageFor(languageOf.get(ws) ?? 'en'), deps.config.wsMaxBufferedBytes);
  };

  const unsubscribe = feed.subscribe(deliver);

  return {
    connections: () => wss.clients.size,
    close: async () => {
      unsubscribe();
      heartbeat.stop();
      expiry.stop();
      stopListening();
      await closeAllSockets(wss);
    },
  };
}
