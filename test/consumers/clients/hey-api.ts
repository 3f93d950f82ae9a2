// A mobile team's code on the client @hey-api/openapi-ts generates from a bundled spec (TEST or
// PROD). It is never run: `npm run check:consumers` compiles it with `tsc --strict` against the
// client generated from each spec, so a contract change that breaks this code - a renamed or
// removed field, a narrowed enum, a changed operationId or parameter - fails CI. It reads the
// fields the apps rely on in the journeys of journeys.arazzo.yaml (the same calls, typed).
// 'consumer-client' is the generated folder (tsconfig paths, scripts/consumers.ts).
import { createClient, createConfig } from 'consumer-client/client';
import {
  checkDeliveryLocation,
  confirmOtp,
  createOrder,
  finishPicking,
  getBankInvoice,
  getOrder,
  getOrderRoadmapDetail,
  getProfile,
  listCatalogProducts,
  listDeliverySlots,
  listPickerOrders,
  loginPicker,
  scanPickingItem,
  sendOtp,
  startPicking,
  type OrderInput,
  type PickingItemSchema,
  type ProfileSchema,
} from 'consumer-client';

const api = createClient(createConfig({ baseUrl: 'https://api.grocery.example' }));
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

export async function signIn(phone: string, askForCode: () => Promise<string>): Promise<{ access: string; refresh: string; profile: ProfileSchema }> {
  const { data: sent } = await sendOtp({ client: api, body: { phone }, throwOnError: true });
  if (!sent.message) throw new Error('no acknowledgement');
  const code = await askForCode();
  const { data: tokens } = await confirmOtp({ client: api, body: { phone, code }, throwOnError: true });
  const { data: profile } = await getProfile({ client: api, headers: bearer(tokens.access), throwOnError: true });
  if (profile.phone !== tokens.phone) throw new Error('signed in as someone else');
  return { access: tokens.access, refresh: tokens.refresh, profile };
}

export async function checkout(access: string, idempotencyKey: string): Promise<string> {
  const point = { lon: 37.6106, lat: 55.7579 };
  const { data: located } = await checkDeliveryLocation({ client: api, body: point, throwOnError: true });
  const storeId: string = located.store.id;
  const { data: page } = await listCatalogProducts({
    client: api,
    headers: { 'X-Store-Id': storeId },
    query: { sort_by: 'expensive', page_size: 1 },
    throwOnError: true,
  });
  const product = page.items[0];
  if (!product) throw new Error('no products');
  const stock = String(product.stock);
  const { data: slots } = await listDeliverySlots({ client: api, headers: { 'X-Store-Id': storeId }, throwOnError: true });
  const slot = slots.find((s) => s.is_available && s.remaining_capacity > 0);
  if (!slot) throw new Error(`no slot (stock ${stock})`);
  const body: OrderInput = {
    type: 'delivery',
    payment_method: 'online',
    items: [{ product_id: product.id, unit_id: product.unit_id, quantity: '2' }],
    delivery_context: { address_line: 'Tverskaya St, 7, Moscow', location: point, slot_id: slot.id },
  };
  const placed = await createOrder({ client: api, headers: { ...bearer(access), 'X-Store-Id': storeId, 'Idempotency-Key': idempotencyKey }, body });
  if (placed.error) {
    // The retry rules of the idempotency key: another body under a used key is a conflict.
    const status = placed.response?.status;
    if (status === 409 && 'code' in placed.error && placed.error.code === 'IDEMPOTENCY_CONFLICT') throw new Error('new key needed');
    throw new Error(`checkout failed: ${status}`);
  }
  const orderId: string = placed.data;
  return orderId;
}

export async function payOnline(access: string, orderId: string, openBankPage: (link: string) => Promise<void>): Promise<boolean> {
  const { data: invoice } = await getBankInvoice({ client: api, headers: bearer(access), path: { order_id: orderId }, throwOnError: true });
  if (Date.parse(invoice.expires_at) > Date.now()) await openBankPage(invoice.link);
  const { data: roadmap } = await getOrderRoadmapDetail({ client: api, headers: bearer(access), path: { order_id: orderId }, throwOnError: true });
  return roadmap.payment_status === 'paid' && roadmap.status.value === 'confirmed';
}

export async function pickingWalk(login: string, password: string, orderId: string, scan: (item: PickingItemSchema) => Promise<string>): Promise<string> {
  const { data: picker } = await loginPicker({ client: api, body: { login, password }, throwOnError: true });
  const store = picker.picker.default_store_id ?? picker.picker.stores[0]?.id;
  if (!store) throw new Error('picker has no store');
  const auth = bearer(picker.access);
  const { data: queue } = await listPickerOrders({ client: api, headers: { ...auth, 'X-Store-Id': store }, throwOnError: true });
  const card = queue.find((o) => o.order_id === orderId && o.can_start);
  if (!card) throw new Error('not in the queue');
  const key = () => crypto.randomUUID();
  const { data: started } = await startPicking({ client: api, headers: { ...auth, 'Idempotency-Key': key() }, path: { order_id: card.order_id }, throwOnError: true });
  // A command answers a delta (the session header and the changed item): the app keeps the items
  // it read at the start and takes each answer's header.
  let status = started.session_status;
  for (const item of started.items) {
    if (item.is_weight_based || item.state !== 'pending' || item.barcode === null) continue;
    const barcode = await scan(item);
    const { data: action } = await scanPickingItem({
      client: api,
      headers: { ...auth, 'Idempotency-Key': key() },
      path: { order_id: orderId, item_id: item.item_id },
      body: { barcode },
      throwOnError: true,
    });
    if (action.status !== 'ok' || action.item?.state === 'clarified') throw new Error(action.message);
    status = action.session.session_status;
  }
  if (status !== 'ready_to_finish') return status;
  const { data: finished } = await finishPicking({ client: api, headers: { ...auth, 'Idempotency-Key': key() }, path: { order_id: orderId }, throwOnError: true });
  return String(finished.session.payment_summary.difference);
}

export async function pickedAsSeenByTheCustomer(access: string, orderId: string): Promise<number> {
  const { data: order } = await getOrder({ client: api, headers: bearer(access), path: { order_id: orderId }, throwOnError: true });
  if (order.status.value !== 'picked' || order.picking_result_state !== 'completed') return -1;
  return order.picking_result.summary.changed + order.picking_result.summary.removed;
}
