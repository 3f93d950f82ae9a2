// Frozen migration: never edit after it has landed; add a new one instead.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Search needs trigram and accent-free matching; slot capacity uses exclusion
  // constraints. All three ship with PostgreSQL's contrib and exist on the embedded server.
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`.execute(db);
  await sql`CREATE EXTENSION IF NOT EXISTS unaccent`.execute(db);
  await sql`CREATE EXTENSION IF NOT EXISTS btree_gist`.execute(db);

  await db.schema
    .createTable('stores')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('name_ru', 'text', (c) => c.notNull())
    .addColumn('name_en', 'text', (c) => c.notNull())
    .addColumn('address_ru', 'text')
    .addColumn('address_en', 'text')
    .addColumn('lon', 'double precision', (c) => c.notNull().check(sql`lon BETWEEN -180 AND 180`))
    .addColumn('lat', 'double precision', (c) => c.notNull().check(sql`lat BETWEEN -90 AND 90`))
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('Europe/Moscow'))
    .addColumn('phone', 'text')
    .addColumn('is_active', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  // Transactional outbox: a state change and its event commit together; the trigger's NOTIFY is
  // delivered only on commit, and every instance LISTENs, so all instances see every event.
  await db.schema
    .createTable('outbox_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('event_id', 'uuid', (c) =>
      c
        .notNull()
        .unique()
        .defaultTo(sql`gen_random_uuid()`),
    )
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('customer_id', 'uuid')
    .addColumn('store_id', 'uuid')
    .addColumn('order_id', 'uuid')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('published_at', 'timestamptz')
    .execute();
  await sql`CREATE INDEX outbox_events_unpublished ON outbox_events (id) WHERE published_at IS NULL`.execute(db);
  await sql`
    CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('outbox_events', NEW.id::text);
      RETURN NEW;
    END $$`.execute(db);
  await sql`CREATE TRIGGER outbox_events_notify AFTER INSERT ON outbox_events
    FOR EACH ROW EXECUTE FUNCTION outbox_notify()`.execute(db);

  // Idempotency records: one key is one action of one principal on one operation.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('principal', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state IN ('in_progress', 'completed')`))
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['principal', 'operation_id', 'key'])
    .execute();
  await sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.dropTable('outbox_events').execute();
  await sql`DROP FUNCTION IF EXISTS outbox_notify()`.execute(db);
  await db.schema.dropTable('stores').execute();
}
