// OpenTelemetry traces, as an operator's collector receives them: the service runs as `npm start`
// runs it (scripts/serve.ts in its own process) with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a
// local OTLP/HTTP receiver, and an SMS gateway stands in for an outbound provider. Asserted: a
// checkout's server span is named by its operationId and continues the caller's traceparent, its
// queries hang under it, a provider call carries traceparent on, worker passes are traced, and no
// phone, code or token is in any attribute.
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomPhone, signInCustomer } from '../support/accounts.js';
import { ContractClient } from '../support/client.js';
import { startTestService, type TestService } from '../support/service.js';
import { spawnServe, type ServiceProcess } from '../support/service-process.js';
import { deliveryBody, line, makeProduct, makeSlot, TVERSKAYA } from '../orders/fixtures.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}
const SERVER = 2;
const CLIENT = 3;

const spans: OtlpSpan[] = [];
const gatewayTraceparents: string[] = [];
let receiver: http.Server;
let gateway: http.Server;
let fixtures: TestService;
let service: ChildProcess;
let client: ContractClient;
let running: ServiceProcess;

const listen = (server: http.Server) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

beforeAll(async () => {
  // The collector: OTLP/HTTP with JSON bodies (what @opentelemetry/exporter-trace-otlp-http sends).
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        for (const resource of JSON.parse(body).resourceSpans ?? [])
          for (const scope of resource.scopeSpans ?? []) spans.push(...scope.spans);
      }
      res.setHeader('content-type', 'application/json');
      res.end('{}');
    });
  });
  gateway = http.createServer((req, res) => {
    gatewayTraceparents.push(String(req.headers.traceparent ?? ''));
    req.resume();
    req.on('end', () => res.writeHead(202, { 'content-type': 'application/json' }).end('{"id":"msg-1"}'));
  });
  const [receiverPort, gatewayPort] = await Promise.all([listen(receiver), listen(gateway)]);

  // Products, slots and customers are made through this in-process service's database; the traced
  // service runs on the same database.
  fixtures = await startTestService();
  const started = spawnServe(
    fixtures.database.url,
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      SMS_PROVIDER: 'http',
      SMS_HTTP_URL: `http://127.0.0.1:${gatewayPort}/v1/messages`,
      ORDER_WORKER_INTERVAL_MS: '200',
    },
    'the traced service',
  );
  service = started.child;
  running = await started.listening;
  client = new ContractClient({ baseUrl: running.url, notImplemented: new Set() });
}, 90_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((r) => service.once('exit', r));
    service.kill('SIGTERM');
    await exited;
  }
  await fixtures?.close();
  receiver?.close();
  gateway?.close();
});

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};
/** A caller's span context, as the app (or a gateway in front) would send it. */
const callerContext = () => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') });
const traceparent = (c: { traceId: string; spanId: string }) => `00-${c.traceId}-${c.spanId}-01`;

