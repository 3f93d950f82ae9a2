// .env.example and the README's configuration table say the same, and name every variable the
// service reads: the table is the source, `npm run env:example` writes the file from it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configurationTable, renderEnvExample } from '../../scripts/lib/env-example.js';
import { loadConfig, projectRoot } from '../../platform/config.js';

const readme = readFileSync(path.join(projectRoot, 'README.md'), 'utf8');
const table = configurationTable(readme);
const documented = new Set(table.map((v) => v.name));

const scratchDataDir = path.join(projectRoot, '.tmp', 'env-example-test');

/**
 * Variables the service reads: all configuration goes through loadConfig(env), so an env that
 * records every name asked of it tells, across variants that take each provider's other branch.
 */
function variablesRead(): Set<string> {
  const names = new Set<string>();
  const url = 'http://provider.example.test';
  const variants: Record<string, string>[] = [
    {},
    { APP_ENV: 'PROD', DATABASE_URL: 'postgres://db.example.test/grocery', JWT_SECRET: 'x'.repeat(32) },
    {
      SMS_PROVIDER: 'http',
      SMS_HTTP_URL: url,
      BANK_PROVIDER: 'http',
      BANK_HTTP_URL: url,
      PUSH_PROVIDER: 'http',
      PUSH_HTTP_URL: url,
      COURIER_PROVIDER: 'http',
      COURIER_HTTP_URL: url,
      LOYALTY_PROVIDER: 'cdp',
      LOYALTY_CDP_URL: url,
      GEOCODER_PROVIDER: 'mapbox',
      GEOCODER_ACCESS_TOKEN: 'token',
      MAP_PUBLIC_TOKEN: 'token',
      METRICS_TOKEN: 'y'.repeat(16),
    },
  ];
  for (const values of variants) {
    const read: NodeJS.ProcessEnv = { DATA_DIR: scratchDataDir, ...values };
    const env = new Proxy(read, {
      get(target, key) {
        if (typeof key === 'string' && /^[A-Z][A-Z0-9_]+$/.test(key)) names.add(key);
        return target[key as string];
      },
    });
    loadConfig(env);
  }
  return names;
}

describe('.env.example', () => {
  it('is what npm run env:example writes from the README table', () => {
    expect(readFileSync(path.join(projectRoot, '.env.example'), 'utf8')).toBe(renderEnvExample(table));
  });

  it('documents every variable the service reads, and only those', () => {
    const read = variablesRead();
    expect(
      [...read].filter((name) => !documented.has(name)),
      'read but not in the README table',
    ).toEqual([]);
    // TEST_DATABASE_URL is the test suite's own (test/support/global-setup.ts).
    expect(
      [...documented].filter((name) => !read.has(name) && name !== 'TEST_DATABASE_URL'),
      'documented but never read',
    ).toEqual([]);
  });

  it('gives the defaults the service uses', () => {
    const config = loadConfig({ DATA_DIR: scratchDataDir, JWT_SECRET: 'x'.repeat(32) });
    const literal = (name: string) => table.find((v) => v.name === name)?.value;
    expect(literal('PORT')).toBe(String(config.port));
    expect(literal('HOST')).toBe(config.host);
    expect(literal('DB_POOL_MAX')).toBe(String(config.dbPoolMax));
    expect(literal('APP_ENV')).toBe(config.env);
    expect(literal('LOG_LEVEL')).toBe(config.logLevel);
    expect(literal('BODY_LIMIT_BYTES')).toBe(String(config.bodyLimitBytes));
    expect(literal('ACCESS_TOKEN_TTL_SECONDS')).toBe(String(config.jwt.accessTtlSeconds));
  });
});
