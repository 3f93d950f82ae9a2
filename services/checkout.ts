// Checkout (POST /api/orders/) and the delivery price estimate, which prices by the same rules.
// placeOrder runs inside ONE transaction opened by the caller: it locks the stock rows of the
// cart and holds one unit of the slot (one statement), judges the lines, the zone or pickup store,
// express, the minimum order and the slot, then takes the stock with guarded updates and records
// the order and its event (one statement, with the answer of a key taken over). Any failure throws and the
// transaction leaves no order, no stock taken and no slot held.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  findDeliveryTerms,
  listServingZoneCandidates,
  servingZoneCandidatesQuery,
  slotHoldOutcome,
  type DeliveryTermsRow,
  type ServingZoneRow,
  type SlotHoldResult,
} from '../db/queries/logistics.js';
import { claimIdempotencyKeyWith, type IdempotencyScope } from '../db/queries/idempotency.js';
import type { DB } from '../db/schema.js';
import { IDEMPOTENCY_TTL_SECONDS, settleTakenKey } from './idempotency.js';
import {
  cartLineFacts,
  findStoreForOrder,
  findStoreSlot,
  insertPlacedOrder,
  lockCheckout,
  namedProductFacts,
  type CartLineFacts,
} from '../db/queries/orders.js';
import { findZoneTerms } from '../db/queries/order-changes.js';
import { serializeBody } from './stored-body.js';
import { findActiveStoreCached } from './stores.js';
import type { Executor } from '../db/executor.js';
import type { components } from '../generated/api.test.js';
import type { AppDeps } from './deps.js';
import { AppError, appError, badGateway, conflict, unauthorized, unprocessable } from './errors.js';
import { CourierRefusedError, CourierUnavailableError } from '../platform/providers/courier/index.js';
import { EDGE_TOLERANCE_DEG, parseArea, type Point } from '../domain/geo/geometry.js';
import { quantityUnit } from '../domain/catalog/availability.js';
import { deliveryModeOf, duplicateLine, judgeLines, parseLineQuantities, unsoldLines, type LineFacts } from '../domain/orders/checkout.js';
import { formatDecimal } from '../domain/money/decimal.js';
import { localMoment } from '../domain/time/local-time.js';
import { priceDelivery } from '../domain/orders/pricing.js';
import { kopecks, lineTotal, money } from '../domain/money/money.js';
import { cutoffOf, slotAvailability } from '../domain/orders/slot-availability.js';
import { chooseServingZone, type ZoneCandidate } from '../domain/geo/serving-store.js';
import { namedProductIds, namedProductProblems, storedReplacement, type StoredReplacement } from '../domain/orders/replacement.js';
import { expressDeliveryView } from './presenters/logistics.js';
import type { Lang } from '../domain/texts/orders.js';

type Schemas = components['schemas'];
type OrderInput = Schemas['OrderInput'];
type Line = { product_id: string; unit_id: string; quantity: string | number };

const lowerLines = (items: readonly Line[]): Line[] =>
  items.map((l) => ({ product_id: l.product_id.toLowerCase(), unit_id: l.unit_id.toLowerCase(), quantity: l.quantity }));

const lineFacts = (f: CartLineFacts): LineFacts => ({
  productExists: f.product_exists,
  unit: quantityUnit(f),
  inventory: f.inventory_id ? { stock: f.stock, orderQuantityLimit: f.order_quantity_limit } : null,
});

// ------------------------------------------------------------------------------------------------
// Zones, express, slots

interface ZoneTerms {
  zoneId: string;
  storeId: string;
  deliveryCost: string;
  freeAmountThreshold: string;
  minOrderAmount: string;
}

/**
 * The zone whose terms apply to a point: among the zones containing it (of `storeId`, or of any
 * store when null), the one the serving-store rule chooses (highest priority first).
 */
