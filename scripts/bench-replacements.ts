// npm run bench:replacements: "the customer decides, live" under load, on a real PostgreSQL
// (BENCH_DATABASE_URL, or an embedded one in a temporary folder), with the demo data. Not a test.
//
// 32 pickers (BENCH_REPLACEMENT_PICKERS), each working its own order; each order's customer holds
// an open tracking socket (/ws/orders/tracking/) and each picker an open picker socket
// (/ws/picker/). Each order has one line per round (BENCH_REPLACEMENT_ROUNDS, 5, plus one warm-up
// round that is not counted), a piece product ordered once whose preference is `named_products`
// (one other piece product) with `approval_required`, set by the customer through POST
// /api/orders/{order_id}/items/changes (`set_replacement`) before picking starts. All 32 pickers
// start at once, then each walks its rounds, all pickers concurrently, pausing BENCH_REPLACEMENT_THINK_MS
// (500) before each command as a picker at a shelf does (the lanes' first pauses are spread over
// that time, so they do not move in step). BENCH_REPLACEMENT_THINK_MS=0 sends each command as soon as
// the previous one is through: the service's core saturates and every request queues (the figures
// then measure the queue, as the baseline shows):
//
//   proposal - POST .../items/{item_id}/missing (`call`), then the measured command: POST
//              .../items/{item_id}/replacement with the named product's barcode, until the
//              customer's tracking socket receives the `order.approval.requested` of it (the same
//              order, the named product proposed, `pending`).
//              figure replacement-proposal-to-customer-p99-ms (target < 150);
//   decision - the customer's POST /api/orders/{order_id}/approvals/{approval_id}/decision
//              (`approve`), until the picker's socket receives the `item.approval.decided` of that
//              approval. figure replacement-decision-to-picker-p99-ms (target < 150).
//
// Both are timed here, from just before the request is sent to the socket's message event, on one
// clock. The same-run baseline is each command's own HTTP round trip (the answer), so the socket
// figure minus the baseline is the delay the outbox and the channel add; the distribution of
// "socket after answer" is printed as well (negative when the message overtook the answer).
// The service runs in a child process pinned to core 0 (scripts/lib/bench-service.ts); the load
// and the sockets run here, on core 1.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { insertConfirmedOrder } from '../db/seed/picking.js';
import { DEMO_STORES } from '../db/seed/stores.js';
import type { components } from '../generated/api.test.js';
import { loadConfig } from '../platform/config.js';
import { PICKER_CHANNEL_PATH, TRACKING_PATH } from '../platform/socket-paths.js';
import { TokenService } from '../platform/tokens.js';
import { insertBenchPicker } from './lib/bench-accounts.js';
import { openBenchDatabase } from './lib/bench-database.js';
import { BENCH_JWT_SECRET, startBenchService, type BenchService } from './lib/bench-service.js';

type Schemas = components['schemas'];
type Db = ReturnType<typeof connect>['db'];

const STORE = DEMO_STORES[0]!;
const TARGET_MS = 150;
const WARMUP_ROUNDS = 1;
/** The measured routes, as scripts/lib/round-trips.ts names them. */
const ROUTES = {
  missing: 'POST /api/picker/orders/{id}/items/{id}/missing',
  replacement: 'POST /api/picker/orders/{id}/items/{id}/replacement',
  decision: 'POST /api/orders/{id}/approvals/{id}/decision',
};

// ---------------------------------------------------------------------------------------------
// Data

interface Product {
  productId: string;
  inventoryId: string;
  barcode: string;
}

/**
 * `count` piece products of the store, each with a barcode, in product-code order (the same on
 * every run), their stock raised so that no order and no replacement runs short.
 */
async function pieceProducts(db: Db, count: number): Promise<Product[]> {
  const rows = await db
    .selectFrom('inventories as i')
    .innerJoin('products as p', 'p.id', 'i.product_id')
    .select([
      'i.id',
      'i.product_id',
      sql<string | null>`(SELECT min(b.barcode) FROM product_barcodes b WHERE b.product_id = p.id)`.as('barcode'),
    ])
    .where('i.store_id', '=', STORE.id)
    .where('i.is_default', '=', true)
    .where('p.weight_based', '=', false)
    .where('p.is_active', '=', true)
    .where(sql<boolean>`EXISTS (SELECT 1 FROM product_barcodes b WHERE b.product_id = p.id)`)
    .orderBy('p.code')
    .limit(count)
    .execute();
  if (rows.length < count) throw new Error(`store ${STORE.code} has ${rows.length} piece products with a barcode, ${count} needed`);
  await db
    .updateTable('inventories')
    .set({ stock: '1000000.000' })
    .where(
      'id',
      'in',
      rows.map((r) => r.id),
    )
    .execute();
  return rows.map((r) => ({ productId: r.product_id, inventoryId: r.id, barcode: r.barcode! }));
}

