// One /api request as the service reads it, straight off node:http. Express answers the few other
// paths (docs, the spec, health, metrics); the API does not go through it, because express's
// per-request work (re-prototyping the request and response, walking its middleware stack) cost
// as much as the rest of a trivial operation. What the API used of it is here: the path, the
// query (express's own parser), the client's address and protocol behind TRUST_PROXY_HOPS
// proxies, and Vary.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../platform/logger.js';

export interface Exchange {
  req: IncomingMessage & { body?: unknown };
  res: ServerResponse;
  requestId: string;
  log: Logger;
  /** The request target's path, without the query. */
  path: string;
  /** The query string (without `?`), empty when there is none. */
  queryString: string;
  /** Set once the request is routed (logs and metrics name the operation). */
  operationId?: string;
}

/** The path and the query string of a request target. */
export function splitTarget(url: string | undefined): { path: string; queryString: string } {
  const target = url || '/';
  const q = target.indexOf('?');
  return q < 0 ? { path: target, queryString: '' } : { path: target.slice(0, q), queryString: target.slice(q + 1) };
}

/**
 * The client's address: the socket's peer, or behind `hops` trusted proxies the address that many
 * places from the right of X-Forwarded-For (what express answers as `req.ip` for a hop count).
 */
export function clientAddress(req: IncomingMessage, hops: number): string | undefined {
  const peer = req.socket.remoteAddress;
  if (hops <= 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(/[\s,]+/)
    .filter((a) => a.length > 0)
    .reverse();
  const chain = [peer, ...forwarded];
  return chain[Math.min(hops, chain.length - 1)];
}

/** `https` or `http`: the socket's, or behind a trusted proxy the first X-Forwarded-Proto value. */
export function requestProtocol(req: IncomingMessage, hops: number): string {
  const own = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  if (hops <= 0) return own;
  const header = req.headers['x-forwarded-proto'];
  const value = (Array.isArray(header) ? header[0] : header) ?? own;
  const comma = value.indexOf(',');
  return (comma >= 0 ? value.slice(0, comma) : value).trim();
}

/** Adds `field` to the response's Vary header unless it is listed already (or `*` is). */
export function addVary(res: ServerResponse, field: string): void {
  const current = res.getHeader('Vary');
  const text = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  const listed = text
    .split(',')
    .map((f) => f.trim().toLowerCase())
    .filter((f) => f.length > 0);
  if (listed.includes('*') || listed.includes(field.toLowerCase())) return;
  res.setHeader('Vary', text ? `${text}, ${field}` : field);
}

/** Whether a request declares a JSON body (`application/json` or `application/*+json`, any parameters). */
export function declaresJsonBody(req: IncomingMessage): boolean {
  const header = req.headers['content-type'];
  if (!header) return false;
  const semicolon = header.indexOf(';');
  const media = (semicolon < 0 ? header : header.slice(0, semicolon)).trim().toLowerCase();
  return media === 'application/json' || /^application\/[a-z0-9!#$&^_.-]+\+json$/.test(media);
}
