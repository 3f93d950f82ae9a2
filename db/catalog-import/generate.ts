// A realistic catalog file of any size (`npm run catalog:generate`, and bench:catalog's large
// catalog): the demo catalog's units, categories and stores, with `products` rows made by the demo
// generator - names in Russian and English, piece and weight-based goods, barcodes and PLUs, and
// inventories located in each demo store. Deterministic (seeded), and written as text chunks of a
// few hundred rows, so a million products never sit in memory at once: one product per line,
// sections in the order the import reads them (units and categories before products).
import { DEMO_UNITS, demoCategoryRows, demoProductRows } from '../seed/catalog.js';

/** Product rows per chunk of text. */
const ROWS_PER_CHUNK = 500;

/** The text of the file, in order; joined, it is one JSON document. */
export function* generateCatalogText(options: { products: number }): Generator<string> {
  if (!Number.isInteger(options.products) || options.products < 1) throw new Error('products must be a positive integer');
  yield `{"units":${JSON.stringify(DEMO_UNITS)},\n"categories":[\n${demoCategoryRows()
    .map((c) => JSON.stringify(c))
    .join(',\n')}\n],\n"products":[\n`;
  let chunk: string[] = [];
  let first = true;
  for (const row of demoProductRows(options.products)) {
    chunk.push(JSON.stringify(row));
    if (chunk.length === ROWS_PER_CHUNK) {
      yield (first ? '' : ',\n') + chunk.join(',\n');
      first = false;
      chunk = [];
    }
  }
  if (chunk.length) yield (first ? '' : ',\n') + chunk.join(',\n');
  yield '\n]}\n';
}
