// GET /metrics: Prometheus text with a latency histogram and status counts per operationId,
// open WebSocket connections, outbox backlog and lag, and database pool usage; live under load,
// readable while the pool is exhausted, bounded labels, no secrets.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { OPERATIONS } from '../../generated/operations.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[4] === '+Inf' ? Infinity : m[4]) });
  }
  return out;
}

async function scrape(svc: TestService, headers: Record<string, string> = {}) {
  const res = await fetch(`${svc.url}/metrics`, { headers });
  const text = await res.text();
  return { res, text, samples: res.status === 200 ? parseExposition(text) : [] };
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

let svc: TestService;
beforeAll(async () => {
  // No background passes: the pool test counts the queries waiting for a connection, and a
  // worker's pass starting meanwhile would be one more (seen in CI: 2 where 1 was queued).
  svc = await startTestService({
    env: { ORDER_WORKER_ENABLED: 'false', LOYALTY_WORKER_ENABLED: 'false', PICKING_EXPIRY_SWEEP_SECONDS: '0' },
  });
});
afterAll(() => svc?.close());

describe('GET /metrics', () => {
  it('answers the Prometheus text format with the build and process figures', async () => {
    const { res, samples } = await scrape(svc);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(value(samples, 'grocery_build_info', { environment: 'TEST', commit: 'testcommit' })).toBe(1);
    expect(value(samples, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(samples, 'grocery_db_pool_max_connections')).toBe(svc.config.dbPoolMax);
  });

  it('counts requests per operationId and status and times them in a histogram', async () => {
    const before = (await scrape(svc)).samples;
    const count = (s: Sample[], op: string, status: string) => value(s, 'grocery_http_requests_total', { operation_id: op, status }) ?? 0;
    for (let i = 0; i < 3; i++) expect((await svc.client.call.GET('/api/logistics/map/config')).status).toBe(200);
    for (let i = 0; i < 2; i++) expect((await svc.client.invalid('GET', '/api/accounts/me/')).status).toBe(401);
    expect((await svc.client.invalid('GET', '/api/no/such/operation')).status).toBe(404);

    const after = (await scrape(svc)).samples;
    expect(count(after, 'getMapConfig', '200') - count(before, 'getMapConfig', '200')).toBe(3);
    expect(count(after, 'getProfile', '401') - count(before, 'getProfile', '401')).toBe(2);
    expect(count(after, 'none', '404') - count(before, 'none', '404')).toBe(1);

    const histogram = (s: Sample[], suffix: string, labels: Record<string, string> = {}) =>
      value(s, `grocery_http_request_duration_seconds_${suffix}`, { operation_id: 'getMapConfig', ...labels }) ?? 0;
    expect(histogram(after, 'count') - histogram(before, 'count')).toBe(3);
    expect(histogram(after, 'sum')).toBeGreaterThan(histogram(before, 'sum'));
    // Cumulative buckets: non-decreasing, and +Inf holds every observation.
    const buckets = after
      .filter((s) => s.name === 'grocery_http_request_duration_seconds_bucket' && s.labels.operation_id === 'getMapConfig')
      .map((s) => ({ le: Number(s.labels.le === '+Inf' ? Infinity : s.labels.le), value: s.value }))
      .sort((a, b) => a.le - b.le);
    expect(buckets.length).toBeGreaterThanOrEqual(10);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(buckets.at(-1)).toEqual({ le: Infinity, value: histogram(after, 'count') });
  });

  it('shows live figures under concurrent load', async () => {
    const count = async () =>
      value((await scrape(svc)).samples, 'grocery_http_requests_total', { operation_id: 'getMapConfig', status: '200' }) ?? 0;
    const before = await count();
    const rounds = 8;
    const parallel = 25;
    for (let r = 0; r < rounds; r++) {
      const statuses = await Promise.all(
        Array.from({ length: parallel }, () =>
          fetch(`${svc.url}/api/logistics/map/config`).then(async (res) => (await res.arrayBuffer(), res.status)),
        ),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
      // Mid-load the counter already holds every finished request.
      expect(await count()).toBe(before + (r + 1) * parallel);
    }
  });

  it('reports the open WebSocket connections of the instance', async () => {
    const customer = await signInCustomer(svc);
    const gauge = async () => value((await scrape(svc)).samples, 'grocery_websocket_connections');
    expect(await gauge()).toBe(0);
    const sockets = [0, 1].map(() => new WebSocket(`${svc.url.replace('http', 'ws')}/ws/orders/tracking/`, { headers: customer.auth }));
    await Promise.all(sockets.map((ws) => new Promise((resolve) => ws.once('open', resolve))));
    expect(await gauge()).toBe(2);
    sockets[0]!.close();
    await expect.poll(gauge).toBe(1);
    sockets[1]!.close();
    await expect.poll(gauge).toBe(0);
  });

  it('reports the outbox backlog (unpublished events) and the age of the oldest one', async () => {
    const figures = async () => {
      const { samples } = await scrape(svc);
      return { backlog: value(samples, 'grocery_outbox_backlog_events'), lag: value(samples, 'grocery_outbox_lag_seconds') };
    };
    await svc.deps.db
      .updateTable('outbox_events')
      .set({ published_at: sql`now()` })
      .where('published_at', 'is', null)
      .execute();
    expect(await figures()).toEqual({ backlog: 0, lag: 0 });

    const event = (ageSeconds: number, published: boolean) => ({
      type: 'order.changed',
      order_id: randomUUID(),
      payload: JSON.stringify({ type: 'order.changed', event_id: randomUUID() }),
      created_at: sql<Date>`now() - make_interval(secs => ${ageSeconds})`,
      published_at: published ? sql<Date>`now()` : null,
    });
    await svc.deps.db
      .insertInto('outbox_events')
      .values([event(120, true), event(45, false), event(5, false)])
      .execute();
    const waiting = await figures();
    expect(waiting.backlog).toBe(2);
    expect(waiting.lag).toBeGreaterThanOrEqual(45);
    expect(waiting.lag).toBeLessThan(45 + 60);

    await svc.deps.db
      .updateTable('outbox_events')
      .set({ published_at: sql`now()` })
      .where('published_at', 'is', null)
      .execute();
    expect(await figures()).toEqual({ backlog: 0, lag: 0 });
  });

  it("reports the pool's connections and waiting queries, and still answers when the pool is exhausted", async () => {
    const pool = svc.deps.pool;
    // pg-pool keeps its settings in `options` (not in @types/pg).
    const max = (pool as unknown as { options: { max: number } }).options.max;
    const held: pg.PoolClient[] = [];
    try {
      for (let i = 0; i < 2; i++) held.push(await pool.connect());
      let { samples } = await scrape(svc);
      // The service's own background reads (the outbox feed) take and return connections at any
      // moment, so the scraped counts are checked against what the test holds, not re-read after.
      const total = value(samples, 'grocery_db_pool_connections', { state: 'total' })!;
      const idle = value(samples, 'grocery_db_pool_connections', { state: 'idle' })!;
      expect(total).toBeGreaterThanOrEqual(held.length);
      expect(total).toBeLessThanOrEqual(max);
      expect(idle).toBeGreaterThanOrEqual(0);
      expect(idle).toBeLessThanOrEqual(total - held.length);
      expect(pool.totalCount - pool.idleCount).toBeGreaterThanOrEqual(2);
      expect(value(samples, 'grocery_db_pool_waiting_clients')).toBe(0);

      // Nothing but the test's own connections out: an outbox wake-up of an earlier commit
      // (db/connection.ts sends it through the pool) has finished, so the counts below are ours.
      await vi.waitFor(() => expect(pool.totalCount - pool.idleCount).toBe(held.length), { timeout: 5000 });
      // Lend out every connection and queue one more query behind them.
      while (pool.totalCount < max || pool.idleCount > 0) held.push(await pool.connect());
      const queued = pool.query('SELECT 1');
      const failuresBefore = value(samples, 'grocery_metrics_collect_failures_total', { source: 'outbox', reason: 'pool_exhausted' }) ?? 0;
      const waitingBefore = pool.waitingCount;
      const started = performance.now();
      ({ samples } = await scrape(svc));
      expect(performance.now() - started).toBeLessThan(5000); // waiting for a connection would hang here
      // The figure is the pool's own count when it was scraped. Our query waits; an outbox wake-up
      // of an earlier commit (db/connection.ts sends it through the pool) may join the queue at
      // any moment, and nothing leaves it while every connection is lent: so the figure lies
      // between the counts read just before and just after the scrape (CI saw 1 scraped, 2 after).
      const scraped = value(samples, 'grocery_db_pool_waiting_clients');
      expect(scraped).toBeGreaterThanOrEqual(Math.max(1, waitingBefore));
      expect(scraped).toBeLessThanOrEqual(pool.waitingCount);
      expect(value(samples, 'grocery_db_pool_connections', { state: 'idle' })).toBe(0);
      // The outbox figures need a connection: they are left out rather than waited for.
      expect(value(samples, 'grocery_outbox_backlog_events')).toBeUndefined();
      expect(value(samples, 'grocery_metrics_collect_failures_total', { source: 'outbox', reason: 'pool_exhausted' })).toBe(
        failuresBefore + 1,
      );
      held.pop()!.release();
      await queued;
    } finally {
      for (const client of held) client.release();
    }
  });

  it('carries no secrets and only bounded label values', async () => {
    const customer = await signInCustomer(svc);
    await svc.client.call.GET('/api/accounts/me/', { headers: customer.auth });
    await svc.client.invalid('GET', `/api/core/pages/?access_token=${customer.access}`); // a parameter the operation does not have
    const { text, samples } = await scrape(svc);
    for (const secret of [
      svc.config.jwt.secret,
      customer.access,
      customer.refresh,
      svc.config.databaseUrl!,
      new URL(svc.config.databaseUrl!).host,
    ]) {
      expect(text).not.toContain(secret);
    }
    const operationIds = new Set([...Object.keys(OPERATIONS), 'none']);
    for (const s of samples.filter((x) => x.labels.operation_id !== undefined))
      expect(operationIds.has(s.labels.operation_id!), s.labels.operation_id).toBe(true);
    for (const s of samples.filter((x) => x.labels.status !== undefined)) expect(s.labels.status).toMatch(/^[1-5][0-9]{2}$/);
  });
});

describe('GET /metrics settings', () => {
  let guarded: TestService;
  let disabled: TestService;
  const token = 'metrics-token-0123456789abcdef';
  beforeAll(async () => {
    [guarded, disabled] = await Promise.all([
      startTestService({ env: { METRICS_TOKEN: token } }),
      startTestService({ env: { METRICS_ENABLED: 'false' } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([guarded?.close(), disabled?.close()]);
  });

  it('METRICS_TOKEN: answers 401 without the bearer token or with another one, 200 with it', async () => {
    const refused: Record<string, string>[] = [{}, { authorization: 'Bearer not-the-metrics-token-000' }, { authorization: token }];
    for (const headers of refused) {
      const { res, text } = await scrape(guarded, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('Bearer');
      expect(JSON.parse(text)).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    const { res, samples } = await scrape(guarded, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(value(samples, 'grocery_build_info', { environment: 'TEST' })).toBe(1);
  });

  it('METRICS_ENABLED=false: there is no /metrics', async () => {
    const { res, text } = await scrape(disabled);
    expect(res.status).toBe(404);
    expect(JSON.parse(text)).toMatchObject({ code: 'NOT_FOUND' });
  });
});
