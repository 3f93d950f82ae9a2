// Profile and preferences of the signed-in customer, and account deletion.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomTestPhone, signInCustomer } from '../support/accounts.js';
import { startTestService, type TestService } from '../support/service.js';
import type { operations } from '../../generated/api.test.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.close());

const bearer = (access?: string): Record<string, string> => (access ? { authorization: `Bearer ${access}` } : {});
type ProfilePatch = NonNullable<operations['updateProfile']['requestBody']>['content']['application/json'];
type PreferencesPatch = NonNullable<operations['updatePreferences']['requestBody']>['content']['application/json'];
const getMe = (access?: string) => svc.client.call.GET('/api/accounts/me/', { headers: bearer(access) });
const patchMe = (access: string, body: ProfilePatch) => svc.client.call.PATCH('/api/accounts/me/', { headers: bearer(access), body });
const deleteMe = (access?: string) => svc.client.call.DELETE('/api/accounts/me/', { headers: bearer(access) });
const getPreferences = (access: string) => svc.client.call.GET('/api/accounts/me/preferences', { headers: bearer(access) });
const patchPreferences = (access: string, body: PreferencesPatch) =>
  svc.client.call.PATCH('/api/accounts/me/preferences', { headers: bearer(access), body });
/** Deliberately invalid: bodies the schema refuses, or no token. */
const invalid = (method: string, path: string, access?: string, body?: object) =>
  svc.client.invalid(method, path, { headers: bearer(access), body });

describe('getProfile', () => {
  it('returns the profile with the spec defaults', async () => {
    const c = await signInCustomer(svc);
    const { data, response } = await svc.client.api.GET('/api/accounts/me/', { headers: c.auth });
    expect(response.status).toBe(200);
    expect(data).toEqual({
      phone: c.phone,
      first_name: '',
      last_name: '',
      patronymic: '',
      email: '',
      birth_date: null,
      gender: null,
      marital_status: null,
    });
  });

  it('answers 401 without a customer token', async () => {
    expect((await invalid('GET', '/api/accounts/me/')).status).toBe(401);
  });
});

