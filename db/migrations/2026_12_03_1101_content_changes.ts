// Frozen migration: never edit after it has landed; add a new one instead.
// Every instance keeps the content the apps read on start-up (banners, stories, pages, titles,
// support contacts, update messages, units, the main page's category blocks) in memory and answers
// from it without PostgreSQL (services/content-cache.ts). A statement that changes the rows of one
// of those answers, whoever runs it (a service, the catalog import, the content team's SQL),
// now sends NOTIFY content_changed with the table's name, and each instance drops what it kept
// of that table when it hears it (server/realtime/outbox-feed.ts listens).
//
// NOTIFY in the writing transaction, unlike the outbox's wake-up (migration 2026_11_26_2101): a
// notifying transaction takes a database-wide lock at commit, which costs the busy writers of
// orders and picking a queue, but these tables change a few times a month (products and
// inventories: by catalog imports, and only the columns the category blocks read), and a NOTIFY
// in the transaction is what reaches instances for SQL no service pool ran. Statement-level: one
// notification per statement, however many rows, and PostgreSQL folds the same one repeated in a
// transaction.
import { sql, type Kysely } from 'kysely';

/** Tables whose every change changes a kept answer. */
const CONTENT_TABLES = [
  'banners',
  'stories',
  'story_slides',
  'content_pages',
  'main_page_titles',
  'support_contacts',
  'mobile_update_messages',
  'measurement_units',
  'categories',
] as const;

/**
 * Tables that change all day for other reasons (stock, prices): only the columns that decide
 * whether a category has products sold in a store (the main page's blocks) notify.
 */
const PARTLY = {
  products: ['is_active', 'category_id'],
  inventories: ['is_default', 'product_id', 'store_id'],
} as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION content_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('content_changed', TG_TABLE_NAME);
      RETURN NULL;
    END $$`.execute(db);
  for (const table of CONTENT_TABLES) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_content_changed`)}
      AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION content_changed()`.execute(db);
  }
  for (const [table, columns] of Object.entries(PARTLY)) {
    await sql`CREATE TRIGGER ${sql.id(`${table}_content_changed`)}
      AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF ${sql.join(columns.map((c) => sql.id(c)))} ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION content_changed()`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [...CONTENT_TABLES, ...Object.keys(PARTLY)]) {
    await sql`DROP TRIGGER IF EXISTS ${sql.id(`${table}_content_changed`)} ON ${sql.table(table)}`.execute(db);
  }
  await sql`DROP FUNCTION IF EXISTS content_changed()`.execute(db);
}
