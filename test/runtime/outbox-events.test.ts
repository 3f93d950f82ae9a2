// Every producer of outbox events writes what the spec's message schemas say (issue 22 item 4).
// TypeScript producers write through db/queries/outbox.ts, typed by the spec; the ones in SQL
// cannot be: the data-modifying CTEs of order creation (insertOrder), picker item commands
// (writeItemCommand), order changes (recordOrderChange) and the queue horizon sweep
// (announceOrdersEnteringQueue), and the order-status trigger (picking_order_status_changed, its
// queue.changed, order.cancelled and session.changed). This file fires each of them on real
// PostgreSQL and validates every row written against the spec with the project's Ajv: the
// message a client receives (TrackingEventEnvelope, PickerRealtimeEvent), no field the schema
// does not declare, and the routing columns and audience agreeing with the payload.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordOrderChange } from '../../db/queries/order-events.js';
import {
  clientMessageOf,
  isPickerOutboxType,
  isTrackingEventType,
  SESSIONS_REVOKED_EVENT,
  trackingMessage,
  type OutboxEventType,
  type OutboxPayload,
  type PickerEventKind,
  type PickerOutboxPayload,
  type TrackingEnvelope,
  type TrackingEventType,
} from '../../db/queries/outbox.js';
import { revokeSessions } from '../../db/queries/auth.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { loadSpec, ResponseValidator } from '../../server/contract.js';
import { sweepPicking } from '../../server/jobs/picking-expiry.js';
import { signInCustomer } from '../support/accounts.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, itemCommand, signInDemoCustomer, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { deliveryBody, line, makeProduct, makeSlot, placedOrder } from '../orders/fixtures.js';

const STORE = DEMO_STORES[0]!.id;
const doc = loadSpec('TEST');
const validator = new ResponseValidator(doc);
const schemas = doc.components.schemas as Record<string, { properties?: Record<string, unknown> }>;
const PICKER_SCHEMAS: Record<PickerEventKind, string> = {
  'queue.changed': 'PickerQueueChangedEvent',
  'session.changed': 'PickerSessionChangedEvent',
  'order.cancelled': 'PickerOrderCancelledEvent',
  'item.approval.decided': 'PickerApprovalDecidedEvent',
};

const TRACKING_SCHEMAS: Record<TrackingEventType, string> = {
  'order.changed': 'OrderChangedEvent',
  'delivery.tracking.changed': 'DeliveryTrackingChangedEvent',
  'order.approval.requested': 'ApprovalRequestedEvent',
};

let svc: TestService;
let pieces: StockedProduct[];
let firstId = 0;

