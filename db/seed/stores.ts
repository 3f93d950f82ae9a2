import type { Transaction } from 'kysely';
import type { DB } from '../schema.js';
import { stableUuid } from './ids.js';

export const DEMO_STORES = [
  {
    code: 'MSK-TVERSKAYA',
    name_ru: 'Тверская',
    name_en: 'Tverskaya',
    address_ru: 'Москва, Тверская ул., 8',
    address_en: 'Moscow, Tverskaya St, 8',
    lon: 37.6103,
    lat: 55.7616,
    phone: '+74950000001',
  },
  {
    code: 'MSK-ARBAT',
    name_ru: 'Арбат',
    name_en: 'Arbat',
    address_ru: 'Москва, ул. Арбат, 24',
    address_en: 'Moscow, Arbat St, 24',
    lon: 37.5925,
    lat: 55.7508,
    phone: '+74950000002',
  },
  {
    code: 'MSK-KHAMOVNIKI',
    name_ru: 'Хамовники',
    name_en: 'Khamovniki',
    address_ru: 'Москва, Комсомольский пр-т, 28',
    address_en: 'Moscow, Komsomolsky Ave, 28',
    lon: 37.5812,
    lat: 55.7276,
    phone: '+74950000003',
  },
].map((s) => ({ id: stableUuid(`store:${s.code}`), ...s }));

export async function seedStores(trx: Transaction<DB>): Promise<void> {
  await trx.insertInto('stores').values(DEMO_STORES).execute();
}
