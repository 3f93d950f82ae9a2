// SMS delivery behind a small interface. `log` (the default) writes that a message was sent,
// never its text (it carries a code); `http` posts to a gateway.
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';

export interface SmsMessage {
  phone: string;
  text: string;
}

export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}

/** `refused`: the gateway answered and declined (502). `unavailable`: no usable answer (503). */
export class SmsError extends Error {
  constructor(
    readonly kind: 'refused' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

export class LogSmsSender implements SmsSender {
  constructor(private readonly log: Logger) {}
  async send({ phone }: SmsMessage): Promise<void> {
    this.log.info('sms sent', { provider: 'log', phone_suffix: phone.slice(-4) });
  }
}

/**
 * A JSON-over-HTTP SMS gateway: POST {url} with `{to, from, text}` and a bearer token.
 * 2xx = accepted; 4xx = refused; 5xx, timeout or network failure = unavailable.
 */
export class HttpSmsSender implements SmsSender {
  constructor(
    private readonly cfg: Config['sms'],
    private readonly log: Logger,
  ) {}

  async send({ phone, text }: SmsMessage): Promise<void> {
    let response: Response;
    try {
      response = await fetch(this.cfg.httpUrl!, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.cfg.httpToken ? { authorization: `Bearer ${this.cfg.httpToken}` } : {}),
        },
        body: JSON.stringify({ to: phone, from: this.cfg.sender, text }),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
      });
    } catch (err) {
      this.log.warn('sms gateway unreachable', { err: (err as Error).message });
      throw new SmsError('unavailable', 'SMS gateway did not answer');
    }
    // Drain the body so the connection can be reused.
    await response.arrayBuffer().catch(() => undefined);
    if (response.ok) return;
    this.log.warn('sms gateway refused', { status: response.status });
    if (response.status >= 500 || response.status === 429) throw new SmsError('unavailable', `SMS gateway answered ${response.status}`);
    throw new SmsError('refused', `SMS gateway refused the message (${response.status})`);
  }
}

export function createSmsSender(cfg: Config['sms'], log: Logger): SmsSender {
  return cfg.provider === 'http' ? new HttpSmsSender(cfg, log) : new LogSmsSender(log);
}
