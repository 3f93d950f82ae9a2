// Signed-in principals for tests, made through the same query functions as the service.
import { randomInt, randomUUID } from 'node:crypto';
import { createCustomer, findPickerByLogin } from '../../db/queries/accounts.js';
import { TokenService } from '../../platform/tokens.js';
import { startSession } from '../../services/sessions.js';
import type { components } from '../../generated/api.test.js';
import type { TestService } from './service.js';

/** Phones handed out in this test file: a customer's phone is unique, so none is given twice. */
const handedOutPhones = new Set<string>();
function unusedPhone(draw: () => string): string {
  for (;;) {
    const phone = draw();
    if (handedOutPhones.has(phone)) continue;
    handedOutPhones.add(phone);
    return phone;
  }
}

/** A phone outside the configured test-phone prefix (+7999000…), never the same twice in a test file. */
export const randomPhone = () => unusedPhone(() => `+7916${String(randomInt(0, 10_000_000)).padStart(7, '0')}`);
/**
 * A configured TEST phone (its codes are readable through GET /api/qa/otp/last), never the same
 * twice in a test file and never one of the demo's (+79990000001, ...): the prefix leaves only
 * 10,000 numbers, and a repeat met the resend cooldown and the earlier, used code (seen in CI).
 */
export const randomTestPhone = () => unusedPhone(() => `+7999000${String(randomInt(100, 10_000)).padStart(4, '0')}`);

export async function signInCustomer(svc: TestService, phone = randomPhone()) {
  const tokens = new TokenService(svc.config.jwt);
  const customer = await createCustomer(svc.deps.db, phone, 'en');
  const pair = await startSession(svc.deps.db, tokens, { kind: 'customer', customerId: customer.id }, svc.deps.clock.now());
  return { customerId: customer.id, phone, ...pair, auth: { authorization: `Bearer ${pair.access}` } };
}

/** Signs in a demo picker (db/seed/accounts.ts). */
export async function signInPicker(svc: TestService, login = 'picker1') {
  const tokens = new TokenService(svc.config.jwt);
  const picker = await findPickerByLogin(svc.deps.db, login);
  if (!picker) throw new Error(`demo picker ${login} is missing`);
  const pair = await startSession(svc.deps.db, tokens, { kind: 'picker', pickerId: picker.id }, svc.deps.clock.now());
  return { pickerId: picker.id, ...pair, auth: { authorization: `Bearer ${pair.access}` } };
}

/**
 * Registers an app installation for push through PUT /api/accounts/me/push-devices (a customer's
 * order changes notify only a customer who has the app installed).
 */
export async function registerPushDevice(
  svc: TestService,
  auth: Record<string, string>,
  opts: { platform?: 'android' | 'ios'; appKind?: 'customer' | 'picker'; lang?: 'ru' | 'en' } = {},
) {
  const device: components['schemas']['PushDeviceInput'] = {
    push_token: `token-${randomUUID()}`,
    device_id: randomUUID(),
    platform: opts.platform ?? 'android',
    app_version: '3.14.0',
    build_number: '3140',
    app_kind: opts.appKind ?? 'customer',
  };
  const r = await svc.client.call.PUT('/api/accounts/me/push-devices', {
    headers: { ...auth, ...(opts.lang ? { 'accept-language': opts.lang } : {}) },
    body: device,
  });
  if (r.status !== 200) throw new Error(`push device registration answered ${r.status}`);
  return device;
}
