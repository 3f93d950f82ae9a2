// npm run migrate: applies the frozen migrations through DATABASE_DIRECT_URL (a session: migrations
// take locks), else DATABASE_URL, else the embedded database.
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { loadConfig } from '../platform/config.js';

const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseDirectUrl ?? config.databaseUrl,
  namedStatements: false,
  dataDir: config.dataDir,
  poolMax: 2,
});
try {
  const result = await migrateToLatest(database.db);
  const applied = (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
} finally {
  await database.shutdown();
}
