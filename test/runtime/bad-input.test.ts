// Bad input gets a clear 4xx, never a 500: every operation of the TEST contract, signed in as the
// principal it asks for, is sent junk in each of its path parameters, query parameters and body
// fields in turn (wrong types, out-of-range numbers, huge and odd strings, malformed JSON). Every
// answer must be one the contract declares for the operation (the contract client checks status
// and body) and none may be a 500. Generated from the spec, so a new operation is covered the day
// it is added. Then the same junk, one field at a time, in a checkout and in picker commands on a
// real session, where it gets past the validator to the handlers' own rules.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { createInvalidOrder, createOrder, deliveryBody, line, makeProduct, makeSlot } from '../orders/fixtures.js';
import { signInCustomer, signInPicker } from '../support/accounts.js';
import { command, createConfirmedOrder, stockedProducts } from '../support/orders.js';
import { createPicker, startPicking } from '../support/picking.js';
import { startTestService, type TestService } from '../support/service.js';
import { headersFor, operations, plausible, resolve, urlOf, type Operation, type Schema } from '../support/spec-operations.js';
import { attempt } from '../support/sweeps.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

/** Junk for any one field: each of these is wrong somewhere, and none may break the server. */
const JUNK_VALUES: unknown[] = [
  null,
  true,
  -1,
  0,
  1.5,
  1e308,
  Number.MAX_SAFE_INTEGER * 1000,
  '',
  ' ',
  'x',
  '-1',
  '1e309',
  'NaN',
  '99999999999999999999999999',
  '0.0000000000000000001',
  '\u0000',
  "'; DROP TABLE orders; --",
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🛒',
  'x'.repeat(20_000),
  // Dates that parse as text but not as days, or lie at the ends of the calendar.
  '2024-02-30',
  '0001-01-01',
  '9999-12-31',
  '9999-12-31T23:59:59Z',
  '2026-13-01T25:61:00+03:00',
  '١٢٣',
  ' 5 ',
  '0x10',
  [],
  [1, 2, 3],
  {},
  { nested: { deeper: [{}] } },
];

/** Junk for a path or query parameter (text in a URL). */
const JUNK_TEXT = [
  'x',
  '-1',
  '0',
  '1.5',
  '1e309',
  '2024-02-30',
  '0000-01-01',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '99999999999999999999999999',
  'null',
  ' ',
  '%00',
  '\u0000',
  "'",
  '🛒',
  'a'.repeat(3000),
  randomUUID().toUpperCase(),
];

/** Broken percent-escapes, sent as they are in a path parameter (the URL cannot be decoded). */
const RAW_PATH_JUNK = ['%ZZ', '%E0%A4%A', '%'];

/** Raw bodies that are not what any operation wants. */
const JUNK_BODIES = ['', 'null', '[]', '"text"', '123', '{}', '{"a":', '{"a":1}}', '\u0000', '['.repeat(5000) + ']'.repeat(5000)];

/** Each property of the body (top level and one level down) with each junk value in turn. */
function junkBodies(schema: Schema): string[] {
  const base = plausible(schema);
  const out = [...JUNK_BODIES];
  if (base === null || typeof base !== 'object' || Array.isArray(base)) return out;
  const props = Object.keys(resolve(schema).properties ?? {});
  for (const name of props) {
    for (const junk of JUNK_VALUES) out.push(JSON.stringify({ ...base, [name]: junk }));
    // A list far longer than any screen sends, of plausible elements.
    const property = resolve(resolve(schema).properties[name]);
    if (property.type === 'array' || (Array.isArray(property.type) && property.type.includes('array'))) {
      out.push(JSON.stringify({ ...base, [name]: Array.from({ length: 5000 }, () => plausible(property.items)) }));
    }
    // Required fields missing one at a time.
    if (name in base) {
      const { [name]: _dropped, ...rest } = base as Record<string, unknown>;
      out.push(JSON.stringify(rest));
    }
  }
  out.push(JSON.stringify({ ...base, unexpected_field: 'x' }));
  return out;
}

/** The paths of every leaf (non-container value) of a JSON value. */
function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...path, Array.isArray(value) ? Number(k) : k]));
  }
  return [path];
}

