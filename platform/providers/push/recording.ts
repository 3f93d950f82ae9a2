// The default push sender: nothing leaves the machine; every message is kept (the newest
// 1,000) and logged without its text, so TEST and the tests can see what a device would get.
import type { Logger } from '../../logger.js';
import type { PushMessage, PushOutcome, PushSender } from './types.js';

const KEEP = 1000;

export class RecordingPushSender implements PushSender {
  readonly name = 'recording' as const;
  readonly sent: PushMessage[] = [];
  constructor(private readonly log: Logger) {}

  async send(message: PushMessage): Promise<PushOutcome> {
    this.sent.push(message);
    if (this.sent.length > KEEP) this.sent.splice(0, this.sent.length - KEEP);
    this.log.info('push recorded', {
      notification_id: message.notificationId,
      platform: message.platform,
      token_suffix: message.token.slice(-4),
    });
    return { kind: 'sent' };
  }
}
