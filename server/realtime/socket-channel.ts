// What the two WebSocket channels (order tracking, pickers) do alike: read the access token of
// an upgrade, keep track of peers that stopped answering pings, limit the sockets of one
// account, end a socket when its token expires or its session is revoked, and close every
// socket on shutdown. Periodic work over all sockets (pings, token expiry) is done in slices:
// with 10,000 sockets on an instance, one pass over all of them would stall event delivery.
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
 * How many turns one ping interval is cut into: each turn pings its own share of the sockets, so
 * that 10,000 of them are not all pinged (10,000 frames written) in one tick of the event loop
 * while events wait behind it.
 */
export const PING_TURNS = 30;

/**
 * Pings every tracked socket once each `intervalMs` and terminates those that did not answer
 * their previous ping (a phone that lost its network never sends a close). Sockets are spread over
 * `turns` groups, one group pinged every `intervalMs / turns`. `track` a socket when it is
 * accepted; the returned `stop` ends the pinging.
 */
export function keepAlive(intervalMs: number, turns = PING_TURNS): { track(ws: WebSocket): void; stop(): void } {
  const groups = Array.from({ length: Math.max(1, turns) }, () => new Set<WebSocket>());
  const alive = new WeakMap<WebSocket, boolean>();
  let turn = 0;
  const pinger = setInterval(() => {
    const group = groups[turn]!;
    turn = (turn + 1) % groups.length;
    for (const ws of group) {
      if (alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, intervalMs / groups.length);
  pinger.unref();
  return {
    track(ws) {
      // The smallest group: closed sockets leave holes anywhere, and turns stay even.
      const group = groups.reduce((smallest, g) => (g.size < smallest.size ? g : smallest));
      group.add(ws);
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      ws.once('close', () => group.delete(ws));
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

/** Sockets closed per slice of the expiry sweep; the rest follow after the event loop had its turn. */
export const EXPIRY_SLICE = 500;
const EXPIRY_SWEEP_MS = 1000;

/**
 * Closes sockets with 1008 once their access token has expired (the app reconnects with a fresh
 * one). One sweep a second over the sockets grouped by the second their token expires, instead of
 * a timer per socket; when many expire together (tokens issued in the same reconnect storm), they
 * are closed EXPIRY_SLICE at a time so that events and pings are not held up behind them.
 */
export function tokenExpiry(nowMs: () => number): { add(ws: WebSocket, expiresAtMs: number): void; stop(): void } {
  const bySecond = new Map<number, Set<WebSocket>>();
  let sweeping = false;
  const sweep = () => {
    const now = nowMs();
    let closed = 0;
    for (const [second, sockets] of bySecond) {
      if (second * 1000 > now) continue;
      for (const ws of sockets) {
        if (closed === EXPIRY_SLICE) {
          sweeping = true;
          setImmediate(sweep);
          return;
        }
        sockets.delete(ws);
        ws.close(1008, 'token expired');
        closed++;
      }
      bySecond.delete(second);
    }
    sweeping = false;
  };
  const sweeper = setInterval(() => sweeping || sweep(), EXPIRY_SWEEP_MS);
  sweeper.unref();
  return {
    add(ws, expiresAtMs) {
      // Rounded up: a socket may outlive its token by under a second, never close before it expires.
      const second = Math.ceil(expiresAtMs / 1000);
      let sockets = bySecond.get(second);
      if (!sockets) bySecond.set(second, (sockets = new Set()));
      sockets.add(ws);
      ws.once('close', () => {
        sockets.delete(ws);
        if (sockets.size === 0 && bySecond.get(second) === sockets) bySecond.delete(second);
      });
    },
    stop: () => clearInterval(sweeper),
  };
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
  message: string | Buffer,
  maxBufferedBytes: number,
): boolean {
  if (ws.readyState !== ws.OPEN) return false;
  if (maxBufferedBytes > 0 && ws.bufferedAmount >= maxBufferedBytes) return false;
  // A text frame whether the JSON comes as a string or already encoded (ws sends buffers as binary).
  ws.send(message, { binary: false });
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
