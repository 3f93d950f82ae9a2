// Configuration read from the environment: a variable set to nothing is unset, not an empty key;
// providers that need a URL say so at start; PROD names the development providers it runs with.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { developmentProvidersIn, loadConfig } from '../../platform/config.js';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'grocery-config-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const PROD = { APP_ENV: 'PROD', DATA_DIR: dataDir, DATABASE_URL: 'postgres://grocery@db/grocery', JWT_SECRET: 's'.repeat(40) };

describe('loadConfig', () => {
  it('treats secrets and the issuer set to nothing as unset', () => {
    const c = loadConfig({ APP_ENV: 'TEST', DATA_DIR: dataDir, JWT_SECRET: '', OTP_HMAC_KEY: '', JWT_ISSUER: '' });
    expect(c.jwt.secret.length).toBeGreaterThanOrEqual(32);
    expect(c.auth.otpHmacKey.length).toBeGreaterThanOrEqual(32);
    expect(c.jwt.issuer).toBe('grocery-service');
    expect(() => loadConfig({ ...PROD, JWT_SECRET: '' })).toThrow(/JWT_SECRET/);
  });

  it('refuses a short OTP_HMAC_KEY, and SMS over HTTP without its URL in any environment', () => {
    expect(() => loadConfig({ ...PROD, OTP_HMAC_KEY: 'short' })).toThrow(/OTP_HMAC_KEY/);
    expect(() => loadConfig({ APP_ENV: 'TEST', DATA_DIR: dataDir, SMS_PROVIDER: 'http' })).toThrow(/SMS_HTTP_URL/);
  });

  it('names the development providers of a PROD configuration, and none in TEST', () => {
    expect(developmentProvidersIn(loadConfig(PROD)).map((p) => p.split(' ')[0])).toEqual([
      'SMS_PROVIDER=log',
      'BANK_PROVIDER=sandbox',
      'COURIER_PROVIDER=simulator',
      'PUSH_PROVIDER=recording',
      'LOYALTY_PROVIDER=local',
    ]);
    const real = loadConfig({
      ...PROD,
      SMS_PROVIDER: 'http',
      SMS_HTTP_URL: 'https://sms.example',
      BANK_PROVIDER: 'http',
      BANK_HTTP_URL: 'https://bank.example',
      COURIER_PROVIDER: 'http',
      COURIER_HTTP_URL: 'https://couriers.example',
      PUSH_PROVIDER: 'http',
      PUSH_HTTP_URL: 'https://push.example',
      LOYALTY_PROVIDER: 'cdp',
      LOYALTY_CDP_URL: 'https://cdp.example',
    });
    expect(developmentProvidersIn(real)).toEqual([]);
    expect(developmentProvidersIn(loadConfig({ APP_ENV: 'TEST', DATA_DIR: dataDir }))).toEqual([]);
  });
});
