// Handlers of the Picker tag, keyed by operationId: sign-in, the queue, picking sessions and
// their commands, product search, history and the picker channel's parameters. The item state
// machine is domain/picking/items.ts; the common command path is handlers/services/picking.ts.
import { createHash } from 'node:crypto';
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { findPicker, findPickerByLogin, pickerStores } from '../db/queries/accounts.js';
import type { Executor } from '../db/executor.js';
import { recordOrderChange } from '../db/queries/order-events.js';
import { recordSessionChanged } from '../db/queries/picking/events.js';
import { insertItems, itemFacts, loadItems, nextItemPosition, orderLinesForPicking } from '../db/queries/picking/items.js';
import { setOrderPickingStatus } from '../db/queries/picking/order-effects.js';
import { listQueue } from '../db/queries/picking/queue.js';
import {
  acknowledgeCancellation,
  findCurrentSession,
  findCurrentSessionRef,
  findLatestSessionOfOrder,
  findLatestSessionOfPicker,
  findSessionHead,
  insertSession,
  lockOrderOfPicker,
  lockPicker,
  isOrderOfPicker,
} from '../db/queries/picking/sessions.js';
import {
  findStoreInventory,
  searchStoreProducts,
  searchStoreProductsAfter,
  toPickerCatalogProduct,
  type PickerSearch,
} from '../db/queries/picking/catalog.js';
import { findClosedSession, listClosedSessions, summariseClosedSessions, type HistoryPeriod } from '../db/queries/picking/history.js';
import {
  durationSeconds,
  toHistoryItem,
  toHistorySession,
  toPickerSlot,
  toPickerStore,
  toQueueCard,
} from '../services/presenters/picking.js';
import { hashSecret, verifySecret } from '../domain/codes/passwords.js';
import type { TokenService } from '../platform/tokens.js';
import { AppError, forbidden, notFound, unauthorized, unprocessable, validationFailed } from '../services/errors.js';
import { fingerprintOf, withIdempotency } from '../services/idempotency.js';
import { PICKER_CHANNEL_PATH } from '../platform/socket-paths.js';
import { formatDecimal, normalizeDecimal, parseDecimal } from '../domain/money/decimal.js';
import { parseDateTime } from '../domain/time/date-time.js';
import { labelWeight, readScannedCode } from '../domain/codes/scale-label.js';
import { decodeCursor, encodeCursor, type CursorProblem } from '../server/http/picking-cursor.js';
import {
  ADDED_QUANTITY_MAX,
  addedQuantityProblem,
  isResolved,
  openSessionStatus,
  UNIT,
  type ReplacementMatch,
} from '../domain/picking/items.js';
import { actionMessage } from '../domain/picking/messages.js';
import { summaryRates } from '../domain/picking/stats.js';
import {
  assertUnderLimit,
  clearRateEvents,
  countAgainstLimit,
  oneAttemptAtATime,
  recordRateEvent,
} from '../services/limits.js';
import {
  actionAnswer,
  actionOutput,
  addedItem,
  commandKey,
  commitSessionChange,
  factsOfNew,
  finishSession,
  itemCommand,
  itemForLine,
  lookUpBarcode,
  refusal,
  releaseSession,
  replacementData,
  runPickerCommand,
  scanMatch,
  scannedPlu,
  sessionView,
} from '../services/picking.js';
import { pickerIdOf } from './support/principal.js';
import { invalidRefresh, rotateRefreshToken, startSession } from '../services/sessions.js';
import { requireStore } from './support/store.js';

/** Page size of picker search and history when `limit` is absent (the contract's default). */
const DEFAULT_LIMIT = 20;
/** Cards in one queue answer (the contract: "at most 200"). */
const QUEUE_LIMIT = 200;
const ADDED_QUANTITY_INVALID = 'The quantity must be above 0 and at most 999.999 (999 pieces), with at most three decimals';

