// The floors of the service's two write paths: the same checks and writes as the service, on bare
// node:http + pg, so that `npm run bench` prints each service figure as a ratio to its floor
// measured in the same run, on the same database and load.
//
// "The same checks and writes" is kept true by construction: the floor calls the service's own
// query functions and rules - the auth session check (isSessionActive), the item command's read and
// write (db/queries/picking/commands.ts) with the state machine's transition, order creation's
// placeOrderOnce (the key's claim with the zones, then placeOrder) - through the same pool
// (db/connection.ts: named prepared statements, the outbox wake-up after commit). What it leaves
// out is what the floor is there to price: Express, openapi-backend's routing and request
// validation, the handler layer (principal, headers, errors as responses, idempotency plumbing),
// the presenters (the answer here is the rows read, of about the delta answer's size), logging and
// metrics. Its round trips are counted as the service's are (scripts/lib/round-trips.ts), so the
// bench shows the floor's work is the service's.
//
// Like the service, it runs in a child process pinned to core 0 (scripts/lib/bench-service.ts).
import { fork, type ChildProcess } from 'node:child_process';
import { AsyncResource } from 'node:async_hooks';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { connect } from '../../db/connection.js';
import { isSessionActive } from '../../db/queries/auth.js';
import { changedItemColumns, readItemCommand, writeItemCommand } from '../../db/queries/picking/commands.js';
import { itemFacts, type ItemRow } from '../../db/queries/picking/items.js';
import { applyItemCommand, UNIT } from '../../domain/picking/items.js';
import { chargedPrice } from '../../services/presenters/picking.js';
import { placeOrderOnce, type CheckoutRequest } from '../../services/checkout.js';
import { transactionWithGenericPlans } from '../../db/generic-plans.js';
import { customerView, itemChange } from '../../services/picking/item-command.js';
import { findActiveStoreCached } from '../../services/stores.js';
import { createInstanceCaches } from '../../services/caches.js';
import { TokenService } from '../../platform/tokens.js';
import { systemClock } from '../../platform/clock.js';
import { loadConfig } from '../../platform/config.js';
import { fingerprintOf, IDEMPOTENCY_TTL_SECONDS } from '../../services/idempotency.js';
import { askRoundTrips, countRoundTrips, type RoundTrips } from './round-trips.js';
import { BENCH_JWT_SECRET } from './bench-service.js';

const CHILD_FLAG = '--write-path-floor';
const ITEM_COMMAND = /^\/api\/picker\/orders\/([0-9a-f-]{36})\/items\/(\d+)\/piece-quantity$/;

export interface WritePathFloor {
  port: number;
  roundTrips(): Promise<RoundTrips>;
  stop(): Promise<void>;
}

