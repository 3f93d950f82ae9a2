// The wallet on the local ledger: provisioning (pending -> ready), the wallet view, account
// switch, block reasons, block/unblock and replace. Every response is checked against the spec
// by the contract client.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_LOYALTY_CARDS, DEMO_LOYALTY_CUSTOMERS, DEMO_LOYALTY_PROGRAM } from '../../db/seed/loyalty.js';
import { runLoyaltyWorkerOnce } from '../../server/jobs/loyalty-worker.js';
import { signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { tokensFor } from '../support/tokens.js';
import { bearer, readyWallet, signInDemoCustomer } from './helpers.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  // The worker is driven by the tests (runLoyaltyWorkerOnce) so that `pending` can be observed;
  // programs are read fresh each time (the cache has its own test).
  svc = await startTestService({ env: { LOYALTY_WORKER_ENABLED: 'false', LOYALTY_PROGRAMS_CACHE_SECONDS: '0' } });
});
afterAll(() => svc?.close());

const get = (c: { access: string }, lang?: 'ru' | 'en') => svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c, lang) });
type Who = { access: string };
type BodyOf<Op extends keyof operations> = NonNullable<operations[Op]['requestBody']>['content']['application/json'];
const create = (c: Who) => svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
const switchAccount = (c: Who, body: BodyOf<'switchLoyaltyAccount'>) =>
  svc.client.call.POST('/api/loaylty/wallet/accounts/switch/', { headers: bearer(c), body });
const block = (c: Who, body: BodyOf<'blockLoyaltyCard'>) =>
  svc.client.call.POST('/api/loaylty/wallet/block/', { headers: bearer(c), body });
const unblockCard = (c: Who, body: BodyOf<'unblockLoyaltyCard'>) =>
  svc.client.call.POST('/api/loaylty/wallet/unblock/', { headers: bearer(c), body });
const replace = (c: Who, headers: Record<string, string> = {}) =>
  svc.client.call.POST('/api/loaylty/wallet/replace/', { headers: { ...bearer(c), ...headers } });
/** Deliberately invalid: bodies the schema refuses. */
const postInvalid = (path: string, c: Who, body: object) => svc.client.invalid('POST', path, { headers: bearer(c), body });
const ledgerCard = (id: string) =>
  svc.deps.db.selectFrom('loyalty_ledger_cards').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('getLoyaltyWallet', () => {
  it('answers 404 WALLET_NOT_FOUND before the customer has a wallet', async () => {
    const c = await signInCustomer(svc);
    const r = await get(c);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('WALLET_NOT_FOUND');
  });

  it('answers 401 without a customer token, and to a picker token', async () => {
    expect((await svc.client.invalid('GET', '/api/loaylty/wallet/')).status).toBe(401);
    const picker = tokensFor(svc.config).sign('picker_access', '1');
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: { authorization: `Bearer ${picker}` } })).status).toBe(401);
  });
});

