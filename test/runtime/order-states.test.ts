// Every action on an order in every state it can be in: the customer's (read, roadmap, cancel,
// invoice), the picker's (start, an item command, finish, cancel, acknowledge) and the TEST-only
// bank and courier simulators, each on a fresh order brought to the state through the API, the
// 24 orders of one state side by side. Any answer the contract declares is fine (most are
// refusals); a 500, or an answer outside the contract, means a state the code did not expect, or
// writers that deadlock (checkout and cancellation did: test/orders/concurrency.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrder, deliveryBody, line, makeProduct, makeSlot, pickupBody, TVERSKAYA, type TestProduct } from '../orders/fixtures.js';
import { signInCustomer } from '../support/accounts.js';
import { command } from '../support/orders.js';
import { createPicker, type TestPicker } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import type { CheckedResponse } from '../support/client.js';
import { attempt } from '../support/sweeps.js';

let svc: TestService;
let customer: Awaited<ReturnType<typeof signInCustomer>>;
let products: TestProduct[];
beforeAll(async () => {
  // The sweep sends every action of a state side by side; on a machine busy with other test files
  // a request may wait more than the pool's 1 s for a connection and rightly get 503. What this
  // file checks is the answer each state gives, so it waits longer (the pool's limit has its tests).
  svc = await startTestService({ env: { DB_POOL_TIMEOUT_MS: '10000' } });
  customer = await signInCustomer(svc);
  products = [await makeProduct(svc, { stock: '100000', price: '700.00' }), await makeProduct(svc, { stock: '100000', price: '450.00' })];
});
afterAll(() => svc?.close());

const TRACKING = [
  'pending',
  'searching_courier',
  'courier_assigned',
  'courier_at_store',
  'en_route',
  'arrived',
  'delivered',
  'cancelled',
  'returning',
  'returned',
] as const;

/** One action on an order; `picker` works in the order's store and holds no session but this order's. */
type Step = (orderId: string, picker: TestPicker) => Promise<CheckedResponse>;

const order = (id: string) => ({ path: { order_id: id } });
const settle = (id: string, outcome: 'paid' | 'failed') =>
  svc.client.call.POST('/api/qa/payments/bank/{order_id}/settle', { params: order(id), headers: customer.auth, body: { outcome } });

const named = {
  invoice: (id) => svc.client.call.GET('/api/payments/bank/{order_id}/invoice', { params: order(id), headers: customer.auth }),
  pay: (id) => settle(id, 'paid'),
  payFails: (id) => settle(id, 'failed'),
  cancel: (id) => svc.client.call.POST('/api/orders/{order_id}/cancel', { params: order(id), headers: customer.auth }),
  start: (id, picker) => svc.client.call.POST('/api/picker/orders/{order_id}/start', { params: order(id), headers: command(picker.auth) }),
  pickAll: async (id, picker) => {
    const session = await svc.client.call.GET('/api/picker/orders/{order_id}/session', {
      params: { path: { order_id: id } },
      headers: picker.auth,
    });
    let last = session;
    for (const item of session.body?.items ?? []) {
      last = await svc.client.call.POST('/api/picker/orders/{order_id}/items/{item_id}/piece-quantity', {
        params: { path: { order_id: id, item_id: item.item_id } },
        headers: command(picker.auth),
        body: { quantity: Number(item.ordered_quantity) },
      });
    }
    return last;
  },
  firstItemMissing: async (id, picker) => {
    const session = await svc.client.call.GET('/api/picker/orders/{order_id}/session', {
      params: { path: { order_id: id } },
      headers: picker.auth,
    });
    const item = session.body?.items?.[0];
    return item
      ? svc.client.call.POST('/api/picker/orders/{order_id}/items/{item_id}/missing', {
          params: { path: { order_id: id, item_id: item.item_id } },
          headers: command(picker.auth),
          body: { action: 'call' },
        })
      : session;
  },
  finish: (id, picker) =>
    svc.client.call.POST('/api/picker/orders/{order_id}/finish', { params: order(id), headers: command(picker.auth) }),
  pickerCancel: (id, picker) =>
    svc.client.call.POST('/api/picker/orders/{order_id}/cancel', {
      params: order(id),
      headers: command(picker.auth),
      body: { reason: 'other' },
    }),
  acknowledge: (id, picker) =>
    svc.client.call.POST('/api/picker/orders/{order_id}/cancelled/ack', { params: order(id), headers: command(picker.auth) }),
  read: (id) => svc.client.call.GET('/api/orders/{order_id}', { params: order(id), headers: customer.auth }),
  roadmap: (id) => svc.client.call.GET('/api/orders/roadmap/{order_id}/short', { params: order(id), headers: customer.auth }),
  roadmapDetail: (id) => svc.client.call.GET('/api/orders/roadmap/{order_id}/detail', { params: order(id), headers: customer.auth }),
  pickerSession: (id, picker) =>
    svc.client.call.GET('/api/picker/orders/{order_id}/session', { params: { path: { order_id: id } }, headers: picker.auth }),
} satisfies Record<string, Step>;
type StepName = keyof typeof named | `courier:${(typeof TRACKING)[number]}`;
const courierSteps = {} as Record<`courier:${(typeof TRACKING)[number]}`, Step>;
for (const state of TRACKING) {
  courierSteps[`courier:${state}`] = (id) =>
    svc.client.call.POST('/api/qa/orders/{order_id}/delivery-tracking', { params: order(id), headers: customer.auth, body: { state } });
}
/** The named steps and the courier simulator's move to each tracking state. */
const steps: Record<StepName, Step> = { ...named, ...courierSteps };

