// npm run catalog:import -- FILE [--publish]
//   Loads a catalog file (JSON, see db/catalog-import/file.ts for its shape) in one
//   transaction: every bad row is reported with its position and code, and nothing is imported
//   unless the whole file is valid. --publish also publishes a new catalog version afterwards.
// npm run catalog:import -- --write-demo FILE [--products N]
//   Writes the deterministic demo catalog file (the one the demo data loads; N products, 2,000
//   by default), to look at the format or to load a larger catalog for benchmarks.
import { readFileSync, writeFileSync } from 'node:fs';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { CatalogImportError, importCatalog } from '../db/catalog-import/write.js';
import { publishCatalogVersion } from '../db/queries/catalog-snapshot.js';
import { demoCatalogFile } from '../db/seed/catalog.js';
import { loadConfig } from '../platform/config.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const usage = 'usage: npm run catalog:import -- FILE [--publish]\n       npm run catalog:import -- --write-demo FILE [--products N]';

const demoOut = option('--write-demo');
if (demoOut) {
  const products = Number(option('--products') ?? 2000);
  if (!Number.isInteger(products) || products < 1) throw new Error('--products must be a positive integer');
  writeFileSync(demoOut, JSON.stringify(demoCatalogFile({ products }), null, 1));
  console.log(`wrote the demo catalog (${products} products) to ${demoOut}`);
  process.exit(0);
}

const file = args.find((a) => !a.startsWith('--'));
if (!file) {
  console.error(usage);
  process.exit(2);
}
let parsed: unknown;
try {
  parsed = JSON.parse(readFileSync(file, 'utf8'));
} catch (err) {
  console.error(`${file}: cannot read a JSON document (${(err as Error).message})`);
  process.exit(1);
}

const config = loadConfig();
const database = await openDatabase({
  databaseUrl: config.databaseDirectUrl ?? config.databaseUrl,
  namedStatements: false,
  dataDir: config.dataDir,
  poolMax: 2,
});
let exitCode = 0;
try {
  await migrateToLatest(database.db);
  const started = performance.now();
  const summary = await database.db.transaction().execute((trx) => importCatalog(trx, parsed));
  console.log(`imported ${file} in ${Math.round(performance.now() - started)} ms:`, summary);
  if (flag('--publish')) {
    const publication = await database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute((trx) => publishCatalogVersion(trx, config.catalog.previousVersionTtlHours, new Date()));
    console.log(`published catalog version ${publication.version} (${publication.snapshots.length} snapshots)`);
  }
} catch (err) {
  if (!(err instanceof CatalogImportError)) throw err;
  const shown = err.problems.slice(0, 100);
  console.error(`${file}: ${err.problems.length} problem(s); nothing was imported.`);
  for (const p of shown) console.error(`  ${p.row}${p.field ? ` ${p.field}` : ''}: ${p.message}`);
  if (err.problems.length > shown.length) console.error(`  ... and ${err.problems.length - shown.length} more`);
  exitCode = 1;
} finally {
  await database.shutdown();
}
process.exit(exitCode);