async function zoneForPoint(
  db: Executor,
  storeId: string | null,
  point: Point,
  read?: readonly ServingZoneRow[],
): Promise<ZoneTerms | null> {
  const rows = read ?? (await listServingZoneCandidates(db, pointBox(point), EDGE_TOLERANCE_DEG, storeId));
  const candidates: (ZoneCandidate & { terms: ZoneTerms })[] = [];
  for (const r of rows) {
    const area = parseArea(r.polygon);
    if (!area) continue; // refused by the database's check; never let one bad row break checkout
    candidates.push({
      zoneId: r.id,
      storeId: r.store_id,
      store: { lon: r.store_lon, lat: r.store_lat },
      priority: r.priority,
      deliveryCost: r.delivery_cost,
      area,
      terms: {
        zoneId: r.id,
        storeId: r.store_id,
        deliveryCost: r.delivery_cost,
        freeAmountThreshold: r.free_amount_threshold,
        minOrderAmount: r.min_order_amount,
      },
    });
  }
  return chooseServingZone(candidates, point)?.zone.terms ?? null;
}

const pointBox = (point: Point) => ({ minLon: point.lon, maxLon: point.lon, minLat: point.lat, maxLat: point.lat });

/**
 * The zone candidates of a delivery order's point in its store, as a query: order creation reads
 * them with its key's claim (one round trip for both; zones are settings, read without a lock).
 */
export function checkoutZonesQuery(db: Executor, storeId: string, body: OrderInput) {
  return body.type === 'delivery' && body.delivery_context
    ? servingZoneCandidatesQuery(db, pointBox(body.delivery_context.location), EDGE_TOLERANCE_DEG, storeId)
    : null;
}

/** The columns of ServingZoneRow (checkoutZonesQuery read within another statement). */
export const ZONE_ROW_COLUMNS = [
  'id',
  'store_id',
  'name_ru',
  'name_en',
  'polygon',
  'priority',
  'delivery_cost',
  'free_amount_threshold',
  'min_order_amount',
  'store_name_ru',
  'store_name_en',
  'store_address_ru',
  'store_address_en',
  'store_lon',
  'store_lat',
] as const;

const outsideZone = () => unprocessable('OUTSIDE_DELIVERY_ZONE', 'The address is outside the delivery zones of this store');

/** The store's express offer if it can be ordered now, else why not. */
function expressOffer(terms: DeliveryTermsRow | undefined, now: Date): { minutes: number; cost: string; maxItems: number | null } | null {
  if (!terms || terms.express_minutes === null || terms.express_cost === null) return null;
  if (!expressDeliveryView(terms, now)?.is_available) return null;
  return { minutes: terms.express_minutes, cost: terms.express_cost, maxItems: terms.express_max_items_count };
}

const expressItemsLimit = (max: number) => unprocessable('EXPRESS_ITEMS_LIMIT', `Express delivery takes at most ${max} lines`);

function slotHoldFailure(result: Extract<SlotHoldResult, { ok: false }>): AppError {
  switch (result.reason) {
    case 'not_found':
    case 'order_holds_another_slot':
      return unprocessable('SLOT_NOT_FOUND', 'No slot of this store has this id');
    case 'closed':
      return conflict('SLOT_UNAVAILABLE', 'The slot is closed; choose another one');
    case 'cutoff_passed':
      return conflict('SLOT_UNAVAILABLE', 'The slot can no longer be booked; choose another one');
    case 'full':
      return conflict('SLOT_FULL', 'The slot has no capacity left; choose another one');
  }
}

// ------------------------------------------------------------------------------------------------
// Checkout

export interface CheckoutRequest {
  customerId: string;
  /** The store of X-Store-Id, as requireStore found it. */
  store: {
    id: string;
    timezone: string;
    name_ru: string;
    name_en: string;
    address_ru: string | null;
    address_en: string | null;
    pickup_min_order_amount: string;
  };
  body: OrderInput;
  lang: Lang;
}

export interface PlaceOptions {
  /** The order's id (new when absent). */
  orderId?: string;
  /** The zone candidates already read (checkoutZonesQuery); read here when absent. */
  zones?: readonly ServingZoneRow[];
  /** A key taken over (its record not written with its answer): its answer (201, the order id) is stored with the order. */
  answerOf?: IdempotencyScope;
}

/**
 * Places the order once under an Idempotency-Key, inside the caller's transaction `trx`: the key is
 * claimed with the read of the delivery zones (one statement), its answer (the id the order is
 * about to get) written with the claim. The claim is part of the transaction: a duplicate sent
 * meanwhile waits at the key and then replays, and a crash or a refusal rolls the claim back with
 * the order, so no key is ever left in progress. A key that already has an answer
 * replays it; an expired or abandoned one is taken over, and then placeOrder stores the answer.
 * `attempt.acting` says, when this throws, whether the error is the action's own outcome (to store
 * for replay after the rollback: storeRefusal) rather than the key's.
 */
