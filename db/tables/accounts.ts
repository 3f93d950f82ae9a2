// Tables of the accounts migration (customers, pickers, sign-in state, push devices).
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from './types.js';

export interface CustomersTable {
  id: Generated<string>;
  phone: string | null;
  first_name: Generated<string>;
  last_name: Generated<string>;
  patronymic: Generated<string>;
  email: Generated<string>;
  birth_date: string | null;
  gender: 'male' | 'female' | null;
  marital_status: 'single' | 'married' | null;
  pin_hash: string | null;
  is_disabled: Generated<boolean>;
  deleted_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CustomerPreferencesTable {
  customer_id: string;
  language: Generated<'ru' | 'en'>;
  push_order_updates: Generated<boolean>;
  push_promotions: Generated<boolean>;
  sms_order_updates: Generated<boolean>;
  sms_promotions: Generated<boolean>;
  email_order_updates: Generated<boolean>;
  email_promotions: Generated<boolean>;
  /** The newest of the per-channel consent times of the channels that are on. */
  promotions_consent_at: Timestamp | null;
  push_promotions_consent_at: Timestamp | null;
  sms_promotions_consent_at: Timestamp | null;
  email_promotions_consent_at: Timestamp | null;
  updated_at: Timestamp;
}

export interface PickersTable {
  id: ColumnType<number, never, never>;
  login: string;
  display_name: string;
  password_hash: string;
  is_active: Generated<boolean>;
  default_store_id: string | null;
  created_at: Timestamp;
}

export interface PickerStoresTable {
  picker_id: number;
  store_id: string;
}

export interface AuthSessionsTable {
  id: string;
  principal_kind: 'customer' | 'picker';
  customer_id: string | null;
  picker_id: number | null;
  refresh_jti: string;
  previous_refresh_jti: string | null;
  rotated_at: Timestamp | null;
  created_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  revoked_reason: string | null;
}

export interface OtpCodesTable {
  id: ColumnType<number, never, never>;
  phone: string;
  purpose: 'login' | 'update_pin';
  code_hash: string;
  plain_code: string | null;
  attempts: Generated<number>;
  created_at: Timestamp;
  expires_at: Timestamp;
  consumed_at: Timestamp | null;
  superseded_at: Timestamp | null;
  delivered: Generated<boolean>;
}

export interface OtpPhonesTable {
  phone: string;
  created_at: Timestamp;
}

export interface RecoveryTokensTable {
  jti: string;
  customer_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

export interface RateEventsTable {
  id: ColumnType<number, never, never>;
  subject: string;
  occurred_at: Timestamp;
}

export interface PushDevicesTable {
  device_id: string;
  principal_kind: 'customer' | 'picker';
  customer_id: string | null;
  picker_id: number | null;
  session_id: string | null;
  push_token: string;
  platform: 'ios' | 'android';
  app_kind: 'customer' | 'picker';
  environment: 'TEST' | 'PRODUCTION';
  app_version: string;
  build_number: string;
  /** Accept-Language of the registration: the language of a picker's notifications. */
  language: 'ru' | 'en' | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface AccountsTables {
  customers: CustomersTable;
  customer_preferences: CustomerPreferencesTable;
  pickers: PickersTable;
  picker_stores: PickerStoresTable;
  auth_sessions: AuthSessionsTable;
  otp_codes: OtpCodesTable;
  otp_phones: OtpPhonesTable;
  recovery_tokens: RecoveryTokensTable;
  rate_events: RateEventsTable;
  push_devices: PushDevicesTable;
}
