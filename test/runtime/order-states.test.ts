// Every action on an order in every state it can be in: the customer's (read, roadmap, cancel,
// invoice), the picker's (start, an item command, finish, cancel, acknowledge) and the TEST-only
// bank and courier simulators, each on a fresh order brought to the state through the API, the
// 24 orders of one state side by side. Any answer the contract declares is fine (most are
// refusals); a 500, or an answer outside the contract, means a state the code did not expect, or
// writers that deadlock (checkout and cancellation did: test/orders/concurrency.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrder, deliveryBody, line, makeProduct, makeSlot, pickupBody, TVERSKAYA, type TestProduct } from '../orders/fixtures.js';
import { signInCustomer } from '../support/accounts.js';
import type { CheckedResponse } from '../support/client.js';
import { command } from '../support/orders.js';
import { createPicker, type TestPicker } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { attempt } from '../support/sweeps.js';

let svc: TestService;
let customer: Awaited<ReturnType<typeof signInCustomer>>;
let products: TestProduct[];
beforeAll(async () => {
  svc = await startTestService();
  customer = await signInCustomer(svc);
  products = [await makeProduct(svc, { stock: '100000', price: '700.00' }), await makeProduct(svc, { stock: '100000', price: '450.00' })];
});
afterAll(() => svc?.close());

const TRACKING = ['pending', 'searching_courier', 'courier_assigned', 'courier_at_store', 'en_route', 'arrived', 'delivered', 'cancelled', 'returning', 'returned'] as const;

/** One action on an order; `picker` works in the order's store and holds no session but this order's. */
type Step = (orderId: string, picker: TestPicker) => Promise<CheckedResponse>;

const customerGet = (path: string) => svc.client.raw('GET', path, { headers: customer.auth });
const customerPost = (path: string, body?: object) => svc.client.raw('POST', path, { headers: customer.auth, body });
const pickerPost = (picker: TestPicker, path: string, body?: object) => svc.client.raw('POST', path, { headers: command(picker.auth), body });

const named = {
  invoice: (id) => customerGet(`/api/payments/bank/${id}/invoice`),
  pay: (id) => customerPost(`/api/qa/payments/bank/${id}/settle`, { outcome: 'paid' }),
  payFails: (id) => customerPost(`/api/qa/payments/bank/${id}/settle`, { outcome: 'failed' }),
  cancel: (id) => customerPost(`/api/orders/${id}/cancel`),
  start: (id, picker) => pickerPost(picker, `/api/picker/orders/${id}/start`),
  pickAll: async (id, picker) => {
    const session = await svc.client.raw('GET', `/api/picker/orders/${id}/session`, { headers: picker.auth });
    let last = session;
    for (const item of session.body?.items ?? []) {
      last = await pickerPost(picker, `/api/picker/orders/${id}/items/${item.item_id}/piece-quantity`, { quantity: Number(item.ordered_quantity) });
    }
    return last;
  },
  firstItemMissing: async (id, picker) => {
    const session = await svc.client.raw('GET', `/api/picker/orders/${id}/session`, { headers: picker.auth });
    const item = session.body?.items?.[0];
    return item ? pickerPost(picker, `/api/picker/orders/${id}/items/${item.item_id}/missing`, { action: 'call' }) : session;
  },
  finish: (id, picker) => pickerPost(picker, `/api/picker/orders/${id}/finish`),
  pickerCancel: (id, picker) => pickerPost(picker, `/api/picker/orders/${id}/cancel`, { reason: 'other' }),
  acknowledge: (id, picker) => pickerPost(picker, `/api/picker/orders/${id}/cancelled/ack`),
  read: (id) => customerGet(`/api/orders/${id}`),
  roadmap: (id) => customerGet(`/api/orders/roadmap/${id}/short`),
  roadmapDetail: (id) => customerGet(`/api/orders/roadmap/${id}/detail`),
  pickerSession: (id, picker) => svc.client.raw('GET', `/api/picker/orders/${id}/session`, { headers: picker.auth }),
} satisfies Record<string, Step>;
type StepName = keyof typeof named | `courier:${(typeof TRACKING)[number]}`;
const courierSteps = {} as Record<`courier:${(typeof TRACKING)[number]}`, Step>;
for (const state of TRACKING) courierSteps[`courier:${state}`] = (id) => customerPost(`/api/qa/orders/${id}/delivery-tracking`, { state });
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
  'courier assigned': { status: 'picked', payment: 'cash', path: ['start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned'] },
  'cancel requested with a courier': {
    status: 'cancellation_requested',
    payment: 'cash',
    path: ['start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned', 'cancel'],
  },
  'on the way': { status: 'en_route', payment: 'cash', path: ['start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned', 'courier:courier_at_store', 'courier:en_route'] },
  delivered: {
    status: 'completed',
    payment: 'online',
    path: ['invoice', 'pay', 'start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned', 'courier:courier_at_store', 'courier:en_route', 'courier:arrived', 'courier:delivered'],
  },
  'pickup, confirmed': { status: 'confirmed', payment: 'cash', pickup: true, path: [] },
  'pickup, ready': { status: 'ready_for_pickup', payment: 'online', pickup: true, path: ['invoice', 'pay', 'start', 'pickAll', 'finish'] },
  'being returned by the courier': {
    status: 'en_route',
    payment: 'online',
    path: ['invoice', 'pay', 'start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned', 'courier:courier_at_store', 'courier:en_route', 'courier:returning'],
  },
  'returned by the courier': {
    status: 'picked',
    payment: 'cash',
    path: ['start', 'pickAll', 'finish', 'courier:searching_courier', 'courier:courier_assigned', 'courier:courier_at_store', 'courier:en_route', 'courier:returning', 'courier:returned'],
  },
};

describe('order states', () => {
  it('every customer, picker and simulator action on an order in every state gets a declared answer, never a 500', async () => {
    const slot = await makeSlot(svc, { capacity: 100_000 });
    const pickupSlot = await makeSlot(svc, { kind: 'pickup', capacity: 100_000 });
    const failures: string[] = [];
    const answers = new Map<number, number>();
    const run = async (label: string, step: Step, id: string, picker: TestPicker) => {
      const status = await attempt(failures, label, () => step(id, picker));
      if (status !== null) answers.set(status, (answers.get(status) ?? 0) + 1);
    };
    const reached = new Map<string, string>();
    for (const [state, recipe] of Object.entries(STATES)) {
      // The actions on one state run side by side, each on its own order.
      await Promise.all(
        (Object.keys(steps) as StepName[]).map(async (action) => {
          const lines = [line(products[0], '2'), line(products[1], '1')];
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
