// The fast tests alone, for the mutation run (npm run test:mutation, stryker.config.mjs):
// test/unit/ without the main config's global setup, so no PostgreSQL is started and no contract
// coverage is collected. The few files in test/unit/ that open a database of their own
// (test/support/db.ts needs that global setup) are left out.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = fileURLToPath(new URL('../..', import.meta.url));
const unitDir = fileURLToPath(new URL('.', import.meta.url));
const needsDatabase = readdirSync(unitDir)
  .filter((name) => name.endsWith('.test.ts'))
  .filter((name) => /from '\.\.\/support\/db\.js'/.test(readFileSync(`${unitDir}/${name}`, 'utf8')))
  .map((name) => `test/unit/${name}`);

export default defineConfig({
  test: {
    root,
    include: ['test/unit/**/*.test.ts'],
    exclude: ['**/node_modules/**', ...needsDatabase],
    globalSetup: [],
    pool: 'forks',
  },
});