describe('createLoyaltyWallet', () => {
  it('creates a pending wallet at once, and the worker makes it ready with a virtual card', async () => {
    const c = await signInCustomer(svc);
    const created = await create(c);
    expect(created.status).toBe(200);
    expect(created.body.outcome).toBe('accepted');
    expect(created.body.wallet).toMatchObject({
      status: 'pending',
      is_linked: false,
      accounts: [],
      cards: [],
      loyalty_status: null,
      poll_after_seconds: 2,
      can_block: false,
      can_replace: false,
      can_link_card: false,
      last_synced_at: null,
      last_error: null,
    });
    expect((await get(c)).body.status).toBe('pending');

    await runLoyaltyWorkerOnce(svc.deps);
    const w = (await get(c, 'en')).body;
    expect(w).toMatchObject({
      status: 'ready',
      is_linked: true,
      is_blocked: false,
      can_block: true,
      can_replace: true,
      can_link_card: true,
      balance: '0.00',
      poll_after_seconds: null,
      last_error: null,
    });
    expect(w.cards).toHaveLength(1);
    expect(w.cards[0]).toMatchObject({ id: w.main_card_id, is_virtual: true, is_active: true, is_blocked: false });
    expect(w.cards[0].card_number).toMatch(/^2775[0-9]{12}$/);
    expect(w.cards[0].qrcode.original).toContain(w.cards[0].card_number);
    expect(w.accounts.map((a: { id: string }) => a.id)).toContain(w.active_account_id);
    // A new customer starts on the lowest tier of the program, the full scale drawn from the provider.
    expect(w.loyalty_status).toMatchObject({
      program_name: DEMO_LOYALTY_PROGRAM.name,
      current_tier: 'Бронза',
      next_tier: 'Серебро',
      tiers_source: 'cdp',
      tiers_complete: true,
      total_turnover: '0.00',
      amount_to_next: '10000.00',
    });
    expect(w.loyalty_status.tiers).toHaveLength(3);
    expect(Date.parse(w.last_synced_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('is safe to repeat: a pending or ready wallet is unchanged', async () => {
    const c = await signInCustomer(svc);
    const first = await create(c);
    const again = await create(c);
    expect(again.body.outcome).toBe('unchanged');
    expect(again.body.wallet.id).toBe(first.body.wallet.id);
    await runLoyaltyWorkerOnce(svc.deps);
    const ready = await create(c);
    expect(ready.body).toMatchObject({ outcome: 'unchanged', wallet: { status: 'ready' } });
  });

  it('creates one wallet and one provisioning job for concurrent calls', async () => {
    const c = await signInCustomer(svc);
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(c)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body.wallet.id)).size).toBe(1);
    expect(answers.filter((a) => a.body.outcome === 'accepted')).toHaveLength(1);
    const jobs = await svc.deps.db.selectFrom('loyalty_jobs').select('id').where('wallet_id', '=', answers[0]!.body.wallet.id).execute();
    expect(jobs).toHaveLength(1);
  });

  it("finds the demo customer's loyalty history by phone: plastic card kept, a virtual card issued, middle tier", async () => {
    const demo = await signInDemoCustomer(svc);
    const w = await readyWallet(svc, demo);
    const plastic = w.cards.find((x: { id: string }) => x.id === DEMO_LOYALTY_CARDS.demoPlastic.id);
    expect(plastic).toMatchObject({ is_virtual: false, is_active: true, qrcode: null });
    expect(w.cards[0]).toMatchObject({ id: w.main_card_id, is_virtual: true });
    expect(Number(w.balance)).toBeGreaterThan(0);
    expect(w.loyalty_status).toMatchObject({ current_tier: 'Серебро', next_tier: 'Золото', tiers_source: 'cdp' });
    expect(w.loyalty_status.tiers.map((t: { is_active: boolean }) => t.is_active)).toEqual([false, true, false]);
    const ledger = await svc.deps.db
      .selectFrom('loyalty_ledger_accounts')
      .select('balance')
      .where('id', '=', 'bonus-000001')
      .executeTakeFirstOrThrow();
    expect(w.balance).toBe(ledger.balance);
    expect(w.accounts[0].id).toBe('bonus-000001');
  });

  it('answers 401 without a token', async () => {
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/create/')).status).toBe(401);
  });
});

describe('switchLoyaltyAccount', () => {
  it('switches to another active account, and answers unchanged for the active one', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    const other = w.accounts.find((a: { id: string }) => a.id !== w.active_account_id);
    const r = await switchAccount(c, { account_id: other.id });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ outcome: 'applied', wallet: { active_account_id: other.id, balance: other.balance } });
    expect((await switchAccount(c, { account_id: other.id })).body.outcome).toBe('unchanged');
  });

  it('answers 409 ACCOUNT_INACTIVE for a frozen account and changes nothing', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    const promo = w.accounts.find((a: { id: string }) => a.id.startsWith('promo-'));
    await svc.deps.db.updateTable('loyalty_ledger_accounts').set({ is_active: false }).where('id', '=', promo.id).execute();
    // The wallet learns it at the next synchronization.
    await svc.deps.db
      .updateTable('loyalty_wallets')
      .set({ last_synced_at: new Date(Date.now() - 3600_000) })
      .where('id', '=', w.id)
      .execute();
    await get(c);
    await runLoyaltyWorkerOnce(svc.deps);
    const r = await switchAccount(c, { account_id: promo.id });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('ACCOUNT_INACTIVE');
    expect((await get(c)).body.active_account_id).toBe(w.active_account_id);
  });

  it('answers 422 ACCOUNT_NOT_FOUND, 422 VALIDATION_ERROR, 404 WALLET_NOT_FOUND and 401', async () => {
    const c = await signInCustomer(svc);
    expect((await switchAccount(c, { account_id: 'bonus-1' })).body.code).toBe('WALLET_NOT_FOUND');
    await readyWallet(svc, c);
    const unknown = await switchAccount(c, { account_id: 'bonus-000001' });
    expect([unknown.status, unknown.body.code]).toEqual([422, 'ACCOUNT_NOT_FOUND']);
    const invalid = await postInvalid('/api/loaylty/wallet/accounts/switch/', c, { account: 'x' });
    expect([invalid.status, invalid.body.code]).toEqual([422, 'VALIDATION_ERROR']);
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/accounts/switch/', { body: { account_id: 'x' } })).status).toBe(401);
  });
});

