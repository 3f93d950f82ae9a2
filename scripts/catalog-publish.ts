// npm run catalog:publish: publishes a new catalog version. For every active store and both
// languages it builds the bootstrap snapshot (menu and main-page categories, banners, products,
// sections, titles) as stored bytes with a strong ETag, then makes the version current - all in
// one transaction, so readers switch from the old version to the complete new one at once.
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { publishCatalogVersion } from '../db/queries/catalog-snapshot.js';
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
  const started = performance.now();
  const publication = await database.db
    .transaction()
    // One consistent view of the catalog for every snapshot of the version.
    .setIsolationLevel('repeatable read')
    .execute((trx) => publishCatalogVersion(trx, config.catalog.previousVersionTtlHours, new Date()));
  console.log(
    `published catalog version ${publication.version} at ${publication.published_at} in ${Math.round(performance.now() - started)} ms`,
  );
  for (const s of publication.snapshots) {
    console.log(`  store ${s.store_id} ${s.language}: ${s.products} products, ${s.bytes} bytes (${s.gzip_bytes} gzip), ETag ${s.etag}`);
  }
  if (publication.expired_versions) console.log(`  removed ${publication.expired_versions} expired version(s)`);
} finally {
  await database.shutdown();
}
