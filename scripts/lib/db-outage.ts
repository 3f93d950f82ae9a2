// A database outage under checkout load, against `npm start` as a user runs it (the service in a
// child process, its embedded PostgreSQL, durable, supervised): shared by the fault script
// (scripts/fault-db-outage.ts) and its test (test/runtime/db-outage.test.ts).
//
//   1. start the service on a fresh DATA_DIR and give it customers, a product and a slot;
//   2. run checkouts (POST /api/orders/, a new Idempotency-Key each) from `lanes` clients;
//   3. SIGKILL the postmaster and keep it from coming back for `outageSeconds` (its port held
//      here, so the service's restarts fail), then let it come back;
//   4. keep the load until orders succeed again: the seconds from "PostgreSQL may start again" to
//      the first 201 are the recovery;
//   5. SIGKILL the service itself, start it again on the same DATA_DIR, and retry every request
//      with its own key: an acknowledged one must answer its original order, the others one
//      order at most;
//   6. count: requests sent during the outage and their answers (401 must be 0), acknowledged
//      orders missing (must be 0), orders without lines, keys left in progress.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { connect } from '../../db/connection.js';
import { freePort } from '../../db/embedded.js';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { TokenService } from '../../platform/tokens.js';
import { loadConfig, projectRoot } from '../../platform/config.js';

const STORE = DEMO_STORES.find((s) => s.code === 'MSK-TVERSKAYA')!.id;
const ADDRESS = { lon: 37.6106, lat: 55.7579 };
const JWT_SECRET = 'outage-secret-outage-secret-outage-secret-0';

export interface Answer {
  status: number;
  body: unknown;
}
/** Sends one request (the test passes its contract-checking client); status 0: no answer (reset, refused). */
export type Send = (method: string, url: string, headers: Record<string, string>, body: string) => Promise<Answer>;

const plainSend: Send = async (method, url, headers, body) => {
  const r = await fetch(url, { method, headers, body });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
};

export interface OutageOptions {
  outageSeconds: number;
  lanes?: number;
  send?: Send;
  progress?: (line: string) => void;
}

export interface OutageReport {
  requests: number;
  /** Requests sent while PostgreSQL was down (from the kill until it could start again). */
  duringOutage: { sent: number; byStatus: Record<string, number> };
  allByStatus: Record<string, number>;
  acknowledged: number;
  lostAcknowledged: number;
  ordersWithoutLines: number;
  keysInProgress: number;
  recoverySeconds: number | null;
  /** Restarts of the postmaster the service logged. */
  supervisorRestarts: number;
  /** Answers the send function refused (the test's contract client), first few. */
  contractViolations: string[];
  /** After SIGKILL of the service and a new start: every request retried with its own key. */
  retryAfterServiceKill: { retried: number; sameOrder: number; otherAnswers: Record<string, number>; duplicateOrdersForOneKey: number };
}

interface Service {
  child: ChildProcess;
  base: string;
  output: string[];
}

async function startService(dataDir: string, port: number, progress: (l: string) => void): Promise<Service> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/serve.ts'], {
    cwd: projectRoot,
    env: {
      ...process.env,
      APP_ENV: 'TEST',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      JWT_SECRET,
      LOG_LEVEL: 'warn',
      LOYALTY_WORKER_ENABLED: 'false',
      WARM_VALIDATORS: 'false',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start in 120 s:\n${output.slice(-10).join('\n')}`)), 120_000);
    const check = () => {
      if (output.some((l) => l.includes('is listening on'))) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) while starting:\n${output.slice(-10).join('\n')}`));
    });
  });
  progress(`service up on port ${port}`);
  return { child, base: `http://127.0.0.1:${port}`, output };
}

function postmaster(dataDir: string): { pid: number; port: number } {
  const lines = readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n');
  return { pid: Number(lines[0]), port: Number(lines[3]) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Binds 127.0.0.1:port as soon as the dead postmaster has let it go, so no new one can start. */
async function holdPort(port: number): Promise<net.Server> {
  for (let i = 0; i < 500; i++) {
    // A connection to it is cut at once, as a dead server's would be refused.
    const server = net.createServer((socket) => socket.destroy());
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen({ port, host: '127.0.0.1', exclusive: true }, () => resolve(true));
    });
    if (ok) return server;
    await sleep(2);
  }
  throw new Error(`port ${port} did not come free`);
}

const count = (values: number[]) => values.reduce<Record<string, number>>((acc, v) => ((acc[v] = (acc[v] ?? 0) + 1), acc), {});

