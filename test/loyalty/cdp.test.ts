// The customer data platform over HTTP, played by msw, through the service: the contract's
// failure behaviour per operation (programs [] vs strict 502, purchases empty, transactions local
// fallback, purchase 404/502), provisioning retries and refusals, card commands that time out
// (accepted, pending, reconciled with the same idempotency key) or fail (502, nothing changed),
// malformed answers, and the accrual pushed with its idempotency key.
import { delay, http, HttpResponse } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runLoyaltyWorkerOnce } from '../../server/jobs/loyalty-worker.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { bearer, completeOrder, createOrder, storeLines } from './helpers.js';
import { passLocalFailOthers } from '../support/msw.js';

const CDP = 'https://cdp.example.test/v1';
let svc: TestService;

beforeAll(async () => {
  // Requests to the service under test (127.0.0.1) pass; anything else unhandled fails the test.
  cdp.listen(passLocalFailOthers);
  svc = await startTestService({
    env: {
      LOYALTY_PROVIDER: 'cdp',
      LOYALTY_CDP_URL: CDP,
      LOYALTY_CDP_TOKEN: 'cdp-token',
      LOYALTY_READ_TIMEOUT_MS: '300',
      LOYALTY_COMMAND_TIMEOUT_MS: '300',
      LOYALTY_PROGRAMS_CACHE_SECONDS: '0',
      LOYALTY_PURCHASES_REFRESH_SECONDS: '0',
      LOYALTY_RETRY_BASE_SECONDS: '0',
      LOYALTY_WORKER_ENABLED: 'false',
    },
  });
});
afterEach(() => cdp.resetHandlers());
/** Replaces the handlers a test added (the healthy defaults stay underneath). */
const answerWith = (...handlers: Parameters<typeof cdp.use>) => {
  cdp.resetHandlers();
  cdp.use(...handlers);
};
afterAll(async () => {
  await svc?.close();
  cdp.close();
});

// ---- a customer as the CDP reports it ---------------------------------------------------------

const PROGRAMS = {
  programs: [
    {
      id: 7,
      name: 'Family club',
      levels: [
        {
          id: 1,
          order: 1,
          name: 'Bronze',
          boundary: '0',
          clients_count: 120,
          range_label: 'from 0 ₽',
          description: '3% back',
          accrual_percent: '3',
        },
        {
          id: 2,
          order: 2,
          name: 'Silver',
          boundary: '10000',
          clients_count: 40,
          range_label: 'from 10 000 ₽',
          description: '5% back',
          accrual_percent: '5',
        },
      ],
    },
  ],
};

function customer(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    program_id: 7,
    program_name: 'Family club',
    main_card_id: `${id}-card-1`,
    accounts: [{ id: `${id}-bonus`, title: 'Bonus points', description: '1 point = 1 rouble', balance: '420.50', is_active: true }],
    cards: [
      {
        id: `${id}-card-1`,
        card_number: '2775000099990001',
        title: 'Virtual card',
        is_virtual: true,
        is_active: true,
        is_blocked: false,
        block_reason: null,
        qrcode: { original: 'https://qr.example/1.png', listing: 'https://qr.example/1-l.png', detail: 'https://qr.example/1-d.png' },
      },
    ],
    current_tier: { id: 1, order: 1, name: 'Bronze', boundary: '0', accrual_percent: '3' },
    next_tier: { id: 2, order: 2, name: 'Silver', boundary: '10000', accrual_percent: '5' },
    total_turnover: '2500.00',
    last_purchase_points: '12',
    ...overrides,
  };
}

interface Seen {
  method: string;
  path: string;
  auth: string | null;
  key: string | null;
  body: unknown;
}
let seen: Seen[] = [];
afterEach(() => {
  seen = [];
});

/** Records what the service sent, then answers. */
function on(
  method: 'get' | 'post',
  path: string,
  answer: (req: { body: any; params: Record<string, string> }) => Response | Promise<Response>,
) {
  return http[method](`${CDP}${path}`, async ({ request, params }) => {
    const body = method === 'post' ? await request.json().catch(() => null) : null;
    seen.push({
      method,
      path: new URL(request.url).pathname.replace('/v1', ''),
      auth: request.headers.get('authorization'),
      key: request.headers.get('idempotency-key'),
      body,
    });
    return answer({ body, params: params as Record<string, string> });
  });
}

