// A mobile team's code on the fetch client orval generates from a bundled spec (TEST or PROD).
// Never run: `npm run check:consumers` compiles it with `tsc --strict` against the client
// generated from each spec, so a contract change that breaks it fails CI (see hey-api.ts; the
// same journeys in orval's style: one function per operation, answers discriminated by status).
// 'consumer-client' is the generated module (tsconfig paths, scripts/consumers.ts).
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

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const failed = (what: string, status: number) => new Error(`${what} answered ${status}`);

export async function signIn(phone: string, askForCode: () => Promise<string>): Promise<{ access: string; refresh: string; profile: ProfileSchema }> {
  const sent = await sendOtp({ phone });
  if (sent.status !== 200) throw failed('sendOtp', sent.status);
  if (!sent.data.message) throw new Error('no acknowledgement');
  const code = await askForCode();
  const tokens = await confirmOtp({ phone, code });
  if (tokens.status !== 200) throw failed('confirmOtp', tokens.status);
  const profile = await getProfile({ headers: bearer(tokens.data.access) });
  if (profile.status !== 200) throw failed('getProfile', profile.status);
  if (profile.data.phone !== tokens.data.phone) throw new Error('signed in as someone else');
  return { access: tokens.data.access, refresh: tokens.data.refresh, profile: profile.data };
}

export async function checkout(access: string, idempotencyKey: string): Promise<string> {
  const point = { lon: 37.6106, lat: 55.7579 };
  const located = await checkDeliveryLocation(point);
  if (located.status !== 200) throw failed('checkDeliveryLocation', located.status);
  const store = { 'X-Store-Id': located.data.store.id };
  const page = await listCatalogProducts({ sort_by: 'expensive', page_size: 1 }, { headers: store });
  if (page.status !== 200) throw failed('listCatalogProducts', page.status);
  const product = page.data.items[0];
  if (!product) throw new Error('no products');
  const slots = await listDeliverySlots(undefined, { headers: store });
  if (slots.status !== 200) throw failed('listDeliverySlots', slots.status);
  const slot = slots.data.find((s) => s.is_available && s.remaining_capacity > 0);
  if (!slot) throw new Error('no slot');
  const body: OrderInput = {
    type: 'delivery',
    payment_method: 'online',
    items: [{ product_id: product.id, unit_id: product.unit_id, quantity: '2' }],
    delivery_context: { address_line: 'Tverskaya St, 7, Moscow', location: point, slot_id: slot.id },
  };
  const placed = await createOrder(body, { headers: { ...bearer(access), ...store, 'Idempotency-Key': idempotencyKey } });
  if (placed.status === 409 && placed.data.code === 'IDEMPOTENCY_CONFLICT') throw new Error('new key needed');
  if (placed.status !== 201) throw failed('createOrder', placed.status);
  const orderId: string = placed.data;
  return orderId;
}

export async function payOnline(access: string, orderId: string, openBankPage: (link: string) => Promise<void>): Promise<boolean> {
  const invoice = await getBankInvoice(orderId, { headers: bearer(access) });
  if (invoice.status !== 200) throw failed('getBankInvoice', invoice.status);
  if (Date.parse(invoice.data.expires_at) > Date.now()) await openBankPage(invoice.data.link);
  const roadmap = await getOrderRoadmapDetail(orderId, { headers: bearer(access) });
  if (roadmap.status !== 200) throw failed('getOrderRoadmapDetail', roadmap.status);
  return roadmap.data.payment_status === 'paid' && roadmap.data.status.value === 'confirmed';
}

export async function pickingWalk(login: string, password: string, orderId: string, scan: (item: PickingItemSchema) => Promise<string>): Promise<string> {
  const signedIn = await loginPicker({ login, password });
  if (signedIn.status !== 200) throw failed('loginPicker', signedIn.status);
  const picker = signedIn.data;
  const store = picker.picker.default_store_id ?? picker.picker.stores[0]?.id;
  if (!store) throw new Error('picker has no store');
  const auth = bearer(picker.access);
  const queue = await listPickerOrders({ headers: { ...auth, 'X-Store-Id': store } });
  if (queue.status !== 200) throw failed('listPickerOrders', queue.status);
  const card = queue.data.find((o) => o.order_id === orderId && o.can_start);
  if (!card) throw new Error('not in the queue');
  const key = () => ({ ...auth, 'Idempotency-Key': crypto.randomUUID() });
  const started = await startPicking(card.order_id, { headers: key() });
  if (started.status !== 200) throw failed('startPicking', started.status);
  // A command answers a delta (the session header and the changed item): the app keeps the items
  // it read at the start and takes each answer's header.
  let status = started.data.session_status;
  for (const item of started.data.items) {
    if (item.is_weight_based || item.state !== 'pending' || item.barcode === null) continue;
    const action = await scanPickingItem(orderId, item.item_id, { barcode: await scan(item) }, { headers: key() });
    if (action.status !== 200) throw failed('scanPickingItem', action.status);
    if (action.data.status !== 'ok' || action.data.item?.state === 'clarified') throw new Error(action.data.message);
    status = action.data.session.session_status;
  }
  if (status !== 'ready_to_finish') return status;
  const finished = await finishPicking(orderId, { headers: key() });
  if (finished.status !== 200) throw failed('finishPicking', finished.status);
  return String(finished.data.session.payment_summary.difference);
}

export async function pickedAsSeenByTheCustomer(access: string, orderId: string): Promise<number> {
  const order = await getOrder(orderId, { headers: bearer(access) });
  if (order.status !== 200) throw failed('getOrder', order.status);
  if (order.data.status.value !== 'picked' || order.data.picking_result_state !== 'completed') return -1;
  return order.data.picking_result.summary.changed + order.data.picking_result.summary.removed;
}
