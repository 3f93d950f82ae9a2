// The picker channel, a WebSocket at /ws/picker/ (spec: PickerRealtimeMetadataSchema). The same
// mechanism as order tracking: events are outbox rows written in the transaction of the change;
// the insert trigger NOTIFYs on commit, every instance LISTENs and sends each event to its own
// sockets. Picker events are the outbox rows whose type starts with `picker.`; their payload
// names the audience - the pickers of a store (`queue.changed`) or one picker (`session.changed`,
// `order.cancelled`) - and the event itself, which is sent as it is.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import { findPicker, pickerStores } from '../db/queries/accounts.js';
import { activePrincipal } from './auth/principal.js';
import { bearerToken } from './auth/tokens.js';
import type { AppDeps } from './deps.js';
import { redactUrl } from './logger.js';

export const PICKER_CHANNEL_PATH = '/ws/picker/';
/** Outbox types of picker events. */
export const PICKER_EVENT_PREFIX = 'picker.';

interface PickerEventRow {
  type: string;
  payload: { audience?: { store_id?: string; picker_id?: number }; event?: unknown };
}

export interface PickerRealtime {
  connections(): number;
  /** Closes every socket with 1001 and stops listening. */
  close(): Promise<void>;
}

interface Connection {
  pickerId: number;
  storeIds: Set<string>;
  expiry: NodeJS.Timeout | null;
}

export const isPickerChannel = (pathname: string): boolean => (pathname.endsWith('/') ? pathname : `${pathname}/`) === PICKER_CHANNEL_PATH;

export async function attachPickerRealtime(server: Server, deps: AppDeps, connectionString: string): Promise<PickerRealtime> {
  const { log } = deps;
  const heartbeatMs = deps.config.picking.realtimeHeartbeatSeconds * 1000;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 });
  const connections = new Map<WebSocket, Connection>();
  const alive = new WeakMap<WebSocket, boolean>();

  /** The picker behind the token, its stores and when the token expires; null when not allowed in. */
  const authenticate = async (req: IncomingMessage, url: URL) => {
    const token = bearerToken(req.headers.authorization) ?? url.searchParams.get('access_token');
    if (!token) return null;
    try {
      const principal = await activePrincipal(deps, token, 'picker_access');
      if (principal.kind !== 'picker') return null;
      const pickerId = Number(principal.pickerId);
      const picker = await findPicker(deps.db, pickerId);
      if (!picker?.is_active) return null;
      const stores = await pickerStores(deps.db, pickerId);
      const { exp } = deps.tokens.verify(token, 'picker_access');
      return { pickerId, storeIds: new Set(stores.map((s) => s.id)), expiresAt: exp * 1000 };
    } catch {
      return null;
    }
  };

  const onUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!isPickerChannel(url.pathname)) return; // another channel's path: not ours to answer
    const who = await authenticate(req, url);
    wss.handleUpgrade(req, socket, head, (ws) => {
      log.info('websocket connect', { path: redactUrl(req.url ?? ''), channel: 'picker', authorized: who !== null });
      if (!who) {
        ws.close(1008, 'unauthorized');
        return;
      }
      // An expired token ends the connection the way an invalid one is refused: the app
      // reconnects with a fresh token.
      const expiry = setTimeout(() => ws.close(1008, 'token expired'), Math.max(0, who.expiresAt - Date.now()));
      expiry.unref();
      connections.set(ws, { pickerId: who.pickerId, storeIds: who.storeIds, expiry });
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      // Server-to-client only: whatever a client sends is ignored.
      ws.on('message', () => {});
      ws.on('close', () => {
        const c = connections.get(ws);
        if (c?.expiry) clearTimeout(c.expiry);
        connections.delete(ws);
      });
      ws.on('error', () => ws.terminate());
    });
  };
  server.on('upgrade', onUpgrade);

  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, heartbeatMs);
  pinger.unref();

  const deliver = (row: PickerEventRow) => {
    const { audience, event } = row.payload;
    if (!audience || !event) return;
    const message = JSON.stringify(event);
    for (const [ws, c] of connections) {
      const addressed = audience.picker_id !== undefined ? c.pickerId === audience.picker_id : audience.store_id !== undefined && c.storeIds.has(audience.store_id);
      if (addressed && ws.readyState === ws.OPEN) ws.send(message);
    }
  };

  // A dedicated connection for LISTEN (a pooled one could be handed to a query mid-listen).
  let listener: pg.Client | null = null;
  let closed = false;
  const listen = async (): Promise<void> => {
    const client = new pg.Client({ connectionString, application_name: 'grocery-service-picker-listener' });
    client.on('error', (err) => log.warn('picker event listener lost its connection', { err: err.message }));
    client.on('end', () => {
      if (!closed) setTimeout(() => void listen().catch(() => {}), 1000).unref();
    });
    client.on('notification', (msg) => {
      const id = Number(msg.payload);
      if (!Number.isSafeInteger(id) || connections.size === 0) return;
      deps.db
        .selectFrom('outbox_events')
        .select(['type', 'payload'])
        .where('id', '=', id)
        .where('type', 'like', `${PICKER_EVENT_PREFIX}%`)
        .executeTakeFirst()
        .then((row) => row && deliver(row as PickerEventRow))
        .catch((err) => log.error('picker event delivery failed', { err }));
    });
    await client.connect();
    await client.query('LISTEN outbox_events');
    listener = client;
  };
  await listen();

  return {
    connections: () => connections.size,
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
      await listener?.end().catch(() => {});
    },
  };
}
