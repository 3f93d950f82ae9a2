// What the two WebSocket channels (order tracking, pickers) do alike: read the access token of
// an upgrade, keep track of peers that stopped answering pings, limit the sockets of one
// account, end a socket when its token expires or its session is revoked, and close every
// socket on shutdown.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { SESSIONS_REVOKED_EVENT, type OutboxEvent } from '../../db/queries/outbox.js';
import { bearerToken } from '../../platform/tokens.js';

/** The access token of an upgrade request: the bearer header, else the `access_token` query. */
export function upgradeToken(req: IncomingMessage, url: URL): string | null {
  return bearerToken(req.headers.authorization) ?? url.searchParams.get('access_token');
}

/**
 * Pings every socket of `wss` each `intervalMs` and terminates those that did not answer the
 * previous ping (a phone that lost its network never sends a close). `track` a socket when it
 * is accepted; the returned `stop` ends the pinging.
 */
export function keepAlive(wss: WebSocketServer, intervalMs: number): { track(ws: WebSocket): void; stop(): void } {
  const alive = new WeakMap<WebSocket, boolean>();
  const pinger = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, intervalMs);
  pinger.unref();
  return {
    track(ws) {
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
    },
    stop: () => clearInterval(pinger),
  };
}

/** Closes every socket with 1001 (going away), waits up to `graceMs` for them, then cuts the rest. */
export async function closeAllSockets(wss: WebSocketServer, graceMs = 2000): Promise<void> {
  for (const ws of wss.clients) ws.close(1001, 'server shutting down');
  await new Promise<void>((resolve) => {
    const deadline = setTimeout(() => {
      for (const ws of wss.clients) ws.terminate();
      resolve();
    }, graceMs);
    deadline.unref();
    const check = () => (wss.clients.size === 0 ? (clearTimeout(deadline), resolve()) : setTimeout(check, 20).unref());
    check();
  });
  wss.close();
}

/** The sessions a SESSIONS_REVOKED_EVENT row names, or null for any other row. */
export function revokedSessions(row: OutboxEvent): Set<string> | null {
  if (row.type !== SESSIONS_REVOKED_EVENT) return null;
  const ids: unknown = row.payload.session_ids;
  return new Set(Array.isArray(ids) ? ids.map(String) : []);
}

/** Closes the socket with 1008 when its access token expires (the app reconnects with a fresh one). */
export function closeAtExpiry(ws: WebSocket, expiresAtMs: number, nowMs: number): void {
  const timer = setTimeout(() => ws.close(1008, 'token expired'), Math.max(0, expiresAtMs - nowMs));
  timer.unref();
  ws.once('close', () => clearTimeout(timer));
}

/** What an upgrade's check answers when it could not reach the database (not a verdict on the token). */
export const DATABASE_UNAVAILABLE = Symbol('database unavailable');

/**
 * Closes a socket whose token could not be checked because the database is unreachable: 1013
 * (try again later), never 1008, which tells the app its sign-in is gone.
 */
export function closeDatabaseUnavailable(ws: WebSocket, log: { error(msg: string, fields?: Record<string, unknown>): void }): void {
  log.error('database unavailable', { where: 'websocket upgrade' });
  ws.close(1013, 'database unavailable, try again later');
}

/** Close code of a socket ended because the same account opened too many newer ones. */
export const SOCKET_REPLACED = 4000;

/**
 * The open sockets of each account on a channel, oldest first, at most `max` each (0: no limit):
 * a new socket beyond it closes the account's oldest with SOCKET_REPLACED. The oldest is the one
 * to go: an app that reconnects after a network change leaves its old socket open until a ping
 * goes unanswered, and a token replayed in a loop cannot fill the instance's memory.
 */
export function socketsByAccount(max: number): {
  add(account: string, ws: WebSocket): void;
  of(account: string): ReadonlySet<WebSocket> | undefined;
} {
  const byAccount = new Map<string, Set<WebSocket>>();
  return {
    add(account, ws) {
      const sockets = byAccount.get(account) ?? new Set<WebSocket>();
      byAccount.set(account, sockets);
      sockets.add(ws);
      ws.once('close', () => {
        sockets.delete(ws);
        if (sockets.size === 0 && byAccount.get(account) === sockets) byAccount.delete(account);
      });
      if (max > 0 && sockets.size > max) {
        const oldest = sockets.values().next().value!;
        sockets.delete(oldest);
        oldest.close(SOCKET_REPLACED, 'replaced by a newer connection');
      }
    },
    of: (account) => byAccount.get(account),
  };
}

/**
 * Sends unless the socket already holds `maxBufferedBytes` it could not write (a consumer on a
 * stalled network, or one that stopped reading): its backlog would otherwise grow with every event
 * for as long as it stays connected. What is dropped is not lost to the client: every message
 * carries `order_version` (or the session's version), and a client that sees a version jump
 * re-reads the resource, as the realtime contract tells it to. True when sent.
 */
export function sendUnlessBacklogged(
  ws: Pick<WebSocket, 'readyState' | 'OPEN' | 'bufferedAmount' | 'send'>,
  message: string,
  maxBufferedBytes: number,
): boolean {
  if (ws.readyState !== ws.OPEN) return false;
  if (maxBufferedBytes > 0 && ws.bufferedAmount >= maxBufferedBytes) return false;
  ws.send(message);
  return true;
}

/**
 * Hands node's 'upgrade' events of `server` to the async `handle` of a channel; returns the
 * function that stops. node does not await the listener: a rejected upgrade is logged and its
 * socket destroyed here rather than left as an unhandled rejection.
 */
export function listenForUpgrades(
  server: Server,
  handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => Promise<void>,
  log: { warn(msg: string, fields?: Record<string, unknown>): void },
): () => void {
  const listener = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    handle(req, socket, head).catch((err: unknown) => {
      log.warn('websocket upgrade failed', { err: (err as Error).message });
      socket.destroy();
    });
  };
  server.on('upgrade', listener);
  return () => server.off('upgrade', listener);
}
