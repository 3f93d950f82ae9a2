// Handlers of the Picker tag, keyed by operationId: sign-in, the queue, picking sessions and
// their commands, product search, history and the picker channel's parameters. Each reads its
// typed input and calls one use case of services/picking/; the item state machine is
// domain/picking/items.ts.
import { createHash } from 'node:crypto';
import type { OperationId } from '../generated/operations.js';
import type { HandlerMap, RequestContext, StepsMap } from '../server/handler-types.js';
import type { HistoryPeriod } from '../db/queries/picking/history.js';
import type { AppDeps } from '../services/deps.js';
import { unprocessable, validationFailed } from '../services/errors.js';
import { PICKER_CHANNEL_PATH } from '../platform/socket-paths.js';
import { parseDecimal } from '../domain/money/decimal.js';
import { parseDateTime } from '../domain/time/date-time.js';
import { ADDED_QUANTITY_MAX } from '../domain/picking/items.js';
import { decodeCursor, encodeCursor, type CursorProblem } from '../server/http/picking-cursor.js';
import { historySession, historySummary, listHistorySessions } from '../services/picking/history.js';
import {
  confirmClarification,
  manualPick,
  markMissing,
  reopenItem,
  replaceItem,
  resolveClarification,
  scanItem,
  setPieceQuantity,
  weighItem,
} from '../services/picking/items.js';
import { currentSession, orderSession, pickerQueue } from '../services/picking/reads.js';
import { refusal } from '../services/picking/runner.js';
import { searchProducts, searchProductsAfter, type SearchCursors } from '../services/picking/search.js';
import {
  acknowledgePickingCancellation,
  ADDED_QUANTITY_INVALID,
  addItem,
  cancelPicking,
  finishPicking,
} from '../services/picking/session-commands.js';
import { pickerProfile, pickerStoreIds, refreshPickerSession, signInPicker } from '../services/picking/sign-in.js';
import { startPicking } from '../services/picking/start.js';
import { pickerActionOf, pickerCommandOf } from './support/picker-headers.js';
import { pickerIdOf } from './support/principal.js';
import { requireStore } from './support/store.js';

/** Page size of picker search and history when `limit` is absent (the contract's default). */
const DEFAULT_LIMIT = 20;

const CURSOR_PROBLEMS: Record<CursorProblem, string> = {
  malformed: 'The cursor is not one this service issued',
  expired: 'The cursor is older than 1 hour; start the search again',
  other_search: 'The cursor was issued for another search (query, barcode, store or language)',
};

/** Search cursors, signed with a key of their own derived from the service secret. */
function searchCursors(deps: Pick<AppDeps, 'config' | 'clock'>): SearchCursors {
  const secret = createHash('sha256').update(`picker-search-cursor:${deps.config.jwt.secret}`).digest('base64url');
  return {
    read: (scope, cursor) => {
      const decoded = decodeCursor(secret, scope, cursor, deps.clock.now());
      if (!decoded.ok) throw unprocessable('INVALID_CURSOR', CURSOR_PROBLEMS[decoded.problem]);
      return decoded.key;
    },
    write: (scope, last) => encodeCursor(secret, scope, last, deps.clock.now()),
  };
}

/** A period bound of the query as an instant (the validator admits forms Date cannot read). */
function periodBound(name: 'started_at' | 'ended_at', text: string | null | undefined): Date | null {
  if (!text) return null;
  const instant = parseDateTime(text);
  if (!instant) throw validationFailed([{ loc: ['query', name], msg: 'must be an RFC 3339 date-time that exists', type: 'format' }]);
  return instant;
}

function historyPeriod(startedAt: string | null | undefined, endedAt: string | null | undefined): HistoryPeriod {
  const period = { startedAt: periodBound('started_at', startedAt), endedAt: periodBound('ended_at', endedAt) };
  if (period.startedAt && period.endedAt && period.endedAt < period.startedAt) {
    throw unprocessable('INVALID_PERIOD', 'ended_at is earlier than started_at');
  }
  return period;
}