/** A copy of `value` with the leaf at `path` replaced. */
function withLeaf(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) };
  copy[path[0]!] = withLeaf(copy[path[0]!], path.slice(1), replacement);
  return copy;
}

describe('bad input', () => {
  it('answers 422 VALIDATION_ERROR, saying where, to a NUL character (PostgreSQL cannot store it)', async () => {
    const customer = await signInCustomer(svc);
    const profile = await svc.client.invalid('PATCH', '/api/accounts/me/', { headers: customer.auth, body: { first_name: 'An\u0000na' } });
    expect(profile.status).toBe(422);
    expect(profile.body).toMatchObject({ code: 'VALIDATION_ERROR', detail: [{ loc: ['body', 'first_name'], type: 'pattern' }] });
    const search = await svc.client.invalid('GET', '/api/catalog/products/?search=%00milk', {
      headers: { 'x-store-id': DEMO_STORES[0]!.id },
    });
    expect(search.status).toBe(422);
    expect(search.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'search'] })]);
    const login = await svc.client.invalid('POST', '/api/picker/auth/login', { body: { login: '\u0000', password: 'secret-password' } });
    expect(login.status).toBe(422);
  });

  it('answers 422 to a session or item id beyond the 32-bit ids the database holds', async () => {
    const picker = await signInPicker(svc);
    for (const id of ['2147483648', '99999999999999999999999999', '1e309']) {
      const r = await svc.client.invalid('GET', `/api/picker/history/sessions/${id}`, { headers: picker.auth });
      expect(r.status, id).toBe(422);
      expect(r.body.code, id).toBe('VALIDATION_ERROR');
    }
    expect(
      (
        await svc.client.call.GET('/api/picker/history/sessions/{session_id}', {
          params: { path: { session_id: 2147483647 } },
          headers: picker.auth,
        })
      ).status,
    ).toBe(404);
  });

  it('answers 422 to an integer id written other than canonically (one resource, one URL)', async () => {
    const picker = await signInPicker(svc);
    for (const id of ['0x1', '1e0', '+1', '%201', '01', '1%20', '1.0', '0b1']) {
      const r = await svc.client.invalid('GET', `/api/picker/history/sessions/${id}`, { headers: picker.auth });
      expect(r.status, id).toBe(422);
      expect(r.body.detail, id).toEqual([expect.objectContaining({ loc: ['path', 'session_id'] })]);
    }
    expect(
      (
        await svc.client.call.GET('/api/picker/history/sessions/{session_id}', {
          params: { path: { session_id: 1 } },
          headers: picker.auth,
        })
      ).status,
    ).not.toBe(422);
  });

  it('never answers 500, and always as the contract says, to junk in any parameter or body field of any operation', async () => {
    const failures: string[] = [];
    let sent = 0;
    const tried = async (op: Operation, url: string, headers: Record<string, string>, body?: string) => {
      sent++;
      // A new Idempotency-Key each time: a reused one would only meet IDEMPOTENCY_CONFLICT.
      const sentHeaders = {
        ...headers,
        'idempotency-key': randomUUID(),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      };
      await attempt(failures, `${op.operationId} ${op.method} ${url.slice(0, 120)} ${body?.slice(0, 120) ?? ''}`, () =>
        svc.client.invalid(op.method, url, { headers: sentHeaders, body }),
      );
    };
    for (const op of operations) {
      const headers = await headersFor(svc, op);
      const plainBody = op.body ? JSON.stringify(plausible(op.body)) : undefined;
      for (const p of op.params.filter((x) => x.in === 'path' || x.in === 'query')) {
        for (const value of JUNK_TEXT) await tried(op, urlOf(op, { name: p.name, in: p.in, value }), headers, plainBody);
        if (p.in === 'path')
          for (const raw of RAW_PATH_JUNK)
            await tried(op, urlOf(op, { name: p.name, in: p.in, value: '__RAW__' }).replace('__RAW__', raw), headers, plainBody);
      }
      for (const p of op.params.filter(
        (x) => x.in === 'header' && !['idempotency-key', 'x-store-id', 'accept-language'].includes(x.name.toLowerCase()),
      )) {
        for (const value of ['x', '-1', '99999999999999999999', 'a'.repeat(3000)])
          await tried(op, urlOf(op, null), { ...headers, [p.name.toLowerCase()]: value }, plainBody);
      }
      for (const value of ['x', 'not-a-uuid', randomUUID()])
        await tried(op, urlOf(op, null), { ...headers, 'x-store-id': value }, plainBody);
      if (op.body) for (const body of junkBodies(op.body)) await tried(op, urlOf(op, null), headers, body);
    }
    expect(failures, failures.join('\n')).toEqual([]);
    // Every operation was tried, most of them many times.
    expect(operations.length).toBeGreaterThanOrEqual(100);
    expect(sent).toBeGreaterThan(3000);
  }, 600_000);

  it('never answers 500 to junk in one field of a checkout or a picker command that is otherwise right', async () => {
    // Past the request validator: the junk meets the handlers' own rules (stock, zones, slots,
    // the picking state machine, decimals, barcodes) on real rows.
    const failures: string[] = [];
    const customer = await signInCustomer(svc);
    const products = [await makeProduct(svc, { stock: '100000' }), await makeProduct(svc, { unit: 'kg', stock: '100000' })];
    const slot = await makeSlot(svc, { capacity: 100_000 });
    const order = deliveryBody([line(products[0]!, '2'), line(products[1]!, '1.5')], slot);
    expect((await createOrder(svc, customer.auth, order)).status).toBe(201);
    const placed = new Map<number | null, number>();
    for (const path of leafPaths(order)) {
      for (const junk of JUNK_VALUES) {
        const status = await attempt(failures, `createOrder ${path.join('.')}=${JSON.stringify(junk)?.slice(0, 40)}`, () =>
          createInvalidOrder(svc, customer.auth, withLeaf(order, path, junk)),
        );
        placed.set(status, (placed.get(status) ?? 0) + 1);
      }
    }
    // Junk in optional fields (a comment, an entrance) still places orders; in others it is refused.
    expect(placed.get(201)).toBeGreaterThan(10);
    expect(placed.get(422)).toBeGreaterThan(100);

    const [piece] = await stockedProducts(svc, { weight: false, count: 1, skip: 30 });
    const [weighed] = await stockedProducts(svc, { weight: true, count: 1, skip: 5 });
    const confirmed = await createConfirmedOrder(svc, {
      lines: [
        { inventoryId: piece!.inventoryId, quantity: '3' },
        { inventoryId: weighed!.inventoryId, quantity: '1.2' },
      ],
    });
    const picker = await createPicker(svc, [DEMO_STORES[0]!.id]);
    const session = await startPicking(svc, picker, confirmed.orderId);
    const commands = operations.filter(
      (op) => op.path.startsWith('/api/picker/orders/{order_id}/items/{item_id}/') || op.path.endsWith('/additional-items'),
    );
    expect(commands.length).toBeGreaterThanOrEqual(10);
    // Statuses of the picker commands: the junk must meet the handlers, not only the validator.
    const statuses = new Map<number | null, number>();
    for (const op of commands) {
      const base = plausible(op.body!) as Record<string, unknown>;
      if ('barcode' in base) base.barcode = piece!.barcode;
      if ('inventory_id' in base) base.inventory_id = weighed!.inventoryId;
      for (const item of session.items) {
        const url = op.path.replace('{order_id}', confirmed.orderId).replace('{item_id}', String(item.item_id));
        for (const path of leafPaths(base)) {
          for (const junk of JUNK_VALUES) {
            const status = await attempt(
              failures,
              `${op.operationId} item ${item.item_id} ${path.join('.')}=${JSON.stringify(junk)?.slice(0, 40)}`,
              () => svc.client.invalid('POST', url, { headers: command(picker.auth), body: withLeaf(base, path, junk) as object }),
            );
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
          }
        }
      }
    }
    expect(failures, failures.join('\n')).toEqual([]);
    // Some junk is taken as a value (a quantity of 1, a known barcode...) and some meets the state
    // machine's refusals: both kinds of answer must be among them.
    expect(statuses.get(200)).toBeGreaterThan(10);
    expect(statuses.get(409)).toBeGreaterThan(10);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(500);
  }, 600_000);
});