/** A customer with an active session; its access token. */
async function insertCustomer(db: Db, tokens: TokenService): Promise<{ id: string; auth: string }> {
  const id = randomUUID();
  const sessionId = randomUUID();
  await db.insertInto('customers').values({ id, phone: null }).execute();
  await db.insertInto('customer_preferences').values({ customer_id: id, language: 'en' }).execute();
  await db
    .insertInto('auth_sessions')
    .values({
      id: sessionId,
      principal_kind: 'customer',
      customer_id: id,
      refresh_jti: randomUUID(),
      expires_at: new Date(Date.now() + 86_400_000),
    })
    .execute();
  return { id, auth: `Bearer ${tokens.sign('customer_access', id, sessionId)}` };
}

// ---------------------------------------------------------------------------------------------
// HTTP

interface Answer<T> {
  status: number;
  body: T;
  /** From just before the request was sent to the whole answer read. */
  ms: number;
}

async function request<T>(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  auth: string,
  body?: object,
  headers: Record<string, string> = {},
): Promise<Answer<T>> {
  const t0 = performance.now();
  const r = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: auth,
      'accept-language': 'en',
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(method === 'POST' ? { 'idempotency-key': randomUUID() } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  const ms = performance.now() - t0;
  return { status: r.status, body: (text ? JSON.parse(text) : undefined) as T, ms };
}

function expectOk<T>(what: string, a: Answer<T>): T {
  if (a.status === 200) return a.body;
  const hint = a.status === 501 ? ' (not served by this build yet: the feature has not landed)' : '';
  throw new Error(`${what} answered ${a.status}${hint}: ${JSON.stringify(a.body).slice(0, 400)}`);
}

// ---------------------------------------------------------------------------------------------
// Sockets

interface Received {
  at: number;
  message: unknown;
}

/**
 * An open socket and the waits on it. A wait is registered before the request that causes its
 * message is sent, so a message that overtakes the request's answer is not missed.
 */
class Inbox {
  private readonly waits = new Set<{ match: (m: unknown) => boolean; resolve: (r: Received) => void }>();
  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data: Buffer) => {
      const at = performance.now();
      let message: unknown;
      try {
        message = JSON.parse(data.toString('utf8'));
      } catch {
        return;
      }
      for (const wait of this.waits) {
        if (!wait.match(message)) continue;
        this.waits.delete(wait);
        wait.resolve({ at, message });
      }
    });
  }

  static open(url: string, auth: string): Promise<Inbox> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers: { authorization: auth, 'accept-language': 'en' }, perMessageDeflate: false });
      socket.once('open', () => resolve(new Inbox(socket)));
      socket.once('error', reject);
      socket.once('close', (code) => reject(new Error(`${url} closed with ${code} before opening`)));
    });
  }

  /** The first message from now on that `match` accepts, or a failure after `timeoutMs`. */
  expect(what: string, match: (m: unknown) => boolean, timeoutMs: number): Promise<Received> {
    return new Promise((resolve, reject) => {
      const wait = {
        match,
        resolve: (r: Received) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waits.delete(wait);
        reject(new Error(`${what}: no message within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waits.add(wait);
    });
  }
}

const pause = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : Promise.resolve());

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The tracking message announcing the proposal of `productId` on `orderId` (TrackingEventEnvelope). */
const approvalRequested =
  (orderId: string, productId: string) =>
  (m: unknown): m is { type: 'order.approval.requested'; data: Schemas['ApprovalRequestedEvent'] } => {
    if (!isObject(m) || m.type !== 'order.approval.requested' || !isObject(m.data)) return false;
    const data = m.data as Partial<Schemas['ApprovalRequestedEvent']>;
    return data.order_id === orderId && data.approval?.status === 'pending' && data.approval.proposed?.product_id === productId;
  };

/** The picker channel's message announcing the decision of `approvalId` (PickerApprovalDecidedEvent). */
const approvalDecided =
  (approvalId: number) =>
  (m: unknown): m is Schemas['PickerApprovalDecidedEvent'] =>
    isObject(m) && m.kind === 'item.approval.decided' && m.approval_id === approvalId;

// ---------------------------------------------------------------------------------------------
// The scenario

interface Round {
  /** The ordered product and the one the customer named in its place. */
  ordered: Product;
  named: Product;
}

interface Lane {
  customerAuth: string;
  pickerAuth: string;
  orderId: string;
  tracking?: Inbox;
  picker?: Inbox;
  /** Picking item of each round (by the ordered product). */
  items: number[];
}

interface Sample {
  /** Request sent to the socket's message. */
  toSocket: number;
  /** The request's own round trip. */
  request: number;
}

/** The customer names each line's replacement, to be approved in the app, before picking starts. */
async function setPreferences(base: string, lane: Lane, rounds: Round[]): Promise<void> {
  const path = `/api/orders/${lane.orderId}`;
  const order = expectOk('getOrder', await request<Schemas['OrderDetailSchema']>(base, 'GET', path, lane.customerAuth));
  if (order.order_version === undefined || !order.can_change)
    throw new Error(`order ${order.no} cannot be changed (can_change ${order.can_change})`);
  const changes: Schemas['OrderLineChangeInput'][] = rounds.map((round) => {
    const line = order.items.find((it) => it.product_id === round.ordered.productId);
    if (line?.id === undefined) throw new Error(`order ${order.no} has no line of product ${round.ordered.productId}`);
    return {
      op: 'set_replacement',
      item_id: line.id,
      replacement: { policy: 'named_products', product_ids: [round.named.productId], approval_required: true },
    };
  });
  const body: Schemas['OrderChangeInput'] = { changes };
  const changed = expectOk(
    'changeOrderItems',
    await request<Schemas['OrderDetailSchema']>(base, 'POST', `${path}/items/changes`, lane.customerAuth, body, {
      'x-expected-version': String(order.order_version),
    }),
  );
  const named = changed.items.filter((it) => it.replacement?.policy === 'named_products' && it.replacement.approval_required);
  if (named.length !== rounds.length) throw new Error(`order ${changed.no}: ${named.length} of ${rounds.length} lines have the preference`);
}

async function startSession(base: string, lane: Lane, rounds: Round[]): Promise<number> {
  const started = await request<Schemas['PickingSessionSchema']>(base, 'POST', `/api/picker/orders/${lane.orderId}/start`, lane.pickerAuth);
  const session = expectOk('startPicking', started);
  lane.items = rounds.map((round) => {
    const item = session.items.find((it) => it.product_id === round.ordered.productId);
    if (!item) throw new Error(`session of order ${lane.orderId} has no item of product ${round.ordered.productId}`);
    const preference = item.replacement_preference;
    if (preference?.policy !== 'named_products' || !preference.approval_required) {
      throw new Error(`item ${item.item_id} of order ${lane.orderId} has the preference ${JSON.stringify(preference ?? null)}`);
    }
    return item.item_id;
  });
  return started.ms;
}

/** One round of one lane: the picker proposes the named product, the customer approves it. */
async function round(
  base: string,
  lane: Lane,
  r: number,
  rounds: Round[],
  { timeoutMs, thinkMs }: { timeoutMs: number; thinkMs: number },
): Promise<{ proposal: Sample; decision: Sample }> {
  const { named } = rounds[r]!;
  const itemPath = `/api/picker/orders/${lane.orderId}/items/${lane.items[r]}`;
  await pause(thinkMs);
  const missing = expectOk(
    'markPickingItemMissing',
    await request<Schemas['PickingActionOutput']>(base, 'POST', `${itemPath}/missing`, lane.pickerAuth, { action: 'call' }),
  );
  if (missing.item?.state !== 'missing') throw new Error(`missing: item ${lane.items[r]} is ${missing.item?.state}`);

  // The proposal: from the picker's command to the customer's socket.
  await pause(thinkMs);
  const requested = lane.tracking!.expect(
    `order.approval.requested of order ${lane.orderId}, round ${r}`,
    approvalRequested(lane.orderId, named.productId),
    timeoutMs,
  );
  const t0 = performance.now();
  const replaced = await request<Schemas['PickingActionOutput']>(base, 'POST', `${itemPath}/replacement`, lane.pickerAuth, {
    barcode: named.barcode,
  });
  const proposalAnswer = expectOk('replacePickingItem', replaced);
  if (proposalAnswer.status !== 'ok') throw new Error(`replacement answered status ${proposalAnswer.status}: ${proposalAnswer.message}`);
  const proposed = await requested;
  const event = (proposed.message as { data: Schemas['ApprovalRequestedEvent'] }).data;

  // The decision: from the customer's answer to the picker's socket.
  await pause(thinkMs);
  const decided = lane.picker!.expect(
    `item.approval.decided of approval ${event.approval.id}`,
    approvalDecided(event.approval.id),
    timeoutMs,
  );
  const t1 = performance.now();
  const decision: Schemas['ApprovalDecisionInput'] = { decision: 'approve' };
  const answered = await request<Schemas['OrderDetailSchema']>(
    base,
    'POST',
    `/api/orders/${lane.orderId}/approvals/${event.approval.id}/decision`,
    lane.customerAuth,
    decision,
  );
  const order = expectOk('decideItemApproval', answered);
  const line = order.items.find((it) => it.approval?.id === event.approval.id);
  if (line?.approval?.status !== 'approved') throw new Error(`decision: approval ${event.approval.id} is ${line?.approval?.status}`);
  const delivered = await decided;
  const status = (delivered.message as Schemas['PickerApprovalDecidedEvent']).status;
  if (status !== 'approved') throw new Error(`item.approval.decided of approval ${event.approval.id} says ${status}`);

  return {
    proposal: { toSocket: proposed.at - t0, request: replaced.ms },
    decision: { toSocket: delivered.at - t1, request: answered.ms },
  };
}

// ---------------------------------------------------------------------------------------------
// Figures

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;

function spread(values: number[]): { p50: number; p95: number; p99: number; max: number; count: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? NaN,
    count: sorted.length,
  };
}

const ms = (x: number) => `${x.toFixed(1)} ms`;
const line = (s: ReturnType<typeof spread>) =>
  `p50 ${ms(s.p50)}, p95 ${ms(s.p95)}, p99 ${ms(s.p99)}, max ${ms(s.max)} (${s.count} samples)`;

function report(label: string, figure: string, baselineFigure: string, samples: Sample[]): void {
  const toSocket = spread(samples.map((s) => s.toSocket));
  const answer = spread(samples.map((s) => s.request));
  const after = spread(samples.map((s) => s.toSocket - s.request));
  console.log(`${label}`);
  console.log(`  to the socket        ${line(toSocket)}  (target p99 < ${TARGET_MS} ms)`);
  console.log(`  baseline: the answer ${line(answer)}`);
  console.log(`  socket after answer  p50 ${ms(after.p50)}, p99 ${ms(after.p99)}`);
  console.log(`figure ${figure} ${toSocket.p99.toFixed(1)}`);
  console.log(`figure ${baselineFigure} ${answer.p99.toFixed(1)}`);
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const pickers = Number(process.env.BENCH_REPLACEMENT_PICKERS ?? 32);
  const measured = Number(process.env.BENCH_REPLACEMENT_ROUNDS ?? 5);
  const timeoutMs = Number(process.env.BENCH_MESSAGE_TIMEOUT_MS ?? 10_000);
  const thinkMs = Number(process.env.BENCH_REPLACEMENT_THINK_MS ?? 500);
  const total = measured + WARMUP_ROUNDS;
  console.log(`Node ${process.version}`);
  // The load generator and the sockets run on the other core (the service on core 0).
  try {
    spawn('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* single-core machine: share the core */
  }
  const t0 = performance.now();
  const database = await openBenchDatabase('grocery_bench_replacements');
  const handle = connect(database.url, { max: 4 });
  let child: BenchService | null = null;
  const sockets: Inbox[] = [];
  try {
    await migrateToLatest(handle.db);
    await seedDemoData(handle.db, new Date());
    const tokens = new TokenService(loadConfig({ ...process.env, JWT_SECRET: BENCH_JWT_SECRET }).jwt);
    // One line per round, each ordered once; the next products are the named replacements.
    const products = await pieceProducts(handle.db, 2 * total);
    const rounds: Round[] = Array.from({ length: total }, (_, r) => ({ ordered: products[r]!, named: products[total + r]! }));
    const lanes: Lane[] = [];
    for (let n = 0; n < pickers; n++) {
      const customer = await insertCustomer(handle.db, tokens);
      const pickerAuth = (await insertBenchPicker(handle.db, tokens, STORE.id, `bench-replacements-${n}`)).auth;
      // Express: in the queue at once. One at a time: the orders share stock rows.
      const order = await handle.db.transaction().execute((trx) =>
        insertConfirmedOrder(
          trx,
          {
            customerId: customer.id,
            storeId: STORE.id,
            type: 'delivery',
            express: true,
            lines: rounds.map((rd) => ({ inventoryId: rd.ordered.inventoryId, quantity: '1' })),
          },
          new Date(),
        ),
      );
      lanes.push({ customerAuth: customer.auth, pickerAuth, orderId: order.orderId, items: [] });
    }
    console.log(
      `prepared in ${((performance.now() - t0) / 1000).toFixed(0)} s: demo data, ${pickers} pickers and customers, orders of ${total} lines in store ${STORE.code}`,
    );

    child = await startBenchService(database.url);
    const base = `http://127.0.0.1:${child.port}`;
    const ws = `ws://127.0.0.1:${child.port}`;
    await Promise.all(lanes.map((lane) => setPreferences(base, lane, rounds)));
    for (const lane of lanes) {
      lane.tracking = await Inbox.open(`${ws}${TRACKING_PATH}`, lane.customerAuth);
      lane.picker = await Inbox.open(`${ws}${PICKER_CHANNEL_PATH}`, lane.pickerAuth);
      sockets.push(lane.tracking, lane.picker);
    }
    const held = await child.rss();
    const starts = await Promise.all(lanes.map((lane) => startSession(base, lane, rounds)));

    const proposals: Sample[] = [];
    const decisions: Sample[] = [];
    await child.roundTrips(); // from here on
    const measuredAt = performance.now();
    await Promise.all(
      lanes.map(async (lane, n) => {
        await pause((thinkMs * n) / lanes.length); // spread the lanes over one pause
        for (let r = 0; r < total; r++) {
          const s = await round(base, lane, r, rounds, { timeoutMs, thinkMs });
          if (r < WARMUP_ROUNDS) continue;
          proposals.push(s.proposal);
          decisions.push(s.decision);
        }
      }),
    );
    const seconds = (performance.now() - measuredAt) / 1000;
    const trips = await child.roundTrips();

    console.log('');
    console.log(
      `replacements: ${pickers} pickers at once, each on its own order; ${measured} rounds each (+${WARMUP_ROUNDS} warm-up) in ${seconds.toFixed(1)} s, ${thinkMs} ms before each command; ${held.sockets} tracking sockets held by the service`,
    );
    // Three commands a round: missing, replacement, decision.
    console.log(`load: ${((3 * pickers * total) / seconds).toFixed(1)} commands/s`);
    console.log(`start (${pickers} at once)  p99 ${ms(spread(starts).p99)}`);
    report(
      "proposal: POST .../items/{item_id}/replacement -> the customer's socket gets order.approval.requested",
      'replacement-proposal-to-customer-p99-ms',
      'replacement-proposal-request-p99-ms',
      proposals,
    );
    report(
      "decision: POST .../approvals/{approval_id}/decision -> the picker's socket gets item.approval.decided",
      'replacement-decision-to-picker-p99-ms',
      'replacement-decision-request-p99-ms',
      decisions,
    );
    // Where a command's time goes: PostgreSQL round trips per request of each route (scripts/lib/round-trips.ts).
    const perRequest = (route: string) => trips[route]?.perRequest.toFixed(1) ?? '-';
    console.log(
      `round trips per request: missing ${perRequest(ROUTES.missing)}, replacement ${perRequest(ROUTES.replacement)}, decision ${perRequest(ROUTES.decision)}`,
    );
    console.log(`prepared and measured in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  } finally {
    for (const inbox of sockets) inbox.socket.terminate();
    await child?.stop();
    await handle.close();
    await database.close();
  }
}

await main();
