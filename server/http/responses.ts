// Turning results into HTTP: the one place where an error becomes a response body.
import type { ErrorObject } from 'ajv';
import type { ServerResponse } from 'node:http';
import Negotiator from 'negotiator';
import { constants } from 'node:zlib';
import { acceptsGzip } from './conditional.js';
import { addVary } from './exchange.js';
import { OMITTED_ERRORS_KEYWORD, omittedErrorCount } from '../ajv.js';
import { AppError, serviceUnavailable, validationFailed, type ErrorCode, type ValidationIssue } from '../../services/errors.js';
import type { Logger } from '../../platform/logger.js';
import { GZIP_FROM_CHARS, gzipText, serializedFormOf } from '../../services/stored-body.js';

export interface HttpReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Stored JSON sent as it is (see StoredJson in server/handler-types.ts). */
  storedJson?: { bytes: Buffer; gzip: boolean };
}

export function send(res: ServerResponse, reply: HttpReply): void {
  if (res.headersSent) return;
  if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) res.setHeader(k, v);
  res.statusCode = reply.status;
  if (reply.body === undefined || reply.status === 204 || reply.status === 304) {
    res.end();
    return;
  }
  if (reply.storedJson) {
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    if (reply.storedJson.gzip) res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Content-Length', String(reply.storedJson.bytes.length));
    res.end(reply.storedJson.bytes);
    return;
  }
  // Written directly rather than through express's res.json/res.send, which copy the text into
  // a Buffer and check request freshness on every reply: node sets Content-Length from the body.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  const serialized = serializedFormOf(reply.body);
  const text = serialized?.text ?? JSON.stringify(reply.body);
  if (text.length < GZIP_FROM_CHARS) {
    res.end(text);
    return;
  }
  // The apps' HTTP stacks (OkHttp, URLSession) ask for gzip and inflate it themselves. On a
  // phone's network or a store's Wi-Fi the size is the wait, and gzip makes a listing page or a
  // picker command's answer (its whole session) several times smaller.
  // Compressed on the event loop when small, else off it (zlib's thread pool); a failure sends the text.
  addVary(res, 'Accept-Encoding');
  if (!acceptsGzip(res.req.headers['accept-encoding'])) {
    res.end(text);
    return;
  }
  if (serialized?.gzip) {
    res.setHeader('Content-Encoding', 'gzip');
    res.end(serialized.gzip);
    return;
  }
  Promise.resolve()
    .then(() => gzipText(text, constants.Z_DEFAULT_COMPRESSION))
    .then(
      (zipped) => {
        res.setHeader('Content-Encoding', 'gzip');
        res.end(zipped);
      },
      () => res.end(text),
    );
}

/** SQLSTATEs of the connection time limits (db/connection.ts ConnectionLimits) firing. */
const TIME_LIMIT_CODES = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '25P03', // idle_in_transaction_session_timeout
]);

/**
 * Whether an error says PostgreSQL cannot be reached, is going away (restart, failover) or is too
 * busy to answer in time: the connection refused, reset or cut, the pool's wait for a connection
 * timed out, an SQLSTATE of class 08 (connection exception), 57P01-57P03 (shutting down, cannot
 * connect now), or one of the connection's time limits fired. A client may retry such a request;
 * it is not the service's bug, nor the client's.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  // Class 08 but 08P01, a protocol violation: that is a bug, not an outage.
  if (
    typeof code === 'string' &&
    (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', '57P01', '57P02', '57P03'].includes(code) ||
      TIME_LIMIT_CODES.has(code) ||
      (code.startsWith('08') && code !== '08P01'))
  )
    return true;
  // pg's own words when a connection broke: waiting for one, cut mid-query, or asked again after.
  return /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error)/.test(err.message);
}

/**
 * The reply for any thrown value. A database that cannot be reached is a 503 the app retries;
 * any other unexpected error becomes a 500 without stack or SQL.
 */