const CURSOR_PROBLEMS: Record<CursorProblem, string> = {
  malformed: 'The cursor is not one this service issued',
  expired: 'The cursor is older than 1 hour; start the search again',
  other_search: 'The cursor was issued for another search (query, barcode, store or language)',
};

/** Cursors are signed with a key of their own, derived from the service secret. */
const cursorSecret = (jwtSecret: string) => createHash('sha256').update(`picker-search-cursor:${jwtSecret}`).digest('base64url');

const kopecks = (v: string) => parseDecimal(v, 2)!;
const money = (k: bigint) => formatDecimal(k, 2);

/** The store picker search looks in: the current session's, else the picker's default store. */
async function pickerSearch(
  db: Executor,
  pickerId: number,
  lang: 'ru' | 'en',
  query: string | null | undefined,
  barcode: string | null | undefined,
): Promise<PickerSearch> {
  const current = await findCurrentSessionRef(db, pickerId);
  const storeId = current?.store_id ?? (await findPicker(db, pickerId))?.default_store_id ?? null;
  if (!storeId) throw unprocessable('STORE_REQUIRED', 'You have no current session and no default store to search in');
  const code = barcode?.trim();
  return { storeId, lang, query: query ?? null, code: code ? readScannedCode(code) : null };
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

/** The signed-in picker as PickerUserSchema. */
async function pickerUser(db: Executor, pickerId: number, lang: 'ru' | 'en') {
  const picker = await findPicker(db, pickerId);
  if (!picker) throw unauthorized();
  const [stores, current] = await Promise.all([pickerStores(db, pickerId), findCurrentSessionRef(db, pickerId)]);
  return {
    id: picker.id,
    login: picker.login,
    display_name: picker.display_name,
    is_active: picker.is_active,
    stores: stores.map((s) => ({
      id: s.id,
      name: lang === 'ru' ? s.name_ru : s.name_en,
      address: lang === 'ru' ? s.address_ru : s.address_en,
      timezone: s.timezone,
    })),
    default_store_id: picker.default_store_id,
    active_session_id: current?.id ?? null,
    active_order_id: current?.order_id ?? null,
  };
}

// A hash to compare against when the login does not exist, so timing does not reveal logins.
const unknownLoginHash = hashSecret('unknown-login-placeholder');
/** Failed picker sign-ins from one address within the lockout window before TOO_MANY_ATTEMPTS. */
const PICKER_ADDRESS_MAX_FAILURES = 50;
/** Refreshes of one picker session (token family) a minute before TOO_MANY_REQUESTS. */
const PICKER_REFRESHES_PER_MINUTE = 30;

/** The session a picker refresh token belongs to, or null when it is not one (rotation says why). */
function refreshFamilyOf(tokens: TokenService, refresh: string): string | null {
  try {
    return tokens.verify(refresh, 'picker_refresh').sid;
  } catch {
    return null;
  }
}

export const pickerHandlers = {
  // POST /api/picker/auth/login
  loginPicker: async (ctx) => {
    const { db, config, tokens } = ctx.deps;
    const { login, password } = ctx.body;
    // Failed attempts, per login and per address (one device trying many logins): TOO_MANY_ATTEMPTS.
    // The login as the lookup compares it: "Picker1 " is the same login as "picker1".
    const subject = `picker:${login.trim().toLowerCase()}`;
    const address = `picker-ip:${ctx.clientIp ?? 'unknown'}`;
    const picker = await oneAttemptAtATime(
      db,
      ctx.deps.caches.signInQueues,
      [subject, address],
      { code: 'TOO_MANY_ATTEMPTS', detail: 'Too many sign-ins for this login at once; retry in a second' },
      async (trx) => {
        await assertUnderLimit(
          trx,
          subject,
          config.auth.pickerMaxFailures,
          config.auth.lockoutSeconds,
          {
            code: 'TOO_MANY_ATTEMPTS',
            detail: 'Too many failed sign-ins for this login; wait before trying again',
          },
          ctx.deps.clock.now(),
        );
        await assertUnderLimit(
          trx,
          address,
          PICKER_ADDRESS_MAX_FAILURES,
          config.auth.lockoutSeconds,
          {
            code: 'TOO_MANY_ATTEMPTS',
            detail: 'Too many failed sign-ins from this address; wait before trying again',
          },
          ctx.deps.clock.now(),
        );
        const found = await findPickerByLogin(trx, login);
        if (!(await verifySecret(password, found?.password_hash ?? (await unknownLoginHash))) || !found) {
          await recordRateEvent(trx, subject);
          await recordRateEvent(trx, address);
          return null;
        }
        if (found.is_active) await clearRateEvents(trx, subject);
        return found;
      },
    );
    if (!picker)
      throw new AppError(401, 'INVALID_CREDENTIALS', 'Login or password is not correct', { headers: { 'WWW-Authenticate': 'Bearer' } });
    if (!picker.is_active) throw forbidden('PICKER_INACTIVE', 'This picker account is disabled');
    const pair = await startSession(db, tokens, { kind: 'picker', pickerId: picker.id }, ctx.deps.clock.now());
    return {
      status: 200,
      body: {
        access: pair.access,
        refresh: pair.refresh,
        token_type: 'Bearer' as const,
        access_expires_in: tokens.ttlSeconds('picker_access'),
        refresh_expires_in: tokens.ttlSeconds('picker_refresh'),
        picker: await pickerUser(db, picker.id, ctx.lang),
      },
    };
  },
  // POST /api/picker/auth/refresh
  refreshPickerToken: async (ctx) => {
    const { db, config, tokens } = ctx.deps;
    // A token family refreshing in a loop (an app bug) is stopped: 30 a minute (TOO_MANY_REQUESTS).
    const family = refreshFamilyOf(tokens, ctx.body.refresh);
    if (family) {
      await countAgainstLimit(
        db,
        `picker-refresh:${family}`,
        PICKER_REFRESHES_PER_MINUTE,
        60,
        {
          code: 'TOO_MANY_REQUESTS',
          detail: 'Too many refreshes of this session; retry later',
        },
        ctx.deps.clock.now(),
      );
    }
    const outcome = await db
      .transaction()
      .execute((trx) =>
        rotateRefreshToken(
          trx,
          tokens,
          ctx.body.refresh,
          'picker_refresh',
          (claims) => ({ kind: 'picker', pickerId: Number(claims.sub) }),
          config.jwt.refreshReuseGraceSeconds,
          ctx.deps.clock.now(),
        ),
      );
    if (outcome === 'reused') throw invalidRefresh('REFRESH_TOKEN_REUSED', 'Refresh token already used; the session was ended');
    if (outcome === 'invalid') throw invalidRefresh('INVALID_REFRESH_TOKEN');
    return {
      status: 200,
      body: {
        access: outcome.access,
        refresh: outcome.refresh,
        token_type: 'Bearer' as const,
        access_expires_in: tokens.ttlSeconds('picker_access'),
        refresh_expires_in: tokens.ttlSeconds('picker_refresh'),
      },
    };
  },
  // GET /api/picker/auth/me
  getPickerMe: async (ctx) => ({ status: 200, body: await pickerUser(ctx.deps.db, pickerIdOf(ctx), ctx.lang) }),
  // GET /api/picker/catalog/products
  searchPickerProducts: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const limit = ctx.query.limit ?? DEFAULT_LIMIT;
    const offset = ctx.query.offset ?? 0;
    const search = await pickerSearch(ctx.deps.db, pickerId, ctx.lang, ctx.query.query, ctx.query.barcode);
    const { rows, total } = await searchStoreProducts(ctx.deps.db, search, limit, offset);
    return {
      status: 200,
      body: { items: rows.map((r) => toPickerCatalogProduct(r, ctx.lang)), total, limit, offset, has_more: offset + rows.length < total },
    };
  },
  // GET /api/picker/catalog/products/v2
  searchPickerProductsByCursor: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const limit = ctx.query.limit ?? DEFAULT_LIMIT;
    const search = await pickerSearch(ctx.deps.db, pickerId, ctx.lang, ctx.query.query, ctx.query.barcode);
    const scope = { storeId: search.storeId, lang: ctx.lang, query: ctx.query.query ?? null, barcode: ctx.query.barcode ?? null };
    const secret = cursorSecret(ctx.deps.config.jwt.secret);
    let after = null;
    if (ctx.query.cursor) {
      const decoded = decodeCursor(secret, scope, ctx.query.cursor, ctx.deps.clock.now());
      if (!decoded.ok) throw unprocessable('INVALID_CURSOR', CURSOR_PROBLEMS[decoded.problem]);
      after = decoded.key;
    }
    const page = await searchStoreProductsAfter(ctx.deps.db, search, limit, after);
    return {
      status: 200,
      body: {
        items: page.rows.map((r) => toPickerCatalogProduct(r, ctx.lang)),
        has_more: page.hasMore,
        next_cursor: page.hasMore && page.last ? encodeCursor(secret, scope, page.last, ctx.deps.clock.now()) : null,
      },
    };
  },
  // GET /api/picker/history/sessions
  listPickerHistorySessions: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const period = historyPeriod(ctx.query.started_at, ctx.query.ended_at);
    const limit = ctx.query.limit ?? DEFAULT_LIMIT;
    const offset = ctx.query.offset ?? 0;
    const { rows, total } = await listClosedSessions(ctx.deps.db, pickerId, period, limit, offset);
    return {
      status: 200,
      body: { items: rows.map((r) => toHistorySession(r, ctx.lang)), total, limit, offset, has_more: offset + rows.length < total },
    };
  },
  // GET /api/picker/history/sessions/{session_id}
  getPickerHistorySession: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    // Path parameters arrive as text; the contract has already checked it is an integer >= 1.
    const row = await findClosedSession(ctx.deps.db, pickerId, Number(ctx.path.session_id));
    if (!row) throw notFound('No closed session of yours has this id');
    const items = await loadItems(ctx.deps.db, row.session_id);
    const settled = row.status === 'completed';
    return {
      status: 200,
      body: {
        session_id: row.session_id,
        order_id: row.order_id,
        order_number: String(row.order_no),
        session_status: row.status,
        completed_at: row.closed_at.toISOString(),
        duration_seconds: durationSeconds(row),
        items: items.map((i) => toHistoryItem(i, ctx.lang, settled)),
        store: toPickerStore(
          {
            id: row.store_id,
            name_ru: row.store_name_ru,
            name_en: row.store_name_en,
            address_ru: row.store_address_ru,
            address_en: row.store_address_en,
            timezone: row.store_timezone,
          },
          ctx.lang,
        ),
        fulfillment_type: row.fulfillment_type,
        slot: toPickerSlot(row),
      },
    };
  },
  // GET /api/picker/history/summary
  getPickerHistorySummary: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const period = historyPeriod(ctx.query.started_at, ctx.query.ended_at);
    const t = await summariseClosedSessions(ctx.deps.db, pickerId, period);
    const rates = summaryRates(t);
    return {
      status: 200,
      body: {
        started_at: ctx.query.started_at ?? null,
        ended_at: ctx.query.ended_at ?? null,
        sessions_count: t.sessions_count,
        completed_sessions_count: t.completed_sessions_count,
        cancelled_sessions_count: t.cancelled_sessions_count,
        items_count: t.items_count,
        picked_items_count: t.picked_items_count,
        changed_items_count: t.changed_items_count,
        replaced_items_count: t.replaced_items_count,
        removed_items_count: t.removed_items_count,
        added_items_count: t.added_items_count,
        total_duration_seconds: t.total_duration_seconds,
        ...rates,
        completed_total: normalizeDecimal(t.completed_total, 2),
      },
    };
  },
  // GET /api/picker/orders
  listPickerOrders: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const store = await requireStore(ctx);
    const stores = await pickerStores(ctx.deps.db, pickerId);
    if (!stores.some((s) => s.id === store.id)) throw forbidden('STORE_NOT_ASSIGNED', 'You do not work in this store');
    const cfg = ctx.deps.config.picking;
    const [rows, current] = await Promise.all([
      listQueue(ctx.deps.db, {
        storeId: store.id,
        horizonHours: cfg.queueHorizonHours,
        slotLeadMinutes: cfg.slotPickLeadMinutes,
        expressMinutes: cfg.expressPickMinutes,
        limit: QUEUE_LIMIT,
      }),
      findCurrentSessionRef(ctx.deps.db, pickerId),
    ]);
    return { status: 200, body: rows.map((r) => toQueueCard(r, pickerId, current?.id ?? null, ctx.lang)) };
  },
  // POST /api/picker/orders/{order_id}/start
  startPicking: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const key = commandKey(ctx);
    const orderId = ctx.path.order_id;
    const { config } = ctx.deps;
    const scope = { principal: `picker:${pickerId}`, operationId: ctx.operationId, key };
    return withIdempotency(ctx.deps, scope, fingerprintOf(ctx.path), async (trx) => {
      await lockPicker(trx, pickerId);
      const order = await lockOrderOfPicker(trx, orderId, pickerId);
      if (!order) throw notFound('No order with this id in your stores');
      const current = await findCurrentSession(trx, pickerId);
      const currentView = async () => (current ? sessionView(trx, current, await loadItems(trx, current.id), pickerId, ctx.lang) : null);
      // Resume: the caller's open session of this order is returned as it is.
      if (current && current.order_id === orderId && (current.status === 'active' || current.status === 'ready_to_finish')) {
        return { status: 200 as const, body: (await currentView())! };
      }
      // A cancellation queued behind a courier has already closed the order's session (order table).
      if (order.status === 'cancelled' || order.status === 'cancellation_requested') {
        const latest = await findLatestSessionOfPicker(trx, orderId, pickerId);
        const view = latest ? await sessionView(trx, latest, await loadItems(trx, latest.id), pickerId, ctx.lang) : null;
        throw refusal(409, 'order_cancelled', `Order ${order.no} was cancelled`, view);
      }
      const open = await findLatestSessionOfOrder(trx, orderId);
      if (open && (open.status === 'active' || open.status === 'ready_to_finish')) {
        throw refusal(409, 'ORDER_BUSY', `Order ${order.no} is being picked by ${open.picker_display_name}`, null);
      }
      if (current) {
        throw refusal(
          409,
          'PICKER_HAS_ACTIVE_SESSION',
          `You already have a current session (order ${current.order_no}); finish, cancel or acknowledge it first`,
          await currentView(),
        );
      }
      if (order.status !== 'confirmed')
        throw refusal(409, 'ORDER_NOT_PICKABLE', `Order ${order.no} is not waiting for picking (it is ${order.status})`, null);

      const lines = await orderLinesForPicking(trx, orderId, order.store_id);
      const newItems = lines.map((line, i) => itemForLine(line, i + 1, config.picking.weightTolerancePercent));
      const facts = newItems.map((n) => factsOfNew(n));
      const currentTotal = newItems.reduce((sum, n) => sum + kopecks(String(n.current_line_total)), 0n);
      const sessionId = await insertSession(trx, {
        orderId,
        pickerId,
        storeId: order.store_id,
        status: openSessionStatus(facts),
        maxAddedItems: config.picking.maxAddedItems,
        originalTotal: order.goods_total,
        currentTotal: money(currentTotal),
      });
      const items = await insertItems(trx, sessionId, newItems);
      await setOrderPickingStatus(trx, orderId, { status: 'picking', pickingResultState: 'in_progress' });
      await recordOrderChange(trx, orderId, ['status', 'picking_result'], { notify: true, now: ctx.deps.clock.now() });
      const head = (await findSessionHead(trx, sessionId))!;
      await recordSessionChanged(trx, {
        sessionId,
        orderId,
        storeId: head.store_id,
        pickerId,
        version: head.version,
        status: head.status,
        now: ctx.deps.clock.now(),
      });
      return { status: 200 as const, body: await sessionView(trx, head, items, pickerId, ctx.lang) };
    });
  },
  // GET /api/picker/orders/{order_id}/session
  getPickingSession: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const { db } = ctx.deps;
    if (!(await isOrderOfPicker(db, ctx.path.order_id, pickerId))) throw notFound('No order with this id in your stores');
    const head = await findLatestSessionOfOrder(db, ctx.path.order_id);
    if (!head) throw notFound('The order has not been started yet');
    return { status: 200, body: await sessionView(db, head, await loadItems(db, head.id), pickerId, ctx.lang) };
  },
  // GET /api/picker/session/active
  getActivePickingSession: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const { db } = ctx.deps;
    const head = await findCurrentSession(db, pickerId);
    if (!head) return { status: 204, body: undefined };
    return { status: 200, body: await sessionView(db, head, await loadItems(db, head.id), pickerId, ctx.lang) };
  },
  // GET /api/picker/realtime/metadata
  getPickerRealtimeMetadata: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const stores = await pickerStores(ctx.deps.db, pickerId);
    const scheme = ctx.origin.secure ? 'wss' : 'ws';
    const host = ctx.origin.host ?? `localhost:${ctx.deps.config.port}`;
    return {
      status: 200,
      body: {
        url: `${scheme}://${host}${PICKER_CHANNEL_PATH}`,
        path: PICKER_CHANNEL_PATH,
        auth_methods: ['bearer_header', 'access_token_query'],
        event_kinds: ['queue.changed', 'session.changed', 'order.cancelled'],
        store_ids: stores.map((s) => s.id),
        heartbeat_interval_seconds: ctx.deps.config.picking.realtimeHeartbeatSeconds,
        reconnect_initial_delay_ms: 1000,
        reconnect_max_delay_ms: 30_000,
        protocol_version: 1,
      },
    };
  },
  // POST /api/picker/orders/{order_id}/additional-items
  addPickingItem: async (ctx) => {
    const quantity = parseDecimal(ctx.body.quantity, 3);
    if (quantity === null || quantity <= 0n || quantity > ADDED_QUANTITY_MAX)
      throw refusal(422, 'QUANTITY_INVALID', ADDED_QUANTITY_INVALID, null);
    return runPickerCommand(ctx, ctx.path.order_id, null, async (s) => {
      const inventory = await findStoreInventory(s.trx, s.head.store_id, ctx.body.inventory_id);
      if (!inventory)
        throw refusal(422, 'INVENTORY_NOT_FOUND', "This inventory_id is not a product sold in the session's store", await s.view());
      const problem = addedQuantityProblem(quantity, inventory.weight_based);
      if (problem) {
        const detail = problem === 'QUANTITY_NOT_INTEGER' ? 'A piece product is added in whole pieces' : ADDED_QUANTITY_INVALID;
        throw refusal(422, problem, detail, await s.view());
      }
      if (s.head.added_items_count >= s.head.max_added_items) {
        throw refusal(409, 'ADDED_ITEMS_LIMIT', `A session may gain at most ${s.head.max_added_items} items`, await s.view());
      }
      if (s.items.some((i) => i.product_id === inventory.product_id || i.replacement_product_id === inventory.product_id)) {
        throw refusal(
          409,
          'PRODUCT_ALREADY_IN_SESSION',
          'This product is already an item of the session; change that item instead',
          await s.view(),
        );
      }
      const [row] = await insertItems(s.trx, s.head.id, [
        addedItem(inventory, quantity, nextItemPosition(s.items), ctx.deps.config.picking.weightTolerancePercent),
      ]);
      s.items.push(row!);
      await commitSessionChange(s, 1);
      return {
        status: 200 as const,
        body: actionOutput('ok', true, actionMessage('ok', ctx.lang, { command: 'add' }), await s.answer(row!)),
      };
    });
  },
  // POST /api/picker/orders/{order_id}/cancel
  cancelPicking: async (ctx) =>
    runPickerCommand(ctx, ctx.path.order_id, null, async (s) => {
      await releaseSession(s.trx, s.order.id, s.head, s.items, { source: 'picker_cancel', reason: ctx.body?.reason ?? null }, s.now);
      const head = (await findSessionHead(s.trx, s.head.id))!;
      const answer = await actionAnswer(s.trx, head, s.items, null, s.pickerId, ctx.lang, s.full);
      return { status: 200 as const, body: actionOutput('ok', true, actionMessage('ok', ctx.lang, { command: 'cancel' }), answer) };
    }),
  // POST /api/picker/orders/{order_id}/cancelled/ack
  acknowledgePickingCancellation: async (ctx) => {
    const pickerId = pickerIdOf(ctx);
    const key = commandKey(ctx);
    const orderId = ctx.path.order_id;
    const scope = { principal: `picker:${pickerId}`, operationId: ctx.operationId, key };
    return withIdempotency(ctx.deps, scope, fingerprintOf(ctx.path), async (trx) => {
      if (!(await isOrderOfPicker(trx, orderId, pickerId))) throw notFound('No order with this id in your stores');
      const head = await findLatestSessionOfPicker(trx, orderId, pickerId);
      if (!head) throw notFound('You have no picking session of this order');
      if (head.closure_source !== 'order_cancelled') {
        const view = await sessionView(trx, head, await loadItems(trx, head.id), pickerId, ctx.lang);
        throw refusal(409, 'SESSION_NOT_CANCELLED', "This session was not closed by the order's cancellation", view);
      }
      await acknowledgeCancellation(trx, head.id);
      return { status: 204 as const, body: undefined };
    });
  },
  // POST /api/picker/orders/{order_id}/finish
  finishPicking: async (ctx) =>
    runPickerCommand(ctx, ctx.path.order_id, null, async (s) => {
      const unresolved = s.items.filter((i) => !isResolved(itemFacts(i)));
      if (unresolved.length) {
        throw refusal(409, 'NOT_READY_TO_FINISH', `${unresolved.length} item(s) are not resolved yet`, await s.view(), {
          unresolved_item_ids: unresolved.map((i) => i.id),
        });
      }
      await finishSession(s);
      const head = (await findSessionHead(s.trx, s.head.id))!;
      const answer = await actionAnswer(s.trx, head, s.items, null, s.pickerId, ctx.lang, s.full);
      return { status: 200 as const, body: actionOutput('ok', true, actionMessage('ok', ctx.lang, { command: 'finish' }), answer) };
    }),
  // POST /api/picker/orders/{order_id}/items/{item_id}/scan
  scanPickingItem: async (ctx) =>
    itemCommand(ctx, ctx.path, 'scan', async (s, item) => {
      const scanned = await lookUpBarcode(s, ctx.body.barcode);
      return { command: { type: 'scan', barcode: scanned.barcode, match: scanMatch(item, scanned) }, scanned, log: 'scan' };
    }),
  // POST /api/picker/orders/{order_id}/items/{item_id}/replacement
  replacePickingItem: async (ctx) =>
    itemCommand(ctx, ctx.path, 'replacement', async (s, item) => {
      const scanned = await lookUpBarcode(s, ctx.body.barcode);
      const found = scanned.found;
      const match: ReplacementMatch = !found
        ? { kind: 'unknown' }
        : found.row.product_id === item.product_id
          ? { kind: 'same_product' }
          : {
              kind: 'substitute',
              isWeightBased: found.row.weight_based,
              labelWeight: found.byLabel ? labelWeight(scanned.code) : null,
              labelPlu: found.byLabel ? scannedPlu(scanned.code) : null,
            };
      return {
        command: { type: 'replacement', barcode: scanned.barcode, match },
        scanned,
        log: 'replacement',
        replacement: found ? replacementData(found.row) : undefined,
      };
    }),
  // POST /api/picker/orders/{order_id}/items/{item_id}/piece-quantity
  setPickingItemPieceQuantity: async (ctx) =>
    itemCommand(ctx, ctx.path, 'piece_quantity', async () => ({
      command: { type: 'piece_quantity', quantity: BigInt(ctx.body.quantity) * UNIT },
    })),
  // POST /api/picker/orders/{order_id}/items/{item_id}/manual-pick
  manualPickPickingItem: async (ctx) =>
    itemCommand(ctx, ctx.path, 'manual_pick', async () => ({
      command: { type: 'manual_pick', quantity: BigInt(ctx.body.quantity) * UNIT, confirm: ctx.body.confirm ?? false },
    })),
  // POST /api/picker/orders/{order_id}/items/{item_id}/weight
  weighPickingItem: async (ctx) => {
    const weight = parseDecimal(ctx.body.weight_kg, 3);
    if (weight === null || weight <= 0n)
      throw refusal(422, 'WEIGHT_INVALID', 'The weight must be positive with at most three decimal places', null);
    const barcode = ctx.body.barcode ?? null;
    return itemCommand(ctx, ctx.path, 'weight', async (s, item) => {
      if (barcode === null) return { command: { type: 'weight', weight, barcode: null, match: null } };
      const scanned = await lookUpBarcode(s, barcode);
      return { command: { type: 'weight', weight, barcode: scanned.barcode, match: scanMatch(item, scanned) }, scanned, log: 'weight' };
    });
  },
  // POST /api/picker/orders/{order_id}/items/{item_id}/missing
  markPickingItemMissing: async (ctx) =>
    itemCommand(ctx, ctx.path, 'missing', async () => ({ command: { type: 'missing', action: ctx.body.action } })),
  // POST /api/picker/orders/{order_id}/items/{item_id}/clarification/resolve
  resolvePickingItemClarification: async (ctx) =>
    itemCommand(ctx, ctx.path, 'resolve', async () => ({ command: { type: 'resolve', resolution: ctx.body.resolution } })),
  // POST /api/picker/orders/{order_id}/items/{item_id}/clarification/reopen
  reopenPickingItem: async (ctx) =>
    itemCommand(ctx, ctx.path, 'reopen', async () => ({ command: { type: 'reopen', reason: ctx.body.reason } })),
  // POST /api/picker/orders/{order_id}/items/{item_id}/clarification/confirm
  confirmPickingItemClarification: async (ctx) => {
    let quantityKg: bigint | null = null;
    if (ctx.body.quantity_kg !== undefined) {
      quantityKg = parseDecimal(ctx.body.quantity_kg, 3);
      if (quantityKg === null || quantityKg <= 0n) {
        throw validationFailed([
          { loc: ['body', 'quantity_kg'], msg: 'must be positive with at most three decimal places', type: 'multipleOf' },
        ]);
      }
    }
    const quantity = ctx.body.quantity == null ? null : BigInt(ctx.body.quantity) * UNIT;
    return itemCommand(ctx, ctx.path, 'confirm', async () => ({
      command: { type: 'confirm', resolution: ctx.body.resolution ?? null, quantity, quantityKg },
    }));
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
