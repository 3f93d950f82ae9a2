// Structured logs: one JSON object per line on stdout. Secrets never reach a log line: request
// logging goes through `redactUrl` and never logs headers, and `Logger` drops known secret keys.

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
/** Query parameters masked in logged URLs. */
const SECRET_QUERY = new Set(['access_token', 'token', 'refresh', 'code']);

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(bindings: Record<string, unknown>): Logger;
}

export type LogSink = (line: string) => void;

function scrub(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEYS.has(k.toLowerCase()) ? '[redacted]' : scrub(v, depth + 1);
  }
  return out;
}

export function createLogger(
  level: Level | 'silent' = 'info',
  sink: LogSink = (line) => process.stdout.write(line + '\n'),
  bindings: Record<string, unknown> = {},
): Logger {
  const threshold = ORDER[level];
  const write = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    // Observability, not business time: always the wall clock, never a test's clock.
    const record = { time: systemClock.now().toISOString(), level: lvl, msg, ...bindings, ...(fields ? (scrub(fields) as object) : {}) };
    sink(JSON.stringify(record));
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (b) => createLogger(level, sink, { ...bindings, ...b }),
  };
}

/** The request target with secret query values masked: `/ws/orders/tracking/?access_token=[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const params = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = decodeURIComponentSafe(eq < 0 ? pair : pair.slice(0, eq));
      return SECRET_QUERY.has(name.toLowerCase()) ? `${pair.slice(0, eq < 0 ? pair.length : eq)}=[redacted]` : pair;
    });
  return `${url.slice(0, q)}?${params.join('&')}`;
}

function decodeURIComponentSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