beforeAll(async () => {
  svc = await startTestService();
  pieces = await stockedProducts(svc, { weight: false, count: 2, skip: 6 });
  const last = await svc.deps.db
    .selectFrom('outbox_events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  firstId = Number(last?.id ?? 0);
});
afterAll(() => svc?.close());

/** Fields of `value` that the spec's schema `name` does not declare. */
const undeclared = (value: object, name: string, at: string) =>
  Object.keys(value)
    .filter((k) => !(k in (schemas[name]?.properties ?? {})))
    .map((k) => `${at}.${k} is not in ${name}`);

interface Row {
  event_id: string;
  type: string;
  customer_id: string | null;
  store_id: string | null;
  order_id: string | null;
  payload: unknown;
}

/** What is wrong with one outbox row, by the spec and by the outbox's own rules. */
function problemsOf(row: Row): string[] {
  const out = clientMessageOf(row);
  const problems = out ? validator.checkSchema(out.schema, out.message) : [];
  if (isTrackingEventType(row.type)) {
    const stored = row.payload as TrackingEnvelope<TrackingEventType>;
    const m = trackingMessage(stored).envelope;
    problems.push(...undeclared(m, 'TrackingEventEnvelope', 'envelope'));
    problems.push(...undeclared(m.data, TRACKING_SCHEMAS[m.type], 'data'));
    if (m.type !== row.type) problems.push(`envelope type ${m.type} in a ${row.type} row`);
    if (m.event_id !== row.event_id || m.data.event_id !== row.event_id) problems.push('event_id differs from the row');
    if (m.order_id !== row.order_id || m.data.order_id !== row.order_id || m.order_version !== m.data.order_version)
      problems.push('order_id/order_version differ between row, envelope and data');
    if (!row.customer_id) problems.push('a tracking event without its customer');
    for (const [lang, over] of Object.entries(stored.i18n ?? {})) {
      problems.push(...validator.checkSchema('TrackingEventEnvelope', { ...m, data: { ...m.data, ...over } }).map((p) => `${lang}: ${p}`));
    }
  } else if (isPickerOutboxType(row.type)) {
    const { audience, event: m } = row.payload as PickerOutboxPayload<PickerEventKind>;
    const kind = row.type.slice('picker.'.length) as PickerEventKind;
    problems.push(...undeclared(m, PICKER_SCHEMAS[kind] ?? 'PickerRealtimeEvent', 'event'));
    if (m.kind !== kind) problems.push(`event kind ${m.kind} in a ${row.type} row`);
    if (m.event_id !== row.event_id || m.order_id !== row.order_id || m.store_id !== row.store_id)
      problems.push('event_id/order_id/store_id differ from the row');
    const addressed =
      kind === 'queue.changed'
        ? 'store_id' in audience && audience.store_id === m.store_id && Object.keys(audience).length === 1
        : 'picker_id' in audience &&
          typeof audience.picker_id === 'number' &&
          Object.keys(audience).length === 1 &&
          (m.kind !== 'session.changed' || audience.picker_id === m.picker_id);
    if (!addressed) problems.push(`audience ${JSON.stringify(audience)}`);
  } else if (row.type === SESSIONS_REVOKED_EVENT) {
    const { session_ids } = row.payload as OutboxPayload<typeof SESSIONS_REVOKED_EVENT>;
    if (!Array.isArray(session_ids)) problems.push('session_ids is not a list');
  } else {
    problems.push('a type of no producer');
  }
  return problems.map((p) => `${row.type} ${row.event_id}: ${p}`);
}

describe('outbox events', () => {
  it('every producer, in TypeScript or SQL, writes payloads the spec accepts', async () => {
    const db = svc.deps.db;
    // Order creation (insertOrder's CTE: order.changed); its confirmation fires the status trigger
    // (queue.changed order_added).
    const customer = await signInCustomer(svc);
    const product = await makeProduct(svc);
    const created = await placedOrder(svc, customer.auth, deliveryBody([line(product, '3')], await makeSlot(svc)));

    // Picking: start (trigger: queue.changed order_started; recordSessionChanged), an item command
    // (writeItemCommand's CTE: session.changed and order.changed), then the order is cancelled
    // (trigger: queue.changed order_cancelled, order.cancelled, session.changed cancelled).
    const picker = await createPicker(svc, [STORE]);
    const order = await createConfirmedOrder(svc, {
      lines: [
        { inventoryId: pieces[0]!.inventoryId, quantity: '2' },
        { inventoryId: pieces[1]!.inventoryId, quantity: '1' },
      ],
    });
    const session = await startPicking(svc, picker, order.orderId);
    expect((await itemCommand(svc, picker, order.orderId, session.items[0]!.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);
    await db
      .updateTable('orders')
      .set({ status: 'cancelled', cancellation_reason: 'Cancelled by the customer' })
      .where('id', '=', order.orderId)
      .execute();

    // A proposal on a line that asks for approval (writeItemCommand's CTE: order.changed and
    // order.approval.requested), and the customer's answer (item.approval.decided).
    const asking = await createConfirmedOrder(svc, { lines: [{ inventoryId: pieces[0]!.inventoryId, quantity: '3' }] });
    await db
      .updateTable('order_items')
      .set({ replacement_policy: 'picker_choice', replacement_approval: true })
      .where('order_id', '=', asking.orderId)
      .execute();
    const asker = await createPicker(svc, [STORE]);
    const askingSession = await startPicking(svc, asker, asking.orderId);
    const proposed = await itemCommand(svc, asker, asking.orderId, askingSession.items[0]!.item_id, 'piece-quantity', { quantity: 2 });
    const owner = await signInDemoCustomer(svc);
    expect(
      (
        await svc.client.call.POST('/api/orders/{order_id}/approvals/{approval_id}/decision', {
          params: { path: { order_id: asking.orderId, approval_id: proposed.body.item.approval.approval_id } },
          headers: owner.auth,
          body: { decision: 'approve' },
        })
      ).status,
    ).toBe(200);

    // recordOrderChange's CTE: an order.changed, and a tracking change (an order.changed
    // announcing the version, then delivery.tracking.changed with its per-language display).
    await recordOrderChange(db, created, ['payment'], { notify: true, now: svc.deps.clock.now() });
    await recordOrderChange(db, created, ['status'], {
      now: svc.deps.clock.now(),
      tracking: {
        previous_state: 'pending',
        state: 'searching_courier',
        comment: null,
        eta: null,
        display: { ru: 'Ищем курьера', en: 'Looking for a courier' },
      },
      notify: true,
    });

    // The queue horizon sweep (announceOrdersEnteringQueue's CTE): a slot order confirmed days ago
    // whose slot start has just come within the horizon.
    await sweepPicking(svc.deps); // the watermark
    const later = await createConfirmedOrder(svc, { lines: [{ inventoryId: pieces[1]!.inventoryId, quantity: '1' }] });
    await db
      .updateTable('order_status_history')
      .set({ occurred_at: sql<Date>`now() - interval '3 days'` })
      .where('order_id', '=', later.orderId)
      .execute();
    await db
      .updateTable('orders')
      .set({ slot_starts_at: sql<Date>`now() + interval '24 hours' - interval '1 minute'`, is_express: false })
      .where('id', '=', later.orderId)
      .execute();
    await db
      .updateTable('picker_queue_horizon')
      .set({ swept_until: sql<Date>`now() + interval '24 hours' - interval '3 minutes'` })
      .execute();
    await sweepPicking(svc.deps);

    // The internal event of revoked sessions.
    await revokeSessions(db, { customerId: customer.customerId }, 'test');

    const rows = await db
      .selectFrom('outbox_events')
      .select(['event_id', 'type', 'customer_id', 'store_id', 'order_id', 'payload'])
      .where('id', '>', firstId)
      .orderBy('id')
      .execute();
    expect(rows.flatMap(problemsOf)).toEqual([]);

    // Each producer did write (a producer that stopped writing is a drift too).
    const seen = <T extends OutboxEventType>(type: T, orderId: string | null, match: (p: OutboxPayload<T>) => boolean = () => true) =>
      rows.some((r) => r.type === type && (orderId === null || r.order_id === orderId) && match(r.payload as OutboxPayload<T>));
    const reason = (r: string) => (p: OutboxPayload<'picker.queue.changed'>) => p.event.reason === r;
    expect({
      insertOrder: seen('order.changed', created, (p) => p.data.changes.join() === 'status' && p.data.order_version === 2),
      triggerAdded: seen('picker.queue.changed', order.orderId, reason('order_added')),
      triggerStarted: seen('picker.queue.changed', order.orderId, reason('order_started')),
      triggerCancelled: seen('picker.queue.changed', order.orderId, reason('order_cancelled')),
      triggerOrderCancelled: seen('picker.order.cancelled', order.orderId),
      triggerSessionCancelled: seen('picker.session.changed', order.orderId, (p) => p.event.session_status === 'cancelled'),
      sessionStarted: seen('picker.session.changed', order.orderId, (p) => p.event.version === session.version),
      itemCommand: seen('picker.session.changed', order.orderId, (p) => p.event.version === session.version + 1),
      itemCommandOrder: seen('order.changed', order.orderId, (p) => p.data.changes.includes('picking_result')),
      orderChange: seen('order.changed', created, (p) => p.data.changes.join() === 'payment'),
      trackingAnnounced: seen('order.changed', created, (p) => p.data.changes.includes('delivery')),
      tracking: seen(
        'delivery.tracking.changed',
        created,
        (p) => p.data.state === 'searching_courier' && p.i18n?.ru?.display === 'Ищем курьера',
      ),
      horizonSweep:
        rows.filter(
          (r) =>
            r.type === 'picker.queue.changed' &&
            r.order_id === later.orderId &&
            reason('order_added')(r.payload as OutboxPayload<'picker.queue.changed'>),
        ).length === 2,
      revoked: seen(SESSIONS_REVOKED_EVENT, null, (p) => p.session_ids.length >= 1),
      approvalRequested: seen(
        'order.approval.requested',
        asking.orderId,
        (p) => p.data.approval.kind === 'quantity' && p.i18n?.ru?.approval?.status === 'pending',
      ),
      approvalAnnounced: seen('order.changed', asking.orderId, (p) => p.data.changes.includes('approval')),
      approvalDecided: seen('picker.item.approval.decided', asking.orderId, (p) => p.event.status === 'approved'),
    }).toEqual({
      approvalRequested: true,
      approvalAnnounced: true,
      approvalDecided: true,
      insertOrder: true,
      triggerAdded: true,
      triggerStarted: true,
      triggerCancelled: true,
      triggerOrderCancelled: true,
      triggerSessionCancelled: true,
      sessionStarted: true,
      itemCommand: true,
      itemCommandOrder: true,
      orderChange: true,
      trackingAnnounced: true,
      tracking: true,
      horizonSweep: true,
      revoked: true,
    });
  });

  it('a payload that drifts from the spec is caught', () => {
    const event = {
      event_id: '1f0b8c2d-3e4a-4b5c-8d6e-7f8091a2b3c4',
      kind: 'session.changed',
      occurred_at: '2025-03-14T13:06:30+03:00',
      store_id: STORE,
      session_id: 1,
      order_id: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      picker_id: 17,
      version: 4,
      session_status: 'active',
    };
    const row = {
      event_id: event.event_id,
      type: 'picker.session.changed',
      customer_id: null,
      store_id: STORE,
      order_id: event.order_id,
      payload: { audience: { picker_id: 17 }, event },
    };
    expect(problemsOf(row)).toEqual([]);
    const { session_status: _status, ...renamed } = event;
    expect(problemsOf({ ...row, payload: { ...row.payload, event: { ...renamed, status: 'active' } } }).join()).toMatch(
      /session_status.*status is not in PickerSessionChangedEvent/,
    );
    expect(problemsOf({ ...row, payload: { audience: { store_id: STORE }, event } }).join()).toMatch(/audience/);
  });
});
