// npm run catalog:import -- FILE [--publish]
//   Loads a catalog file (JSON, see db/catalog-import/file.ts for its shape) in one
//   transaction: every bad row is reported with its position and code, and nothing is imported
//   unless the whole file is valid. --publish also publishes a new catalog version afterwards.
//   The file is streamed (any size, bounded memory). Progress (rows/s, ETA) goes to standard
//   error when it is a terminal, or with --progress; the summary (with `rows_per_second` and
//   `peak_rss_mb`, the importer's peak resident memory) to standard output, and with --json as
//   its last line, one JSON object.
// npm run catalog:import -- --write-demo FILE [--products N]
//   Writes the deterministic demo catalog file (the one the demo data loads; N products, 2,000
//   by default), to look at the format or to load a larger catalog for benchmarks.
import { statSync, writeFileSync } from 'node:fs';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { CatalogSyntaxError, catalogFileSource } from '../db/catalog-import/stream.js';
import { CatalogImportError, importCatalogFrom, type ImportProgress } from '../db/catalog-import/write.js';
import { publishCatalogVersion } from '../db/queries/catalog-snapshot.js';
import { demoCatalogFile } from '../db/seed/catalog.js';
import { loadConfig } from '../platform/config.js';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const usage =
  'usage: npm run catalog:import -- FILE [--publish] [--progress] [--json]\n       npm run catalog:import -- --write-demo FILE [--products N]';

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
let fileBytes: number;
try {
  fileBytes = statSync(file).size;
} catch (err) {
  console.error(`${file}: cannot read the file (${(err as Error).message})`);
  process.exit(1);
}
let bytesRead = 0;
const source = catalogFileSource(file, (bytes) => (bytesRead = bytes));
const interactive = process.stderr.isTTY;
const showsProgress = interactive || flag('--progress');
let lastShown = 0;
/** One line on standard error: rows, rows/s and, while reading, the time left by the bytes still to read. */
function showProgress(p: ImportProgress): void {
  const now = performance.now();
  if (p.phase === 'reading' && now - lastShown < (interactive ? 250 : 5000)) return;
  lastShown = now;
  const seconds = p.elapsedMs / 1000;
  const rate = Math.round(p.products / Math.max(seconds, 0.001));
  const line =
    p.phase === 'reading'
      ? `reading: ${p.products} products, ${rate} rows/s, ${((100 * bytesRead) / Math.max(fileBytes, 1)).toFixed(1)}% of the file, ` +
        `ETA ${bytesRead > 0 ? Math.round((seconds * (fileBytes - bytesRead)) / bytesRead) : '?'} s of reading`
      : `writing: ${p.step} (${p.products} products, ${seconds.toFixed(1)} s so far)`;
  process.stderr.write(interactive ? `\r\x1b[K${line}` : `${line}\n`);
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
  const summary = await database.db
    .transaction()
    .execute((trx) => importCatalogFrom(trx, source, { onProgress: showsProgress ? showProgress : undefined }));
  const ms = Math.round(performance.now() - started);
  if (interactive) process.stderr.write('\n');
  const result = {
    ...summary,
    rows_per_second: Math.round(summary.products / (ms / 1000)),
    // ru_maxrss is in kilobytes: the peak resident memory of this process.
    peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
  };
  console.log(`imported ${file} in ${ms} ms:`, result);
  if (flag('--json')) console.log(JSON.stringify({ file, ms, ...result }));
  if (flag('--publish')) {
    const publication = await database.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute((trx) => publishCatalogVersion(trx, config.catalog.previousVersionTtlHours, new Date()));
    console.log(`published catalog version ${publication.version} (${publication.snapshots.length} snapshots)`);
  }
} catch (err) {
  if (err instanceof CatalogSyntaxError) {
    console.error(`${file}: cannot read a JSON document (${err.message})`);
    await database.shutdown();
    process.exit(1);
  }
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
