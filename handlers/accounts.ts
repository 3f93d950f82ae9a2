// Handlers of the Accounts tag: profile, preferences and push devices of the signed-in principal.
// Each reads its input, calls one use case of services/accounts.ts and shapes the reply.
import type { HandlerMap } from '../server/handler-types.js';
import {
  customerPreferences,
  customerProfile,
  deleteAccount,
  deletePushToken,
  forgetPushDevice,
  registerPushDevice,
  updateCustomerPreferences,
  updateProfile,
  type CustomerRow,
  type PreferencesRow,
} from '../services/accounts.js';
import { unauthorized } from '../services/errors.js';
import { customerIdOf } from './support/principal.js';

const profileOf = (c: CustomerRow) => ({
  phone: c.phone ?? '',
  first_name: c.first_name,
  last_name: c.last_name,
  patronymic: c.patronymic,
  email: c.email,
  birth_date: c.birth_date,
  gender: c.gender,
  marital_status: c.marital_status,
});

const preferencesOf = (p: PreferencesRow) => ({
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

export const accountsHandlers = {
  // GET /api/accounts/me/
  getProfile: async (ctx) => {
    const customer = await customerProfile(ctx.deps.db, customerIdOf(ctx));
    return { status: 200, body: profileOf(customer) };
  },

  // PATCH /api/accounts/me/
  updateProfile: async (ctx) => {
    const customer = await updateProfile(ctx.deps, customerIdOf(ctx), ctx.body);
    return { status: 200, body: profileOf(customer) };
  },

  // DELETE /api/accounts/me/: ends every session and deletes personal data.
  deleteAccount: async (ctx) => {
    await deleteAccount(ctx.deps.db, customerIdOf(ctx));
    return { status: 204, body: undefined };
  },

  // GET /api/accounts/me/preferences
  getPreferences: async (ctx) => {
    const prefs = await customerPreferences(ctx.deps.db, customerIdOf(ctx));
    return { status: 200, body: preferencesOf(prefs) };
  },

  // PATCH /api/accounts/me/preferences
  updatePreferences: async (ctx) => {
    const prefs = await updateCustomerPreferences(ctx.deps, customerIdOf(ctx), ctx.body);
    return { status: 200, body: preferencesOf(prefs) };
  },

  // DELETE /api/accounts/me/preferences/push?token=...
  deletePushToken: async (ctx) => {
    await deletePushToken(ctx.deps.db, customerIdOf(ctx), ctx.query.token);
    return { status: 204, body: undefined };
  },

  // PUT /api/accounts/me/push-devices (customer or picker access token)
  registerPushDevice: async (ctx) => {
    if (!ctx.principal) throw unauthorized();
    const row = await registerPushDevice(ctx.deps, ctx.principal, ctx.body, ctx.lang);
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
    if (!ctx.principal) throw unauthorized();
    await forgetPushDevice(ctx.deps.db, ctx.principal, ctx.path.device_id);
    return { status: 204, body: undefined };
  },
} satisfies Partial<HandlerMap>;