/**
 * How to bring a new order to each state worth trying: a payment method and the steps from
 * checkout, and the purchase status it then has (checked, so a recipe that stops working cannot
 * silently narrow the sweep). While the courier brings a failed delivery back the purchase stays
 * `en_route`; once it is back (`returned`) the purchase is `picked` again, to be re-dispatched or
 * cancelled (OrderDeliveryTrackingStateEnum).
 */
const STATES: Record<string, { status: string; payment: 'cash' | 'online'; pickup?: true; path: StepName[] }> = {
  'online, not paid': { status: 'created', payment: 'online', path: [] },
  'online, invoice open': { status: 'awaiting_payment', payment: 'online', path: ['invoice'] },
  'online, payment failed': { status: 'awaiting_payment', payment: 'online', path: ['invoice', 'payFails'] },
  'online, paid': { status: 'confirmed', payment: 'online', path: ['invoice', 'pay'] },
  'cash, confirmed': { status: 'confirmed', payment: 'cash', path: [] },
  'cancelled before picking': { status: 'cancelled', payment: 'cash', path: ['cancel'] },
  'paid, then cancelled': { status: 'cancelled', payment: 'online', path: ['invoice', 'pay', 'cancel'] },
  picking: { status: 'picking', payment: 'cash', path: ['start'] },
  'picking, an item missing': { status: 'picking', payment: 'cash', path: ['start', 'firstItemMissing'] },
  'picking, all picked': { status: 'picking', payment: 'cash', path: ['start', 'pickAll'] },
  'cancelled while picking': { status: 'cancelled', payment: 'cash', path: ['start', 'cancel'] },
  'picking cancelled by the picker': { status: 'confirmed', payment: 'cash', path: ['start', 'pickerCancel'] },
  picked: { status: 'picked', payment: 'cash', path: ['start', 'pickAll', 'finish'] },
  'paid and picked': { status: 'picked', payment: 'online', path: ['invoice', 'pay', 'start', 'pickAll', 'finish'] },
  'courier searched': { status: 'picked', payment: 'cash', path: ['start', 'pickAll', 'finish', 'courier:searching_courier'] },
  'courier assigned': {
    status: 'picked',
    payment: 'cash',
    path: ['start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned'],
  },
  'cancel requested with a courier': {
    status: 'cancellation_requested',
    payment: 'cash',
    path: ['start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned', 'cancel'],
  },
  'on the way': {
    status: 'en_route',
    payment: 'cash',
    path: [
      'start',
      'pickAll',
      'finish',
      'courier:searching_courier',
      'courier:courier_assigned',
      'courier:courier_at_store',
      'courier:en_route',
    ],
  },
  delivered: {
    status: 'completed',
    payment: 'online',
    path: [
      'invoice',
      'pay',
      'start',
      'pickAll',
      'finish',
      'courier:searching_courier',
      'courier:courier_assigned',
      'courier:courier_at_store',
      'courier:en_route',
      'courier:arrived',
      'courier:delivered',
    ],
  },
  'pickup, confirmed': { status: 'confirmed', payment: 'cash', pickup: true, path: [] },
  'pickup, ready': { status: 'ready_for_pickup', payment: 'online', pickup: true, path: ['invoice', 'pay', 'start', 'pickAll', 'finish'] },
  'being returned by the courier': {
    status: 'en_route',
    payment: 'online',
    path: [
      'invoice',
      'pay',
      'start',
      'pickAll',
      'finish',
      'courier:searching_courier',
      'courier:courier_assigned',
      'courier:courier_at_store',
      'courier:en_route',
      'courier:returning',
    ],
  },
  'returned by the courier': {
    status: 'picked',
    payment: 'cash',
    path: [
      'start',
      'pickAll',
      'finish',
      'courier:searching_courier',
      'courier:courier_assigned',
      'courier:courier_at_store',
      'courier:en_route',
      'courier:returning',
      'courier:returned',
    ],
  },
};