export async function placeOrderOnce(
  trx: Kysely<DB>,
  deps: Pick<AppDeps, 'clock' | 'config'>,
  request: CheckoutRequest,
  key: { scope: IdempotencyScope; fingerprint: string },
  attempt: { acting: boolean } = { acting: false },
): Promise<{ id: string; replayed: boolean }> {
  const orderId = randomUUID();
  const zonesQuery = checkoutZonesQuery(trx, request.store.id, request.body);
  const claim = await claimIdempotencyKeyWith<ServingZoneRow>(
    trx,
    key.scope,
    key.fingerprint,
    IDEMPOTENCY_TTL_SECONDS,
    { status: 201, stored: await serializeBody(orderId) },
    zonesQuery && { query: zonesQuery, columns: ZONE_ROW_COLUMNS },
  );
  attempt.acting = claim.claimed;
  if (claim.claimed)
    return { id: await placeOrder(trx, deps, request, { orderId, zones: zonesQuery ? claim.rows : undefined }), replayed: false };
  const taken = await settleTakenKey<{ status: 201; body: string }>(trx, key.scope, key.fingerprint, deps.clock.now());
  if (taken.replay) return { id: taken.replay.body, replayed: true };
  attempt.acting = true;
  return { id: await placeOrder(trx, deps, request, { orderId, answerOf: key.scope }), replayed: false };
}

/**
 * Places the order inside the caller's transaction and returns its id. Two statements in the
 * common case (order creation: 6 round trips with the auth check, the key's claim, BEGIN and
 * COMMIT): lockCheckout (customer, stock rows and the window) and insertPlacedOrder (stock, order,
 * event, and the answer of a key taken over); every refusal is judged between them and rolls
 * everything back.
 */
