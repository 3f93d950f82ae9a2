// Tables of the foundation migration (stores, outbox, idempotency).
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './types.js';

export interface StoresTable {
  id: string;
  code: string;
  name_ru: string;
  name_en: string;
  address_ru: string | null;
  address_en: string | null;
  lon: number;
  lat: number;
  timezone: Generated<string>;
  phone: string | null;
  is_active: Generated<boolean>;
  created_at: Timestamp;
}

/** Written only through db/queries/outbox.ts (and outbox_emit, its SQL side, for triggers). */
export interface OutboxEventsTable {
  id: Generated<number>;
  event_id: Generated<string>;
  type: string;
  customer_id: string | null;
  store_id: string | null;
  order_id: string | null;
  payload: ColumnType<unknown, string, string>;
  created_at: Timestamp;
  published_at: Timestamp | null;
}

export interface IdempotencyKeysTable {
  principal: string;
  operation_id: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'completed';
  response_status: number | null;
  response_body: ColumnType<unknown, string | null, string | null>;
  /** A large answer, gzipped JSON, instead of response_body (migration 2026_11_22_0014). */
  response_gzip: Buffer | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface FoundationTables {
  stores: StoresTable;
  outbox_events: OutboxEventsTable;
  idempotency_keys: IdempotencyKeysTable;
}