/** Starts the floor server on `databaseUrl` (a database the service's benchmark prepared). */
export async function startWritePathFloor(databaseUrl: string): Promise<WritePathFloor> {
  const proc: ChildProcess = fork(import.meta.filename, [CHILD_FLAG, databaseUrl], {
    execPath: 'taskset',
    execArgv: ['-c', '0', process.execPath, '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    proc.on('message', (m: { type: string; port: number }) => m.type === 'ready' && resolve(m.port));
    proc.on('exit', (code) => reject(new Error(`write-path floor exited with ${code}`)));
  });
  return {
    port,
    roundTrips: () => askRoundTrips(proc),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}

class Refused extends Error {
  constructor(readonly status: number) {
    super(`refused with ${status}`);
  }
}

/** Child side. */
async function serveFloor(databaseUrl: string): Promise<void> {
  const roundTrips = await countRoundTrips();
  const config = loadConfig({ ...process.env, APP_ENV: 'TEST', DATABASE_URL: databaseUrl, JWT_SECRET: BENCH_JWT_SECRET });
  const { db } = connect(databaseUrl, { max: 20 });
  const tokens = new TokenService(config.jwt);
  const deps = { db, config, clock: systemClock, caches: createInstanceCaches(config.logistics.requestsPerMinute) };

  /** The picker's piece-quantity command: 3 round trips (auth, read, write), retried on a moved session as the service does. */
  const pieceQuantity = async (pickerId: number, orderId: string, itemId: number, key: string, quantity: number): Promise<Buffer> => {
    const scope = { principal: `picker:${pickerId}`, operationId: 'setPickingItemPieceQuantity', key };
    const fingerprint = fingerprintOf({ order_id: orderId, item_id: String(itemId) }, { quantity }, null);
    for (let attempt = 0; attempt < 5; attempt++) {
      const read = await readItemCommand(db, orderId, pickerId, { itemId, scope, wholeItems: false });
      if (read.taken) throw new Refused(409);
      const { head, item, items } = read;
      if (!head || !head.mine || !item) throw new Refused(404);
      const t = applyItemCommand(itemFacts(item), { type: 'piece_quantity', quantity: BigInt(quantity) * UNIT });
      if (!t.ok) throw new Refused(409);
      const at = systemClock.now();
      const change = itemChange(items, itemId, t.next, chargedPrice(item), 'keep');
      const after = { ...item, ...changedItemColumns(change, at) } as ItemRow;
      const text = JSON.stringify({
        status: t.outcome,
        applied: t.applied,
        representation: 'delta',
        session: { ...head, version: head.version + 1, updated_at: at, status: change.status },
        item: after,
      });
      const gzip = gzipSync(text, { level: 1 });
      const written = await writeItemCommand(db, {
        orderId,
        session: { id: head.id, storeId: head.store_id, pickerId },
        version: head.version,
        at,
        change,
        scan: null,
        orderChanges: customerView(item) !== customerView(after) ? ['picking_result'] : [],
        approval: null,
        answer: { scope, fingerprint, ttlSeconds: IDEMPOTENCY_TTL_SECONDS, held: false, status: 200, stored: { text, gzip } },
      });
      if (written) return gzip;
    }
    throw new Refused(409);
  };

  /** Order creation with an Idempotency-Key: the auth check, then one transaction claiming the key with the zones and placing the order. */
  const createOrder = async (customerId: string, storeId: string, key: string, body: CheckoutRequest['body']): Promise<string> => {
    const store = await findActiveStoreCached(deps, storeId);
    if (!store) throw new Refused(404);
    const scope = { principal: `customer:${customerId}`, operationId: 'createOrder', key };
    // The service's transaction: generic plans, BEGIN and the setting in one round trip.
    const placed = await transactionWithGenericPlans(db, (trx) =>
      placeOrderOnce(trx, deps, { customerId, store, body, lang: 'en' }, { scope, fingerprint: fingerprintOf(store.id, body) }),
    );
    if (placed.replayed) throw new Refused(409);
    return placed.id;
  };

  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    // Bound to the request's async context, as express's body parsing is: the round trips count by it.
    req.on(
      'end',
      AsyncResource.bind(() => {
        void (async () => {
          try {
            const token = String(req.headers.authorization ?? '').slice('Bearer '.length);
            const key = String(req.headers['idempotency-key']);
            const command = ITEM_COMMAND.exec(req.url ?? '');
            if (command) {
              const claims = tokens.verify(token, 'picker_access');
              const pickerId = Number(claims.sub);
              if (!(await isSessionActive(db, claims.sid, { kind: 'picker', pickerId }))) throw new Refused(401);
              const input = JSON.parse(raw) as { quantity: number };
              const answer = await pieceQuantity(pickerId, command[1]!, Number(command[2]), key, input.quantity);
              res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-encoding': 'gzip' });
              res.end(answer);
              return;
            }
            if (req.url === '/api/orders/' && req.method === 'POST') {
              const claims = tokens.verify(token, 'customer_access');
              if (!(await isSessionActive(db, claims.sid, { kind: 'customer', customerId: claims.sub }))) throw new Refused(401);
              const orderId = await createOrder(
                claims.sub,
                String(req.headers['x-store-id']),
                key,
                JSON.parse(raw) as CheckoutRequest['body'],
              );
              res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', location: `/api/orders/${orderId}` });
              res.end(JSON.stringify(orderId));
              return;
            }
            throw new Refused(404);
          } catch (err) {
            res.writeHead(err instanceof Refused ? err.status : 500, { 'content-type': 'text/plain' });
            res.end(String(err));
          }
        })();
      }),
    );
  });
  server.keepAliveTimeout = 60_000;
  process.on('message', (m: { type: string }) => {
    if (m.type === 'round-trips') process.send!({ type: 'round-trips', routes: roundTrips() });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ type: 'ready', port: (server.address() as AddressInfo).port }));
}

const at = process.argv.indexOf(CHILD_FLAG);
if (at >= 0) await serveFloor(process.argv[at + 1]!);