const json = (body: unknown, status = 200) => HttpResponse.json(body as object, { status });

// What a healthy CDP answers when a test does not say otherwise: the worker pushes the accruals
// of orders completed in earlier tests and re-reads customers after them.
const cdp = setupServer(
  http.post(`${CDP}/customers/:id/accruals`, ({ params }) => json({ operation_id: `op-${String(params.id)}-default` })),
  http.get(`${CDP}/customers/:id`, ({ params }) => json(customer(String(params.id)))),
  http.get(`${CDP}/customers/:id/operations`, () => json({ items: [], count: 0 })),
  http.get(`${CDP}/programs`, () => json(PROGRAMS)),
);
const slow = async () => {
  await delay(1500);
  return json({});
};

/** A signed-in customer whose wallet the CDP provisioned as `cdpId`. */
async function linkedCustomer(cdpId: string) {
  const c = await signInCustomer(svc);
  cdp.use(
    on('post', '/customers/provision', () => json(customer(cdpId))),
    on('get', '/programs', () => json(PROGRAMS)),
  );
  await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
  await runLoyaltyWorkerOnce(svc.deps);
  const w = await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) });
  expect(w.body.status).toBe('ready');
  answerWith();
  seen = [];
  return { ...c, wallet: w.body };
}

// ---- provisioning -----------------------------------------------------------------------------

describe('provisioning over HTTP', () => {
  it("provisions with the caller's phone, a bearer token and an idempotency key, and draws the tiers from the programs", async () => {
    const c = await signInCustomer(svc);
    cdp.use(
      on('post', '/customers/provision', () => json(customer('CDP-1'))),
      on('get', '/programs', () => json(PROGRAMS)),
    );
    const created = await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    await runLoyaltyWorkerOnce(svc.deps);
    const provision = seen.find((s) => s.path === '/customers/provision')!;
    expect(provision).toMatchObject({ auth: 'Bearer cdp-token', key: `provision:${created.body.wallet.id}`, body: { phone: c.phone } });
    const w = (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    expect(w).toMatchObject({ status: 'ready', is_linked: true, balance: '420.50', main_card_id: 'CDP-1-card-1' });
    expect(w.loyalty_status).toMatchObject({
      tiers_source: 'cdp',
      tiers_complete: true,
      current_tier: 'Bronze',
      next_tier: 'Silver',
      progress: 0.25,
      amount_to_next: '7500.00',
    });
  });

  it("rebuilds the tier scale from the customer's own status when the programs cannot be loaded (cdp_fallback)", async () => {
    const c = await signInCustomer(svc);
    cdp.use(
      on('post', '/customers/provision', () => json(customer('CDP-2'))),
      on('get', '/programs', () => new HttpResponse('down', { status: 503 })),
    );
    await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    await runLoyaltyWorkerOnce(svc.deps);
    const w = (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    expect(w.loyalty_status).toMatchObject({
      tiers_source: 'cdp_fallback',
      tiers_complete: false,
      current_tier: 'Bronze',
      next_tier: 'Silver',
    });
    expect(w.loyalty_status.tiers).toEqual([
      { id: 1, order: 1, label: 'Bronze', is_active: true, boundary: '0.00', range_label: '', description: '' },
      { id: 2, order: 2, label: 'Silver', is_active: false, boundary: '10000.00', range_label: '', description: '' },
    ]);
  });

  it('turns `error` at once when the CDP refuses the customer; POST create/ tries again', async () => {
    const c = await signInCustomer(svc);
    cdp.use(on('post', '/customers/provision', () => json({ code: 'customer_rejected', detail: 'invalid phone' }, 422)));
    await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    await runLoyaltyWorkerOnce(svc.deps);
    expect(seen.filter((s) => s.path === '/customers/provision')).toHaveLength(1);
    const w = (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c, 'en') })).body;
    expect(w).toMatchObject({
      status: 'error',
      is_linked: false,
      poll_after_seconds: null,
      last_error: { code: 'PROVIDER_REJECTED', attempts: 1 },
    });
    expect(w.last_error.message).toContain('could not register');

    answerWith(
      on('post', '/customers/provision', () => json(customer('CDP-3'))),
      on('get', '/programs', () => json(PROGRAMS)),
    );
    const again = await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    expect(again.body).toMatchObject({ outcome: 'accepted', wallet: { status: 'pending', last_error: null } });
    await runLoyaltyWorkerOnce(svc.deps);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body.status).toBe('ready');
  });

  it('retries an unavailable CDP 5 times with backoff, then turns `error` (PROVIDER_UNAVAILABLE)', async () => {
    const c = await signInCustomer(svc);
    cdp.use(on('post', '/customers/provision', () => new HttpResponse('busy', { status: 503 })));
    await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    // One attempt: still pending, the poll hint grows.
    await runLoyaltyWorkerOnce(svc.deps, 1);
    const pending = (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    expect(pending).toMatchObject({ status: 'pending', poll_after_seconds: 4 });
    await runLoyaltyWorkerOnce(svc.deps);
    const provisions = seen.filter((s) => s.path === '/customers/provision');
    expect(provisions).toHaveLength(5);
    expect(new Set(provisions.map((p) => p.key)).size).toBe(1);
    const w = (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    expect(w).toMatchObject({ status: 'error', last_error: { code: 'PROVIDER_UNAVAILABLE', attempts: 5 } });
  });

  it('treats a malformed answer like an unavailable CDP (retried, then `error`)', async () => {
    const c = await signInCustomer(svc);
    cdp.use(on('post', '/customers/provision', () => json({ id: 'CDP-X', accounts: 'none' })));
    await svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
    await runLoyaltyWorkerOnce(svc.deps);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toMatchObject({
      status: 'error',
      is_linked: false,
      last_error: { code: 'PROVIDER_UNAVAILABLE' },
    });
  });
});

