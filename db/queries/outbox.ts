// The outbox's event vocabulary and its one writer. Every event type maps to its payload, derived
// from the spec's message schemas (generated types): the order tracking envelope
// (TrackingEventEnvelope) and the picker channel's events (PickerRealtimeEvent). Every row of
// outbox_events is written here, in one of three forms that share the envelope columns
// (OUTBOX_ENVELOPE_COLUMNS):
//   - insertOutboxEvents / writeOutboxEvent: TypeScript producers, with Kysely;
//   - outboxInsertSql: the INSERT of a data-modifying CTE, for writes that build the event from the
//     row they change in the same statement (order creation, item commands, order changes, the
//     queue sweep) - one statement, one round trip;
//   - outbox_emit(event_id, type, customer_id, store_id, order_id, payload): the same INSERT as a
//     SQL function, for the database's own producers (the order-status trigger,
//     picking_order_status_changed; migration 2026_11_29_0901 defines both).
// Payloads built in SQL cannot be checked by the compiler beyond their shape (pickerPayloadSql);
// test/runtime/outbox-events.test.ts fires every producer and validates what it wrote.
import { randomUUID } from 'node:crypto';
import { sql, type Expression, type RawBuilder } from 'kysely';
import type { components } from '../../generated/api.test.js';
import type { Executor } from '../executor.js';

type Schemas = components['schemas'];

