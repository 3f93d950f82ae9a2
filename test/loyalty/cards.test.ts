// Linking cards on the local ledger: both previews (every status of the preview table), link/ and
// link-physical/, the card-ownership conflict (409, nothing changed), and the look-up limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_LOYALTY_CARDS } from '../../db/seed/loyalty.js';
import { runLoyaltyWorkerOnce } from '../../server/jobs/loyalty-worker.js';
import { randomTestPhone, signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import { bearer, readyWallet, signInDemoCustomer } from './helpers.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { LOYALTY_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

const C = DEMO_LOYALTY_CARDS;
type Who = { access: string };
const create = (c: Who) => svc.client.call.POST('/api/loaylty/wallet/create/', { headers: bearer(c) });
const link = (c: Who, card_number: string) =>
  svc.client.call.POST('/api/loaylty/wallet/link/', { headers: bearer(c), body: { card_number } });
const linkPhysical = (c: Who, card_number: string) =>
  svc.client.call.POST('/api/loaylty/wallet/link-physical/', { headers: bearer(c), body: { card_number } });
const preview = (c: Who, card_number: string) =>
  svc.client.call.POST('/api/loaylty/wallet/link/preview/', { headers: bearer(c), body: { card_number } });
const previewPhysical = (c: Who, card_number: string) =>
  svc.client.call.POST('/api/loaylty/wallet/link-physical/preview/', { headers: bearer(c), body: { card_number } });
const ledgerCard = (id: string) =>
  svc.deps.db.selectFrom('loyalty_ledger_cards').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
let stock = 0;
/** A never-issued plastic card of the seeded stock, a different one per use. */
const stockCard = () => C.stock[stock++];
/** A plastic card handed out at a till: issued, with no registered holder. */
async function tillCard() {
  const card = stockCard();
  await svc.deps.db.updateTable('loyalty_ledger_cards').set({ issued_at: new Date() }).where('id', '=', card!.id).execute();
  return card;
}

describe('previewLoyaltyCardLink', () => {
  it('tells ISSUED for an unregistered card, with the points that would join the account', async () => {
    const c = await signInCustomer(svc);
    const r = await preview(c, '7770 0000-0000 0033');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'ISSUED',
      can_link: true,
      reason_code: null,
      card_number_masked: '************0033',
      owner_match: null,
      is_virtual: false,
      card_balance: '150.00',
      transfer_amount: null,
      message: 'This card can be linked to your wallet',
    });
  });

  it("tells OWNED_BY_ANOTHER_CUSTOMER without showing the other customer's data", async () => {
    const c = await signInCustomer(svc);
    const r = await preview(c, C.ownedByAnother.number);
    expect(r.body).toMatchObject({
      status: 'OWNED_BY_ANOTHER_CUSTOMER',
      can_link: false,
      reason_code: 'CARD_OWNED_BY_ANOTHER_CUSTOMER',
      owner_match: false,
      card_balance: null,
      transfer_amount: null,
    });
  });

  it('tells BLOCKED, NOT_ISSUED and NOT_FOUND', async () => {
    const c = await signInCustomer(svc);
    expect((await preview(c, C.blocked.number)).body).toMatchObject({ status: 'BLOCKED', can_link: false, reason_code: 'CARD_BLOCKED' });
    expect((await preview(c, C.stock[19]!.number)).body).toMatchObject({
      status: 'NOT_ISSUED',
      can_link: false,
      reason_code: 'CARD_NOT_ISSUED',
      card_balance: '0.00',
    });
    expect((await preview(c, '1234567890')).body).toMatchObject({
      status: 'NOT_FOUND',
      can_link: false,
      reason_code: 'CARD_NOT_FOUND',
      owner_match: null,
      is_virtual: null,
      card_balance: null,
    });
  });

  it("tells ALREADY_LINKED for the caller's own card, with its balance", async () => {
    const demo = await signInDemoCustomer(svc);
    const r = await preview(demo, C.demoPlastic.number);
    expect(r.body).toMatchObject({
      status: 'ALREADY_LINKED',
      can_link: false,
      reason_code: 'ALREADY_LINKED',
      owner_match: true,
      card_balance: '0.00',
    });
  });

  it('refuses while the wallet is provisioning (WALLET_SYNC_IN_PROGRESS)', async () => {
    const c = await signInCustomer(svc);
    await create(c);
    expect((await preview(c, C.unregisteredWithPoints.number)).body).toMatchObject({
      status: 'ISSUED',
      can_link: false,
      reason_code: 'WALLET_SYNC_IN_PROGRESS',
    });
  });

  it('answers 422 CARD_NUMBER_INVALID, 422 VALIDATION_ERROR and 401', async () => {
    const c = await signInCustomer(svc);
    for (const n of ['12345', '1'.repeat(20), '7770-00AB-0000']) {
      const r = await preview(c, n);
      expect([r.status, r.body.code], n).toEqual([422, 'CARD_NUMBER_INVALID']);
    }
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/link/preview/', { headers: bearer(c), body: {} })).body.code).toBe(
      'VALIDATION_ERROR',
    );
    expect(
      (await svc.client.invalid('POST', '/api/loaylty/wallet/link/preview/', { body: { card_number: '7770000000000033' } })).status,
    ).toBe(401);
  });
});

