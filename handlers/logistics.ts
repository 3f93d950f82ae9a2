// Handlers of the Logistics tag, keyed by operationId: map settings and address search, delivery
// coverage, delivery and pickup terms and slots, pickup stores (services/logistics.ts). All public;
// every operation counts against the caller's per-IP request budget before it runs.
import type { OperationId } from '../generated/operations.js';
import type { HandlerMap, OperationHandler, StepsMap } from '../server/handler-types.js';
import {
  checkDeliveryLocation,
  checkDeliveryLocations,
  deliveryPreferences,
  deliverySlots,
  deliveryZones,
  mapConfig,
  pickupSlots,
  pickupStore,
  pickupStores,
  reverseGeocode,
  servingStoreId,
  suggestAddresses,
  takeRequestBudget,
} from '../services/logistics.js';
import { requireStore } from './support/store.js';

/** The handler, with the per-IP budget taken before it runs. */
const budgeted =
  <K extends OperationId>(handler: OperationHandler<K>): OperationHandler<K> =>
  (ctx) => {
    takeRequestBudget(ctx.deps, ctx.clientIp);
    return handler(ctx);
  };

export const logisticsHandlers = {
  // GET /api/logistics/map/address-suggestions
  listAddressSuggestions: budgeted(async (ctx) => {
    const near = { lon: ctx.query.lon, lat: ctx.query.lat };
    return { status: 200, body: await suggestAddresses(ctx.deps, ctx.query.query, near, ctx.lang) };
  }),

  // GET /api/logistics/map/config
  getMapConfig: budgeted(async (ctx) => {
    return { status: 200, body: mapConfig(ctx.deps) };
  }),

  // POST /api/logistics/map/reverse-geocode
  reverseGeocodeLocation: budgeted(async (ctx) => {
    return { status: 200, body: await reverseGeocode(ctx.deps, { lon: ctx.body.lon, lat: ctx.body.lat }, ctx.lang) };
  }),

  // POST /api/logistics/stores/delivery/can-use-location
  checkCanUseLocation: budgeted(async (ctx) => {
    return { status: 200, body: await servingStoreId(ctx.deps, ctx.body, ctx.log) };
  }),

  // POST /api/logistics/stores/delivery/check-location
  checkDeliveryLocation: budgeted(async (ctx) => {
    return { status: 200, body: await checkDeliveryLocation(ctx.deps, ctx.body, ctx.lang, ctx.log) };
  }),

  // POST /api/logistics/stores/delivery/check-multiply-locations
  checkMultipleDeliveryLocations: budgeted(async (ctx) => {
    return { status: 200, body: await checkDeliveryLocations(ctx.deps, ctx.body, ctx.lang, ctx.log) };
  }),

  // GET /api/logistics/stores/delivery/order-preferences
  getDeliveryOrderPreferences: budgeted(async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await deliveryPreferences(ctx.deps, store.id) };
  }),

  // GET /api/logistics/stores/delivery/slots
  listDeliverySlots: budgeted(async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await deliverySlots(ctx.deps, store, ctx.query.date ?? null) };
  }),

  // GET /api/logistics/stores/delivery/zones
  listDeliveryZones: budgeted(async (ctx) => {
    return { status: 200, body: await deliveryZones(ctx.deps, ctx.lang) };
  }),

  // GET /api/logistics/stores/pickup/
  listPickupStores: budgeted(async (ctx) => {
    return { status: 200, body: await pickupStores(ctx.deps, ctx.lang) };
  }),

  // GET /api/logistics/stores/pickup/order-preferences
  getPickupOrderPreferences: budgeted(async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: { min_order_amount: store.pickup_min_order_amount } };
  }),

  // GET /api/logistics/stores/pickup/slots
  listPickupSlots: budgeted(async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await pickupSlots(ctx.deps, store) };
  }),

  // GET /api/logistics/stores/pickup/{store_id}
  getPickupStore: budgeted(async (ctx) => {
    return { status: 200, body: await pickupStore(ctx.deps, ctx.path.store_id, ctx.lang) };
  }),
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const logisticsSteps: StepsMap = {
  listAddressSuggestions: { varyBy: ['Accept-Language'] },
  reverseGeocodeLocation: { varyBy: ['Accept-Language'] },
  checkDeliveryLocation: { varyBy: ['Accept-Language'] },
  checkMultipleDeliveryLocations: { varyBy: ['Accept-Language'] },
  listDeliveryZones: { varyBy: ['Accept-Language'] },
  listPickupStores: { varyBy: ['Accept-Language'] },
  getPickupStore: { varyBy: ['Accept-Language'] },
  getDeliveryOrderPreferences: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listDeliverySlots: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  getPickupOrderPreferences: { varyBy: ['X-Store-Id', 'Accept-Language'] },
  listPickupSlots: { varyBy: ['X-Store-Id', 'Accept-Language'] },
};