export async function placeOrder(
  trx: Executor,
  deps: Pick<AppDeps, 'clock' | 'config'>,
  c: CheckoutRequest,
  options: PlaceOptions = {},
): Promise<string> {
  const { body, store } = c;
  const orderId = options.orderId ?? randomUUID();
  const now = deps.clock.now();
  const lines = lowerLines(body.items);
  const slotId = body.type === 'delivery' ? (body.delivery_context?.slot_id ?? null) : (body.pickup_context?.slot_id ?? null);
  const slotRequest = slotId ? { kind: body.type, request: { storeId: store.id, slotId: slotId.toLowerCase(), orderId } } : null;

  // The account must still exist when the order commits (it is share-locked); the stock judged
  // below is what this transaction will take (its rows are locked), and the window is held.
  const locks = await lockCheckout(trx, { customerId: c.customerId, storeId: store.id, lines, slot: slotRequest });
  if (!locks.customerActive) throw unauthorized('The account of this token no longer exists');
  const facts = locks.facts;
  const verdict = judgeLines(lines, facts.map(lineFacts));
  if (!verdict.ok && verdict.code === 'INVALID_QUANTITY') throw appError(verdict.code, verdict.detail);

  let zone: ZoneTerms | null = null;
  let express: ReturnType<typeof expressOffer> = null;
  const delivery = body.type === 'delivery' ? body.delivery_context! : null;
  if (delivery) {
    zone = await zoneForPoint(trx, store.id, delivery.location, options.zones);
    if (!zone) throw outsideZone();
    if (delivery.is_express) {
      const terms = await findDeliveryTerms(trx, store.id);
      if (terms?.express_max_items_count != null && lines.length > terms.express_max_items_count)
        throw expressItemsLimit(terms.express_max_items_count);
      express = expressOffer(terms, now);
      if (!express) throw conflict('EXPRESS_UNAVAILABLE', 'Express delivery is not accepted right now');
    }
  }

  if (!verdict.ok) throw appError(verdict.code, verdict.detail, { extra: { lines: verdict.lines } });

  const preferences = body.items.map((item) => storedReplacement(item.replacement));
  await assertNamedProducts(
    trx,
    store.id,
    lines.map((line, i) => ({
      productId: line.product_id,
      unitId: line.unit_id,
      quantity: verdict.quantities[i]!,
      preference: preferences[i]!,
    })),
  );

  // Price the lines at the store's current prices.
  const priced = lines.map((line, i) => {
    const f = facts[i];
    const quantity = verdict.quantities[i];
    return { line, f, quantity, total: lineTotal(quantity!, kopecks(f!.unit_price!)) };
  });
  const goodsTotal = priced.reduce((sum, p) => sum + p.total, 0n);

  let deliveryCost = 0n;
  if (zone) {
    const price = priceDelivery(goodsTotal, zone, express ? { cost: express.cost } : null);
    if (!price.meetsMinimum) {
      throw unprocessable(
        'BELOW_MINIMUM_ORDER',
        `The goods total must be at least ${money(price.minOrderAmount)} for delivery here (${money(price.amountToMinimum)} more)`,
      );
    }
    deliveryCost = price.deliveryPrice;
  } else {
    const minimum = kopecks(store.pickup_min_order_amount);
    if (goodsTotal < minimum)
      throw unprocessable(
        'BELOW_MINIMUM_ORDER',
        `The goods total must be at least ${money(minimum)} for pickup (${money(minimum - goodsTotal)} more)`,
      );
  }

  // One unit of the slot, held with the order (a conditional update: exactly `capacity` win),
  // taken with the stock locks (lockCheckout) and judged here, in the order of the checks.
  let slot: { slotId: string; slotDate: string; startsAt: Date; endsAt: Date } | null = null;
  if (slotRequest) {
    const hold: SlotHoldResult = await slotHoldOutcome(trx, slotRequest.kind, slotRequest.request, locks.slot!);
    if (!hold.ok) throw slotHoldFailure(hold);
    slot = hold.slot;
  }

  const storeAddress = (c.lang === 'ru' ? store.address_ru : store.address_en) ?? (c.lang === 'ru' ? store.name_ru : store.name_en);
  const localTimeOf = (d: Date) => localMoment(d, store.timezone).time;
  // A cash order is accepted at once; an online one waits in `created` for its invoice.
  const statuses: ('created' | 'confirmed')[] = body.payment_method === 'cash' ? ['created', 'confirmed'] : ['created'];
  const placed = await insertPlacedOrder(
    trx,
    {
      order: {
        id: orderId,
        customer_id: c.customerId,
        store_id: store.id,
        type: body.type,
        payment_method: body.payment_method,
        status: statuses[statuses.length - 1]!,
        payment_status: body.payment_method === 'cash' ? 'not_required' : 'awaiting',
        absence_action: body.absence_action ?? 'call',
        comment: body.comment ?? null,
        change_amount: body.change === undefined || body.change === null ? null : String(body.change),
        address_line: delivery ? delivery.address_line : storeAddress,
        delivery_lon: delivery?.location.lon ?? null,
        delivery_lat: delivery?.location.lat ?? null,
        entrance: delivery?.entrance ?? null,
        floor: delivery?.floor ?? null,
        apartment: delivery?.apartment ?? null,
        intercom: delivery?.intercom ?? null,
        courier_comment: delivery?.comment ?? null,
        delivery_zone_id: zone?.zoneId ?? null,
        is_express: express !== null,
        express_minutes: express?.minutes ?? null,
        slot_id: slot?.slotId ?? null,
        slot_date: slot?.slotDate ?? null,
        slot_start: slot ? localTimeOf(slot.startsAt) : null,
        slot_end: slot ? localTimeOf(slot.endsAt) : null,
        slot_starts_at: slot?.startsAt ?? null,
        slot_ends_at: slot?.endsAt ?? null,
        goods_total: money(goodsTotal),
        delivery_cost: money(deliveryCost),
        total_price: money(goodsTotal + deliveryCost),
        items_count: priced.length,
      },
      items: priced.map((p, i) => ({
        line_no: i + 1,
        product_id: p.line.product_id,
        unit_id: p.line.unit_id,
        inventory_id: p.f!.inventory_id,
        name_ru: p.f!.name_ru!,
        name_en: p.f!.name_en!,
        unit_name_ru: p.f!.unit_name_ru!,
        unit_name_en: p.f!.unit_name_en!,
        image: p.f!.image,
        barcode: p.f!.barcode,
        plu_code: p.f!.plu,
        weight_based: p.f!.weight_based ?? false,
        weight: p.f!.weight ?? '0',
        quantity: formatDecimal(p.quantity!, 3),
        unit_price: p.f!.unit_price!,
        old_price: p.f!.old_price,
        line_total: money(p.total),
        ...preferenceColumns(preferences[i]!),
      })),
      statuses,
      placedAt: now,
      withDelivery: delivery !== null,
      paymentWindowMinutes: body.payment_method === 'online' ? deps.config.orders.bank.paymentWindowMinutes : null,
    },
    priced.map((p) => ({ inventoryId: p.f!.inventory_id!, quantity: formatDecimal(p.quantity!, 3) })),
    // The answer is the order's id: known now, stored with the order by the same statement.
    options.answerOf ? { scope: options.answerOf, status: 201, stored: await serializeBody(orderId) } : null,
  );
  if (!placed.stocked) throw conflict('OUT_OF_STOCK', 'Not enough stock', { extra: { lines: [] } });
  return orderId;
}

