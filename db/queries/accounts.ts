// Customers, their preferences and push devices; pickers.
import { sql, type Updateable } from 'kysely';
import type { Executor } from '../executor.js';
import type { DB } from '../schema.js';

export function findCustomerByPhone(db: Executor, phone: string) {
  return db.selectFrom('customers').selectAll().where('phone', '=', phone).where('deleted_at', 'is', null).executeTakeFirst();
}

export function findCustomer(db: Executor, id: string) {
  return db.selectFrom('customers').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

/** Creates a customer with default preferences in `language`. */
export async function createCustomer(db: Executor, phone: string, language: 'ru' | 'en') {
  const customer = await db.insertInto('customers').values({ phone }).returningAll().executeTakeFirstOrThrow();
  await db.insertInto('customer_preferences').values({ customer_id: customer.id, language }).execute();
  return customer;
}

export function updateCustomer(db: Executor, id: string, changes: Updateable<DB['customers']>) {
  return db
    .updateTable('customers')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function setCustomerPin(db: Executor, id: string, pinHash: string): Promise<void> {
  await db
    .updateTable('customers')
    .set({ pin_hash: pinHash, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
}

/**
 * Deletes a customer's personal data and keeps a tombstone row (id only), which records such as
 * orders keep referring to for accounting. Sessions are revoked by the caller first.
 */
export async function anonymiseCustomer(db: Executor, id: string): Promise<void> {
  const row = await db.selectFrom('customers').select('phone').where('id', '=', id).executeTakeFirst();
  if (row?.phone) {
    await db.deleteFrom('otp_codes').where('phone', '=', row.phone).execute();
    await db.deleteFrom('otp_phones').where('phone', '=', row.phone).execute();
    await db.deleteFrom('rate_events').where('subject', 'like', `%:${row.phone}`).execute();
  }
  await db.deleteFrom('push_devices').where('customer_id', '=', id).execute();
  await db.deleteFrom('recovery_tokens').where('customer_id', '=', id).execute();
  await db.deleteFrom('customer_preferences').where('customer_id', '=', id).execute();
  await db.deleteFrom('favorite_products').where('customer_id', '=', id).execute();
  await db
    .updateTable('customers')
    .set({
      phone: null,
      first_name: '',
      last_name: '',
      patronymic: '',
      email: '',
      birth_date: null,
      gender: null,
      marital_status: null,
      pin_hash: null,
      deleted_at: sql<Date>`now()`,
      updated_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .execute();
}

// --- preferences ----------------------------------------------------------------------------

/** The customer's preferences, created with defaults if missing. */
export async function getOrCreatePreferences(db: Executor, customerId: string) {
  await db
    .insertInto('customer_preferences')
    .values({ customer_id: customerId })
    .onConflict((oc) => oc.column('customer_id').doNothing())
    .execute();
  return db.selectFrom('customer_preferences').selectAll().where('customer_id', '=', customerId).executeTakeFirstOrThrow();
}

export function updatePreferences(db: Executor, customerId: string, changes: Updateable<DB['customer_preferences']>) {
  return db
    .updateTable('customer_preferences')
    .set({ ...changes, updated_at: sql<Date>`now()` })
    .where('customer_id', '=', customerId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

// --- push devices ---------------------------------------------------------------------------

export type DeviceOwner = { kind: 'customer'; customerId: string } | { kind: 'picker'; pickerId: number };

const ownerColumns = (o: DeviceOwner) => ({
  principal_kind: o.kind,
  customer_id: o.kind === 'customer' ? o.customerId : null,
  picker_id: o.kind === 'picker' ? o.pickerId : null,
});

export const MAX_DEVICES_PER_PRINCIPAL = 20;

/**
 * Registers (or re-registers) an installation for `owner`. A device id held by another
 * principal moves to this one (the installation changed user); the same push token under another
 * device id is dropped (the OS gave the token to this installation); beyond 20 devices the least
 * recently updated are evicted.
 */
export async function upsertPushDevice(
  db: Executor,
  owner: DeviceOwner,
  sessionId: string,
  d: Pick<DB['push_devices'], 'device_id' | 'push_token' | 'platform' | 'app_kind' | 'environment' | 'app_version' | 'build_number'> & {
    language: 'ru' | 'en';
  },
) {
  // The row has two unique keys, device_id (the upsert's arbiter) and push_token. Two
  // registrations racing on one of them - a double tap, a retry, a token moving between
  // installations - would have the second insert fail on the other key (ON CONFLICT handles only
  // its arbiter), a 500. One transaction at a time per device and per token, locked in a fixed
  // order; the other waits and then updates the row the first wrote.
  for (const key of [`push-device:${d.device_id}`, `push-token:${d.push_token}`].sort()) {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
  }
  await db.deleteFrom('push_devices').where('push_token', '=', d.push_token).where('device_id', '<>', d.device_id).execute();
  const row = await db
    .insertInto('push_devices')
    .values({ ...d, ...ownerColumns(owner), session_id: sessionId })
    .onConflict((oc) =>
      oc.column('device_id').doUpdateSet({ ...d, ...ownerColumns(owner), session_id: sessionId, updated_at: sql<Date>`now()` }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  const keep = db
    .selectFrom('push_devices')
    .select('device_id')
    .where(owner.kind === 'customer' ? 'customer_id' : 'picker_id', '=', owner.kind === 'customer' ? owner.customerId : owner.pickerId)
    .orderBy('updated_at', 'desc')
    .orderBy('device_id')
    .limit(MAX_DEVICES_PER_PRINCIPAL);
  await db
    .deleteFrom('push_devices')
    .where(owner.kind === 'customer' ? 'customer_id' : 'picker_id', '=', owner.kind === 'customer' ? owner.customerId : owner.pickerId)
    .where('device_id', 'not in', keep)
    .execute();
  return row;
}

export async function deletePushDevice(db: Executor, owner: DeviceOwner, deviceId: string): Promise<boolean> {
  const q = db.deleteFrom('push_devices').where('device_id', '=', deviceId);
  const result = await (
    owner.kind === 'customer' ? q.where('customer_id', '=', owner.customerId) : q.where('picker_id', '=', owner.pickerId)
  ).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function deleteCustomerPushToken(db: Executor, customerId: string, pushToken: string): Promise<void> {
  await db.deleteFrom('push_devices').where('customer_id', '=', customerId).where('push_token', '=', pushToken).execute();
}

// --- pickers --------------------------------------------------------------------------------

/** The picker of a login as typed: compared case-insensitively after trimming (pickers_login_folded). */
export function findPickerByLogin(db: Executor, login: string) {
  return db
    .selectFrom('pickers')
    .selectAll()
    .where(sql`lower(login)`, '=', sql`lower(${login.trim()})`)
    .executeTakeFirst();
}

export function findPicker(db: Executor, id: number) {
  return db.selectFrom('pickers').selectAll().where('id', '=', id).executeTakeFirst();
}

export function pickerStores(db: Executor, pickerId: number) {
  return db
    .selectFrom('picker_stores as ps')
    .innerJoin('stores as s', 's.id', 'ps.store_id')
    .select(['s.id', 's.name_ru', 's.name_en', 's.address_ru', 's.address_en', 's.timezone'])
    .where('ps.picker_id', '=', pickerId)
    .where('s.is_active', '=', true)
    .orderBy('s.code')
    .execute();
}
