// Structured logs: one JSON object per line on stdout. Secrets never reach a log line: request
// logging goes through `redactUrl` and never logs headers, `Logger` drops known secret keys, and
// every string it writes has its JWT-shaped text masked (`redactTokens`), wherever a client put it.

import { systemClock } from './clock.js';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level | 'silent', number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Keys whose values are never written, wherever they appear in a log record. */
const SECRET_KEYS = new Set([
  'authorization',
  'access_token',
  'x-recovery-key',
  'password',
  'password_repeat',
  'refresh',
  'access',
  'token',
  'code',
  'pin',
]);
/**
 * Query parameters masked in logged URLs, matched on the decoded, lower-cased name and on each of
 * its bracketed parts (`access_token[]`, `access_token[0]`, `auth[token]`), as query parsers
 * read such names as the same parameter.
 */
const SECRET_QUERY = new Set([
  'access_token',
  'token',
  'refresh',
  'refresh_token',
  'access',
  'code',
  'authorization',
  'x-recovery-key',
  'password',
  'pin',
]);
const REDACTED = '[redacted]';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
  /** Whether a line of `level` would be written: lets a caller skip building its fields. */
  enabled(level: Level): boolean;
}

export type LogSink = (line: string) => void;

function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactTokens(value);
  if (value === null || typeof value !== 'object') return value;
  // Written as is, a deeper object would carry its secret keys past the checks below.
  if (depth > 4) return '[too deep]';
  if (value instanceof Error)
    return { name: value.name, message: redactTokens(value.message), stack: value.stack && redactTokens(value.stack) };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k.toLowerCase()) ? REDACTED : scrub(v, depth + 1);
  }
  return out;
}

export function createLogger(
  level: Level | 'silent' = 'info',
  sink: LogSink = (line) => process.stdout.write(line + '\n'),
  bindings: Record<string, unknown> = {},
): Logger {
  return new JsonLogger(ORDER[level], sink, bindings);
}

// A class rather than closures: every request makes a child logger, and a child is then one
// small object instead of six new functions.
class JsonLogger implements Logger {
  // Scrubbed once, on the first line written, not on every line (a child logger's bindings never
  // change) nor when it is made: most requests' loggers never write a line.
  private safeBindings: object | undefined;