/** An added product's quantity in thousandths, refused before the command's key is even read. */
function addedQuantityOf(value: string | number): bigint {
  const quantity = parseDecimal(value, 3);
  if (quantity === null || quantity <= 0n || quantity > ADDED_QUANTITY_MAX)
    throw refusal(422, 'QUANTITY_INVALID', ADDED_QUANTITY_INVALID, null);
  return quantity;
}

/** A weight in thousandths of a kg, refused before the command's key is even read. */
function weightOf(value: string | number): bigint {
  const weight = parseDecimal(value, 3);
  if (weight === null || weight <= 0n)
    throw refusal(422, 'WEIGHT_INVALID', 'The weight must be positive with at most three decimal places', null);
  return weight;
}

/** A confirmed weight in thousandths of a kg when sent: the contract's multipleOf is checked here, exactly. */
function confirmedKgOf(value: string | number | undefined): bigint | null {
  if (value === undefined) return null;
  const quantityKg = parseDecimal(value, 3);
  if (quantityKg === null || quantityKg <= 0n) {
    throw validationFailed([
      { loc: ['body', 'quantity_kg'], msg: 'must be positive with at most three decimal places', type: 'multipleOf' },
    ]);
  }
  return quantityKg;
}

/** A command's path and body as sent, which its idempotency fingerprint is taken of. */
const requestOf = <K extends OperationId>(ctx: RequestContext<K>) => ({ path: ctx.path, body: ctx.body });

