// The push adapter's interface, shared by the recording sender and the HTTP adapter.

export interface PushMessage {
  /** The device's push token (PushDeviceInput `push_token`). */
  token: string;
  platform: 'ios' | 'android';
  /** The de-duplication key the app sees (TrackingEventEnvelope `notification_id`). */
  notificationId: string;
  title: string;
  body: string;
  /** What the app needs to pick the screen and re-read (all strings, as push payloads are). */
  data: Record<string, string>;
}

export type PushOutcome =
  | { kind: 'sent' }
  /** The provider says the token no longer reaches an installation: forget the device. */
  | { kind: 'invalid_token'; error: string }
  /** No usable answer (network, timeout, 429, 5xx): try again later. */
  | { kind: 'retry'; error: string }
  /** The provider refused this message: trying again will not help. */
  | { kind: 'rejected'; error: string };

export interface PushSender {
  readonly name: 'recording' | 'http';
  send(message: PushMessage): Promise<PushOutcome>;
}