/**
 * The minimum goods total of a placed order, and the refusal's text under it: a delivery order's
 * zone's (the zone of its point when the order recorded none; none when no zone serves it any
 * more), a pickup order's store's, with the terms as they are now.
 */
export async function orderMinimum(
  db: Executor,
  o: {
    type: 'delivery' | 'pickup';
    store_id: string;
    delivery_zone_id: string | null;
    delivery_lon: number | null;
    delivery_lat: number | null;
  },
): Promise<{ minimum: bigint; refusal: (goods: bigint) => string }> {
  if (o.type === 'pickup') {
    const store = await findStoreForOrder(db, o.store_id);
    const minimum = store ? kopecks(store.pickup_min_order_amount) : 0n;
    return {
      minimum,
      refusal: (goods) => `The goods total must be at least ${money(minimum)} for pickup (${money(minimum - goods)} more)`,
    };
  }
  const zone = o.delivery_zone_id ? await findZoneTerms(db, o.delivery_zone_id) : undefined;
  const terms =
    zone ??
    (o.delivery_lon !== null && o.delivery_lat !== null
      ? await zoneForPoint(db, o.store_id, { lon: o.delivery_lon, lat: o.delivery_lat }).then(
          (z) => z && { min_order_amount: z.minOrderAmount },
        )
      : null);
  const minimum = terms ? kopecks(terms.min_order_amount) : 0n;
  return {
    minimum,
    refusal: (goods) => `The goods total must be at least ${money(minimum)} for delivery here (${money(minimum - goods)} more)`,
  };
}

/** A line's preference as order_items stores it. */
export const preferenceColumns = (p: StoredReplacement) => ({
  replacement_policy: p.policy,
  replacement_product_ids: p.productIds,
  replacement_approval: p.approvalRequired,
});

/**
 * Refuses (422 REPLACEMENT_PREFERENCE_INVALID, with the lines) preferences naming the line's own
 * product or a product the store does not sell; reads the store only when some line names products.
 */
export async function assertNamedProducts(
  db: Executor,
  storeId: string,
  lines: readonly { productId: string; unitId: string; quantity: bigint; preference: StoredReplacement }[],
): Promise<void> {
  const named = namedProductIds(lines.map((l) => l.preference));
  if (!named.length) return;
  const problems = namedProductProblems(lines, await namedProductFacts(db, storeId, named));
  if (problems) throw unprocessable('REPLACEMENT_PREFERENCE_INVALID', problems.detail, { extra: { lines: problems.lines } });
}

// ------------------------------------------------------------------------------------------------
// Price estimate

type EstimateInput = Schemas['DeliveryPriceEstimateInput'];
type Estimate = Schemas['DeliveryPriceEstimateSchema'];

const ESTIMATE_VALIDITY_MS = 5 * 60_000;

