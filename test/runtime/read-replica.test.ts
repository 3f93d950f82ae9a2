// The optional read replica (DATABASE_READ_URL): catalog reads go to it while it is in use and
// to the primary when it is not, without an error to the client; a dead replica is asked again
// in the background only, not by every request; readiness never depends on it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import { createTestDatabase } from '../support/db.js';
import { startTestService, type TestService } from '../support/service.js';

const STORE = '83700fcf-3c4c-5665-ac4f-8901ac83cc64'; // a demo store

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * A stand-in for the replica's address: it refuses (accepts and drops every connection, counting
 * them) or forwards to a real PostgreSQL, and can cut every forwarded connection at once.
 */
async function replicaStandIn() {
  let target: URL | null = null;
  let attempts = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    attempts++;
    socket.on('error', () => {});
    if (!target) {
      socket.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    /** DATABASE_READ_URL for a database of `server`'s, through the stand-in. */
    urlFor: (server: string) => {
      const url = new URL(server);
      url.port = String(port);
      return url.toString();
    },
    attempts: () => attempts,
    forwardTo: (server: string) => (target = new URL(server)),
    /** Refuses from now on and drops every open connection, as a replica that died. */
    die: () => {
      target = null;
      for (const s of open) s.destroy();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One round of the catalog reads that may go to the replica; the statuses answered. */
async function catalogReads(svc: TestService, productId: string): Promise<number[]> {
  const headers = { 'x-store-id': STORE };
  const answers = await Promise.all([
    svc.client.call.GET('/api/catalog/products/', { params: { query: { page_size: 5 } }, headers }),
    svc.client.call.GET('/api/catalog/products/', { params: { query: { search: 'молоко', page_size: 5 } }, headers }),
    svc.client.call.GET('/api/catalog/products/{product_id}', { params: { path: { product_id: productId } }, headers }),
    svc.client.call.GET('/api/catalog/groups/categories/root', { headers }),
  ]);
  return answers.map((a) => a.status);
}

async function firstProduct(svc: TestService): Promise<string> {
  const r = await svc.client.call.GET('/api/catalog/products/', { params: { query: { page_size: 1 } }, headers: { 'x-store-id': STORE } });
  expect(r.status).toBe(200);
  return (r.body as { items: { id: string }[] }).items[0]!.id;
}

// Every read is a query: nothing kept by the instance hides where reads go.
const NO_CACHES = { CATALOG_PRODUCTS_CACHE_SECONDS: '0', CATALOG_SEARCH_CACHE_SECONDS: '0' };

describe('without DATABASE_READ_URL', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc?.close());

  it('reads go to the primary and no replica figures are reported', async () => {
    expect(svc.readReplica).toBeNull();
    expect(svc.deps.readDb).toBe(svc.deps.db);
    const metrics = await fetch(`${svc.url}/metrics`).then((r) => r.text());
    expect(metrics).not.toContain('grocery_db_reads_total');
    expect(metrics).not.toContain('grocery_db_read_replica_up');
  });
});

describe('DATABASE_READ_URL on a closed port', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ env: { ...NO_CACHES, DATABASE_READ_URL: `postgres://postgres@127.0.0.1:${await closedPort()}/x` } });
  });
  afterAll(() => svc?.close());

  it('catalog reads answer 200 from the primary, and /readyz stays ready', async () => {
    const productId = await firstProduct(svc);
    for (let i = 0; i < 5; i++) expect(await catalogReads(svc, productId)).toEqual([200, 200, 200, 200]);
    const figures = svc.readReplica!.figures();
    expect(figures.up).toBe(false);
    expect(figures.served.replica).toBe(0);
    expect(figures.served.primary).toBeGreaterThanOrEqual(20);
    const ready = await fetch(`${svc.url}/readyz`);
    expect(ready.status).toBe(200);
    const metrics = await fetch(`${svc.url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('grocery_db_read_replica_up 0');
    expect(metrics).toMatch(/grocery_db_reads_total\{database="primary"\} [1-9]/);
  });
});

describe('a replica that is down, comes back and dies again', () => {
  let svc: TestService;
  let replica: Awaited<ReturnType<typeof replicaStandIn>>;
  let copy: OpenedDatabase;
  beforeAll(async () => {
    // The replica's data: another copy of the seeded template the service's database comes from.
    copy = await createTestDatabase();
    replica = await replicaStandIn();
    svc = await startTestService({ env: { ...NO_CACHES, DATABASE_READ_URL: replica.urlFor(copy.url), READ_REPLICA_RETRY_SECONDS: '1' } });
  });
  afterAll(async () => {
    await svc?.close();
    await replica?.close();
    await copy?.shutdown();
  });

  it('falls back without errors, asks the dead replica in the background only, and takes it back once it answers', async () => {
    const productId = await firstProduct(svc);
    await sleep(200); // the first check has found it down
    expect(svc.readReplica!.figures().up).toBe(false);

    // A burst of reads while it is down: each answered by the primary, the replica not asked by each.
    const before = replica.attempts();
    const started = performance.now();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push(...(await catalogReads(svc, productId)));
    const seconds = (performance.now() - started) / 1000;
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(statuses.length).toBe(48);
    // At most one check per retry second (and one that was under way), not one per read.
    expect(replica.attempts() - before).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
    expect(svc.readReplica!.figures().served.replica).toBe(0);

    // Nobody reads: the background check still asks it again, about once a second.
    const idle = replica.attempts();
    await sleep(2500);
    expect(replica.attempts() - idle).toBeGreaterThanOrEqual(1);
    expect(replica.attempts() - idle).toBeLessThanOrEqual(4);

    // It answers again: within a retry interval reads go to it.
    replica.forwardTo(copy.url);
    for (let waited = 0; !svc.readReplica!.figures().up && waited < 5000; waited += 100) await sleep(100);
    expect(svc.readReplica!.figures().up).toBe(true);
    const onReplica = svc.readReplica!.figures().served.replica;
    expect(await catalogReads(svc, productId)).toEqual([200, 200, 200, 200]);
    expect(svc.readReplica!.figures().served.replica - onReplica).toBeGreaterThanOrEqual(4);
    const metrics = await fetch(`${svc.url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('grocery_db_read_replica_up 1');
    expect(metrics).toMatch(/grocery_db_reads_total\{database="replica"\} [1-9]/);

    // It dies with connections open in the pool: the reads under way or next are answered by the primary.
    replica.die();
    const afterDeath: number[] = [];
    for (let i = 0; i < 5; i++) afterDeath.push(...(await catalogReads(svc, productId)));
    expect(afterDeath.every((s) => s === 200)).toBe(true);
    expect(svc.readReplica!.figures().up).toBe(false);
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
  });
});