describe('listLoyaltyBlockReasons', () => {
  it('lists the reasons a customer can choose, in the request language, never `provider`', async () => {
    const c = await signInCustomer(svc);
    const en = await svc.client.api.GET('/api/loaylty/wallet/block-reasons/', { headers: bearer(c) });
    expect(en.response.status).toBe(200);
    expect(en.data).toEqual([
      { key: 'lost', label: 'Card lost' },
      { key: 'stolen', label: 'Card stolen' },
      { key: 'damaged', label: 'Card damaged' },
      { key: 'other', label: 'Other reason' },
    ]);
    const ru = await svc.client.call.GET('/api/loaylty/wallet/block-reasons/', { headers: bearer(c, 'ru') });
    expect(ru.body[0]).toEqual({ key: 'lost', label: 'Карта потеряна' });
    expect(ru.headers.get('vary')).toContain('Accept-Language');
  });

  it('answers 401 without a token', async () => {
    expect((await svc.client.invalid('GET', '/api/loaylty/wallet/block-reasons/')).status).toBe(401);
  });
});

describe('blockLoyaltyCard and unblockLoyaltyCard', () => {
  it('blocks the main card at the provider with a reason, read from the control fields, then unblocks it', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    const blocked = await block(c, { reason: 'lost' });
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({
      outcome: 'applied',
      message: 'Card blocked',
      wallet: { is_blocked: true, block_reason: { key: 'lost', label: 'Card lost' }, can_block: false, can_unblock: true, status: 'ready' },
    });
    expect(blocked.body.wallet.cards[0]).toMatchObject({ id: w.main_card_id, is_blocked: true, qrcode: null });
    expect(await ledgerCard(w.main_card_id)).toMatchObject({ is_blocked: true, block_reason: 'lost' });

    expect((await block(c, { reason: 'stolen' })).body.outcome).toBe('unchanged');

    const unblocked = await unblockCard(c, {});
    expect(unblocked.body).toMatchObject({
      outcome: 'applied',
      wallet: { is_blocked: false, block_reason: null, can_block: true, can_unblock: false },
    });
    expect(unblocked.body.wallet.cards[0].qrcode).not.toBeNull();
    expect(await ledgerCard(w.main_card_id)).toMatchObject({ is_blocked: false, block_reason: null });
    expect((await unblockCard(c, { card_id: w.main_card_id })).body.outcome).toBe('unchanged');
  });

  it('blocks without a reason when none is given', async () => {
    const c = await signInCustomer(svc);
    await readyWallet(svc, c);
    const r = await block(c, { reason: null, card_id: null });
    expect(r.body.wallet).toMatchObject({ is_blocked: true, block_reason: null, can_unblock: true });
  });

  it('answers 409 UNBLOCK_NOT_ALLOWED for a block made by the provider, and keeps the card blocked', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    await svc.deps.db
      .updateTable('loyalty_ledger_cards')
      .set({ is_blocked: true, block_reason: 'provider' })
      .where('id', '=', w.main_card_id)
      .execute();
    await create(c); // unchanged; then a re-sync picks the block up
    await svc.deps.db
      .updateTable('loyalty_wallets')
      .set({ last_synced_at: new Date(0) })
      .where('id', '=', w.id)
      .execute();
    await get(c);
    await runLoyaltyWorkerOnce(svc.deps);
    const synced = (await get(c)).body;
    expect(synced).toMatchObject({
      is_blocked: true,
      block_reason: { key: 'provider', label: 'Blocked by the loyalty program' },
      can_unblock: false,
    });
    const r = await unblockCard(c, {});
    expect([r.status, r.body.code]).toEqual([409, 'UNBLOCK_NOT_ALLOWED']);
    expect(await ledgerCard(w.main_card_id)).toMatchObject({ is_blocked: true, block_reason: 'provider' });
  });

  it('answers 422 CARD_NOT_FOUND and BLOCK_REASON_INVALID, changing nothing', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    const foreign = await block(c, { card_id: DEMO_LOYALTY_CARDS.demoPlastic.id });
    expect([foreign.status, foreign.body.code]).toEqual([422, 'CARD_NOT_FOUND']);
    const reason = await block(c, { reason: 'provider' });
    expect([reason.status, reason.body.code]).toEqual([422, 'BLOCK_REASON_INVALID']);
    const unblock = await unblockCard(c, { card_id: 'card-nope' });
    expect([unblock.status, unblock.body.code]).toEqual([422, 'CARD_NOT_FOUND']);
    expect(await ledgerCard(w.main_card_id)).toMatchObject({ is_blocked: false });
    expect(await ledgerCard(DEMO_LOYALTY_CARDS.demoPlastic.id)).toMatchObject({ is_blocked: false });
  });

  it('answers 404 WALLET_NOT_FOUND, 409 WALLET_NOT_LINKED while provisioning, 422 for unknown fields, 401 without a token', async () => {
    const c = await signInCustomer(svc);
    expect((await block(c, {})).body.code).toBe('WALLET_NOT_FOUND');
    expect((await unblockCard(c, {})).body.code).toBe('WALLET_NOT_FOUND');
    await create(c);
    const pending = await block(c, { reason: 'lost' });
    expect([pending.status, pending.body.code]).toEqual([409, 'WALLET_NOT_LINKED']);
    const unlinked = await unblockCard(c, {});
    expect([unlinked.status, unlinked.body.code]).toEqual([409, 'WALLET_NOT_LINKED']);
    expect((await postInvalid('/api/loaylty/wallet/block/', c, { why: 'lost' })).status).toBe(422);
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/block/', { body: {} })).status).toBe(401);
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/unblock/', { body: {} })).status).toBe(401);
  });
});

