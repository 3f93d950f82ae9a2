// Frozen migration: never edit after it has landed; add a new one instead.
// Customers, pickers, sign-in state (one-time codes, sessions, recovery tokens), push devices.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('customers')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    // NULL once the account is deleted: the row stays as a tombstone that anonymised orders keep
    // pointing at, and the phone becomes free for a new account.
    .addColumn('phone', 'text', (c) => c.unique())
    .addColumn('first_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('last_name', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('patronymic', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('email', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('birth_date', 'date')
    .addColumn('gender', 'text', (c) => c.check(sql`gender IN ('male', 'female')`))
    .addColumn('marital_status', 'text', (c) => c.check(sql`marital_status IN ('single', 'married')`))
    .addColumn('pin_hash', 'text')
    .addColumn('is_disabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('deleted_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('customer_preferences')
    .addColumn('customer_id', 'uuid', (c) => c.primaryKey().references('customers.id').onDelete('cascade'))
    .addColumn('language', 'text', (c) =>
      c
        .notNull()
        .defaultTo('en')
        .check(sql`language IN ('ru', 'en')`),
    )
    .addColumn('push_order_updates', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('push_promotions', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('sms_order_updates', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('sms_promotions', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('email_order_updates', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('email_promotions', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('promotions_consent_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('pickers')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('login', 'text', (c) => c.notNull().unique())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('default_store_id', 'uuid', (c) => c.references('stores.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable('picker_stores')
    .addColumn('picker_id', 'integer', (c) => c.notNull().references('pickers.id').onDelete('cascade'))
    .addColumn('store_id', 'uuid', (c) => c.notNull().references('stores.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('picker_stores_pk', ['picker_id', 'store_id'])
    .execute();

  // A session is one refresh-token family. Access tokens carry its id (`sid`) and are accepted
  // only while it is not revoked, so sign-out, PIN change and account deletion take effect at
  // once. Rotation keeps the current refresh token id; presenting an older one revokes the family.
  await db.schema
    .createTable('auth_sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('principal_kind', 'text', (c) => c.notNull().check(sql`principal_kind IN ('customer', 'picker')`))
    .addColumn('customer_id', 'uuid', (c) => c.references('customers.id').onDelete('cascade'))
    .addColumn('picker_id', 'integer', (c) => c.references('pickers.id').onDelete('cascade'))
    .addColumn('refresh_jti', 'uuid', (c) => c.notNull())
    .addColumn('previous_refresh_jti', 'uuid')
    .addColumn('rotated_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .addCheckConstraint(
      'auth_sessions_principal',
      sql`(principal_kind = 'customer') = (customer_id IS NOT NULL) AND (principal_kind = 'picker') = (picker_id IS NOT NULL)`,
    )
    .execute();
  await sql`CREATE INDEX auth_sessions_customer ON auth_sessions (customer_id) WHERE revoked_at IS NULL`.execute(db);
  await sql`CREATE INDEX auth_sessions_picker ON auth_sessions (picker_id) WHERE revoked_at IS NULL`.execute(db);

  // One-time codes: only the HMAC of a code is stored. `plain_code` is kept only for the
  // configured TEST phones, so the QA operation can show it.
  await db.schema
    .createTable('otp_codes')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('phone', 'text', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose IN ('login', 'update_pin')`))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('plain_code', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('consumed_at', 'timestamptz')
    .addColumn('superseded_at', 'timestamptz')
    .addColumn('delivered', 'boolean', (c) => c.notNull().defaultTo(true))
    .execute();
  await sql`CREATE INDEX otp_codes_phone ON otp_codes (phone, purpose, created_at DESC)`.execute(db);
  // Serialises sends and checks per phone (row lock) without locking code rows of others.
  await db.schema
    .createTable('otp_phones')
    .addColumn('phone', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('recovery_tokens')
    .addColumn('jti', 'uuid', (c) => c.primaryKey())
    .addColumn('customer_id', 'uuid', (c) => c.notNull().references('customers.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .execute();

  // Counted events for limits: failed sign-ins (per phone, per picker login) and requests per
  // client IP. Kept in PostgreSQL so every instance sees the same counts.
  await db.schema
    .createTable('rate_events')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE INDEX rate_events_subject ON rate_events (subject, occurred_at DESC)`.execute(db);

  await db.schema
    .createTable('push_devices')
    .addColumn('device_id', 'uuid', (c) => c.primaryKey())
    .addColumn('principal_kind', 'text', (c) => c.notNull().check(sql`principal_kind IN ('customer', 'picker')`))
    .addColumn('customer_id', 'uuid', (c) => c.references('customers.id').onDelete('cascade'))
    .addColumn('picker_id', 'integer', (c) => c.references('pickers.id').onDelete('cascade'))
    .addColumn('session_id', 'uuid', (c) => c.references('auth_sessions.id').onDelete('cascade'))
    .addColumn('push_token', 'text', (c) => c.notNull())
    .addColumn('platform', 'text', (c) => c.notNull().check(sql`platform IN ('ios', 'android')`))
    .addColumn('app_kind', 'text', (c) => c.notNull().check(sql`app_kind IN ('customer', 'picker')`))
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment IN ('TEST', 'PRODUCTION')`))
    .addColumn('app_version', 'text', (c) => c.notNull())
    .addColumn('build_number', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`CREATE UNIQUE INDEX push_devices_token ON push_devices (push_token)`.execute(db);
  await sql`CREATE INDEX push_devices_customer ON push_devices (customer_id)`.execute(db);
  await sql`CREATE INDEX push_devices_picker ON push_devices (picker_id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of [
    'push_devices',
    'rate_events',
    'recovery_tokens',
    'otp_phones',
    'otp_codes',
    'auth_sessions',
    'picker_stores',
    'pickers',
    'customer_preferences',
    'customers',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
