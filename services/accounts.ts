// The signed-in customer's account: profile, preferences, push devices, and deleting the account.
import type { Selectable } from 'kysely';
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
import type { Database } from '../db/connection.js';
import type { Executor } from '../db/executor.js';
import { unlinkDeletedCustomerWallet } from '../db/queries/loyalty.js';
import { customerHasUnfinishedOrder, eraseOrderContactData, lockCustomerRow } from '../db/queries/orders.js';
import type { DB } from '../db/schema.js';
import type { components } from '../generated/api.test.js';
import type { Principal } from '../platform/tokens.js';
import type { AppDeps } from './deps.js';
import { conflict, notFound, unauthorized, unprocessable } from './errors.js';

type Schemas = components['schemas'];
export type CustomerRow = Selectable<DB['customers']>;
export type PreferencesRow = Selectable<DB['customer_preferences']>;
export type PushDeviceRow = Awaited<ReturnType<typeof upsertPushDevice>>;

/** The customer's profile; an account deleted since its token was issued is answered 401. */
export async function customerProfile(db: Executor, customerId: string): Promise<CustomerRow> {
  const customer = await findCustomer(db, customerId);
  if (!customer) throw unauthorized();
  return customer;
}

/** null and "" clear a text field; surrounding whitespace is not kept. */
const text = (v: string | null | undefined) => (v === undefined ? undefined : (v ?? '').trim());

/** Today in the service's time zone, as YYYY-MM-DD. */
const today = (now: Date) => now.toLocaleDateString('sv-SE', { timeZone: 'Europe/Moscow' });

/** Changes the fields sent; a patch without any answers the profile as it is. */
export async function updateProfile(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  customerId: string,
  patch: Schemas['ProfileInputPatch'],
): Promise<CustomerRow> {
  const { db } = deps;
  if (patch.birth_date && (patch.birth_date < '1900-01-01' || patch.birth_date > today(deps.clock.now()))) {
    throw unprocessable('BIRTH_DATE_INVALID', 'birth_date must be between 1900-01-01 and today');
  }
  const changes = Object.fromEntries(
    Object.entries({
      first_name: text(patch.first_name),
      last_name: text(patch.last_name),
      patronymic: text(patch.patronymic),
      email: text(patch.email),
      birth_date: patch.birth_date,
      gender: patch.gender,
      marital_status: patch.marital_status,
    }).filter(([, v]) => v !== undefined),
  );
  const customer = Object.keys(changes).length ? await updateCustomer(db, customerId, changes) : await findCustomer(db, customerId);
  if (!customer) throw unauthorized();
  return customer;
}

/** Ends every session of the account and erases its personal data; refused while an order is in progress. */
export async function deleteAccount(db: Database, customerId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Locked against a checkout in flight: either its order is seen here, or it finds no account.
    await lockCustomerRow(trx, customerId, 'update');
    if (await customerHasUnfinishedOrder(trx, customerId)) {
      throw conflict('ACCOUNT_HAS_ACTIVE_ORDERS', 'An order is still in progress; cancel it or wait until it is finished');
    }
    await revokeSessions(trx, { customerId }, 'account_deleted');
    await unlinkDeletedCustomerWallet(trx, customerId);
    await anonymiseCustomer(trx, customerId);
    await eraseOrderContactData(trx, customerId);
  });
}

export const customerPreferences = (db: Executor, customerId: string): Promise<PreferencesRow> => getOrCreatePreferences(db, customerId);

const PROMOTION_KEYS = ['push_promotions', 'sms_promotions', 'email_promotions'] as const;

/** Changes the preferences sent (null leaves one as it is) and records advertising consent per channel. */
export function updateCustomerPreferences(
  deps: Pick<AppDeps, 'db' | 'clock'>,
  customerId: string,
  patch: Schemas['UserPreferencesInputPatch'],
): Promise<PreferencesRow> {
  return deps.db.transaction().execute(async (trx) => {
    const current = await getOrCreatePreferences(trx, customerId);
    const changes = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined && v !== null));
    if (Object.keys(changes).length === 0) return current;
    const next = { ...current, ...changes };
    // Consent to advertising is recorded per channel: switching a channel on records now as its
    // consent, switching it off withdraws it; a channel sent with its current value keeps its
    // time. promotions_consent_at is the newest consent still in force.
    const now = deps.clock.now();
    const consents = Object.fromEntries(
      PROMOTION_KEYS.map((k) => [`${k}_consent_at`, next[k] ? (current[k] ? current[`${k}_consent_at`] : now) : null]),
    ) as Record<`${(typeof PROMOTION_KEYS)[number]}_consent_at`, Date | null>;
    const times = Object.values(consents).filter((t): t is Date => t !== null);
    const latest = times.length ? new Date(Math.max(...times.map((t) => t.getTime()))) : null;
    return updatePreferences(trx, customerId, { ...changes, ...consents, promotions_consent_at: latest });
  });
}

export const deletePushToken = (db: Executor, customerId: string, pushToken: string): Promise<void> =>
  deleteCustomerPushToken(db, customerId, pushToken);

const deviceOwnerOf = (p: Principal): DeviceOwner =>
  p.kind === 'customer' ? { kind: 'customer', customerId: p.customerId } : { kind: 'picker', pickerId: Number(p.pickerId) };

/**
 * Registers (or updates) a push device of the caller's session. The app kind must be the token's,
 * and the push environment this API's: a device token works only in the environment its build targets.
 */
export async function registerPushDevice(
  deps: Pick<AppDeps, 'db' | 'config'>,
  principal: Principal,
  device: Schemas['PushDeviceInput'],
  lang: 'ru' | 'en',
): Promise<PushDeviceRow> {
  const appKind = device.app_kind ?? 'customer';
  if (appKind !== principal.kind)
    throw unprocessable('APP_KIND_MISMATCH', `app_kind is ${appKind} but the token belongs to a ${principal.kind}`);
  const apiEnvironment = deps.config.env === 'PROD' ? 'PRODUCTION' : 'TEST';
  const environment = device.environment ?? apiEnvironment;
  if (environment !== apiEnvironment) {
    throw conflict('PUSH_ENVIRONMENT_MISMATCH', `This is the ${apiEnvironment} API; the device registered for ${environment}`);
  }
  return deps.db.transaction().execute((trx) =>
    upsertPushDevice(trx, deviceOwnerOf(principal), principal.sessionId, {
      device_id: device.device_id,
      push_token: device.push_token,
      platform: device.platform,
      app_kind: appKind,
      environment,
      app_version: device.app_version,
      build_number: device.build_number,
      language: lang,
    }),
  );
}

/** Forgets a push device of the caller; 404 when the caller has no such device. */
export async function forgetPushDevice(db: Executor, principal: Principal, deviceId: string): Promise<void> {
  if (!(await deletePushDevice(db, deviceOwnerOf(principal), deviceId))) throw notFound('No such device of this account');
}
