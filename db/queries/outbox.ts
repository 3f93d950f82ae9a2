// The outbox's event vocabulary and its one writer (DESIGN.md §5, issue 22 item 4). Every event
// type maps to its payload, derived from the spec's message schemas (generated types): the order
// tracking envelope (TrackingEventEnvelope) and the picker channel's events (PickerRealtimeEvent).
// TypeScript producers write through writeOutboxEvent; producers in SQL (data-modifying CTEs that
// need the row they change, the order-status trigger) are held to the same schemas by
// test/runtime/outbox-events.test.ts, which fires each of them and validates what it wrote.
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/api.test.js';
import type { Executor } from '../executor.js';

type Schemas = components['schemas'];

/** `data` of each tracking envelope type (TrackingEventEnvelope's oneOf). */
interface TrackingData {
  'order.changed': Schemas['OrderChangedEvent'];
  'delivery.tracking.changed': Schemas['DeliveryTrackingChangedEvent'];
}
export type TrackingEventType = Schemas['TrackingEventEnvelope']['type'];
/** What an order change touched (OrderChangedEvent `changes`). */
export type OrderChange = Schemas['OrderChangedEvent']['changes'][number];
// The map above names exactly the spec's envelope types (a new one fails to compile here).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const trackingTypesMatchSpec: Same<keyof TrackingData, TrackingEventType> = true;
void trackingTypesMatchSpec;

/**
 * The tracking envelope of `type` as the outbox stores it: the spec's envelope, with its top-level
 * `order_id` and `order_version` (always written by this service) and optional per-language
 * overrides of `data` (`i18n`), applied by the socket for its connection and never sent.
 */
export type TrackingEnvelope<T extends TrackingEventType> = Omit<Schemas['TrackingEventEnvelope'], 'type' | 'data'> & {
  type: T;
  data: TrackingData[T];
  i18n?: Partial<Record<'ru' | 'en', Partial<TrackingData[T]>>>;
};

export type PickerEventKind = Schemas['PickerRealtimeEvent']['kind'];
/** The picker channel's event of `kind` (PickerRealtimeEvent's oneOf). */
export type PickerEvent<K extends PickerEventKind> = Extract<Schemas['PickerRealtimeEvent'], { kind: K }>;
/** Who hears a picker event: the pickers of a store (`queue.changed`) or one picker. */
export type PickerAudience<K extends PickerEventKind> = K extends 'queue.changed' ? { store_id: string } : { picker_id: number };
/** A picker event as the outbox stores it: the audience and the event, sent as it is. */
export interface PickerOutboxPayload<K extends PickerEventKind> {
  audience: PickerAudience<K>;
  event: PickerEvent<K>;
}
/** Outbox types of picker events: `picker.` and the event's `kind`. */
export const PICKER_EVENT_PREFIX = 'picker.';
export type PickerOutboxType = `picker.${PickerEventKind}`;

/**
 * The outbox event of revoked sessions (`payload.session_ids`): every instance's WebSocket
 * channels close the sockets those sessions opened (1008), as the next request would be refused.
 * Internal: no client receives it.
 */
export const SESSIONS_REVOKED_EVENT = 'auth.sessions.revoked';
export interface SessionsRevokedPayload {
  session_ids: string[];
}

/** Every outbox event type and its payload. */
export type OutboxEventMap = { [T in TrackingEventType]: TrackingEnvelope<T> } & {
  [K in PickerEventKind as `picker.${K}`]: PickerOutboxPayload<K>;
} & { [SESSIONS_REVOKED_EVENT]: SessionsRevokedPayload };
export type OutboxEventType = keyof OutboxEventMap;
export type OutboxPayload<T extends OutboxEventType> = OutboxEventMap[T];

/** An outbox row as the feed reads it: the type decides the payload. */
export type OutboxEvent = {
  [T in OutboxEventType]: { id: number; event_id: string; type: T; customer_id: string | null; payload: OutboxPayload<T> };
}[OutboxEventType];

/** Whom a row concerns, for routing and push (columns beside the payload). */
export interface OutboxRouting {
  customer_id?: string | null;
  store_id?: string | null;
  order_id?: string | null;
}

export const isPickerOutboxType = (type: string): type is PickerOutboxType => type.startsWith(PICKER_EVENT_PREFIX);
export const isTrackingEventType = (type: string): type is TrackingEventType =>
  type === 'order.changed' || type === 'delivery.tracking.changed';
export const isPickerOutboxEvent = (e: OutboxEvent): e is Extract<OutboxEvent, { type: PickerOutboxType }> => isPickerOutboxType(e.type);
export const isTrackingEvent = (e: OutboxEvent): e is Extract<OutboxEvent, { type: TrackingEventType }> => isTrackingEventType(e.type);

/**
 * The envelope a tracking socket sends for a stored one, and its per-language overrides of `data`:
 * without `i18n`, with the event's `order_id` and `order_version` at the top level (as the
 * interface spec lists the event's fields), also for envelopes written without them (the
 * statements that raise the version in SQL, and older builds).
 */
export function trackingMessage<T extends TrackingEventType>(
  payload: TrackingEnvelope<T>,
): { envelope: TrackingEnvelope<T>; i18n: TrackingEnvelope<T>['i18n'] } {
  const { i18n, ...stored } = payload;
  return {
    envelope: {
      ...stored,
      order_id: stored.order_id ?? stored.data?.order_id,
      order_version: stored.order_version ?? stored.data?.order_version,
    },
    i18n,
  };
}

/**
 * The message a client receives for an outbox row, and the spec schema it must match: the
 * tracking envelope (in the stored language; `trackingMessage`) or the picker event; null for
 * internal events.
 */
export function clientMessageOf(e: {
  type: string;
  payload: unknown;
}): { schema: 'TrackingEventEnvelope' | 'PickerRealtimeEvent'; message: unknown } | null {
  if (isTrackingEventType(e.type))
    return { schema: 'TrackingEventEnvelope', message: trackingMessage(e.payload as TrackingEnvelope<TrackingEventType>).envelope };
  if (isPickerOutboxType(e.type))
    return { schema: 'PickerRealtimeEvent', message: (e.payload as PickerOutboxPayload<PickerEventKind>).event };
  return null;
}

/** The event id of a payload: the envelope's or the picker event's own; a new one for internal events. */
function eventIdOf(type: OutboxEventType, payload: OutboxPayload<OutboxEventType>): string {
  if (isTrackingEventType(type)) return (payload as TrackingEnvelope<TrackingEventType>).event_id;
  if (isPickerOutboxType(type)) return (payload as PickerOutboxPayload<PickerEventKind>).event.event_id;
  return randomUUID();
}

/**
 * Writes one event to the outbox in the caller's transaction (or autocommit): it exists if and
 * only if the change around it commits. The row's `event_id` is the payload's own.
 */
export async function writeOutboxEvent<T extends OutboxEventType>(
  db: Executor,
  type: T,
  payload: OutboxPayload<T>,
  routing: OutboxRouting = {},
): Promise<void> {
  await db
    .insertInto('outbox_events')
    .values({
      event_id: eventIdOf(type, payload),
      type,
      customer_id: routing.customer_id ?? null,
      store_id: routing.store_id ?? null,
      order_id: routing.order_id ?? null,
      payload: JSON.stringify(payload),
    })
    .execute();
}
