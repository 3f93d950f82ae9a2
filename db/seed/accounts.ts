// Demo accounts: a customer who can sign in by code (TEST phone) or PIN, and pickers.
import type { Transaction } from 'kysely';
import { hashSecret } from '../../domain/codes/passwords.js';
import type { DB } from '../schema.js';
import { stableUuid } from './ids.js';
import { DEMO_STORES } from './stores.js';

export const DEMO_CUSTOMER = { id: stableUuid('customer:demo'), phone: '+79990000001', pin: '1357' };
export const DEMO_PICKERS = [
  { login: 'picker1', password: 'picker-demo-1', display_name: 'Анна Сборщикова', stores: [DEMO_STORES[0]!.id, DEMO_STORES[1]!.id] },
  // Works at the third store and, like picker1, at the first: two demo pickers on one store let
  // picker-app developers see another picker holding an order (409 ORDER_BUSY).
  { login: 'picker2', password: 'picker-demo-2', display_name: 'Борис Комплектов', stores: [DEMO_STORES[2]!.id, DEMO_STORES[0]!.id] },
];

export async function seedAccounts(trx: Transaction<DB>): Promise<void> {
  await trx
    .insertInto('customers')
    .values({
      id: DEMO_CUSTOMER.id,
      phone: DEMO_CUSTOMER.phone,
      first_name: 'Demo',
      last_name: 'Customer',
      pin_hash: await hashSecret(DEMO_CUSTOMER.pin),
    })
    .execute();
  await trx.insertInto('customer_preferences').values({ customer_id: DEMO_CUSTOMER.id, language: 'ru' }).execute();
  for (const p of DEMO_PICKERS) {
    const { id } = await trx
      .insertInto('pickers')
      .values({ login: p.login, display_name: p.display_name, password_hash: await hashSecret(p.password), default_store_id: p.stores[0] })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('picker_stores')
      .values(p.stores.map((store_id) => ({ picker_id: id, store_id })))
      .execute();
  }
}
