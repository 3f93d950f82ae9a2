// Handlers of the Accounts tag: profile, preferences and push devices of the signed-in principal.
import type { HandlerMap } from '../server/handler-types.js';
import {
  anonymiseCustomer,
  deleteCustomerPushToken,
  deletePushDevice,
  findCustomer,
  getOrCreatePreferences,
  updateCustomer,
  updatePreferences,
  upsertPushDevice,
  type DeviceOwner,
} from '../db/queries/accounts.js';
import { revokeSessions } from '../db/queries/auth.js';
import { unlinkDeletedCustomerWallet } from '../db/queries/loyalty.js';
import { customerHasUnfinishedOrder, eraseOrderContactData, lockCustomerRow } from '../db/queries/orders.js';
import type { DB } from '../db/schema.js';
import type { Selectable } from 'kysely';
import { conflict, notFound, unauthorized, unprocessable } from '../services/errors.js';
import { customerIdOf } from './support/principal.js';

const profileOf = (c: Selectable<DB['customers']>) => ({
  phone: c.phone ?? '',
  first_name: c.first_name,
  last_name: c.last_name,
  patronymic: c.patronymic,
  email: c.email,
  birth_date: c.birth_date,
  gender: c.gender,
  marital_status: c.marital_status,
});

const preferencesOf = (p: Selectable<DB['customer_preferences']>) => ({
  language: p.language,
  push_order_updates: p.push_order_updates,
  push_promotions: p.push_promotions,
  sms_order_updates: p.sms_order_updates,
  sms_promotions: p.sms_promotions,
  email_order_updates: p.email_order_updates,
  email_promotions: p.email_promotions,
  promotions_consent_at: p.promotions_consent_at?.toISOString() ?? null,
  push_promotions_consent_at: p.push_promotions_consent_at?.toISOString() ?? null,
  sms_promotions_consent_at: p.sms_promotions_consent_at?.toISOString() ?? null,
  email_promotions_consent_at: p.email_promotions_consent_at?.toISOString() ?? null,
  updated_at: p.updated_at.toISOString(),
});

/** null and "" clear a text field; surrounding whitespace is not kept. */
const text = (v: string | null | undefined) => (v === undefined ? undefined : (v ?? '').trim());

/** Today in the service's time zone, as YYYY-MM-DD. */
const today = (now: Date) => now.toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });

const PROMOTION_KEYS = ['push_promotions', 'sms_promotions', 'email_promotions'] as const;