async function spansOf(traceId: string, until: (trace: OtlpSpan[]) => boolean): Promise<OtlpSpan[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const trace = spans.filter((s) => s.traceId === traceId);
    if (until(trace)) return trace;
    if (Date.now() > deadline)
      throw new Error(`trace ${traceId} incomplete: ${trace.map((s) => s.name).join(', ')}\n${running.log().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** True when `span` descends from `ancestor` within `trace`. */
function descendsFrom(span: OtlpSpan, ancestor: OtlpSpan, trace: OtlpSpan[]): boolean {
  for (let s: OtlpSpan | undefined = span; s; s = trace.find((t) => t.spanId === s.parentSpanId)) {
    if (s.parentSpanId === ancestor.spanId) return true;
  }
  return false;
}

describe('traces (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  it('trace a checkout: the server span named createOrder under the caller, its queries under it', async () => {
    const customer = await signInCustomer(fixtures);
    const product = await makeProduct(fixtures, { price: '1200.00', stock: '10.000' });
    const slot = await makeSlot(fixtures, { capacity: 3 });
    const caller = callerContext();
    const r = await client.call.POST('/api/orders/', {
      headers: { ...customer.auth, 'x-store-id': TVERSKAYA, 'idempotency-key': randomUUID(), traceparent: traceparent(caller) },
      // The fixture's return type is wider than the spec's (plain strings for the enums).
      body: deliveryBody([line(product, 2)], slot),
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);

    const trace = await spansOf(
      caller.traceId,
      (t) =>
        t.some((s) => s.name === 'createOrder') &&
        t.some((s) => attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql'),
    );
    const server = trace.find((s) => s.name === 'createOrder')!;
    expect(server.kind).toBe(SERVER);
    expect(server.parentSpanId).toBe(caller.spanId);
    expect(attribute(server, 'http.route')).toBe('/api/orders/');
    expect(Number(attribute(server, 'http.response.status_code') ?? attribute(server, 'http.status_code'))).toBe(201);
    const queries = trace.filter(
      (s) => s.kind === CLIENT && (attribute(s, 'db.system') === 'postgresql' || attribute(s, 'db.system.name') === 'postgresql'),
    );
    expect(queries.length).toBeGreaterThan(1);
    for (const query of queries) expect(descendsFrom(query, server, trace), query.name).toBe(true);
    const statements = queries.map((q) => `${(attribute(q, 'db.query.text') ?? attribute(q, 'db.statement') ?? '') as string}`).join('\n');
    expect(statements).toMatch(/insert into "?orders"?/i);
    // Statements carry placeholders, never the values bound to them.
    expect(statements).not.toContain(customer.phone);
  });

  it('trace a provider call: the SMS gateway receives the traceparent of the client span', async () => {
    const caller = callerContext();
    const phone = randomPhone();
    const r = await client.call.POST('/api/auth/otp/send', { headers: { traceparent: traceparent(caller) }, body: { phone } });
    expect(r.status).toBe(200);
    const trace = await spansOf(
      caller.traceId,
      (t) =>
        t.some((s) => s.name === 'sendOtp') &&
        t.some(
          (s) =>
            s.kind === CLIENT && attribute(s, 'server.port') !== undefined && !attribute(s, 'db.system') && !attribute(s, 'db.system.name'),
        ),
    );
    const server = trace.find((s) => s.name === 'sendOtp')!;
    const outbound = trace.find((s) => s.kind === CLIENT && attribute(s, 'url.full') !== undefined)!;
    expect(descendsFrom(outbound, server, trace)).toBe(true);
    const sent = gatewayTraceparents.find((t) => t.includes(caller.traceId));
    expect(sent).toBe(`00-${caller.traceId}-${outbound.spanId}-01`);
  });

  it('trace worker passes with their queries', async () => {
    await spansOf('', () => spans.some((s) => s.name === 'order-worker pass'));
    const pass = spans.find((s) => s.name === 'order-worker pass')!;
    expect(pass.parentSpanId ?? '').toBe('');
    const trace = spans.filter((s) => s.traceId === pass.traceId);
    expect(trace.some((s) => s.kind === CLIENT && s.parentSpanId === pass.spanId)).toBe(true);
  });

  it('keep phones, codes and tokens out of every attribute', async () => {
    const customer = await signInCustomer(fixtures);
    const phone = '+79990001234';
    await client.call.POST('/api/auth/otp/send', { body: { phone } });
    const caller = callerContext();
    const r = await client.call.GET('/api/qa/otp/last', {
      params: { query: { phone } },
      headers: { ...customer.auth, traceparent: traceparent(caller) },
    });
    expect(r.status).toBe(200);
    const trace = await spansOf(caller.traceId, (t) => t.some((s) => s.kind === SERVER));
    expect(
      attribute(
        trace.find((s) => s.kind === SERVER)!,
        'url.query',
      ),
    ).toBe('phone=_');
    // A token pasted into a path, as a careless client does.
    const pasted = callerContext();
    await client.invalid('GET', `/api/orders/${customer.access}`, { headers: { ...customer.auth, traceparent: traceparent(pasted) } });
    await spansOf(pasted.traceId, (t) => t.some((s) => s.kind === SERVER));
    const everything = JSON.stringify(spans);
    for (const secret of [phone, encodeURIComponent(phone), phone.slice(1), r.body.code, customer.access, customer.refresh]) {
      expect(everything.includes(secret), `a span holds ${secret.slice(0, 12)}...`).toBe(false);
    }
  });
});