/** POST /api/orders/delivery/price-estimate: checkout's delivery rules, reserving nothing. */
export async function estimateDelivery(db: Executor, deps: AppDeps, storeHeader: string | null, body: EstimateInput): Promise<Estimate> {
  const now = deps.clock.now();
  const mode = deliveryModeOf({ is_express: body.is_express, slot_id: body.slot_id }, true);
  if (typeof mode !== 'string') throw unprocessable(mode.code, mode.detail);
  const duplicate = duplicateLine(body.items);
  if (duplicate) throw unprocessable(duplicate.code, duplicate.detail);

  let storeId: string | null = null;
  if (storeHeader !== null) {
    const store = await findActiveStoreCached({ ...deps, db }, storeHeader);
    if (!store) throw unprocessable('STORE_NOT_FOUND', 'No active store has this X-Store-Id');
    storeId = store.id;
  }
  const zone = await zoneForPoint(db, storeId, body.location);
  if (!zone) throw outsideZone();

  const lines = lowerLines(body.items);
  const facts = await cartLineFacts(db, zone.storeId, lines);
  const parsed = parseLineQuantities(lines, facts.map(quantityUnit));
  if (!parsed.ok) throw unprocessable('INVALID_QUANTITY', parsed.detail);
  // Stock is not checked by an estimate: only whether each line is sold here at all.
  const unsold = unsoldLines(lines, parsed.quantities, facts.map(lineFacts));
  if (unsold.length)
    throw unprocessable('UNKNOWN_PRODUCT', `${unsold.length} line(s) are not sold in this store`, { extra: { lines: unsold } });
  const goodsTotal = facts.reduce((sum, f, i) => sum + lineTotal(parsed.quantities[i]!, kopecks(f.unit_price!)), 0n);

  let express: { cost: string } | null = null;
  let etaMinutes: number | null = null;
  let validUntil = new Date(now.getTime() + ESTIMATE_VALIDITY_MS);
  if (mode === 'express') {
    const terms = await findDeliveryTerms(db, zone.storeId);
    if (terms?.express_max_items_count != null && lines.length > terms.express_max_items_count)
      throw expressItemsLimit(terms.express_max_items_count);
    const offer = expressOffer(terms, now);
    if (!offer) throw unprocessable('EXPRESS_UNAVAILABLE', 'Express delivery is not accepted right now');
    const store = await findStoreForOrder(db, zone.storeId);
    let quote: { available: boolean; minutes: number };
    try {
      quote = await deps.courier.quoteExpress({
        storeId: zone.storeId,
        pickup: { lon: store!.lon, lat: store!.lat },
        dropoff: body.location,
        promisedMinutes: offer.minutes,
      });
    } catch (err) {
      if (err instanceof CourierUnavailableError || err instanceof CourierRefusedError) {
        throw badGateway('COURIER_PROVIDER_ERROR', 'The courier service could not quote an express delivery; retry shortly');
      }
      throw err;
    }
    if (!quote.available) throw unprocessable('EXPRESS_UNAVAILABLE', 'No courier can take an express delivery right now');
    express = { cost: offer.cost };
    etaMinutes = quote.minutes;
  } else if (mode === 'scheduled') {
    const slot = await findStoreSlot(db, zone.storeId, body.slot_id!.toLowerCase(), 'delivery');
    if (!slot) throw unprocessable('SLOT_NOT_FOUND', 'No delivery slot of this store has this id');
    const cutoffAt = cutoffOf(slot.starts_at, slot.lead_minutes);
    const availability = slotAvailability(
      { isClosed: slot.is_closed, cutoffAt, capacity: slot.capacity, reserved: slot.reserved },
      slot.db_now,
    );
    if (availability.reason === 'full') throw unprocessable('SLOT_FULL', 'The slot has no capacity left; choose another one');
    if (availability.reason) throw unprocessable('SLOT_UNAVAILABLE', 'The slot can no longer be booked; choose another one');
    if (cutoffAt.getTime() < validUntil.getTime()) validUntil = cutoffAt;
  }

  const price = priceDelivery(goodsTotal, zone, express);
  return {
    store_id: zone.storeId,
    zone_id: zone.zoneId,
    is_express: mode === 'express',
    slot_id: body.slot_id ?? null,
    items_total: money(goodsTotal),
    delivery_price: money(price.deliveryPrice),
    total_price: money(goodsTotal + price.deliveryPrice),
    currency: deps.config.orders.bank.currency,
    min_order_amount: money(price.minOrderAmount),
    meets_minimum: price.meetsMinimum,
    amount_to_minimum: money(price.amountToMinimum),
    free_delivery_threshold: price.freeDeliveryThreshold === null ? null : money(price.freeDeliveryThreshold),
    amount_to_free_delivery: price.amountToFreeDelivery === null ? null : money(price.amountToFreeDelivery),
    eta_minutes: etaMinutes,
    valid_until: validUntil.toISOString(),
  };
}
