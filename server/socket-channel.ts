// What the two WebSocket channels (order tracking, pickers) do alike: read the access token of
// an upgrade, keep track of peers that stopped answering pings, and close every socket on
// shutdown.
import type { IncomingMessage } from 'node:http';
import type { WebSocket, WebSocketServer } from 'ws';
import { bearerToken } from './auth/tokens.js';

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