export function errorReply(err: unknown, requestId: string, log: Logger): HttpReply {
  if (isDatabaseUnavailable(err)) {
    log.error('database unavailable', { err: (err as Error).message, sqlstate: (err as { code?: unknown }).code });
    err = serviceUnavailable('DATABASE_UNAVAILABLE', 'The service cannot reach its database right now; retry shortly', 5);
  }
  if (err instanceof AppError) {
    return {
      status: err.status,
      headers: err.headers,
      body: { detail: err.detail, code: err.code, ...err.extra, request_id: requestId },
    };
  }
  log.error('unhandled error', { err });
  return {
    status: 500,
    body: { detail: 'Internal server error', code: 'INTERNAL_ERROR' satisfies ErrorCode, request_id: requestId },
  };
}

/**
 * Ajv errors of openapi-backend's request validation as the spec's `{loc, msg, type}` list, each
 * issue once, and how many errors the (bounded) validators did not keep. Linear in the errors:
 * duplicates are found by key, not by searching the list.
 */
export function validationIssues(errors: readonly ErrorObject[]): { issues: ValidationIssue[]; omitted: number } {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword === OMITTED_ERRORS_KEYWORD) continue;
    const params = e.params as { missingProperty?: string; additionalProperty?: string; unevaluatedProperty?: string };
    const parts: (string | number)[] = String(e.instancePath ?? '')
      .split('/')
      .filter(Boolean)
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .map((p) => (/^\d+$/.test(p) ? Number(p) : p));
    if (params.missingProperty) parts.push(params.missingProperty);
    if (params.additionalProperty) parts.push(params.additionalProperty);
    if (params.unevaluatedProperty) parts.push(params.unevaluatedProperty);
    // openapi-backend nests the body under `requestBody` and parameters under their location.
    if (parts[0] === 'requestBody') parts[0] = 'body';
    let msg = String(e.message ?? 'is invalid');
    if (params.additionalProperty) msg = 'unexpected property';
    // No body at all: openapi-backend reports the missing `requestBody` property of its request.
    const noBody = params.missingProperty === 'requestBody' && parts.length === 1;
    if (noBody) msg = 'a JSON body is required (Content-Type: application/json)';
    if (e.keyword === 'parse') parts.splice(0, parts.length, 'body');
    if (noBody) parts.splice(0, parts.length, 'body');
    const issue = { loc: parts.length ? parts : ['body'], msg, type: e.keyword === 'parse' ? 'json' : String(e.keyword ?? 'invalid') };
    const key = JSON.stringify([issue.type, issue.msg, issue.loc]);
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return { issues, omitted: omittedErrorCount(errors) };
}

/** 422 VALIDATION_ERROR for openapi-backend's request validation errors, listed and counted as validationIssues reads them. */
export function requestValidationFailed(errors: readonly ErrorObject[]): AppError {
  const { issues, omitted } = validationIssues(errors);
  return validationFailed(issues, omitted);
}

/**
 * Where a request's strings hold U+0000 (NUL), as validation issues. PostgreSQL cannot store it
 * in text and fails the whole statement, so such input is refused here, once for every
 * operation, as a 422 like any other bad value.
 */
export function nulCharacterIssues(parts: Record<'body' | 'query' | 'path', unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const visit = (value: unknown, loc: (string | number)[]) => {
    if (typeof value === 'string') {
      if (value.includes('\u0000')) issues.push({ loc, msg: 'must not contain the NUL character (U+0000)', type: 'pattern' });
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => visit(v, [...loc, i]));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, [...loc, k]);
    }
  };
  for (const [where, value] of Object.entries(parts)) visit(value, [where]);
  return issues;
}

/** The languages the service answers in; the first is the one of a tie and of no preference. */
const LANGUAGES = ['en', 'ru'] as const;

/**
 * The answer language negotiated from Accept-Language (RFC 9110 12.5.4) with express's own
 * negotiator: every range counts with its q-value, so `de-DE, ru;q=0.5` is Russian (German is not
 * offered, Russian is acceptable) and `ru-RU` matches `ru`. `_` is read as `-`: Android's
 * `Locale.toString()` sends `ru_RU`. `en` when nothing offered is acceptable, or on no header.
 */
export function preferredLanguage(header: string | undefined | null): 'ru' | 'en' {
  if (!header) return 'en';
  const [best] = new Negotiator({ headers: { 'accept-language': header.replaceAll('_', '-') } }).languages([...LANGUAGES]);
  return best === 'ru' ? 'ru' : 'en';
}