describe('replaceLoyaltyCard', () => {
  it('issues a new virtual main card and retires the old one (inactive, blocked, no QR)', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    const r = await replace(c, { 'accept-language': 'ru' });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('applied');
    expect(r.body.message).toBe('Вы получили новую карту');
    const next = r.body.wallet;
    expect(next.main_card_id).not.toBe(w.main_card_id);
    expect(next.cards.map((x: { id: string }) => x.id)).toEqual([next.main_card_id, w.main_card_id]);
    expect(next.cards[1]).toMatchObject({ is_active: false, is_blocked: true, qrcode: null });
    expect(next.cards[0]).toMatchObject({ is_virtual: true, is_active: true, is_blocked: false });
    expect(next).toMatchObject({ is_blocked: false, can_block: true, balance: w.balance });
  });

  it('replays the answer for a repeated Idempotency-Key and issues one card', async () => {
    const c = await signInCustomer(svc);
    await readyWallet(svc, c);
    const key = randomUUID();
    const first = await replace(c, { 'idempotency-key': key });
    const again = await replace(c, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await get(c)).body.cards).toHaveLength(2);
  });

  it('lets one of parallel duplicates act; the others replay or answer 409 IDEMPOTENCY_IN_PROGRESS with Retry-After', async () => {
    const c = await signInCustomer(svc);
    await readyWallet(svc, c);
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 5 }, () => replace(c, { 'idempotency-key': key })));
    for (const a of answers) {
      if (a.status === 409) {
        expect(a.body.code).toBe('IDEMPOTENCY_IN_PROGRESS');
        expect(a.headers.get('retry-after')).toBe('1');
      } else expect(a.status).toBe(200);
    }
    expect((await get(c)).body.cards).toHaveLength(2);
  });

  it('answers 404 WALLET_NOT_FOUND, 409 WALLET_NOT_LINKED while provisioning, 401 without a token', async () => {
    const c = await signInCustomer(svc);
    expect((await replace(c)).body.code).toBe('WALLET_NOT_FOUND');
    await create(c);
    const r = await replace(c);
    expect([r.status, r.body.code]).toEqual([409, 'WALLET_NOT_LINKED']);
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/replace/')).status).toBe(401);
  });
});

describe('listLoyaltyPrograms on the local ledger', () => {
  it('lists the program with its levels and how many customers each level has', async () => {
    const c = await signInCustomer(svc);
    for (const path of ['/api/loaylty/programs/', '/api/loaylty/programs/strict/'] as const) {
      const r = await svc.client.api.GET(path, { headers: bearer(c) });
      expect(r.response.status).toBe(200);
      expect(r.data).toHaveLength(1);
      const [program] = r.data!;
      expect(program).toMatchObject({ id: DEMO_LOYALTY_PROGRAM.id, name: DEMO_LOYALTY_PROGRAM.name });
      expect(program!.levels!.map((l) => [l.order, l.name, l.boundary, l.range_label])).toEqual(
        DEMO_LOYALTY_PROGRAM.levels.map((l) => [l.position, l.name, l.boundary, l.range_label]),
      );
      // Each customer counts at the highest level its turnover of the last year reaches.
      const total = program!.levels!.reduce((n, l) => n + (l.clients_count ?? 0), 0);
      const customers = await svc.deps.db.selectFrom('loyalty_ledger_customers').select('id').execute();
      expect(total).toBe(customers.length);
      expect(program!.levels![1]!.clients_count).toBeGreaterThanOrEqual(1); // the demo customer (Silver)
    }
  });
});

describe('another customer of the ledger', () => {
  it('is not visible through the demo data to anyone else', async () => {
    // The seeded second loyalty customer has no account in this service.
    const row = await svc.deps.db
      .selectFrom('customers')
      .select('id')
      .where('phone', '=', DEMO_LOYALTY_CUSTOMERS.other.phone)
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });
});