export async function runDatabaseOutage(opts: OutageOptions): Promise<OutageReport> {
  const send = opts.send ?? plainSend;
  const progress = opts.progress ?? (() => {});
  const lanes = opts.lanes ?? 16;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grocery-outage-'));
  chmodSync(dataDir, 0o755); // reachable by the postgres user when run as root (no relocation)
  const port = await freePort();
  let service: Service | null = null;
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    service = await startService(dataDir, port, progress);
    const pg = postmaster(dataDir);
    const dbUrl = `postgres://postgres:postgres@127.0.0.1:${pg.port}/grocery`;

    // Customers with sessions, one product with plenty of stock, a slot with plenty of room.
    const setup = connect(dbUrl, { max: 2 });
    const tokens = new TokenService(loadConfig({ JWT_SECRET, DATABASE_URL: dbUrl }).jwt);
    const customers = Array.from({ length: lanes }, () => ({ customerId: randomUUID(), sessionId: randomUUID() }));
    await setup.db
      .insertInto('customers')
      .values(customers.map((c) => ({ id: c.customerId, phone: null })))
      .execute();
    await setup.db
      .insertInto('customer_preferences')
      .values(customers.map((c) => ({ customer_id: c.customerId, language: 'en' as const })))
      .execute();
    await setup.db
      .insertInto('auth_sessions')
      .values(
        customers.map((c) => ({
          id: c.sessionId,
          principal_kind: 'customer' as const,
          customer_id: c.customerId,
          refresh_jti: randomUUID(),
          expires_at: new Date(Date.now() + 86_400_000),
        })),
      )
      .execute();
    const unit = await setup.db.selectFrom('measurement_units').select('id').where('code', '=', 'pc').executeTakeFirstOrThrow();
    const product = await setup.db
      .insertInto('products')
      .values({ code: `OUTAGE-${randomUUID().slice(0, 8)}`, name_ru: 'Товар', name_en: 'Product' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await setup.db
      .insertInto('inventories')
      .values({ product_id: product.id, store_id: STORE, unit_id: unit.id, is_default: true, stock: '10000000.000', unit_price: '600.00' })
      .execute();
    const slotId = randomUUID();
    await sql`INSERT INTO store_slots (id, store_id, kind, slot_date, starts_at, ends_at, capacity)
      VALUES (${slotId}, ${STORE}, 'delivery', (now() AT TIME ZONE 'Europe/Moscow')::date + 2, now() + interval '2 days', now() + interval '2 days 2 hours', 10000000)`.execute(
      setup.db,
    );
    await setup.close();
    const body = JSON.stringify({
      type: 'delivery',
      payment_method: 'cash',
      items: [{ product_id: product.id, unit_id: unit.id, quantity: '2' }],
      delivery_context: { address_line: 'Tverskaya St, 7, Moscow', location: ADDRESS, slot_id: slotId },
    });
    const headersOf = (lane: number, key: string) => ({
      authorization: `Bearer ${tokens.sign('customer_access', customers[lane]!.customerId, customers[lane]!.sessionId)}`,
      'x-store-id': STORE,
      'idempotency-key': key,
      'content-type': 'application/json',
    });

    // The load.
    interface Sent {
      lane: number;
      key: string;
      at: number;
      status: number;
      orderId: string | null;
    }
    const sent: Sent[] = [];
    const violations: string[] = [];
    let running = true;
    const checkout = async (lane: number, key: string, base: string): Promise<Answer> => {
      try {
        return await send('POST', `${base}/api/orders/`, headersOf(lane, key), body);
      } catch (err) {
        // No answer at all (reset, refused) is status 0; anything else (an answer the contract
        // does not allow, when the test's client checks it) is reported as a violation.
        if (!(err instanceof TypeError)) violations.push((err as Error).message);
        return { status: 0, body: undefined };
      }
    };
    const loop = async (lane: number) => {
      while (running) {
        const key = randomUUID();
        const at = Date.now();
        const r = await checkout(lane, key, service!.base);
        sent.push({ lane, key, at, status: r.status, orderId: r.status === 201 ? String(r.body) : null });
        if (r.status !== 201) await sleep(50);
      }
    };
    const load = Promise.all(Array.from({ length: lanes }, (_, i) => loop(i)));
    await sleep(3000);

    // The outage: the postmaster killed, and kept from starting for outageSeconds.
    const outageStart = Date.now();
    process.kill(pg.pid, 'SIGKILL');
    const held = await holdPort(pg.port);
    cleanups.push(() => new Promise<void>((r) => held.close(() => r())));
    progress(`postmaster ${pg.pid} killed; PostgreSQL kept down for ${opts.outageSeconds} s`);
    await sleep(opts.outageSeconds * 1000 - (Date.now() - outageStart));
    await new Promise<void>((r) => held.close(() => r()));
    const backAt = Date.now();
    progress('PostgreSQL may start again');
    let recoveredAt: number | null = null;
    while (Date.now() - backAt < 60_000) {
      const ok = sent.find((s) => s.status === 201 && s.at >= backAt);
      if (ok) {
        recoveredAt = sent
          .filter((s) => s.status === 201 && s.at >= backAt)
          .map((s) => s.at)
          .sort((a, b) => a - b)[0]!;
        break;
      }
      await sleep(50);
    }
    // Answers end after they are sent: the first 201 sent after PostgreSQL was back, its answer time.
    await sleep(2000);
    running = false;
    await load;
    const recoverySeconds = recoveredAt === null ? null : (Math.max(recoveredAt, backAt) - backAt) / 1000;
    progress(`load stopped: ${sent.length} requests`);
    const supervisorRestarts = service.output.filter((l) => l.includes('the embedded PostgreSQL is running again')).length;
    for (const line of service.output.filter((l) => /embedded PostgreSQL/.test(l))) progress(`service: ${line.slice(0, 300)}`);
    progress(`PostgreSQL allowed back at ${new Date(backAt).toISOString()}`);

    // The service itself killed, then started again on the same data: every request retried.
    service.child.kill('SIGKILL');
    await new Promise((r) => service!.child.once('exit', r));
    progress('service killed (SIGKILL); starting it again');
    service = await startService(dataDir, await freePort(), progress);
    const retries: { original: Sent; answer: Answer }[] = [];
    for (let i = 0; i < sent.length; i += lanes) {
      const batch = sent.slice(i, i + lanes);
      const answers = await Promise.all(batch.map((s) => checkout(s.lane, s.key, service!.base)));
      batch.forEach((original, j) => retries.push({ original, answer: answers[j]! }));
    }
    const acked = sent.filter((s) => s.status === 201);
    const sameOrder = retries.filter((r) => r.original.orderId && r.answer.status === 201 && r.answer.body === r.original.orderId).length;
    const otherAnswers = count(
      retries
        .filter((r) => !(r.original.orderId && r.answer.status === 201 && r.answer.body === r.original.orderId))
        .map((r) => r.answer.status),
    );

    const check = connect(`postgres://postgres:postgres@127.0.0.1:${postmaster(dataDir).port}/grocery`, { max: 2 });
    const ids = acked.map((s) => s.orderId!);
    const present = ids.length ? (await check.db.selectFrom('orders').select('id').where('id', 'in', ids).execute()).length : 0;
    const customerIds = customers.map((c) => c.customerId);
    const withoutLines = await check.db
      .selectFrom('orders')
      .select((e) => e.fn.countAll<number>().as('n'))
      .where('customer_id', 'in', customerIds)
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('order_items').select('order_items.id').whereRef('order_items.order_id', '=', 'orders.id'))),
      )
      .executeTakeFirstOrThrow();
    const inProgress = await check.db
      .selectFrom('idempotency_keys')
      .select((e) => e.fn.countAll<number>().as('n'))
      .where('state', '=', 'in_progress')
      .executeTakeFirstOrThrow();
    // Orders per key: every answered order id of a key (first answer and retry) must be one.
    const idsPerKey = new Map<string, Set<string>>();
    for (const r of retries) {
      const set = idsPerKey.get(r.original.key) ?? new Set<string>();
      if (r.original.orderId) set.add(r.original.orderId);
      if (r.answer.status === 201) set.add(String(r.answer.body));
      idsPerKey.set(r.original.key, set);
    }
    const ordersOfCustomers = await check.db
      .selectFrom('orders')
      .select((e) => e.fn.countAll<number>().as('n'))
      .where('customer_id', 'in', customerIds)
      .executeTakeFirstOrThrow();
    const answeredIds = new Set([...idsPerKey.values()].flatMap((s) => [...s]));
    await check.close();

    const during = sent.filter((s) => s.at >= outageStart && s.at < backAt);
    return {
      requests: sent.length,
      duringOutage: { sent: during.length, byStatus: count(during.map((s) => s.status)) },
      allByStatus: count(sent.map((s) => s.status)),
      acknowledged: acked.length,
      lostAcknowledged: acked.length - present,
      ordersWithoutLines: Number(withoutLines.n),
      keysInProgress: Number(inProgress.n),
      recoverySeconds,
      supervisorRestarts,
      contractViolations: violations.slice(0, 5),
      retryAfterServiceKill: {
        retried: retries.length,
        sameOrder,
        otherAnswers,
        // More orders than distinct answered ids, or a key that answered two ids: a duplicate.
        duplicateOrdersForOneKey:
          [...idsPerKey.values()].filter((s) => s.size > 1).length + Math.max(0, Number(ordersOfCustomers.n) - answeredIds.size),
      },
    };
  } finally {
    for (const c of cleanups) await Promise.resolve(c()).catch(() => {});
    if (service && service.child.exitCode === null && service.child.signalCode === null) {
      service.child.kill('SIGTERM');
      await new Promise((r) => service!.child.once('exit', r));
    }
    const pgDir = path.join(dataDir, 'pg');
    const link = lstatSync(pgDir, { throwIfNoEntry: false });
    if (link?.isSymbolicLink()) rmSync(readlinkSync(pgDir), { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }
}
