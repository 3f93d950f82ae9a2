// npm run env:example: writes .env.example from the README's configuration table.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { configurationTable, renderEnvExample } from './lib/env-example.js';

const root = path.resolve(import.meta.dirname, '..');
const variables = configurationTable(readFileSync(path.join(root, 'README.md'), 'utf8'));
writeFileSync(path.join(root, '.env.example'), renderEnvExample(variables));
console.log(`.env.example: ${variables.length} variables`);