describe('updateProfile', () => {
  it('changes given fields, trims text, and clears with null', async () => {
    const c = await signInCustomer(svc);
    const r = await patchMe(c.access, {
      first_name: '  Анна ',
      last_name: 'Иванова',
      email: 'anna@example.com',
      birth_date: '1990-05-17',
      gender: 'female',
      marital_status: 'married',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      first_name: 'Анна',
      last_name: 'Иванова',
      email: 'anna@example.com',
      birth_date: '1990-05-17',
      gender: 'female',
      marital_status: 'married',
    });
    const cleared = await patchMe(c.access, { last_name: null, gender: null });
    expect(cleared.body).toMatchObject({ first_name: 'Анна', last_name: '', gender: null, marital_status: 'married' });
    expect((await patchMe(c.access, {})).body.first_name).toBe('Анна');
  });

  it('trims surrounding whitespace before the checks: an autocompleted email and a full-length patronymic are accepted', async () => {
    const c = await signInCustomer(svc);
    const patronymic = 'П'.repeat(50);
    const r = await patchMe(c.access, { email: 'ivan@example.com ', patronymic: ` ${patronymic}\t`, first_name: ' Иван ' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ email: 'ivan@example.com', patronymic, first_name: 'Иван' });
    // Whitespace inside stays what it is: still not an email.
    expect((await invalid('PATCH', '/api/accounts/me/', c.access, { email: 'ivan @example.com' })).status).toBe(422);
  });

  it('answers 422 for fields the schema does not allow and for values outside its limits', async () => {
    const c = await signInCustomer(svc);
    for (const body of [
      { phone: '+79990000002' },
      { patronymic: 'x'.repeat(51) },
      { email: 'not-an-email' },
      { gender: 'other' },
      { birth_date: '17.05.1990' },
    ]) {
      const r = await invalid('PATCH', '/api/accounts/me/', c.access, body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('answers 422 BIRTH_DATE_INVALID for a date in the future or before 1900', async () => {
    const c = await signInCustomer(svc);
    for (const birth_date of ['2999-01-01', '1899-12-31']) {
      const r = await patchMe(c.access, { birth_date });
      expect(r.status).toBe(422);
      expect(r.body.code).toBe('BIRTH_DATE_INVALID');
    }
  });

  it('answers 401 without a customer token', async () => {
    expect((await invalid('PATCH', '/api/accounts/me/', undefined, { first_name: 'x' })).status).toBe(401);
  });
});

describe('preferences', () => {
  it('starts from defaults and records consent to promotions', async () => {
    const c = await signInCustomer(svc);
    const initial = await getPreferences(c.access);
    expect(initial.status).toBe(200);
    // UserPreferences: created with order updates on push and SMS, order emails and every
    // promotional channel off (no channel the customer did not ask for).
    expect(initial.body).toMatchObject({
      language: 'en',
      push_order_updates: true,
      sms_order_updates: true,
      email_order_updates: false,
      push_promotions: false,
      sms_promotions: false,
      email_promotions: false,
      promotions_consent_at: null,
    });
    const on = await patchPreferences(c.access, { push_promotions: true, language: 'ru' });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({ language: 'ru', push_promotions: true });
    expect(on.body.promotions_consent_at).not.toBeNull();
    const off = await patchPreferences(c.access, { push_promotions: false });
    expect(off.body.promotions_consent_at).toBeNull();
  });

  it('records consent per promotional channel: a second channel switched on gets its own time', async () => {
    const c = await signInCustomer(svc);
    const push = await patchPreferences(c.access, { push_promotions: true });
    const pushAt = push.body.push_promotions_consent_at;
    expect(pushAt).not.toBeNull();
    expect(push.body).toMatchObject({ promotions_consent_at: pushAt, sms_promotions_consent_at: null, email_promotions_consent_at: null });
    svc.clock.advance(15);
    const sms = await patchPreferences(c.access, { sms_promotions: true, push_promotions: true });
    const smsAt = sms.body.sms_promotions_consent_at;
    expect(Date.parse(smsAt)).toBeGreaterThan(Date.parse(pushAt));
    // Push was already on: sending it again is no new consent. The record is the latest switch-on.
    expect(sms.body).toMatchObject({ push_promotions_consent_at: pushAt, promotions_consent_at: smsAt, email_promotions_consent_at: null });
    // SMS withdrawn: its consent goes, the push consent still in force is the record again.
    const smsOff = await patchPreferences(c.access, { sms_promotions: false });
    expect(smsOff.body).toMatchObject({
      push_promotions_consent_at: pushAt,
      sms_promotions_consent_at: null,
      promotions_consent_at: pushAt,
    });
    const allOff = await patchPreferences(c.access, { push_promotions: false });
    expect(allOff.body).toMatchObject({ push_promotions_consent_at: null, sms_promotions_consent_at: null, promotions_consent_at: null });
    expect((await getPreferences(c.access)).body).toEqual(allOff.body);
  });

  it('answers 422 for an unknown language or property, 401 without a token', async () => {
    const c = await signInCustomer(svc);
    expect((await invalid('PATCH', '/api/accounts/me/preferences', c.access, { language: 'de' })).status).toBe(422);
    expect((await invalid('PATCH', '/api/accounts/me/preferences', c.access, { dark_mode: true })).status).toBe(422);
    expect((await invalid('GET', '/api/accounts/me/preferences')).status).toBe(401);
    expect((await invalid('PATCH', '/api/accounts/me/preferences', undefined, { language: 'ru' })).status).toBe(401);
  });
});

describe('deleteAccount', () => {
  it('revokes every token, anonymises the customer and frees the phone', async () => {
    const phone = randomTestPhone();
    const c = await signInCustomer(svc, phone);
    const other = await svc.client.call.POST('/api/token/refresh', { body: { refresh: c.refresh } });
    await patchMe(c.access, { first_name: 'Gone' });
    const product = await svc.deps.db.selectFrom('products').select('id').where('is_active', '=', true).limit(1).executeTakeFirstOrThrow();
    expect(
      (
        await svc.client.call.POST('/api/catalog/products/add-favorite/{product_id}', {
          params: { path: { product_id: product.id } },
          headers: { authorization: `Bearer ${c.access}` },
        })
      ).status,
    ).toBeLessThan(300);
    const r = await deleteMe(other.body.access);
    expect(r.status).toBe(204);
    expect((await getMe(other.body.access)).status).toBe(401);
    expect((await svc.client.invalid('POST', '/api/token/refresh', { body: { refresh: other.body.refresh } })).status).toBe(401);
    const row = await svc.deps.db.selectFrom('customers').selectAll().where('id', '=', c.customerId).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ phone: null, first_name: '', pin_hash: null });
    expect(row.deleted_at).not.toBeNull();
    // Favourites and the phone's one-time-code records go too.
    expect(
      await svc.deps.db.selectFrom('favorite_products').select('product_id').where('customer_id', '=', c.customerId).execute(),
    ).toEqual([]);
    expect(await svc.deps.db.selectFrom('otp_phones').select('phone').where('phone', '=', phone).execute()).toEqual([]);
    // The phone signs up again as a new customer.
    await svc.client.call.POST('/api/auth/otp/send', { body: { phone } });
    const code = (await svc.client.call.GET('/api/qa/otp/last', { params: { query: { phone } } })).body.code;
    const again = await svc.client.call.POST('/api/auth/otp/confirm', { body: { phone, code } });
    expect(again.body.is_new_user).toBe(true);
  });

  it('answers 401 without a customer token', async () => {
    expect((await invalid('DELETE', '/api/accounts/me/')).status).toBe(401);
  });
});
