// A JSON push gateway (the shape of FCM-style HTTP relays):
//   POST {url}  {to, platform, id, notification: {title, body}, data}
// 2xx = sent; 410, or a body `{"error": "UNREGISTERED" | "INVALID_TOKEN"}`, = the token is
// dead; 429, 5xx, timeouts and network errors = retry later; any other 4xx = rejected. A bare 404
// (no such error code) is the gateway's URL, not the token: a wrong PUSH_HTTP_URL must not make
// every installation forgotten, so it is retried (and logged) like an outage.
import type { OrdersConfig } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { PushMessage, PushOutcome, PushSender } from './types.js';

const DEAD_TOKEN_ERRORS = new Set(['UNREGISTERED', 'INVALID_TOKEN', 'NOT_REGISTERED']);

export class HttpPushSender implements PushSender {
  readonly name = 'http' as const;
  constructor(
    private readonly cfg: OrdersConfig['push'],
    private readonly log: Logger,
  ) {}

  async send(m: PushMessage): Promise<PushOutcome> {
    let response: Response;
    try {
      response = await fetch(this.cfg.httpUrl!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.cfg.httpToken ? { authorization: `Bearer ${this.cfg.httpToken}` } : {}) },
        body: JSON.stringify({
          to: m.token,
          platform: m.platform,
          id: m.notificationId,
          notification: { title: m.title, body: m.body },
          data: m.data,
        }),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
      });
    } catch (err) {
      return { kind: 'retry', error: `push gateway unreachable: ${(err as Error).message}` };
    }
    const text = await response.text().catch(() => '');
    if (response.ok) return { kind: 'sent' };
    let code = '';
    try {
      const error: unknown = (JSON.parse(text) as { error?: unknown }).error ?? '';
      code = String(error).toUpperCase();
    } catch {
      /* not JSON: judged by the status alone */
    }
    if (response.status === 410 || DEAD_TOKEN_ERRORS.has(code)) {
      return { kind: 'invalid_token', error: `push gateway: token not registered (${response.status})` };
    }
    if (response.status === 404) {
      this.log.warn('push gateway answered 404 without a token error: is PUSH_HTTP_URL right?', { code });
      return { kind: 'retry', error: 'push gateway answered 404 (not a token error)' };
    }
    if (response.status === 429 || response.status >= 500) return { kind: 'retry', error: `push gateway answered ${response.status}` };
    this.log.warn('push gateway refused a message', { status: response.status, code });
    return { kind: 'rejected', error: `push gateway refused the message (${response.status}${code ? ` ${code}` : ''})` };
  }
}