export const accountsHandlers = {
  // GET /api/accounts/me/
  getProfile: async (ctx) => {
    const customer = await findCustomer(ctx.deps.db, customerIdOf(ctx));
    if (!customer) throw unauthorized();
    return { status: 200, body: profileOf(customer) };
  },

  // PATCH /api/accounts/me/
  updateProfile: async (ctx) => {
    const b = ctx.body;
    if (b.birth_date && (b.birth_date < '1900-01-01' || b.birth_date > today(ctx.deps.clock.now()))) {
      throw unprocessable('BIRTH_DATE_INVALID', 'birth_date must be between 1900-01-01 and today');
    }
    const changes = Object.fromEntries(
      Object.entries({
        first_name: text(b.first_name),
        last_name: text(b.last_name),
        patronymic: text(b.patronymic),
        email: text(b.email),
        birth_date: b.birth_date,
        gender: b.gender,
        marital_status: b.marital_status,
      }).filter(([, v]) => v !== undefined),
    );
    const id = customerIdOf(ctx);
    const customer = Object.keys(changes).length ? await updateCustomer(ctx.deps.db, id, changes) : await findCustomer(ctx.deps.db, id);
    if (!customer) throw unauthorized();
    return { status: 200, body: profileOf(customer) };
  },

  // DELETE /api/accounts/me/: ends every session and deletes personal data (see the spec).
  deleteAccount: async (ctx) => {
    const id = customerIdOf(ctx);
    await ctx.deps.db.transaction().execute(async (trx) => {
      // Locked against a checkout in flight: either its order is seen here, or it finds no account.
      await lockCustomerRow(trx, id, 'update');
      if (await customerHasUnfinishedOrder(trx, id)) {
        throw conflict('ACCOUNT_HAS_ACTIVE_ORDERS', 'An order is still in progress; cancel it or wait until it is finished');
      }
      await revokeSessions(trx, { customerId: id }, 'account_deleted');
      await unlinkDeletedCustomerWallet(trx, id);
      await anonymiseCustomer(trx, id);
      await eraseOrderContactData(trx, id);
    });
    return { status: 204, body: undefined };
  },

  // GET /api/accounts/me/preferences
  getPreferences: async (ctx) => {
    const prefs = await getOrCreatePreferences(ctx.deps.db, customerIdOf(ctx));
    return { status: 200, body: preferencesOf(prefs) };
  },

  // PATCH /api/accounts/me/preferences
  updatePreferences: async (ctx) => {
    const id = customerIdOf(ctx);
    const prefs = await ctx.deps.db.transaction().execute(async (trx) => {
      const current = await getOrCreatePreferences(trx, id);
      const changes = Object.fromEntries(Object.entries(ctx.body).filter(([, v]) => v !== undefined && v !== null));
      if (Object.keys(changes).length === 0) return current;
      const next = { ...current, ...changes };
      // Consent to advertising is recorded per channel: switching a channel on records now as its
      // consent, switching it off withdraws it; a channel sent with its current value keeps its
      // time. promotions_consent_at is the newest consent still in force.
      const now = ctx.deps.clock.now();
      const consents = Object.fromEntries(
        PROMOTION_KEYS.map((k) => [`${k}_consent_at`, next[k] ? (current[k] ? current[`${k}_consent_at`] : now) : null]),
      ) as Record<`${(typeof PROMOTION_KEYS)[number]}_consent_at`, Date | null>;
      const times = Object.values(consents).filter((t): t is Date => t !== null);
      const latest = times.length ? new Date(Math.max(...times.map((t) => t.getTime()))) : null;
      return updatePreferences(trx, id, { ...changes, ...consents, promotions_consent_at: latest });
    });
    return { status: 200, body: preferencesOf(prefs) };
  },

  // DELETE /api/accounts/me/preferences/push?token=...
  deletePushToken: async (ctx) => {
    await deleteCustomerPushToken(ctx.deps.db, customerIdOf(ctx), ctx.query.token);
    return { status: 204, body: undefined };
  },

  // PUT /api/accounts/me/push-devices (customer or picker access token)
  registerPushDevice: async (ctx) => {
    const p = ctx.principal;
    if (!p) throw unauthorized();
    const b = ctx.body;
    const appKind = b.app_kind ?? 'customer';
    if (appKind !== p.kind) throw unprocessable('APP_KIND_MISMATCH', `app_kind is ${appKind} but the token belongs to a ${p.kind}`);
    const apiEnvironment = ctx.deps.config.env === 'PROD' ? 'PRODUCTION' : 'TEST';
    const environment = b.environment ?? apiEnvironment;
    if (environment !== apiEnvironment) {
      throw conflict('PUSH_ENVIRONMENT_MISMATCH', `This is the ${apiEnvironment} API; the device registered for ${environment}`);
    }
    const owner: DeviceOwner =
      p.kind === 'customer' ? { kind: 'customer', customerId: p.customerId } : { kind: 'picker', pickerId: Number(p.pickerId) };
    const row = await ctx.deps.db.transaction().execute((trx) =>
      upsertPushDevice(trx, owner, p.sessionId, {
        device_id: b.device_id,
        push_token: b.push_token,
        platform: b.platform,
        app_kind: appKind,
        environment,
        app_version: b.app_version,
        build_number: b.build_number,
        language: ctx.lang,
      }),
    );
    return {
      status: 200,
      body: {
        device_id: row.device_id,
        platform: row.platform,
        app_version: row.app_version,
        build_number: row.build_number,
        app_kind: row.app_kind,
        environment: row.environment,
        updated_at: row.updated_at.toISOString(),
      },
    };
  },

  // DELETE /api/accounts/me/push-devices/{device_id}
  deletePushDevice: async (ctx) => {
    const p = ctx.principal;
    if (!p) throw unauthorized();
    const owner: DeviceOwner =
      p.kind === 'customer' ? { kind: 'customer', customerId: p.customerId } : { kind: 'picker', pickerId: Number(p.pickerId) };
    if (!(await deletePushDevice(ctx.deps.db, owner, ctx.path.device_id))) throw notFound('No such device of this account');
    return { status: 204, body: undefined };
  },
} satisfies Partial<HandlerMap>;
