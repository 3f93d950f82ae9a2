import type { Kysely } from 'kysely';
import { Migrator, type MigrationResultSet } from 'kysely/migration';
import { migrations } from './migrations/index.js';
import type { DB } from './schema.js';

export async function migrateToLatest(db: Kysely<DB>): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error');
    const reason = String((result.error as Error).message ?? result.error);
    // No migration ran: the database could not be reached at all (wrong DATABASE_URL, down).
    if (!failed) throw new Error(`cannot migrate the database: ${reason}`, { cause: result.error });
    throw new Error(`migration ${failed.migrationName} failed: ${reason}`, { cause: result.error });
  }
  return result;
}
