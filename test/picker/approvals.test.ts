// The customer decides, live, while the order is picked: a line's replacement preference seen and
// enforced by the picker's commands, a proposal on a line that asks for approval sent to the
// customer (socket and push), the customer's answer back to the picker (socket), and the proposal
// that stands when nobody answers, when the picker finishes, or that the picker withdraws.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { components } from '../../generated/api.test.js';
import type { RecordingPushSender } from '../../platform/providers/push/recording.js';
import { recordOrderChange } from '../../db/queries/order-events.js';
import { settleExpiredApprovals } from '../../server/jobs/approval-expiry.js';
import { runOrderWorkerOnce } from '../../server/jobs/order-worker.js';
import { registerPushDevice, signInCustomer } from '../support/accounts.js';
import { assertMatchesSchema } from '../support/client.js';
import { createConfirmedOrder, stockedProducts, type StockedProduct } from '../support/orders.js';
import { createPicker, itemCommand, sessionCommand, signInDemoCustomer, startPicking, type TestPicker } from '../support/picking.js';
import { pickerMessage, trackingMessage } from '../support/realtime.js';
import { startTestService, type TestService } from '../support/service.js';

const STORE = DEMO_STORES[0]!.id;
let svc: TestService;
let pieces: StockedProduct[];
let weights: StockedProduct[];
let customer: Awaited<ReturnType<typeof signInDemoCustomer>>;

beforeAll(async () => {
  // The test settles expired proposals itself (the sweep's pass), on the test clock.
  svc = await startTestService({ env: { PICKING_APPROVAL_SWEEP_SECONDS: '0', ORDER_WORKER_ENABLED: 'false' } });
  pieces = (await stockedProducts(svc, { weight: false, count: 12, skip: 40 })).filter((p) => p.barcode).slice(0, 6);
  weights = await stockedProducts(svc, { weight: true, count: 1, skip: 5 });
  customer = await signInDemoCustomer(svc);
});
afterAll(() => svc?.close());

type Preference = { policy: 'no_replacement' | 'picker_choice' | 'named_products'; named?: StockedProduct[]; approval?: boolean };

/** A confirmed order of the demo customer whose first line carries `preference` (set as checkout stores it). */
async function orderWith(preference: Preference | null, lines: { product: StockedProduct; quantity: string }[]) {
  const order = await createConfirmedOrder(svc, {
    lines: lines.map((l) => ({ inventoryId: l.product.inventoryId, quantity: l.quantity })),
  });
  if (preference) {
    await svc.deps.db
      .updateTable('order_items')
      .set({
        replacement_policy: preference.policy,
        replacement_product_ids: (preference.named ?? []).map((p) => p.productId),
        replacement_approval: preference.approval ?? false,
      })
      .where('order_id', '=', order.orderId)
      .where('product_id', '=', lines[0]!.product.productId)
      .execute();
  }
  return order;
}

/** Starts picking and returns the session's item of `product`. */
async function started(picker: TestPicker, orderId: string, product: StockedProduct) {
  const session = await startPicking(svc, picker, orderId);
  return { session, item: session.items.find((i) => i.product_id === product.productId)! };
}

async function session(picker: TestPicker, orderId: string): Promise<components['schemas']['PickingSessionSchema']> {
  const r = await svc.client.call.GET('/api/picker/orders/{order_id}/session', {
    params: { path: { order_id: orderId } },
    headers: picker.auth,
  });
  expect(r.status).toBe(200);
  return r.body as components['schemas']['PickingSessionSchema'];
}

const decide = (orderId: string, approvalId: number, decision: 'approve' | 'reject', headers: Record<string, string> = customer.auth) =>
  svc.client.call.POST('/api/orders/{order_id}/approvals/{approval_id}/decision', {
    params: { path: { order_id: orderId, approval_id: approvalId } },
    headers,
    body: { decision },
  });