// ---- programs ---------------------------------------------------------------------------------

describe('listLoyaltyPrograms and listLoyaltyProgramsStrict', () => {
  it("list the CDP's programs with their levels", async () => {
    const c = await signInCustomer(svc);
    cdp.use(on('get', '/programs', () => json(PROGRAMS)));
    for (const path of ['/api/loaylty/programs/', '/api/loaylty/programs/strict/'] as const) {
      const r = await svc.client.api.GET(path, { headers: bearer(c) });
      expect(r.response.status).toBe(200);
      expect(r.data).toEqual([
        {
          id: 7,
          name: 'Family club',
          levels: [
            { id: 1, order: 1, name: 'Bronze', boundary: '0.00', clients_count: 120, range_label: 'from 0 ₽', description: '3% back' },
            {
              id: 2,
              order: 2,
              name: 'Silver',
              boundary: '10000.00',
              clients_count: 40,
              range_label: 'from 10 000 ₽',
              description: '5% back',
            },
          ],
        },
      ]);
    }
  });

  const failures = {
    'a 500': () => new HttpResponse('boom', { status: 500 }),
    'a timeout': slow,
    'a malformed body': () => json({ programs: [{ id: 'seven', name: 7 }] }),
    'a body that is not JSON': () => new HttpResponse('<html>', { status: 200, headers: { 'content-type': 'text/html' } }),
    'a network error': () => HttpResponse.error(),
  };
  for (const [name, answer] of Object.entries(failures)) {
    it(`answer [] (lenient) and 502 LOYALTY_PROVIDER_UNAVAILABLE (strict) on ${name}`, async () => {
      const c = await signInCustomer(svc);
      cdp.use(on('get', '/programs', answer));
      const lenient = await svc.client.call.GET('/api/loaylty/programs/', { headers: bearer(c) });
      expect([lenient.status, lenient.body]).toEqual([200, []]);
      const strict = await svc.client.call.GET('/api/loaylty/programs/strict/', { headers: bearer(c) });
      expect([strict.status, strict.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    });
  }

  it('answer 401 without a token', async () => {
    expect((await svc.client.invalid('GET', '/api/loaylty/programs/')).status).toBe(401);
    expect((await svc.client.invalid('GET', '/api/loaylty/programs/strict/')).status).toBe(401);
  });
});

// ---- purchases and transactions ---------------------------------------------------------------

describe('purchases over HTTP', () => {
  const RECEIPT = {
    id: 'R-77-0001',
    date: '2025-03-12T18:04:31+03:00',
    shop_name: 'Lenina 12',
    total: '1834.60',
    bonus_accrual: '91',
    items_count: 2,
  };

  it("merges the CDP's in-store purchases with completed online orders", async () => {
    const c = await linkedCustomer('CDP-P1');
    const line = (await storeLines(svc, 'piece', 1))[0]!;
    const order = await createOrder(svc, {
      customerId: c.customerId,
      lines: [{ line, quantity: '2' }],
      finalTotal: null,
      status: 'picking',
    });
    await completeOrder(svc, order.id, order.totalPrice);
    cdp.use(on('get', '/customers/CDP-P1/purchases', () => json({ items: [RECEIPT] })));
    const r = (await svc.client.call.GET('/api/loaylty/wallet/purchases/', { headers: bearer(c) })).body;
    expect(r.count).toBe(2);
    expect(r.items.map((p: { id: string; source: string }) => [p.id, p.source])).toEqual([
      [order.id, 'online'],
      ['R-77-0001', 'offline'],
    ]);
    expect(r.items[1]).toMatchObject({ total: '1834.60', bonus_accrual: '91.00', date: '2025-03-12T15:04:31.000Z' });
  });

  it('answers an empty page when the CDP is unreachable during a needed refresh', async () => {
    const c = await linkedCustomer('CDP-P2');
    const line = (await storeLines(svc, 'piece', 1))[0]!;
    const order = await createOrder(svc, {
      customerId: c.customerId,
      lines: [{ line, quantity: '1' }],
      finalTotal: null,
      status: 'picking',
    });
    await completeOrder(svc, order.id, order.totalPrice);
    for (const answer of [() => new HttpResponse(null, { status: 502 }), slow, () => json({ items: [{ id: 1 }] })]) {
      answerWith(on('get', '/customers/CDP-P2/purchases', answer));
      const r = await svc.client.call.GET('/api/loaylty/wallet/purchases/', { headers: bearer(c) });
      expect([r.status, r.body]).toEqual([200, { items: [], count: 0, has_next: false }]);
    }
  });

  it('reads a purchase detail from the CDP once, then from the mirror even when the CDP is down', async () => {
    const c = await linkedCustomer('CDP-P3');
    const detail = {
      ...RECEIPT,
      positions: [{ name: 'Milk', code: '4601234567893', quantity: 2, price: '89.90', amount: '179.80', discount: '0' }],
      discounts: [{ name: 'Silver tier', amount: '0' }],
    };
    cdp.use(
      on('get', '/customers/CDP-P3/purchases/:id', ({ params }) =>
        params.id === RECEIPT.id ? json(detail) : json({ code: 'purchase_not_found' }, 404),
      ),
    );
    const r = await svc.client.call.GET('/api/loaylty/wallet/purchases/{purchase_id}/', {
      params: { path: { purchase_id: RECEIPT.id } },
      headers: bearer(c),
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: RECEIPT.id, source: 'offline', positions: detail.positions, discounts: detail.discounts });
    const missing = await svc.client.call.GET('/api/loaylty/wallet/purchases/{purchase_id}/', {
      params: { path: { purchase_id: 'R-77-9999' } },
      headers: bearer(c),
    });
    expect([missing.status, missing.body.code]).toEqual([404, 'PURCHASE_NOT_FOUND']);

    answerWith(on('get', '/customers/CDP-P3/purchases/:id', () => new HttpResponse(null, { status: 500 })));
    expect(
      (
        await svc.client.call.GET('/api/loaylty/wallet/purchases/{purchase_id}/', {
          params: { path: { purchase_id: RECEIPT.id } },
          headers: bearer(c),
        })
      ).body.positions,
    ).toEqual(detail.positions);
    const notMirrored = await svc.client.call.GET('/api/loaylty/wallet/purchases/{purchase_id}/', {
      params: { path: { purchase_id: 'R-77-0002' } },
      headers: bearer(c),
    });
    expect([notMirrored.status, notMirrored.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
  });
});

describe('transactions over HTTP', () => {
  const OP = {
    id: 'op-1',
    type: 'accrual',
    status: 'posted',
    amount: '91',
    balance_after: '420.50',
    account_id: 'CDP-T1-bonus',
    created_at: '2025-03-12T18:10:00+03:00',
    available_at: null,
    expires_at: '2026-03-12T00:00:00+03:00',
    order_id: null,
    purchase_id: 'R-77-0001',
    shop_name: 'Lenina 12',
    comment: null,
  };

  it("serves the CDP's transactions, and the local records when the CDP is unreachable", async () => {
    const c = await linkedCustomer('CDP-T1');
    cdp.use(on('get', '/customers/CDP-T1/operations', () => json({ items: [OP], count: 1 })));
    const live = await svc.client.call.GET('/api/loaylty/wallet/transactions/', { headers: bearer(c) });
    expect(live.body).toEqual({
      items: [
        {
          id: 'op-1',
          type: 'accrual',
          status: 'posted',
          amount: '91.00',
          balance_after: '420.50',
          account_id: 'CDP-T1-bonus',
          created_at: '2025-03-12T15:10:00.000Z',
          available_at: null,
          expires_at: '2026-03-11T21:00:00.000Z',
          description: 'Points for a purchase in store Lenina 12',
          purchase_id: 'R-77-0001',
          order_id: null,
          source: 'provider',
        },
      ],
      count: 1,
      has_next: false,
    });
    expect(seen.find((s) => s.path === '/customers/CDP-T1/operations')).toBeDefined();

    // A completed online order whose accrual could not reach the CDP yet.
    const line = (await storeLines(svc, 'piece', 1))[0]!;
    const order = await createOrder(svc, {
      customerId: c.customerId,
      lines: [{ line, quantity: '10' }],
      finalTotal: null,
      status: 'picking',
    });
    await completeOrder(svc, order.id, order.totalPrice);
    answerWith(
      on('post', '/customers/CDP-T1/accruals', () => new HttpResponse(null, { status: 503 })),
      on('get', '/customers/CDP-T1/operations', () => HttpResponse.error()),
    );
    await runLoyaltyWorkerOnce(svc.deps, 1);
    const local = await svc.client.call.GET('/api/loaylty/wallet/transactions/', { headers: bearer(c, 'ru') });
    expect(local.status).toBe(200);
    expect(local.body.count).toBe(2);
    expect(local.body.items.every((t: { source: string }) => t.source === 'local')).toBe(true);
    const accrual = local.body.items.find((t: { order_id: string | null }) => t.order_id === order.id);
    expect(accrual).toMatchObject({
      type: 'accrual',
      status: 'pending',
      description: `Баллы за заказ № ${order.no}`,
      purchase_id: order.id,
    });
    expect(local.body.items.find((t: { id: string }) => t.id === 'op-1')).toMatchObject({
      amount: '91.00',
      description: 'Баллы за покупку в магазине Lenina 12',
    });
  });
});

// ---- card commands ----------------------------------------------------------------------------

describe('card commands over HTTP', () => {
  it('answers `accepted` with the wallet pending when the CDP does not answer in time, and reconciles with the same key', async () => {
    const c = await linkedCustomer('CDP-C1');
    const card = c.wallet.main_card_id;
    cdp.use(on('post', '/customers/CDP-C1/cards/:card/block', slow));
    const r = await svc.client.call.POST('/api/loaylty/wallet/block/', { headers: bearer(c), body: { reason: 'stolen' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ outcome: 'accepted', wallet: { status: 'pending', poll_after_seconds: 2, is_blocked: false } });

    const blockedCard = { ...customer('CDP-C1').cards[0], is_blocked: true, block_reason: 'stolen', qrcode: null };
    answerWith(
      on('post', '/customers/CDP-C1/cards/:card/block', ({ body }) =>
        body?.reason === 'stolen' ? json(customer('CDP-C1', { cards: [blockedCard] })) : json({}, 400),
      ),
      on('get', '/programs', () => json(PROGRAMS)),
      on('get', '/customers/CDP-C1/operations', () => json({ items: [], count: 0 })),
    );
    await runLoyaltyWorkerOnce(svc.deps);
    const w = (await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body;
    expect(w).toMatchObject({ status: 'ready', is_blocked: true, block_reason: { key: 'stolen' }, can_unblock: true });
    const sends = seen.filter((s) => s.path === `/customers/CDP-C1/cards/${card}/block`);
    // The first (timed-out) call and the reconciliation, with the same key.
    expect(sends).toHaveLength(2);
    expect(new Set(sends.map((s) => s.key)).size).toBe(1);
  });

  it('answers 502 and changes nothing when the CDP fails a command', async () => {
    const c = await linkedCustomer('CDP-C2');
    for (const answer of [
      () => new HttpResponse(null, { status: 500 }),
      () => HttpResponse.error(),
      () => json({ detail: 'forbidden' }, 403),
    ]) {
      answerWith(on('post', '/customers/CDP-C2/cards/:card/block', answer));
      const r = await svc.client.call.POST('/api/loaylty/wallet/block/', { headers: bearer(c), body: { reason: 'lost' } });
      expect([r.status, r.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    }
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toEqual(c.wallet);
    answerWith(on('post', '/customers/CDP-C2/cards/:card/replace', () => new HttpResponse(null, { status: 503 })));
    const replace = await svc.client.call.POST('/api/loaylty/wallet/replace/', { headers: bearer(c) });
    expect([replace.status, replace.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toEqual(c.wallet);
  });

  it('answers 502 for unblock, link and link-physical when the CDP fails, changing nothing', async () => {
    const c = await linkedCustomer('CDP-C5');
    const blockedCard = { ...customer('CDP-C5').cards[0], is_blocked: true, block_reason: 'lost', qrcode: null };
    answerWith(on('post', '/customers/CDP-C5/cards/:card/block', () => json(customer('CDP-C5', { cards: [blockedCard] }))));
    const blocked = (await svc.client.call.POST('/api/loaylty/wallet/block/', { headers: bearer(c), body: { reason: 'lost' } })).body
      .wallet;
    const free = {
      id: 'card-f',
      card_number: '7000000000005',
      is_virtual: false,
      issued: false,
      holder_id: null,
      is_blocked: false,
      balance: '0',
    };
    answerWith(
      on('post', '/customers/CDP-C5/cards/:card/unblock', () => new HttpResponse(null, { status: 502 })),
      on('get', '/cards/:number', () => json(free)),
      on('post', '/cards/:number/link', () => new HttpResponse(null, { status: 500 })),
      on('post', '/cards/:number/issue', () => HttpResponse.error()),
    );
    const unblock = await svc.client.call.POST('/api/loaylty/wallet/unblock/', { headers: bearer(c), body: {} });
    expect([unblock.status, unblock.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    const physical = await svc.client.call.POST('/api/loaylty/wallet/link-physical/', {
      headers: bearer(c),
      body: { card_number: free.card_number },
    });
    expect([physical.status, physical.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    answerWith(
      on('get', '/cards/:number', () => json({ ...free, issued: true })),
      on('post', '/cards/:number/link', () => new HttpResponse(null, { status: 500 })),
    );
    const link = await svc.client.call.POST('/api/loaylty/wallet/link/', { headers: bearer(c), body: { card_number: free.card_number } });
    expect([link.status, link.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toEqual(blocked);
    answerWith(on('get', '/cards/:number', () => new HttpResponse(null, { status: 503 })));
    const preview = await svc.client.call.POST('/api/loaylty/wallet/link-physical/preview/', {
      headers: bearer(c),
      body: { card_number: free.card_number },
    });
    expect([preview.status, preview.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
  });

  it('answers 409 CARD_OWNED_BY_ANOTHER_CUSTOMER when the CDP refuses a link that looked free, changing nothing', async () => {
    const c = await linkedCustomer('CDP-C3');
    cdp.use(
      on('get', '/cards/:number', () =>
        json({
          id: 'card-x',
          card_number: '7000000000001',
          is_virtual: false,
          issued: true,
          holder_id: null,
          is_blocked: false,
          balance: '0',
        }),
      ),
      on('post', '/cards/:number/link', () => json({ code: 'card_owned_by_another_customer' }, 409)),
    );
    const r = await svc.client.call.POST('/api/loaylty/wallet/link/', { headers: bearer(c), body: { card_number: '7000000000001' } });
    expect([r.status, r.body.code]).toEqual([409, 'CARD_OWNED_BY_ANOTHER_CUSTOMER']);
    expect(seen.find((s) => s.path.endsWith('/link'))).toMatchObject({
      key: `link:${c.customerId}:7000000000001`,
      body: { customer_id: 'CDP-C3', phone: c.phone },
    });
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toEqual(c.wallet);
  });

  it('answers 502 on a card look-up failure, and treats an unreadable command answer as `accepted`', async () => {
    const c = await linkedCustomer('CDP-C4');
    cdp.use(on('get', '/cards/:number', slow));
    const lookup = await svc.client.call.POST('/api/loaylty/wallet/link/preview/', {
      headers: bearer(c),
      body: { card_number: '7000000000002' },
    });
    expect([lookup.status, lookup.body.code]).toEqual([502, 'LOYALTY_PROVIDER_UNAVAILABLE']);
    answerWith(
      on('post', '/customers/CDP-C4/cards/:card/unblock', () => json({ ok: true })),
      on('post', '/customers/CDP-C4/cards/:card/block', () => json({ not: 'a customer' })),
    );
    const r = await svc.client.call.POST('/api/loaylty/wallet/block/', { headers: bearer(c), body: {} });
    expect(r.body).toMatchObject({ outcome: 'accepted', wallet: { status: 'pending' } });
    // Reconciliation re-sends the block; this time the answer is readable.
    const blockedCard = { ...customer('CDP-C4').cards[0], is_blocked: true, qrcode: null };
    answerWith(on('post', '/customers/CDP-C4/cards/:card/block', () => json(customer('CDP-C4', { cards: [blockedCard] }))));
    await runLoyaltyWorkerOnce(svc.deps);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toMatchObject({
      status: 'ready',
      is_blocked: true,
      block_reason: null,
    });
  });
});

describe('accrual pushed to the CDP', () => {
  it('is sent with the order as idempotency key, retried until the CDP takes it, and posted once', async () => {
    const c = await linkedCustomer('CDP-A1');
    const line = (await storeLines(svc, 'piece', 1))[0]!;
    const order = await createOrder(svc, {
      customerId: c.customerId,
      lines: [{ line, quantity: '10' }],
      deliveryCost: '99.00',
      finalTotal: null,
      status: 'picking',
    });
    const finalTotal = (Number(order.totalPrice) - Number(line.unit_price)).toFixed(2); // one piece was missing
    await completeOrder(svc, order.id, finalTotal);
    let calls = 0;
    cdp.use(
      on('post', '/customers/CDP-A1/accruals', () =>
        ++calls === 1 ? new HttpResponse(null, { status: 503 }) : json({ operation_id: 'op-777' }),
      ),
      on('get', '/customers/CDP-A1', () => json(customer('CDP-A1', { last_purchase_points: '99' }))),
      on('get', '/programs', () => json(PROGRAMS)),
      on('get', '/customers/CDP-A1/operations', () => json({ items: [], count: 0 })),
    );
    await runLoyaltyWorkerOnce(svc.deps);
    const sent = seen.filter((s) => s.path === '/customers/CDP-A1/accruals');
    expect(sent).toHaveLength(2);
    const base = (Number(finalTotal) - 99).toFixed(2);
    const points = Math.floor((Math.round(Number(base) * 100) * 300) / 1_000_000);
    for (const s of sent)
      expect(s).toMatchObject({ key: `accrual:${order.id}`, body: { order_id: order.id, purchase_amount: base, points: `${points}.00` } });
    const [accrual] = await svc.deps.db.selectFrom('loyalty_accruals').selectAll().where('order_id', '=', order.id).execute();
    expect(accrual).toMatchObject({ provider_operation_id: 'op-777', outcome: 'accrued' });
    expect(accrual!.posted_at).not.toBeNull();
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body.loyalty_status.last_purchase_points).toBe('99');
  });
});

describe('account deletion at the CDP', () => {
  it('asks the CDP to erase the customer, with the wallet as idempotency key, until it answers', async () => {
    const c = await linkedCustomer('CDP-E1');
    expect((await svc.client.call.DELETE('/api/accounts/me/', { headers: bearer(c) })).status).toBe(204);
    let calls = 0;
    cdp.use(on('post', '/customers/CDP-E1/erase', () => (++calls === 1 ? new HttpResponse(null, { status: 503 }) : json({}))));
    await runLoyaltyWorkerOnce(svc.deps);
    const sent = seen.filter((s) => s.path === '/customers/CDP-E1/erase');
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ auth: 'Bearer cdp-token', key: `erase:${c.wallet.id}` });
    const job = await svc.deps.db
      .selectFrom('loyalty_jobs')
      .select('state')
      .where('wallet_id', '=', c.wallet.id)
      .where('kind', '=', 'erase')
      .executeTakeFirstOrThrow();
    expect(job.state).toBe('done');
  });
});