describe('order states', () => {
  it('every customer, picker and simulator action on an order in every state gets a declared answer, never a 500', async () => {
    const slot = await makeSlot(svc, { capacity: 100_000 });
    const pickupSlot = await makeSlot(svc, { kind: 'pickup', capacity: 100_000 });
    const failures: string[] = [];
    const answers = new Map<number, number>();
    const run = async (label: string, step: Step, id: string, picker: TestPicker) => {
      // attempt() reads status and body; the typed answer has no raw text or operationId to give.
      const status = await attempt(failures, label, () => step(id, picker));
      if (status !== null) answers.set(status, (answers.get(status) ?? 0) + 1);
    };
    const reached = new Map<string, string>();
    for (const [state, recipe] of Object.entries(STATES)) {
      // The actions on one state run side by side, each on its own order.
      await Promise.all(
        (Object.keys(steps) as StepName[]).map(async (action) => {
          const lines = [line(products[0]!, '2'), line(products[1]!, '1')];
          const body = recipe.pickup
            ? pickupBody(lines, pickupSlot, { payment_method: recipe.payment })
            : deliveryBody(lines, slot, { payment_method: recipe.payment });
          const placed = await createOrder(svc, customer.auth, body);
          expect(placed.status, JSON.stringify(placed.body)).toBe(201);
          const id = placed.body as string;
          // A picker holds one session at a time: each order gets its own.
          const picker = await createPicker(svc, [TVERSKAYA]);
          for (const step of recipe.path) await run(`${state} / setting up: ${step}`, steps[step], id, picker);
          if (action === 'read') reached.set(state, (await steps.read(id, picker)).body?.status?.value ?? '?');
          await run(`${state} / ${action}`, steps[action], id, picker);
          // What the customer and the picker read afterwards must be valid too.
          await run(`${state} / ${action} / read`, steps.read, id, picker);
          await run(`${state} / ${action} / roadmap`, steps.roadmapDetail, id, picker);
        }),
      );
    }
    expect(failures, failures.join('\n')).toEqual([]);
    expect(Object.fromEntries(reached)).toEqual(Object.fromEntries(Object.entries(STATES).map(([state, r]) => [state, r.status])));
    // The sweep must reach success and refusal alike.
    expect(answers.get(200)).toBeGreaterThan(500);
    expect(answers.get(409)).toBeGreaterThan(50);
  }, 600_000);
});