  constructor(
    private readonly threshold: number,
    private readonly sink: LogSink,
    private readonly bindings: Record<string, unknown>,
  ) {}

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.write('debug', msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.write('info', msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.write('warn', msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.write('error', msg, fields);
  }
  child(bindings: Record<string, unknown>): Logger {
    return new JsonLogger(this.threshold, this.sink, { ...this.bindings, ...bindings });
  }
  enabled(level: Level): boolean {
    return ORDER[level] >= this.threshold;
  }

  private write(level: Level, msg: string, fields?: Record<string, unknown>): void {
    if (ORDER[level] < this.threshold) return;
    this.safeBindings ??= scrub(this.bindings) as object;
    // Observability, not business time: always the wall clock, never a test's clock.
    const record = {
      time: systemClock.now().toISOString(),
      level,
      msg: redactTokens(msg),
      ...this.safeBindings,
      ...(fields ? (scrub(fields) as object) : {}),
    };
    this.sink(JSON.stringify(record));
  }
}

/**
 * The request target with secrets masked: the value of a secret query parameter
 * (`/ws/orders/tracking/?access_token[]=[redacted]`), a JWT anywhere in the path or the query
 * (`/api/orders/[redacted]`), and a phone in the query, of which only the last 4 digits are kept
 * (`?phone=[redacted]1234`: enough to tell a customer's requests apart, not to call them).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return redactTokens(url);
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      const name = percentDecode(rawName).toLowerCase();
      if (isSecretName(name)) return `${rawName}=${REDACTED}`;
      if (eq < 0) return redactTokens(pair);
      const value = pair.slice(eq + 1);
      const phone = phoneDigits(name, value);
      if (phone !== null) return `${rawName}=${REDACTED}${phone.length >= 8 ? phone.slice(-4) : ''}`;
      return `${redactTokens(rawName)}=${redactTokens(value)}`;
    });
  return `${redactTokens(url.slice(0, q))}?${params.join('&')}`;
}

/** Whether a decoded, lower-cased query name, or one of its bracketed parts, is a secret's. */
function isSecretName(name: string): boolean {
  if (!name.includes('[')) return SECRET_QUERY.has(name.trim());
  return name.split(/[[\]]/).some((part) => SECRET_QUERY.has(part.trim()));
}

/**
 * The digits of a query value that is a phone: any value of a parameter whose name says phone, or
 * a value shaped like an international number (`+` and 8 to 15 digits) whatever its name. Null
 * otherwise: barcodes and numeric ids have no `+` and are kept.
 */
function phoneDigits(name: string, value: string): string | null {
  const decoded = percentDecode(value).trim();
  if (name.includes('phone')) return decoded.replace(/\D/g, '');
  return /^\+[0-9]{8,15}$/.test(decoded) ? decoded.slice(1) : null;
}

/**
 * `text` with every JWT-shaped part replaced by `[redacted]`: three base64url segments joined by
 * dots (or `%2E`), the first starting with `eyJ` (a JSON header). It finds them after `Bearer `,
 * inside other text and percent-encoded; a text with neither `eyJ` nor `%` is returned at once.
 */
export function redactTokens(text: string): string {
  const hasPercent = text.includes('%');
  if (!hasPercent && !text.includes('eyJ')) return text;
  const masked = maskJwts(text);
  if (!hasPercent) return masked;
  // A token sent with its characters percent-encoded (`%65%79%4A...`) is the token to the server,
  // which decodes it; such a text is logged decoded, with its tokens masked.
  const decoded = percentDecode(masked);
  if (decoded === masked || !decoded.includes('eyJ')) return masked;
  const decodedMasked = maskJwts(decoded);
  return decodedMasked === decoded ? masked : decodedMasked;
}

/** Whether a character code is in the base64url alphabet (A-Z a-z 0-9 - _). */
function isBase64Url(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95;
}

/** The end of the run of base64url characters starting at `i`. */
function runEnd(text: string, i: number): number {
  while (i < text.length && isBase64Url(text.charCodeAt(i))) i++;
  return i;
}

/** The length of a segment separator at `i`: `.` is 1, `%2E` or `%2e` is 3, anything else 0. */
function separatorAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 46) return 1;
  if (c === 37 && text.charCodeAt(i + 1) === 50 && (text.charCodeAt(i + 2) | 0x20) === 101) return 3;
  return 0;
}

/**
 * Masks `eyJ<b64url>.<b64url>.<b64url>` (the last segment may be empty: an unsigned token still
 * carries its claims). A scan, not a regular expression: after a failed candidate it goes on
 * from the end of the run it read, since every later start inside that run fails the same way,
 * so each character is read a bounded number of times, which keeps a hostile URL linear.
 */
function maskJwts(text: string): string {
  let out = '';
  let copied = 0;
  let from = 0;
  for (;;) {
    const start = text.indexOf('eyJ', from);
    if (start < 0) break;
    const headerEnd = runEnd(text, start + 3);
    const dot1 = separatorAt(text, headerEnd);
    if (dot1 === 0) {
      from = headerEnd;
      continue;
    }
    const payloadEnd = runEnd(text, headerEnd + dot1);
    const dot2 = payloadEnd > headerEnd + dot1 ? separatorAt(text, payloadEnd) : 0;
    if (dot2 === 0) {
      from = payloadEnd;
      continue;
    }
    const end = runEnd(text, payloadEnd + dot2);
    out += text.slice(copied, start) + REDACTED;
    copied = end;
    from = end;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * Decodes `%XX` escapes of ASCII characters and leaves everything else, malformed escapes
 * included: what a name or a token looks like once the server has decoded it, without throwing.
 */
function percentDecode(s: string): string {
  if (!s.includes('%')) return s;
  return s.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