export const pickerHandlers = {
  // POST /api/picker/auth/login
  loginPicker: async (ctx) => {
    const input = { login: ctx.body.login, password: ctx.body.password, clientIp: ctx.clientIp, lang: ctx.lang };
    return { status: 200, body: await signInPicker(ctx.deps, input) };
  },
  // POST /api/picker/auth/refresh
  refreshPickerToken: async (ctx) => ({ status: 200, body: await refreshPickerSession(ctx.deps, ctx.body.refresh) }),
  // GET /api/picker/auth/me
  getPickerMe: async (ctx) => ({ status: 200, body: await pickerProfile(ctx.deps.db, pickerIdOf(ctx), ctx.lang) }),
  // GET /api/picker/catalog/products
  searchPickerProducts: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const input = { lang: ctx.lang, query: ctx.query.query, barcode: ctx.query.barcode };
    const page = { limit: ctx.query.limit ?? DEFAULT_LIMIT, offset: ctx.query.offset ?? 0 };
    return { status: 200, body: await searchProducts(ctx.deps.db, pickerId, input, page) };
  },
  // GET /api/picker/catalog/products/v2
  searchPickerProductsByCursor: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const input = { lang: ctx.lang, query: ctx.query.query, barcode: ctx.query.barcode };
    const page = { limit: ctx.query.limit ?? DEFAULT_LIMIT, cursor: ctx.query.cursor };
    return { status: 200, body: await searchProductsAfter(ctx.deps.db, pickerId, input, page, searchCursors(ctx.deps)) };
  },
  // GET /api/picker/history/sessions
  listPickerHistorySessions: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const period = historyPeriod(ctx.query.started_at, ctx.query.ended_at);
    const page = { limit: ctx.query.limit ?? DEFAULT_LIMIT, offset: ctx.query.offset ?? 0 };
    return { status: 200, body: await listHistorySessions(ctx.deps.db, pickerId, period, page, ctx.lang) };
  },
  // GET /api/picker/history/sessions/{session_id}
  getPickerHistorySession: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    // Path parameters arrive as text; the contract has already checked it is an integer >= 1.
    return { status: 200, body: await historySession(ctx.deps.db, pickerId, Number(ctx.path.session_id), ctx.lang) };
  },
  // GET /api/picker/history/summary
  getPickerHistorySummary: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const period = historyPeriod(ctx.query.started_at, ctx.query.ended_at);
    const asked = { started_at: ctx.query.started_at ?? null, ended_at: ctx.query.ended_at ?? null };
    return { status: 200, body: await historySummary(ctx.deps.db, pickerId, period, asked) };
  },
  // GET /api/picker/orders
  listPickerOrders: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const store = await requireStore(ctx);
    return { status: 200, body: await pickerQueue(ctx.deps, pickerId, store.id, ctx.lang) };
  },
  // POST /api/picker/orders/{order_id}/start
  startPicking: async (ctx) => startPicking(ctx.deps, pickerActionOf(ctx), ctx.path),
  // GET /api/picker/orders/{order_id}/session
  getPickingSession: async (ctx) => ({ status: 200, body: await orderSession(ctx.deps.db, pickerIdOf(ctx), ctx.path.order_id, ctx.lang) }),
  // GET /api/picker/session/active
  getActivePickingSession: async (ctx) => {
    const session = await currentSession(ctx.deps.db, pickerIdOf(ctx), ctx.lang);
    return session ? { status: 200, body: session } : { status: 204, body: undefined };
  },
  // GET /api/picker/realtime/metadata
  getPickerRealtimeMetadata: async (ctx) => {
    const storeIds = await pickerStoreIds(ctx.deps.db, pickerIdOf(ctx));
    const scheme = ctx.origin.secure ? 'wss' : 'ws';
    const host = ctx.origin.host ?? `localhost:${ctx.deps.config.port}`;
    return {
      status: 200,
      body: {
        url: `${scheme}://${host}${PICKER_CHANNEL_PATH}`,
        path: PICKER_CHANNEL_PATH,
        auth_methods: ['bearer_header', 'access_token_query'],
        event_kinds: ['queue.changed', 'session.changed', 'order.cancelled', 'item.approval.decided'],
        store_ids: storeIds,
        heartbeat_interval_seconds: ctx.deps.config.picking.realtimeHeartbeatSeconds,
        reconnect_initial_delay_ms: 1000,
        reconnect_max_delay_ms: 30_000,
        protocol_version: 1,
      },
    };
  },
  // POST /api/picker/orders/{order_id}/additional-items
  addPickingItem: async (ctx) => {
    const quantity = addedQuantityOf(ctx.body.quantity);
    return addItem(ctx.deps, pickerCommandOf(ctx), requestOf(ctx), quantity);
  },
  // POST /api/picker/orders/{order_id}/cancel
  cancelPicking: async (ctx) => cancelPicking(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/cancelled/ack
  acknowledgePickingCancellation: async (ctx) => acknowledgePickingCancellation(ctx.deps, pickerActionOf(ctx), ctx.path),
  // POST /api/picker/orders/{order_id}/finish
  finishPicking: async (ctx) => finishPicking(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/scan
  scanPickingItem: async (ctx) => scanItem(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/replacement
  replacePickingItem: async (ctx) => replaceItem(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/piece-quantity
  setPickingItemPieceQuantity: async (ctx) => setPieceQuantity(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/manual-pick
  manualPickPickingItem: async (ctx) => manualPick(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/weight
  weighPickingItem: async (ctx) => {
    const weight = weightOf(ctx.body.weight_kg);
    return weighItem(ctx.deps, pickerCommandOf(ctx), requestOf(ctx), weight);
  },
  // POST /api/picker/orders/{order_id}/items/{item_id}/missing
  markPickingItemMissing: async (ctx) => markMissing(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/clarification/resolve
  resolvePickingItemClarification: async (ctx) => resolveClarification(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/clarification/reopen
  reopenPickingItem: async (ctx) => reopenItem(ctx.deps, pickerCommandOf(ctx), requestOf(ctx)),
  // POST /api/picker/orders/{order_id}/items/{item_id}/clarification/confirm
  confirmPickingItemClarification: async (ctx) => {
    const quantityKg = confirmedKgOf(ctx.body.quantity_kg);
    return confirmClarification(ctx.deps, pickerCommandOf(ctx), requestOf(ctx), quantityKg);
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const pickerSteps: StepsMap = {
  loginPicker: { limitPerClientIp: true, noStore: true },
  refreshPickerToken: { limitPerClientIp: true, noStore: true },
  searchPickerProducts: { varyBy: ['Accept-Language'] },
  searchPickerProductsByCursor: { varyBy: ['Accept-Language'] },
  listPickerOrders: { varyBy: ['X-Store-Id', 'Accept-Language'] },
};