describe('previewLoyaltyPhysicalCardLink', () => {
  it('tells NOT_ISSUED: a physical card can be issued, with the points that would move to it', async () => {
    const demo = await signInDemoCustomer(svc);
    const w = await readyWallet(svc, demo);
    const card = C.stock[18];
    const r = await previewPhysical(demo, card!.number);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      status: 'NOT_ISSUED',
      can_link: true,
      reason_code: null,
      is_virtual: false,
      transfer_amount: w.balance,
    });
    expect(r.body.message).toContain(w.balance);
  });

  it('refuses an issued card (CARD_ALREADY_ISSUED) and shows nothing to transfer without a wallet', async () => {
    const c = await signInCustomer(svc);
    expect((await previewPhysical(c, C.unregisteredWithPoints.number)).body).toMatchObject({
      status: 'ISSUED',
      can_link: false,
      reason_code: 'CARD_ALREADY_ISSUED',
      transfer_amount: null,
    });
    expect((await previewPhysical(c, C.stock[17]!.number)).body).toMatchObject({
      status: 'NOT_ISSUED',
      can_link: true,
      transfer_amount: '0.00',
    });
  });

  it('answers 422 CARD_NUMBER_INVALID and 401', async () => {
    const c = await signInCustomer(svc);
    expect((await previewPhysical(c, '12-34')).body.code).toBe('CARD_NUMBER_INVALID');
    expect(
      (await svc.client.invalid('POST', '/api/loaylty/wallet/link-physical/preview/', { body: { card_number: '7770000000001001' } }))
        .status,
    ).toBe(401);
  });
});

