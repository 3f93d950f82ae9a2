// npm run catalog:generate -- --products N [--out FILE]
//   Writes a catalog file of N products (default 1,000,000) in the format catalog:import reads:
//   the demo units, categories and stores, Russian and English names, piece and weight-based
//   goods, per-store inventories. The same bytes for the same N on every run; written as a stream
//   (bounded memory at any N). Without --out the file goes to standard output.
import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { generateCatalogText } from '../db/catalog-import/generate.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const products = Number(option('--products') ?? 1_000_000);
if (!Number.isInteger(products) || products < 1) {
  console.error('usage: npm run catalog:generate -- --products N [--out FILE]   (N a positive integer)');
  process.exit(2);
}
const out = option('--out');
const started = performance.now();
await pipeline(Readable.from(generateCatalogText({ products })), out ? createWriteStream(out) : process.stdout);
if (out) console.error(`wrote ${products} products to ${out} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
