// The picker channel, a WebSocket at /ws/picker/ (spec: PickerRealtimeMetadataSchema). The same
// mechanism as order tracking: events are outbox rows written in the transaction of the change,
// and server/realtime/outbox-feed.ts brings each to every instance, which sends it to its own sockets
// (after a lost connection, what was missed is read back). Picker events are the outbox rows
// whose type starts with `picker.`; their payload
// names the audience - the pickers of a store (`queue.changed`) or one picker (`session.changed`,
// `order.cancelled`) - and the event itself, which is sent as it is.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { findPicker, pickerStores } from '../../db/queries/accounts.js';
import { activePrincipal } from '../../services/principal.js';
import type { AppDeps } from '../../services/deps.js';
import { isDatabaseUnavailable } from '../http/responses.js';
import { redactUrl } from '../../platform/logger.js';
import { isPickerOutboxEvent } from '../../db/queries/outbox.js';
import type { OutboxFeed, OutboxRow } from './outbox-feed.js';
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
import { PICKER_CHANNEL_PATH } from '../../platform/socket-paths.js';

export interface PickerRealtime {
  connections(): number;
  /** Closes every socket with 1001 and stops listening. */
  close(): Promise<void>;
}

interface Connection {
  pickerId: number;
  sessionId: string;
  storeIds: Set<string>;
}

export const isPickerChannel = (pathname: string): boolean => (pathname.endsWith('/') ? pathname : `${pathname}/`) === PICKER_CHANNEL_PATH;

export function attachPickerRealtime(server: Server, deps: AppDeps, feed: OutboxFeed): PickerRealtime {
  const { log } = deps;
  const heartbeatMs = deps.config.picking.realtimeHeartbeatSeconds * 1000;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 });
  const connections = new Map<WebSocket, Connection>();
  const byPicker = socketsByAccount(deps.config.wsMaxSocketsPerAccount);
  const heartbeat = keepAlive(heartbeatMs);
  const expiry = tokenExpiry(() => deps.clock.nowMs());

  /** The picker behind the token, its stores and when the token expires; null when not allowed in. */
  const authenticate = async (req: IncomingMessage, url: URL) => {
    const token = upgradeToken(req, url);
    if (!token) return null;
    try {
      const principal = await activePrincipal(deps, token, 'picker_access');
      if (principal.kind !== 'picker') return null;
      const pickerId = Number(principal.pickerId);
      const picker = await findPicker(deps.db, pickerId);
      if (!picker?.is_active) return null;
      const stores = await pickerStores(deps.db, pickerId);
      const { exp } = deps.tokens.verify(token, 'picker_access');
      return { pickerId, sessionId: principal.sessionId, storeIds: new Set(stores.map((s) => s.id)), expiresAt: exp * 1000 };
    } catch (err) {
      if (isDatabaseUnavailable(err)) return DATABASE_UNAVAILABLE;
      return null;
    }
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!isPickerChannel(url.pathname)) return; // another channel's path: not ours to answer
    const who = await authenticate(req, url);
    wss.handleUpgrade(req, socket, head, (ws) => {
      if (who === DATABASE_UNAVAILABLE) {
        closeDatabaseUnavailable(ws, log);
        return;
      }
      log.info('websocket connect', { path: redactUrl(req.url ?? ''), channel: 'picker', authorized: who !== null });
      if (!who) {
        ws.close(1008, 'unauthorized');
        return;
      }
      // An expired token ends the connection the way an invalid one is refused: the app
      // reconnects with a fresh token. A revoked session ends it too (see deliver).
      expiry.add(ws, who.expiresAt);
      connections.set(ws, { pickerId: who.pickerId, sessionId: who.sessionId, storeIds: who.storeIds });
      ws.on('close', () => connections.delete(ws));
      byPicker.add(String(who.pickerId), ws);
      heartbeat.track(ws);
      // Server-to-client only: whatever a client sends is ignored.
      ws.on('message', () => {});
      ws.on('error', () => ws.terminate());
    });
  };
  const stopListening = listenForUpgrades(server, onUpgrade, log);

  const deliver = (row: OutboxRow) => {
    const revoked = revokedSessions(row);
    if (revoked) {
      for (const [ws, c] of connections) if (revoked.has(c.sessionId)) ws.close(1008, 'session revoked');
      return;
    }
    if (!isPickerOutboxEvent(row) || connections.size === 0) return;
    const { audience, event } = row.payload;
    if (!audience || !event) return;
    const message = JSON.stringify(event);
    for (const [ws, c] of connections) {
      const addressed = 'picker_id' in audience ? c.pickerId === audience.picker_id : c.storeIds.has(audience.store_id);
      if (addressed) sendUnlessBacklogged(ws, message, deps.config.wsMaxBufferedBytes);
    }
  };

  const unsubscribe = feed.subscribe(deliver);

  return {
    connections: () => connections.size,
    close: async () => {
      unsubscribe();
      heartbeat.stop();
      expiry.stop();
      stopListening();
      await closeAllSockets(wss);
    },
  };
}
