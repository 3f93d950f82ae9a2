// Factories of the orders tests: products with known stock and price, slots with known capacity,
// order bodies, and the calls that place and read orders. Each factory makes its own rows, so
// tests never depend on each other's stock or capacity.
import { randomInt, randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DEMO_STORES } from '../../db/seed/stores.js';
import type { CheckedResponse } from '../support/client.js';
import type { TestService } from '../support/service.js';
import type { components, paths } from '../../generated/api.test.js';

export type OrderInput = components['schemas']['OrderInput'];
export type OrderItemInput = components['schemas']['OrderItemInput'];

const storeIdOf = (code: string) => DEMO_STORES.find((s) => s.code === code)!.id;
export const TVERSKAYA = storeIdOf('MSK-TVERSKAYA');
export const ARBAT = storeIdOf('MSK-ARBAT');
/** Tverskaya St, 7: inside Tverskaya's centre zone (minimum 1000.00, delivery 199.00, free from 3000.00). */
export const IN_ZONE = { lon: 37.6106, lat: 55.7579 };
/** Shchukinskaya St: outside every zone. */
export const OUTSIDE_ZONES = { lon: 37.47, lat: 55.805 };

export interface TestProduct {
  productId: string;
  unitId: string;
  inventoryId: string;
}

export async function makeProduct(
  svc: TestService,
  opts: {
    storeId?: string;
    stock?: string | null;
    price?: string;
    unit?: 'pc' | 'kg' | 'g100';
    limit?: string | null;
    oldPrice?: string | null;
  } = {},
): Promise<TestProduct> {
  const db = svc.deps.db;
  const unit = await db
    .selectFrom('measurement_units')
    .select('id')
    .where('code', '=', opts.unit ?? 'pc')
    .executeTakeFirstOrThrow();
  const code = `T-${randomUUID().slice(0, 12)}`;
  const product = await db
    .insertInto('products')
    .values({
      code,
      name_ru: `Тестовый товар ${code}`,
      name_en: `Test product ${code}`,
      weight_based: opts.unit === 'kg' || opts.unit === 'g100',
      weight: '0.500',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const inventory = await db
    .insertInto('inventories')
    .values({
      product_id: product.id,
      store_id: opts.storeId ?? TVERSKAYA,
      unit_id: unit.id,
      is_default: true,
      stock: opts.stock === undefined ? '100.000' : opts.stock,
      unit_price: opts.price ?? '500.00',
      old_price: opts.oldPrice ?? null,
      order_quantity_limit: opts.limit ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { productId: product.id, unitId: unit.id, inventoryId: inventory.id };
}

export async function stockOf(svc: TestService, p: TestProduct): Promise<string | null> {
  const row = await svc.deps.db.selectFrom('inventories').select('stock').where('id', '=', p.inventoryId).executeTakeFirstOrThrow();
  return row.stock;
}

/** A window of the store starting `startsInMinutes` from now (2 hours long), unique per call. */
export async function makeSlot(
  svc: TestService,
  opts: { storeId?: string; kind?: 'delivery' | 'pickup'; capacity?: number; startsInMinutes?: number; closed?: boolean } = {},
): Promise<string> {
  const id = randomUUID();
  const storeId = opts.storeId ?? TVERSKAYA;
  // Seconds of jitter keep windows of one store apart (store, kind, start is unique).
  const startsIn = (opts.startsInMinutes ?? 26 * 60) * 60 + randomInt(0, 3600);
  await sql`
    INSERT INTO store_slots (id, store_id, kind, slot_date, starts_at, ends_at, capacity, is_closed)
    SELECT ${id}, ${storeId}, ${opts.kind ?? 'delivery'},
           ((now() + make_interval(secs => ${startsIn})) AT TIME ZONE st.timezone)::date,
           now() + make_interval(secs => ${startsIn}), now() + make_interval(secs => ${startsIn + 7200}),
           ${opts.capacity ?? 50}, ${opts.closed ?? false}
    FROM stores st WHERE st.id = ${storeId}`.execute(svc.deps.db);
  return id;
}

export async function reservedOf(svc: TestService, slotId: string): Promise<number> {
  const row = await svc.deps.db.selectFrom('store_slots').select('reserved').where('id', '=', slotId).executeTakeFirstOrThrow();
  return row.reserved;
}

export const line = (p: TestProduct, quantity: string | number = '1'): OrderItemInput => ({
  product_id: p.productId,
  unit_id: p.unitId,
  quantity,
});

export function deliveryBody(lines: OrderItemInput[], slotId: string | null, over: Partial<OrderInput> = {}): OrderInput {
  return {
    type: 'delivery',
    payment_method: 'cash',
    items: lines,
    delivery_context: {
      address_line: 'Tverskaya St, 7, Moscow',
      location: IN_ZONE,
      entrance: '2',
      floor: '5',
      apartment: '54',
      intercom: '54K',
      comment: 'Call on arrival',
      slot_id: slotId,
      is_express: slotId === null,
    },
    comment: 'Ripe bananas please',
    absence_action: 'call',
    ...over,
  };
}

export function pickupBody(lines: OrderItemInput[], slotId: string, over: Partial<OrderInput> = {}): OrderInput {
  // absence_action is the default, `call` (the generated type makes a defaulted field required).
  return { type: 'pickup', payment_method: 'cash', items: lines, pickup_context: { slot_id: slotId }, absence_action: 'call', ...over };
}

/** Makes express delivery orderable around the clock (the demo schedule depends on the hour). */
export async function expressAlwaysOpen(svc: TestService, storeId = TVERSKAYA, accepting = true): Promise<void> {
  await svc.deps.db
    .updateTable('store_express_schedule')
    .set({ start_time: '00:00', end_time: '23:59:59', is_active: true })
    .where('store_id', '=', storeId)
    .execute();
  await svc.deps.db.updateTable('store_express_delivery').set({ is_accepting: accepting }).where('store_id', '=', storeId).execute();
}

type OrderOptions = { storeId?: string | null; key?: string | null; lang?: string };
function orderHeaders(auth: Record<string, string>, opts: OrderOptions) {
  const headers: Record<string, string> = { ...auth };
  if (opts.storeId !== null) headers['x-store-id'] = opts.storeId ?? TVERSKAYA;
  if (opts.key !== null) headers['idempotency-key'] = opts.key ?? randomUUID();
  if (opts.lang) headers['accept-language'] = opts.lang;
  return headers;
}

export function createOrder(
  svc: TestService,
  auth: Record<string, string>,
  body: OrderInput,
  opts: OrderOptions = {},
): Promise<CheckedResponse> {
  return svc.client.call.POST('/api/orders/', { headers: orderHeaders(auth, opts), body });
}

/** POST /api/orders/ with a deliberately invalid body (see ContractClient.invalid). */
export function createInvalidOrder(svc: TestService, auth: Record<string, string>, body: unknown, opts: OrderOptions = {}) {
  return svc.client.invalid('POST', '/api/orders/', { headers: orderHeaders(auth, opts), body: body as object });
}

/** Places an order that must succeed and returns its id. */
export async function placedOrder(svc: TestService, auth: Record<string, string>, body: OrderInput, storeId?: string): Promise<string> {
  const r = await createOrder(svc, auth, body, { storeId });
  if (r.status !== 201) throw new Error(`order not placed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as string;
}

export const getOrder = (svc: TestService, auth: Record<string, string>, id: string, lang?: string) =>
  svc.client.call.GET('/api/orders/{order_id}', {
    params: { path: { order_id: id } },
    headers: { ...auth, ...(lang ? { 'accept-language': lang } : {}) },
  });

export const cancelOrder = (svc: TestService, auth: Record<string, string>, id: string) =>
  svc.client.call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id: id } }, headers: auth });

export const roadmapDetail = (svc: TestService, auth: Record<string, string>, id: string) =>
  svc.client.call.GET('/api/orders/roadmap/{order_id}/detail', { params: { path: { order_id: id } }, headers: auth });

/** A courier tracking state set through the TEST endpoint POST /api/qa/orders/{order_id}/delivery-tracking. */
export type TrackingInput = paths['/api/qa/orders/{order_id}/delivery-tracking']['post']['requestBody']['content']['application/json'];
export const setTracking = (svc: TestService, auth: Record<string, string>, id: string, body: TrackingInput, lang?: string) =>
  svc.client.call.POST('/api/qa/orders/{order_id}/delivery-tracking', {
    params: { path: { order_id: id } },
    headers: { ...auth, ...(lang ? { 'accept-language': lang } : {}) },
    body,
  });

export const bankInvoice = (svc: TestService, auth: Record<string, string>, id: string) =>
  svc.client.call.GET('/api/payments/bank/{order_id}/invoice', { params: { path: { order_id: id } }, headers: auth });

/** Settles the sandbox bank's invoice (TEST): `paid`, `declined`, ... */
export type SettleOutcome =
  paths['/api/qa/payments/bank/{order_id}/settle']['post']['requestBody']['content']['application/json']['outcome'];
export const settleSandboxInvoice = (svc: TestService, auth: Record<string, string>, id: string, outcome: SettleOutcome) =>
  svc.client.call.POST('/api/qa/payments/bank/{order_id}/settle', { params: { path: { order_id: id } }, headers: auth, body: { outcome } });

/** Polls until `check` holds (the worker and the socket act asynchronously). */
export async function eventually<T>(probe: () => Promise<T>, check: (v: T) => boolean, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (check(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ------------------------------------------------------------------------------------------------
// Changes of an order's lines before picking (POST /api/orders/{order_id}/items/changes)

export type OrderLineChange = components['schemas']['OrderLineChangeInput'];
export type ReplacementInput = components['schemas']['ReplacementPreferenceInput'];

type ChangeOptions = { version: number; key?: string | null; lang?: string };

/** POST .../items/changes at `version` with a new key (or the one given; null: none). */
export function changeItems(
  svc: TestService,
  auth: Record<string, string>,
  id: string,
  changes: OrderLineChange[],
  opts: ChangeOptions,
): Promise<CheckedResponse> {
  const headers: Record<string, string> = { ...auth };
  if (opts.key !== null) headers['idempotency-key'] = opts.key ?? randomUUID();
  if (opts.lang) headers['accept-language'] = opts.lang;
  return svc.client.call.POST('/api/orders/{order_id}/items/changes', {
    params: { path: { order_id: id }, header: { 'X-Expected-Version': opts.version } },
    headers,
    body: { changes },
  });
}

/** The order's version as a client reads it (OrderDetailSchema `order_version`). */
export async function orderVersion(svc: TestService, auth: Record<string, string>, id: string): Promise<number> {
  const r = await getOrder(svc, auth, id);
  if (r.status !== 200) throw new Error(`order not read: ${r.status}`);
  return r.body.order_version as number;
}

/** The `order.changed` events of the order, oldest first (the outbox as the socket and push read it). */
export async function orderChangedEvents(svc: TestService, id: string): Promise<{ order_version: number; changes: string[] }[]> {
  const rows = await svc.deps.db
    .selectFrom('outbox_events')
    .select('payload')
    .where('order_id', '=', id)
    .where('type', '=', 'order.changed')
    .orderBy('id')
    .execute();
  return rows.map((r) => {
    const data = (r.payload as { data: { order_version: number; changes: string[] } }).data;
    return { order_version: data.order_version, changes: data.changes };
  });
}
