// Changes of an order's lines under parallel load on real PostgreSQL: one key is one change however
// many copies race, one version admits one change, and a change racing the picker's start has
// exactly one winner - the session is built from the changed lines, or the change is refused with
// PICKING_STARTED - with the stock exact after every round.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInCustomer } from '../support/accounts.js';
import { command, createConfirmedOrder } from '../support/orders.js';
import { createPicker, signInDemoCustomer } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { changeItems, deliveryBody, getOrder, line, makeProduct, makeSlot, placedOrder, stockOf, TVERSKAYA } from './fixtures.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

const countBy = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});
const versionOf = async (id: string) =>
  (await svc.deps.db.selectFrom('orders').select('order_version').where('id', '=', id).executeTakeFirstOrThrow()).order_version;

describe('changeOrderItems under concurrency', () => {
  it('changes the order once for 20 parallel requests with one key: each answer is the stored one or in progress', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '100.000' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    const detail = (await getOrder(svc, c.auth, id)).body;
    const key = randomUUID();
    const send = () =>
      changeItems(svc, c.auth, id, [{ op: 'set_quantity', item_id: detail.items[0].id, quantity: '5' }], {
        version: detail.order_version,
        key,
      });
    const replies = await Promise.all(Array.from({ length: 20 }, send));

    const changed = replies.filter((r) => r.status === 200);
    const inProgress = replies.filter((r) => r.status === 409);
    expect(changed.length + inProgress.length).toBe(20);
    expect(changed.length).toBeGreaterThanOrEqual(1);
    expect(new Set(changed.map((r) => r.text)).size).toBe(1);
    for (const r of inProgress) {
      expect(r.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(changed[0]!.body).toMatchObject({ order_version: detail.order_version + 1, items: [{ quantity: '5.000' }] });
    expect(await versionOf(id)).toBe(detail.order_version + 1);
    expect(await stockOf(svc, p)).toBe('95.000');
    // A retry once they are done gets the stored answer.
    const late = await send();
    expect([late.status, late.text]).toEqual([200, changed[0]!.text]);
  });

  it('admits exactly one of 20 parallel changes with distinct keys at one version; the others answer VERSION_CONFLICT', async () => {
    const c = await signInCustomer(svc);
    const p = await makeProduct(svc, { price: '1100.00', stock: '100.000' });
    const id = await placedOrder(svc, c.auth, deliveryBody([line(p)], await makeSlot(svc)));
    const detail = (await getOrder(svc, c.auth, id)).body;
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        changeItems(svc, c.auth, id, [{ op: 'set_quantity', item_id: detail.items[0].id, quantity: String(i + 2) }], {
          version: detail.order_version,
        }),
      ),
    );
    expect(countBy(replies.map((r) => r.status))).toEqual({ 200: 1, 409: 19 });
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.code).toBe('VERSION_CONFLICT');
    const won = Number(replies.find((r) => r.status === 200)!.body.items[0].quantity);
    expect(await versionOf(id)).toBe(detail.order_version + 1);
    // Checkout took 1; the winner holds `won` in all.
    expect(await stockOf(svc, p)).toBe(`${100 - won}.000`);
  });

  it('gives a change racing the picker’s start exactly one winner, 100 rounds, with the stock exact after each', async () => {
    const demo = await signInDemoCustomer(svc);
    const [p, q] = [
      await makeProduct(svc, { price: '700.00', stock: '10000.000' }),
      await makeProduct(svc, { price: '700.00', stock: '10000.000' }),
    ];
    let expected = { p: 10000, q: 10000 };
    const outcomes = { changed: 0, refused: 0 };
    for (let round = 0; round < 100; round++) {
      const [order, picker] = await Promise.all([
        createConfirmedOrder(svc, {
          storeId: TVERSKAYA,
          lines: [
            { inventoryId: p.inventoryId, quantity: '2' },
            { inventoryId: q.inventoryId, quantity: '1' },
          ],
        }),
        createPicker(svc, [TVERSKAYA]),
      ]);
      expected = { p: expected.p - 2, q: expected.q - 1 };
      const lines = await svc.deps.db
        .selectFrom('order_items')
        .select(['id', 'product_id'])
        .where('order_id', '=', order.orderId)
        .execute();
      const lineOf = (productId: string) => lines.find((l) => l.product_id === productId)!.id;
      const [change, start] = await Promise.all([
        changeItems(
          svc,
          demo.auth,
          order.orderId,
          [
            { op: 'set_quantity', item_id: lineOf(p.productId), quantity: '3' },
            { op: 'remove', item_id: lineOf(q.productId) },
          ],
          { version: await versionOf(order.orderId) },
        ),
        svc.client.call.POST('/api/picker/orders/{order_id}/start', {
          params: { path: { order_id: order.orderId } },
          headers: command(picker.auth),
        }),
      ]);
      expect(start.status, `round ${round}`).toBe(200);
      const session = (start.body.items as { product_id: string; ordered_quantity: string }[]).map(
        (i) => [i.product_id, i.ordered_quantity] as const,
      );
      if (change.status === 200) {
        outcomes.changed += 1;
        expected = { p: expected.p - 1, q: expected.q + 1 };
        expect(session, `round ${round}`).toEqual([[p.productId, '3.000']]);
      } else {
        outcomes.refused += 1;
        expect([change.status, change.body.code], `round ${round}`).toEqual([409, 'PICKING_STARTED']);
        expect(new Map(session), `round ${round}`).toEqual(
          new Map([
            [p.productId, '2.000'],
            [q.productId, '1.000'],
          ]),
        );
      }
      expect([await stockOf(svc, p), await stockOf(svc, q)], `round ${round}`).toEqual([`${expected.p}.000`, `${expected.q}.000`]);
    }
    expect(outcomes.changed + outcomes.refused).toBe(100);
  });
});