describe('linkLoyaltyCard', () => {
  it("creates a ready wallet around the card when the caller has none; the card's points join the account", async () => {
    const c = await signInCustomer(svc);
    const r = await link(c, C.unregisteredWithPoints.number);
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('applied');
    expect(r.body.wallet).toMatchObject({ status: 'ready', is_linked: true, main_card_id: C.unregisteredWithPoints.id, balance: '150.00' });
    expect(r.body.wallet.cards).toEqual([
      expect.objectContaining({ id: C.unregisteredWithPoints.id, card_number: C.unregisteredWithPoints.number, is_virtual: false }),
    ]);
    expect(await ledgerCard(C.unregisteredWithPoints.id)).toMatchObject({ balance: '0.00' });
    // Linking it again changes nothing.
    expect((await link(c, C.unregisteredWithPoints.number)).body.outcome).toBe('unchanged');
    // The points arrived once, as a transaction of the provider.
    const tx = await svc.client.call.GET('/api/loaylty/wallet/transactions/', { headers: bearer(c) });
    expect(tx.body.items).toEqual([
      expect.objectContaining({ type: 'adjustment', amount: '150.00', balance_after: '150.00', source: 'provider' }),
    ]);
  });

  it('adds a card to an existing wallet without changing the main card', async () => {
    const c = await signInCustomer(svc);
    const w = await readyWallet(svc, c);
    const card = await tillCard();
    const r = await link(c, card!.number);
    expect(r.body).toMatchObject({ outcome: 'applied', wallet: { main_card_id: w.main_card_id } });
    expect(r.body.wallet.cards.map((x: { id: string }) => x.id)).toEqual([w.main_card_id, card!.id]);
  });

  it("answers 409 CARD_OWNED_BY_ANOTHER_CUSTOMER with nothing changed: no wallet, the card still the other's", async () => {
    const c = await signInCustomer(svc);
    const before = await ledgerCard(C.ownedByAnother.id);
    const r = await link(c, C.ownedByAnother.number);
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('CARD_OWNED_BY_ANOTHER_CUSTOMER');
    expect(await ledgerCard(C.ownedByAnother.id)).toEqual(before);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).status).toBe(404);
    // A customer with a wallet keeps it exactly as it was.
    const w = await readyWallet(svc, c);
    const again = await link(c, C.ownedByAnother.number);
    expect([again.status, again.body.code]).toEqual([409, 'CARD_OWNED_BY_ANOTHER_CUSTOMER']);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).body).toEqual(w);
    expect(await ledgerCard(C.ownedByAnother.id)).toEqual(before);
  });

  it('answers 409 CARD_BLOCKED, CARD_NOT_ISSUED and WALLET_SYNC_IN_PROGRESS; 422 CARD_NOT_FOUND and CARD_NUMBER_INVALID', async () => {
    const c = await signInCustomer(svc);
    expect((await link(c, C.blocked.number)).body.code).toBe('CARD_BLOCKED');
    expect((await link(c, C.stock[16]!.number)).body.code).toBe('CARD_NOT_ISSUED');
    const unknown = await link(c, '99999999');
    expect([unknown.status, unknown.body.code]).toEqual([422, 'CARD_NOT_FOUND']);
    expect((await link(c, 'abc')).body.code).toBe('CARD_NUMBER_INVALID');
    await create(c);
    const pending = await link(c, C.unregisteredWithPoints.number);
    expect([pending.status, pending.body.code]).toEqual([409, 'WALLET_SYNC_IN_PROGRESS']);
    expect((await svc.client.invalid('POST', '/api/loaylty/wallet/link/', { body: { card_number: '7770000000000033' } })).status).toBe(401);
  });

  it('limits card look-ups to 10 per customer in 10 minutes (429 RATE_LIMITED with Retry-After)', async () => {
    const c = await signInCustomer(svc);
    for (let i = 0; i < 5; i++) expect((await preview(c, '1234567890')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await link(c, '1234567890')).status).toBe(422);
    const limited = await preview(c, C.unregisteredWithPoints.number);
    expect([limited.status, limited.body.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await previewPhysical(c, C.stock[15]!.number)).status).toBe(429);
    expect((await link(c, C.unregisteredWithPoints.number)).status).toBe(429);
    expect((await linkPhysical(c, C.stock[15]!.number)).status).toBe(429);
    // Another customer is not affected.
    expect((await preview(await signInCustomer(svc), '1234567890')).status).toBe(200);
  });
});