/** `data` of each tracking envelope type (TrackingEventEnvelope's oneOf). */
interface TrackingData {
  'order.changed': Schemas['OrderChangedEvent'];
  'delivery.tracking.changed': Schemas['DeliveryTrackingChangedEvent'];
  'order.approval.requested': Schemas['ApprovalRequestedEvent'];
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

/**
 * A stored tracking envelope as a reader takes it: envelopes written by older builds lack
 * `data.status` and `data.changes`, so those are optional here (the push fan-out reads them).
 */
export type StoredTrackingEnvelope = {
  [T in TrackingEventType]: Omit<TrackingEnvelope<T>, 'data'> & {
    data: Omit<TrackingData[T], 'status' | 'changes'> & Partial<Pick<TrackingData[T], 'status' | 'changes'>>;
  };
}[TrackingEventType];

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
 * Marks delivered events published (the catch-up scans skip them). The ids go as one array
 * parameter: thousands of them under a backlog would otherwise be as many bind parameters.
 */
export async function markOutboxEventsPublished(db: Executor, ids: readonly number[]): Promise<void> {
  if (!ids.length) return;
  await db
    .updateTable('outbox_events')
    .set({ published_at: sql<Date>`now()` })
    .where(sql<boolean>`id = ANY(${ids}::bigint[])`)
    .where('published_at', 'is', null)
    .execute();
}

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
  type === 'order.changed' || type === 'delivery.tracking.changed' || type === 'order.approval.requested';
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

/** The columns an event is written with, in the order every writer lists them. */
export const OUTBOX_ENVELOPE_COLUMNS = ['event_id', 'type', 'customer_id', 'store_id', 'order_id', 'payload'] as const;

/**
 * One outbox row as it is written: the envelope columns, the type deciding the payload. The
 * routing columns say whom the event concerns (the feed, push delivery); `event_id` is the
 * payload's own for client events.
 */
export type OutboxEnvelope<T extends OutboxEventType = OutboxEventType> = {
  [K in T]: {
    event_id: string;
    type: K;
    customer_id: string | null;
    store_id: string | null;
    order_id: string | null;
    payload: OutboxPayload<K>;
  };
}[T];

/** The event id of a payload: the envelope's or the picker event's own; a new one for internal events. */
function eventIdOf(type: OutboxEventType, payload: OutboxPayload<OutboxEventType>): string {
  if (isTrackingEventType(type)) return (payload as TrackingEnvelope<TrackingEventType>).event_id;
  if (isPickerOutboxType(type)) return (payload as PickerOutboxPayload<PickerEventKind>).event.event_id;
  return randomUUID();
}

/**
 * Writes events to the outbox in the caller's transaction (or autocommit), in the order given (ids
 * follow it): they exist if and only if the change around them commits. One statement.
 */
export async function insertOutboxEvents(db: Executor, events: readonly OutboxEnvelope[]): Promise<void> {
  if (!events.length) return;
  await db
    .insertInto('outbox_events')
    .values(
      events.map((e) => ({
        event_id: e.event_id,
        type: e.type,
        customer_id: e.customer_id,
        store_id: e.store_id,
        order_id: e.order_id,
        payload: JSON.stringify(e.payload),
      })),
    )
    .execute();
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
  const event = {
    event_id: eventIdOf(type, payload),
    type,
    customer_id: routing.customer_id ?? null,
    store_id: routing.store_id ?? null,
    order_id: routing.order_id ?? null,
    payload,
  } as OutboxEnvelope;
  await insertOutboxEvents(db, [event]);
}

// ------------------------------------------------------------------------------------------------
// Events written in SQL

/** A value of a statement: a parameter with its cast, a column reference, an expression. */
export type SqlValue = Expression<unknown>;
/** SQL values for each field of `O` (every field given, none it does not have). */
export type SqlFields<O> = { [K in keyof O]-?: SqlValue };

/** The payload of an event of `type`, built in SQL (its type is what the statement promises to build). */
export type SqlPayload<T extends OutboxEventType> = RawBuilder<OutboxPayload<T>>;

/** An outbox row built by a statement: each envelope column as SQL, routing columns NULL when absent. */
export interface OutboxRowSql<T extends OutboxEventType> {
  type: T;
  event_id: SqlValue;
  customer_id?: SqlValue;
  store_id?: SqlValue;
  order_id?: SqlValue;
  payload: SqlPayload<NoInfer<T>>;
}

/**
 * The payload of a picker event built in SQL: `{audience, event}` as jsonb, with the event's
 * `kind` written in. The field lists are the spec's (PickerAudience, PickerEvent), so a field
 * missing or unknown fails to compile; values need casts where PostgreSQL cannot infer a type.
 */
export function pickerPayloadSql<K extends PickerEventKind>(
  kind: K,
  audience: SqlFields<PickerAudience<K>>,
  event: SqlFields<Omit<PickerEvent<K>, 'kind'>>,
): SqlPayload<`picker.${K}`> {
  const object = (fields: [string, SqlValue][]) => sql`jsonb_build_object(${sql.join(fields.map(([k, v]) => sql`${sql.lit(k)}, ${v}`))})`;
  const { event_id, ...rest } = event as Record<string, SqlValue>;
  return sql<OutboxPayload<`picker.${K}`>>`jsonb_build_object(
    'audience', ${object(Object.entries(audience as Record<string, SqlValue>))},
    'event', ${object([['event_id', event_id!], ['kind', sql.lit(kind)], ...Object.entries(rest)])})`;
}

/**
 * The INSERT of outbox rows for a data-modifying CTE: `INSERT INTO outbox_events (envelope columns)
 * SELECT <row> <rest>`, where `rest` is the rest of the SELECT (`FROM`, `WHERE`, `RETURNING`). The
 * statement around it stays one statement; only this text is shared.
 */
export function outboxInsertSql<T extends OutboxEventType>(row: OutboxRowSql<T>, rest: RawBuilder<unknown> = sql``): RawBuilder<unknown> {
  const values: Record<(typeof OUTBOX_ENVELOPE_COLUMNS)[number], SqlValue> = {
    event_id: row.event_id,
    type: sql.lit(row.type),
    customer_id: row.customer_id ?? sql`NULL`,
    store_id: row.store_id ?? sql`NULL`,
    order_id: row.order_id ?? sql`NULL`,
    payload: row.payload,
  };
  return sql`INSERT INTO outbox_events (${sql.join(OUTBOX_ENVELOPE_COLUMNS.map((c) => sql.ref(c)))})
    SELECT ${sql.join(OUTBOX_ENVELOPE_COLUMNS.map((c) => values[c]))}
    ${rest}`;
}
