// npm run seed: migrates and loads the deterministic demo data into an empty database.
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { loadConfig } from '../platform/config.js';

const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseDirectUrl ?? config.databaseUrl,
  namedStatements: false,
  dataDir: config.dataDir,
  poolMax: 2,
});
try {
  await migrateToLatest(database.db);
  const { seeded } = await seedDemoData(database.db, new Date());
  console.log(seeded ? 'demo data loaded' : 'database already has data; nothing changed');
} finally {
  await database.shutdown();
}