describe('linkLoyaltyPhysicalCard', () => {
  it('issues the physical card as main card, retires the previous one, keeps the balance', async () => {
    const demo = await signInDemoCustomer(svc);
    const w = await readyWallet(svc, demo);
    const card = stockCard();
    const r = await linkPhysical(demo, card!.number);
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe('applied');
    expect(r.body.wallet).toMatchObject({ main_card_id: card!.id, balance: w.balance, is_blocked: false });
    expect(r.body.wallet.cards[0]).toMatchObject({ id: card!.id, is_virtual: false, is_active: true, qrcode: null });
    const previous = r.body.wallet.cards.find((x: { id: string }) => x.id === w.main_card_id);
    expect(previous).toMatchObject({ is_active: false, qrcode: null });
    expect(await ledgerCard(card!.id)).toMatchObject({ customer_id: 'LC-000001' });
    // Repeating the command with the card now in the wallet changes nothing.
    expect((await linkPhysical(demo, card!.number)).body.outcome).toBe('unchanged');
  });

  it('creates the wallet with the card when the caller has none, transferring nothing', async () => {
    const c = await signInCustomer(svc);
    const card = stockCard();
    const r = await linkPhysical(c, card!.number);
    expect(r.body).toMatchObject({
      outcome: 'applied',
      wallet: { status: 'ready', is_linked: true, main_card_id: card!.id, balance: '0.00' },
    });
  });

  it('answers 409 CARD_OWNED_BY_ANOTHER_CUSTOMER (nothing changed), CARD_ALREADY_ISSUED and CARD_BLOCKED; 422 CARD_NOT_FOUND', async () => {
    const c = await signInCustomer(svc);
    const before = await ledgerCard(C.ownedByAnother.id);
    const owned = await linkPhysical(c, C.ownedByAnother.number);
    expect([owned.status, owned.body.code]).toEqual([409, 'CARD_OWNED_BY_ANOTHER_CUSTOMER']);
    expect(await ledgerCard(C.ownedByAnother.id)).toEqual(before);
    expect((await svc.client.call.GET('/api/loaylty/wallet/', { headers: bearer(c) })).status).toBe(404);
    expect((await linkPhysical(c, (await tillCard())!.number)).body.code).toBe('CARD_ALREADY_ISSUED');
    expect((await linkPhysical(c, C.blocked.number)).body.code).toBe('CARD_BLOCKED');
    expect((await linkPhysical(c, '55555555')).body.code).toBe('CARD_NOT_FOUND');
    expect(
      (await svc.client.invalid('POST', '/api/loaylty/wallet/link-physical/', { body: { card_number: '7770000000001001' } })).status,
    ).toBe(401);
  });

  it('answers 409 WALLET_SYNC_IN_PROGRESS while the wallet is pending', async () => {
    const c = await signInCustomer(svc);
    await create(c);
    const r = await linkPhysical(c, stockCard()!.number);
    expect([r.status, r.body.code]).toEqual([409, 'WALLET_SYNC_IN_PROGRESS']);
    await runLoyaltyWorkerOnce(svc.deps);
  });
});

describe('deleteAccount and the loyalty provider', () => {
  it('unlinks the wallet and has the provider erase the customer: a new account on the phone starts afresh', async () => {
    const phone = randomTestPhone();
    const old = await signInCustomer(svc, phone);
    const before = await readyWallet(svc, old);
    const wallet = await svc.deps.db
      .selectFrom('loyalty_wallets')
      .select(['id', 'provider_customer_id'])
      .where('customer_id', '=', old.customerId)
      .executeTakeFirstOrThrow();
    expect(wallet.provider_customer_id).not.toBeNull();
    expect((await svc.client.call.DELETE('/api/accounts/me/', { headers: bearer(old) })).status).toBe(204);
    expect(
      await svc.deps.db
        .selectFrom('loyalty_wallets')
        .select(['provider_customer_id', 'cards'])
        .where('id', '=', wallet.id)
        .executeTakeFirstOrThrow(),
    ).toEqual({ provider_customer_id: null, cards: [] });

    await runLoyaltyWorkerOnce(svc.deps);
    const erased = await svc.deps.db
      .selectFrom('loyalty_ledger_customers')
      .select('phone')
      .where('id', '=', wallet.provider_customer_id!)
      .executeTakeFirstOrThrow();
    expect(erased.phone).not.toBe(phone);
    const cards = await svc.deps.db
      .selectFrom('loyalty_ledger_cards')
      .select('is_blocked')
      .where('customer_id', '=', wallet.provider_customer_id!)
      .execute();
    expect(cards.every((c) => c.is_blocked)).toBe(true);
    const job = await svc.deps.db
      .selectFrom('loyalty_jobs')
      .select(['state', 'attempts'])
      .where('wallet_id', '=', wallet.id)
      .where('kind', '=', 'erase')
      .executeTakeFirstOrThrow();
    expect(job).toEqual({ state: 'done', attempts: 1 });

    const next = await signInCustomer(svc, phone);
    const fresh = await readyWallet(svc, next);
    const nextWallet = await svc.deps.db
      .selectFrom('loyalty_wallets')
      .select('provider_customer_id')
      .where('customer_id', '=', next.customerId)
      .executeTakeFirstOrThrow();
    expect(nextWallet.provider_customer_id).not.toBe(wallet.provider_customer_id);
    expect(fresh.cards.map((c: { id: string }) => c.id)).not.toEqual(before.cards.map((c: { id: string }) => c.id));
  });
});