/** An open socket of the customer's order tracking or of a picker, collecting what it receives. */
async function socket(url: string, parse: (m: WebSocket.RawData) => any) {
  const ws = new WebSocket(url);
  const received: any[] = [];
  ws.on('message', (m) => received.push(parse(m)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('close', (code) => reject(new Error(`closed with ${code}`)));
  });
  const waitFor = async (predicate: (e: any) => boolean, ms = 5000) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const found = received.find(predicate);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no such message; received ${JSON.stringify(received)}`);
  };
  return { ws, received, waitFor };
}
const wsBase = () => svc.url.replace('http', 'ws');
const customerSocket = () =>
  socket(`${wsBase()}/ws/orders/tracking/?access_token=${customer.auth.authorization.slice(7)}`, trackingMessage);
const pickerSocket = (picker: TestPicker) => socket(`${wsBase()}/ws/picker/?access_token=${picker.access}`, pickerMessage);

/** Marks the item missing (the customer to be called) and scans `substitute` as its replacement. */
async function propose(picker: TestPicker, orderId: string, itemId: number, substitute: StockedProduct) {
  expect((await itemCommand(svc, picker, orderId, itemId, 'missing', { action: 'call' })).status).toBe(200);
  return itemCommand(svc, picker, orderId, itemId, 'replacement', { barcode: substitute.barcode! });
}

describe('a line’s preference on the picker’s side', () => {
  it('shows each line’s preference, offers the named products alone, and refuses what the line does not want', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, first, second, other] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [first!, second!] }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    expect(item.replacement_preference).toEqual({
      policy: 'named_products',
      products: [
        { product_id: first!.productId, name: first!.name },
        { product_id: second!.productId, name: second!.name },
      ],
      approval_required: false,
    });
    expect(item.approval).toBeNull();

    const missing = await itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'call' });
    expect(missing.status).toBe(200);
    // Offered: the named products, most preferred first.
    expect(missing.body.item.replacement_options.map((o: { name: string }) => o.name)).toEqual([first!.name, second!.name]);

    const notNamed = await itemCommand(svc, picker, order.orderId, item.item_id, 'replacement', { barcode: other!.barcode! });
    expect([notNamed.status, notNamed.body.code]).toEqual([409, 'REPLACEMENT_NOT_NAMED']);
    expect(notNamed.body.session.items.find((i: { item_id: number }) => i.item_id === item.item_id).state).toBe('missing');

    // A named product is taken without asking (the line does not ask for approval).
    const replaced = await itemCommand(svc, picker, order.orderId, item.item_id, 'replacement', { barcode: second!.barcode! });
    expect(replaced.status).toBe(200);
    expect([replaced.body.item.replacement.product_id, replaced.body.item.approval]).toEqual([second!.productId, null]);
  });

  it('refuses any replacement of a line whose customer wants none, and offers none', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, substitute] = pieces;
    const order = await orderWith({ policy: 'no_replacement' }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const missing = await itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'call' });
    expect(missing.body.item.replacement_options).toEqual([]);
    const refused = await itemCommand(svc, picker, order.orderId, item.item_id, 'replacement', { barcode: substitute!.barcode! });
    expect([refused.status, refused.body.code]).toEqual([409, 'REPLACEMENT_NOT_WANTED']);
    // The way out: the line is removed.
    expect((await itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'remove' })).status).toBe(200);
    expect((await itemCommand(svc, picker, order.orderId, item.item_id, 'clarification/resolve', { resolution: 'remove' })).status).toBe(
      200,
    );
  });

  it('leaves lines without a preference to the order’s absence_action, as before', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, substitute] = pieces;
    const order = await orderWith(null, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    expect(item.replacement_preference).toBeNull();
    const r = await propose(picker, order.orderId, item.item_id, substitute!);
    expect([r.status, r.body.item.replacement.product_id, r.body.item.approval]).toEqual([200, substitute!.productId, null]);
  });
});

describe('approval in the app', () => {
  it('sends a proposal to the customer at once and the answer to the picker at once, each a step of the version lines', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
    const device = await registerPushDevice(svc, customer.auth);
    const { item, session: start } = await started(picker, order.orderId, ordered!);
    const tracking = await customerSocket();
    const pickerWs = await pickerSocket(picker);
    try {
      const proposed = await propose(picker, order.orderId, item.item_id, named!);
      expect(proposed.status).toBe(200);
      const approval = proposed.body.item.approval;
      expect(approval).toMatchObject({ kind: 'replacement', status: 'pending', decided_by: null, decided_at: null });
      expect(Date.parse(approval.expires_at) - Date.parse(approval.requested_at)).toBe(300_000);
      // The picker goes on: the item is picked with the substitute meanwhile.
      expect(proposed.body.item.state).toBe('picked');

      // The customer: order.changed (approval), then order.approval.requested of the same version.
      const requested = await tracking.waitFor((m) => m.type === 'order.approval.requested' && m.order_id === order.orderId);
      const announced = tracking.received.find((m) => m.type === 'order.changed' && m.order_version === requested.order_version);
      expect(announced.data.changes).toContain('approval');
      expect(tracking.received.indexOf(announced)).toBeLessThan(tracking.received.indexOf(requested));
      expect(requested.data).toMatchObject({
        order_no: order.no,
        changes: ['approval'],
        approval: {
          id: approval.approval_id,
          kind: 'replacement',
          status: 'pending',
          proposed: { product_id: named!.productId, name: named!.name },
        },
        original: { product_id: ordered!.productId, name: ordered!.name, quantity: '1.000' },
      });
      expect(requested.notification_id).not.toBeNull();

      // And a push that asks: never dropped while the proposal is pending.
      await runOrderWorkerOnce(svc.deps);
      await runOrderWorkerOnce(svc.deps);
      const push = (svc.deps.push as RecordingPushSender).sent.find(
        (m) => m.token === device.push_token && m.data.kind === 'replacement_approval',
      );
      expect(push?.data).toMatchObject({
        screen: 'order_approval',
        approval_id: String(approval.approval_id),
        event_id: requested.event_id,
        notification_id: requested.notification_id,
      });
      assertMatchesSchema('PushNotificationPayload', push!.data);

      // The customer approves: the picker hears it on the channel, with the session's next version.
      const before = await session(picker, order.orderId);
      const approved = await decide(order.orderId, approval.approval_id, 'approve');
      expect(approved.status).toBe(200);
      const decided = await pickerWs.waitFor((e) => e.kind === 'item.approval.decided' && e.approval_id === approval.approval_id);
      expect(decided).toMatchObject({ item_id: item.item_id, status: 'approved', decided_by: 'customer', version: before.version + 1 });
      expect(pickerWs.received.some((e) => e.kind === 'session.changed' && e.version === before.version + 1)).toBe(true);
      const after = await session(picker, order.orderId);
      expect(after.items.find((i) => i.item_id === item.item_id)!.approval).toMatchObject({ status: 'approved', decided_by: 'customer' });
      expect(after.version).toBe(before.version + 1);

      // Answering again the same way changes nothing; the other way is too late.
      expect((await decide(order.orderId, approval.approval_id, 'approve')).status).toBe(200);
      const other = await decide(order.orderId, approval.approval_id, 'reject');
      expect([other.status, other.body.code]).toEqual([409, 'APPROVAL_ALREADY_DECIDED']);
      expect((await session(picker, order.orderId)).version).toBe(after.version);

      // Every rise of the order's version was announced, none skipped.
      await tracking.waitFor(
        (m) =>
          m.type === 'order.changed' &&
          m.order_id === order.orderId &&
          m.data.changes.includes('approval') &&
          m.order_version > requested.order_version,
      );
      const versions = tracking.received
        .filter((m) => m.type === 'order.changed' && m.order_id === order.orderId)
        .map((m) => m.order_version);
      expect(versions).toEqual(versions.map((_, i) => versions[0] + i));
      expect(start.version).toBe(1);
    } finally {
      tracking.ws.close();
      pickerWs.ws.close();
    }
  });

  it('keeps the push that asks while its proposal is pending, even behind later news of the order; drops it once answered', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const device = await registerPushDevice(svc, customer.auth);
    const kindsSent = () =>
      (svc.deps.push as RecordingPushSender).sent.filter((m) => m.token === device.push_token).map((m) => m.data.kind);
    const newsAfter = async (orderId: string) => {
      await recordOrderChange(svc.deps.db, orderId, ['status'], { now: svc.deps.clock.now(), notify: true });
      await runOrderWorkerOnce(svc.deps); // fan-out
      await runOrderWorkerOnce(svc.deps); // sending
    };

    const pendingOrder = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [
      { product: ordered!, quantity: '1' },
    ]);
    const first = await started(picker, pendingOrder.orderId, ordered!);
    await propose(picker, pendingOrder.orderId, first.item.item_id, named!);
    await newsAfter(pendingOrder.orderId);
    expect(kindsSent()).toEqual(['replacement_approval', 'order_status']);
    expect((await sessionCommand(svc, picker, pendingOrder.orderId, 'cancel', { reason: null })).status).toBe(200);

    const answeredOrder = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [
      { product: ordered!, quantity: '1' },
    ]);
    const second = await started(picker, answeredOrder.orderId, ordered!);
    const proposed = await propose(picker, answeredOrder.orderId, second.item.item_id, named!);
    expect((await decide(answeredOrder.orderId, proposed.body.item.approval.approval_id, 'approve')).status).toBe(200);
    await newsAfter(answeredOrder.orderId);
    expect(kindsSent()).toEqual(['replacement_approval', 'order_status', 'order_status']);
  });

  it('on a rejection takes the substitute back: the line is missing again and the next named product may be proposed', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, first, second] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [first!, second!], approval: true }, [
      { product: ordered!, quantity: '2' },
    ]);
    const { item } = await started(picker, order.orderId, ordered!);
    const pickerWs = await pickerSocket(picker);
    try {
      const proposed = await propose(picker, order.orderId, item.item_id, first!);
      const rejected = await decide(order.orderId, proposed.body.item.approval.approval_id, 'reject');
      expect(rejected.status).toBe(200);
      const line = (rejected.body as components['schemas']['OrderDetailSchema']).items.find((l) => l.product_id === ordered!.productId)!;
      expect(line.approval).toMatchObject({ status: 'rejected', decided_by: 'customer' });
      await pickerWs.waitFor((e) => e.kind === 'item.approval.decided' && e.status === 'rejected');
      const back = (await session(picker, order.orderId)).items.find((i) => i.item_id === item.item_id)!;
      expect([back.state, back.missing_action, back.replacement, back.actual_quantity]).toEqual(['missing', 'call', null, null]);
      expect(back.replacement_options.map((o) => o.name)).toEqual([first!.name, second!.name]);

      const again = await itemCommand(svc, picker, order.orderId, item.item_id, 'replacement', { barcode: second!.barcode! });
      expect(again.status).toBe(200);
      expect(again.body.item.approval).toMatchObject({ status: 'pending', kind: 'replacement' });
      expect(again.body.item.approval.approval_id).not.toBe(proposed.body.item.approval.approval_id);
    } finally {
      pickerWs.ws.close();
    }
  });

  it('asks about a quantity other than ordered; the item waits for the answer (409 APPROVAL_PENDING) while the picker goes on', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, another] = pieces;
    const order = await orderWith({ policy: 'picker_choice', approval: true }, [
      { product: ordered!, quantity: '3' },
      { product: another!, quantity: '1' },
    ]);
    const { session: s, item } = await started(picker, order.orderId, ordered!);
    const partial = await itemCommand(svc, picker, order.orderId, item.item_id, 'piece-quantity', { quantity: 2 });
    expect([partial.body.item.state, partial.body.item.approval.kind]).toEqual(['clarified', 'quantity']);
    const waiting = await itemCommand(svc, picker, order.orderId, item.item_id, 'clarification/confirm', {
      resolution: 'quantity_mismatch',
      quantity: 2,
    });
    expect([waiting.status, waiting.body.code]).toEqual([409, 'APPROVAL_PENDING']);
    // Other items go on.
    const other = s.items.find((i) => i.item_id !== item.item_id)!;
    expect((await itemCommand(svc, picker, order.orderId, other.item_id, 'piece-quantity', { quantity: 1 })).status).toBe(200);

    const approved = await decide(order.orderId, partial.body.item.approval.approval_id, 'approve');
    expect(approved.status).toBe(200);
    const now = (await session(picker, order.orderId)).items.find((i) => i.item_id === item.item_id)!;
    expect([now.state, now.actual_quantity, now.is_resolved]).toEqual(['picked', '2.000', true]);
  });

  it('asks about a weight outside the tolerance; a rejection sends the line to be removed', async () => {
    const picker = await createPicker(svc, [STORE]);
    const order = await orderWith({ policy: 'picker_choice', approval: true }, [{ product: weights[0]!, quantity: '1.000' }]);
    const { item } = await started(picker, order.orderId, weights[0]!);
    const heavy = await itemCommand(svc, picker, order.orderId, item.item_id, 'weight', { weight_kg: '1.400' });
    expect(heavy.body.item.approval).toMatchObject({ kind: 'weight', status: 'pending' });
    const rejected = await decide(order.orderId, heavy.body.item.approval.approval_id, 'reject');
    expect(rejected.status).toBe(200);
    const now = (await session(picker, order.orderId)).items.find((i) => i.item_id === item.item_id)!;
    expect([now.state, now.missing_action, now.actual_quantity]).toEqual(['missing', 'remove', null]);
  });

  it('lets a proposal stand when the store’s window passes, and tells the picker', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const pickerWs = await pickerSocket(picker);
    try {
      const proposed = await propose(picker, order.orderId, item.item_id, named!);
      const approvalId = proposed.body.item.approval.approval_id;
      expect(await settleExpiredApprovals(svc.deps)).toBe(0);
      svc.clock.advance(300_000);
      expect(await settleExpiredApprovals(svc.deps)).toBeGreaterThanOrEqual(1);
      await pickerWs.waitFor((e) => e.kind === 'item.approval.decided' && e.approval_id === approvalId && e.decided_by === 'timeout');
      const now = (await session(picker, order.orderId)).items.find((i) => i.item_id === item.item_id)!;
      expect([now.state, now.replacement!.product_id, now.approval!.status, now.approval!.decided_by]).toEqual([
        'picked',
        named!.productId,
        'approved',
        'timeout',
      ]);
      const late = await decide(order.orderId, approvalId, 'reject');
      expect([late.status, late.body.code]).toEqual([409, 'APPROVAL_ALREADY_DECIDED']);
    } finally {
      pickerWs.ws.close();
    }
  });

  it('settles unanswered proposals when the picker finishes; a later answer is 409 PICKING_FINISHED', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'picker_choice', approval: true }, [{ product: ordered!, quantity: '2' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const partial = await itemCommand(svc, picker, order.orderId, item.item_id, 'piece-quantity', { quantity: 1 });
    const approvalId = partial.body.item.approval.approval_id;
    const finished = await sessionCommand(svc, picker, order.orderId, 'finish');
    expect([finished.status, finished.body.session.session_status]).toEqual([200, 'completed']);
    const late = await decide(order.orderId, approvalId, 'reject');
    expect([late.status, late.body.code]).toEqual([409, 'PICKING_FINISHED']);
    const detail = await svc.client.call.GET('/api/orders/{order_id}', {
      params: { path: { order_id: order.orderId } },
      headers: customer.auth,
    });
    expect(detail.body.picking_result.state).toBe('completed');
    void named;
  });

  it('is withdrawn when the picker marks the item missing first; the answer then is 409 APPROVAL_WITHDRAWN', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const proposed = await propose(picker, order.orderId, item.item_id, named!);
    const back = await itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'remove' });
    expect(back.body.item.approval).toMatchObject({ status: 'withdrawn', decided_by: 'picker' });
    const late = await decide(order.orderId, proposed.body.item.approval.approval_id, 'approve');
    expect([late.status, late.body.code]).toEqual([409, 'APPROVAL_WITHDRAWN']);
  });

  it('is withdrawn when picking stops without finishing (the picker gives the order up)', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const proposed = await propose(picker, order.orderId, item.item_id, named!);
    expect((await sessionCommand(svc, picker, order.orderId, 'cancel', { reason: null })).status).toBe(200);
    const row = await svc.deps.db
      .selectFrom('item_approvals')
      .select(['status', 'decided_by'])
      .where('id', '=', proposed.body.item.approval.approval_id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'withdrawn', decided_by: 'picking_cancelled' });
    const late = await decide(order.orderId, proposed.body.item.approval.approval_id, 'approve');
    expect([late.status, late.body.code]).toEqual([409, 'APPROVAL_WITHDRAWN']);
  });

  it('has exactly one winner when the answer races the picker’s next command on the item (20 rounds)', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const outcomes = new Set<string>();
    for (let round = 0; round < 20; round++) {
      const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
      const { item } = await started(picker, order.orderId, ordered!);
      const proposed = await propose(picker, order.orderId, item.item_id, named!);
      const versionBefore = proposed.body.session.version;
      const [answer, next] = await Promise.all([
        decide(order.orderId, proposed.body.item.approval.approval_id, 'approve'),
        itemCommand(svc, picker, order.orderId, item.item_id, 'missing', { action: 'remove' }),
      ]);
      expect(next.status).toBe(200);
      const end = await session(picker, order.orderId);
      const approval = end.items.find((i) => i.item_id === item.item_id)!;
      if (answer.status === 200) {
        // The answer first: approved, then the picker's command on the decided item.
        outcomes.add('answer first');
        expect(end.version).toBe(versionBefore + 2);
        const row = await svc.deps.db
          .selectFrom('item_approvals')
          .select('status')
          .where('id', '=', proposed.body.item.approval.approval_id)
          .executeTakeFirstOrThrow();
        expect(row.status).toBe('approved');
      } else {
        outcomes.add('picker first');
        expect([answer.status, answer.body.code]).toEqual([409, 'APPROVAL_WITHDRAWN']);
        expect(end.version).toBe(versionBefore + 1);
        expect(approval.approval).toMatchObject({ status: 'withdrawn' });
      }
      expect(approval.state).toBe('missing');
      expect((await sessionCommand(svc, picker, order.orderId, 'cancel', { reason: null })).status).toBe(200);
    }
    expect(outcomes.size).toBeGreaterThanOrEqual(1);
  });
});

describe('decideItemApproval', () => {
  it('answers 401 without a customer token, 404 for another customer’s order or an unknown approval, 422 for a bad body', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const proposed = await propose(picker, order.orderId, item.item_id, named!);
    const id = proposed.body.item.approval.approval_id;
    expect((await decide(order.orderId, id, 'approve', {})).status).toBe(401);
    expect((await decide(order.orderId, id, 'approve', picker.auth)).status).toBe(401);
    const stranger = await signInCustomer(svc);
    expect((await decide(order.orderId, id, 'approve', stranger.auth)).status).toBe(404);
    expect((await decide(order.orderId, id + 100_000, 'approve')).status).toBe(404);
    const bad = await svc.client.invalid('POST', `/api/orders/${order.orderId}/approvals/${id}/decision`, {
      headers: customer.auth,
      body: { decision: 'maybe' },
    });
    expect([bad.status, bad.body.code]).toEqual([422, 'VALIDATION_ERROR']);
  });

  it('replays an answer under the same Idempotency-Key and refuses the key for another answer', async () => {
    const picker = await createPicker(svc, [STORE]);
    const [ordered, named] = pieces;
    const order = await orderWith({ policy: 'named_products', named: [named!], approval: true }, [{ product: ordered!, quantity: '1' }]);
    const { item } = await started(picker, order.orderId, ordered!);
    const proposed = await propose(picker, order.orderId, item.item_id, named!);
    const id = proposed.body.item.approval.approval_id;
    const key = randomUUID();
    const first = await decide(order.orderId, id, 'reject', { ...customer.auth, 'idempotency-key': key });
    const replay = await decide(order.orderId, id, 'reject', { ...customer.auth, 'idempotency-key': key });
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(replay.body).toEqual(first.body);
    const other = await decide(order.orderId, id, 'approve', { ...customer.auth, 'idempotency-key': key });
    expect([other.status, other.body.code]).toEqual([409, 'IDEMPOTENCY_CONFLICT']);
  });
});
