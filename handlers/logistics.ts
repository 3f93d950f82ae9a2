// Handlers of the Logistics tag, keyed by operationId: map settings and address search, delivery
// coverage, delivery and pickup terms and slots, pickup stores (services/logistics.ts). All public;
// every operation counts against the caller's per-IP request budget before it runs.
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
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
} from '../services/logistics.js';
import { requireStore } from './support/store.js';

export const logisticsHandlers = {
  // GET /api/logistics/map/address-suggestions
  listAddressSuggestions: async (ctx) => {
    const near = { lon: ctx.query.lon, lat: ctx.query.lat };
    return { status: 200, body: await suggestAddresses(ctx.deps, ctx.query.query, near, ctx.lang) };
  },

  // GET /api/logistics/map/config
  getMapConfig: async (ctx) => {
    return { status: 200, body: mapConfig(ctx.deps) };
  },

  // POST /api/logistics/map/reverse-geocode
  reverseGeocodeLocation: async (ctx) => {
    return { status: 200, body: await reverseGeocode(ctx.deps, { lon: ctx.body.lon, lat: ctx.body.lat }, ctx.lang) };
  },

  // POST /api/logistics/stores/delivery/can-use-location
  checkCanUseLocation: async (ctx) => {
    return { status: 200, body: await servingStoreId(ctx.deps, ctx.body, ctx.log) };
  },

  // POST /api/logistics/stores/delivery/check-location
  checkDeliveryLocation: async (ctx) => {
    return { status: 200, body: await checkDeliveryLocation(ctx.deps, ctx.body, ctx.lang, ctx.log) };
  },

  // POST /api/logistics/stores/delivery/check-multiply-locations
  checkMultipleDeliveryLocations: async (ctx) => {
    return { status: 200, body: await checkDeliveryLocations(ctx.deps, ctx.body, ctx.lang, ctx.log) };
  },

  // GET /api/logistics/stores/delivery/order-preferences
  getDeliveryOrderPreferences: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await deliveryPreferences(ctx.deps, store.id) };
  },

  // GET /api/logistics/stores/delivery/slots
  listDeliverySlots: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await deliverySlots(ctx.deps, store, ctx.query.date ?? null) };
  },

  // GET /api/logistics/stores/delivery/zones
  listDeliveryZones: async (ctx) => {
    return { status: 200, body: await deliveryZones(ctx.deps, ctx.lang) };
  },

  // GET /api/logistics/stores/pickup/
  listPickupStores: async (ctx) => {
    return { status: 200, body: await pickupStores(ctx.deps, ctx.lang) };
  },

  // GET /api/logistics/stores/pickup/order-preferences
  getPickupOrderPreferences: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: { min_order_amount: store.pickup_min_order_amount } };
  },

  // GET /api/logistics/stores/pickup/slots
  listPickupSlots: async (ctx) => {
    const store = await requireStore(ctx);
    return { status: 200, body: await pickupSlots(ctx.deps, store) };
  },

  // GET /api/logistics/stores/pickup/{store_id}
  getPickupStore: async (ctx) => {
    return { status: 200, body: await pickupStore(ctx.deps, ctx.path.store_id, ctx.lang) };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const logisticsSteps: StepsMap = {
  listAddressSuggestions: { varyBy: ['Accept-Language'], perClientBudget: true },
  getMapConfig: { perClientBudget: true },
  reverseGeocodeLocation: { varyBy: ['Accept-Language'], perClientBudget: true },
  checkCanUseLocation: { perClientBudget: true },
  checkDeliveryLocation: { varyBy: ['Accept-Language'], perClientBudget: true },
  checkMultipleDeliveryLocations: { varyBy: ['Accept-Language'], perClientBudget: true },
  getDeliveryOrderPreferences: { varyBy: ['X-Store-Id', 'Accept-Language'], perClientBudget: true },
  listDeliverySlots: { varyBy: ['X-Store-Id', 'Accept-Language'], perClientBudget: true },
  listDeliveryZones: { varyBy: ['Accept-Language'], perClientBudget: true },
  listPickupStores: { varyBy: ['Accept-Language'], perClientBudget: true },
  getPickupOrderPreferences: { varyBy: ['X-Store-Id', 'Accept-Language'], perClientBudget: true },
  listPickupSlots: { varyBy: ['X-Store-Id', 'Accept-Language'], perClientBudget: true },
  getPickupStore: { varyBy: ['Accept-Language'], perClientBudget: true },
};
