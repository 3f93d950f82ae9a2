// Sign-in by one-time code: sending a code, checking one, and what a correct code buys (a
// session, a confirmation that leaves the code usable, or a PIN recovery token). Code rules are
// in domain/codes/otp.ts.
import { randomUUID } from 'node:crypto';
import { createCustomer, findCustomerByPhone, getOrCreatePreferences } from '../../db/queries/accounts.js';
import {
  consumeOtpCode,
  insertOtpCode,
  insertRecoveryToken,
  lastOtpSend,
  latestOtpCode,
  lockOtpPhone,
  otpSendsSince,
  recordOtpAttempt,
} from '../../db/queries/auth.js';
import type { Executor } from '../../db/executor.js';
import { generateOtp, hashOtp, isTestPhone, otpMatches, otpSmsText, otpState, sendLimit, OTP_LENGTH } from '../../domain/codes/otp.js';
import type { Config } from '../../platform/config.js';
import { SmsError } from '../../platform/providers/sms/index.js';
import type { AppDeps } from '../deps.js';
import { AppError, badGateway, forbidden, rateLimited, serviceUnavailable, unprocessable } from '../errors.js';
import { startSession, type TokenPair } from '../sessions.js';

export type CodePurpose = 'login' | 'update_pin';
type Lang = 'ru' | 'en';
type CodeDeps = Pick<AppDeps, 'db' | 'config' | 'clock'>;

/** How long a code's send or check waits for one phone's send before it: the SMS deadline and a second. */
const otpPhoneLockWaitMs = (config: { sms: { timeoutMs: number } }) => config.sms.timeoutMs + 1000;

export interface CodeSent {
  resendAfterSeconds: number;
  expiresInSeconds: number;
  codeLength: number;
}

/**
 * Sends a new code, unless a limit says no. Everything happens under the phone's row lock, and
 * a failed SMS rolls the whole send back: no new code, no cooldown, not counted. `lang` is the
 * SMS language for a phone without an account; an account's own preference wins.
 */
export async function sendCode(deps: CodeDeps & Pick<AppDeps, 'sms'>, phone: string, purpose: CodePurpose, lang: Lang): Promise<CodeSent> {
  const { config, db, sms } = deps;
  const auth = config.auth;
  await db.transaction().execute(async (trx) => {
    await lockOtpPhone(trx, phone, otpPhoneLockWaitMs(config));
    const now = deps.clock.now();
    const last = await lastOtpSend(trx, phone, purpose);
    const recent = await otpSendsSince(trx, phone, new Date(now.getTime() - 3600_000));
    const limit = sendLimit(
      now,
      last?.created_at ?? null,
      recent.map((r) => r.created_at),
      {
        cooldownSeconds: auth.otpResendCooldownSeconds,
        maxPerHour: auth.otpMaxSendsPerHour,
      },
    );
    if (limit) {
      const cooldown = limit.code === 'OTP_RESEND_COOLDOWN';
      throw rateLimited(
        limit.code,
        cooldown ? 'A code was sent recently; wait before asking again' : 'Too many codes for this phone in the last hour',
        limit.retryAfterSeconds,
        cooldown
          ? { name: 'otp-resend', quota: 1, windowSeconds: auth.otpResendCooldownSeconds }
          : { name: 'otp-hourly', quota: auth.otpMaxSendsPerHour, windowSeconds: 3600 },
      );
    }
    const customer = await findCustomerByPhone(trx, phone);
    const testPhone = isTestPhone(phone, auth.otpTestPhonePrefixes);
    // A recovery code for a phone without an account is stored but never delivered, so the
    // answer (and the cooldowns that follow) look the same for every phone.
    const deliver = !testPhone && (purpose === 'login' || customer !== undefined);
    const code = generateOtp();
    await insertOtpCode(trx, {
      phone,
      purpose,
      codeHash: hashOtp(auth.otpHmacKey, phone, purpose, code),
      plainCode: testPhone ? code : null,
      expiresAt: new Date(now.getTime() + auth.otpTtlSeconds * 1000),
      delivered: deliver,
    });
    if (!deliver) return;
    const smsLang = customer ? (await getOrCreatePreferences(trx, customer.id)).language : lang;
    try {
      await sms.send({ phone, text: otpSmsText(code, smsLang) });
    } catch (err) {
      if (err instanceof SmsError && err.kind === 'refused') throw badGateway('SMS_DELIVERY_FAILED', 'The SMS gateway refused the message');
      if (err instanceof SmsError)
        throw serviceUnavailable('SMS_PROVIDER_UNAVAILABLE', 'The SMS gateway is not answering; retry later', 30);
      throw err;
    }
  });
  return { resendAfterSeconds: auth.otpResendCooldownSeconds, expiresInSeconds: auth.otpTtlSeconds, codeLength: OTP_LENGTH };
}

type CodeCheck = { ok: true; codeId: number; expiresAt: Date } | { ok: false; error: AppError };

/**
 * Checks `code` against the phone's latest code of `purpose`; a wrong code costs an attempt.
 * Must run inside a transaction holding the phone's lock. Returns the error instead of throwing
 * so the caller commits the counted attempt before answering.
 */
async function checkCode(
  trx: Executor,
  auth: Config['auth'],
  phone: string,
  purpose: CodePurpose,
  code: string,
  now: Date,
): Promise<CodeCheck> {
  const row = await latestOtpCode(trx, phone, purpose);
  // In this order: no code of this purpose was sent (a recovery code is not a sign-in code) is
  // OTP_INVALID with no attempts to count; then used or expired; then burned by wrong attempts.
  if (!row)
    return {
      ok: false,
      error: unprocessable('OTP_INVALID', 'No code for this was sent to this phone; ask for one', { extra: { attempts_left: null } }),
    };
  const state = otpState(row, auth.otpMaxAttempts, now);
  if (state === 'used' || state === 'expired') {
    return { ok: false, error: unprocessable('OTP_EXPIRED', 'The code has expired or was already used; ask for a new one') };
  }
  if (state === 'attempts_exceeded') {
    return {
      ok: false,
      error: unprocessable('OTP_ATTEMPTS_EXCEEDED', 'Too many wrong attempts; ask for a new code', { extra: { attempts_left: 0 } }),
    };
  }
  if (!otpMatches(auth.otpHmacKey, phone, purpose, code, row.code_hash)) {
    await recordOtpAttempt(trx, row.id);
    const left = auth.otpMaxAttempts - row.attempts - 1;
    return left > 0
      ? { ok: false, error: unprocessable('OTP_INVALID', 'The code is not correct', { extra: { attempts_left: left } }) }
      : {
          ok: false,
          error: unprocessable('OTP_ATTEMPTS_EXCEEDED', 'Too many wrong attempts; ask for a new code', { extra: { attempts_left: 0 } }),
        };
  }
  return { ok: true, codeId: row.id, expiresAt: row.expires_at };
}

type Outcome<T> = { value: T } | { error: AppError };
const fail = (error: AppError): { error: AppError } => ({ error });

/**
 * The shared path of every use case that takes a code: under the phone's lock, the code check,
 * then `then` with the checked code in the same transaction. An error either returns is thrown
 * only after the commit, so a wrong code's counted attempt is kept.
 */
async function withCheckedCode<T>(
  deps: CodeDeps,
  phone: string,
  code: string,
  purpose: CodePurpose,
  then: (trx: Executor, code: { codeId: number; expiresAt: Date }) => Promise<Outcome<T>>,
): Promise<T> {
  const { db, config } = deps;
  const outcome = await db.transaction().execute(async (trx): Promise<Outcome<T>> => {
    await lockOtpPhone(trx, phone, otpPhoneLockWaitMs(config));
    const check = await checkCode(trx, config.auth, phone, purpose, code, deps.clock.now());
    if (!check.ok) return fail(check.error);
    return then(trx, check);
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

export interface CodeSignIn {
  pair: TokenPair;
  isNewUser: boolean;
  hasPin: boolean;
}

/** Signs in with a sign-in code, using it up; a phone without an account gets one (in `lang`). */
export function signInWithCode(deps: CodeDeps & Pick<AppDeps, 'tokens'>, phone: string, code: string, lang: Lang): Promise<CodeSignIn> {
  return withCheckedCode(deps, phone, code, 'login', async (trx, check) => {
    let customer = await findCustomerByPhone(trx, phone);
    // The right code is used up even for a disabled account: once support re-enables the
    // account, this code must not sign in.
    await consumeOtpCode(trx, check.codeId);
    if (customer?.is_disabled) return fail(forbidden('ACCOUNT_DISABLED', 'This account is disabled'));
    const isNewUser = customer === undefined;
    customer ??= await createCustomer(trx, phone, lang);
    const pair = await startSession(trx, deps.tokens, { kind: 'customer', customerId: customer.id }, deps.clock.now());
    return { value: { pair, isNewUser, hasPin: customer.pin_hash !== null } };
  });
}

export interface CodeVerified {
  isNewUser: boolean;
  expiresAt: Date;
}

/** Checks a sign-in code without using it up, and issues nothing. */
export function verifyCode(deps: CodeDeps, phone: string, code: string): Promise<CodeVerified> {
  return withCheckedCode(deps, phone, code, 'login', async (trx, check) => {
    const customer = await findCustomerByPhone(trx, phone);
    return { value: { isNewUser: customer === undefined, expiresAt: check.expiresAt } };
  });
}

/**
 * A correct PIN recovery code buys a single-use recovery token; its id (`jti`, and `sid`) is the
 * recovery record's, which is how services/sign-in/pin.ts finds and checks that record.
 */
export function verifyRecoveryCode(deps: CodeDeps & Pick<AppDeps, 'tokens'>, phone: string, code: string): Promise<string> {
  const { tokens } = deps;
  return withCheckedCode(deps, phone, code, 'update_pin', async (trx, check) => {
    const customer = await findCustomerByPhone(trx, phone);
    // Codes for unknown phones were never delivered; a match is answered like a wrong code.
    if (!customer) return fail(unprocessable('OTP_INVALID', 'The code is not correct'));
    await consumeOtpCode(trx, check.codeId);
    const jti = randomUUID();
    await insertRecoveryToken(trx, {
      jti,
      customerId: customer.id,
      expiresAt: new Date(deps.clock.nowMs() + tokens.ttlSeconds('recovery') * 1000),
    });
    return { value: tokens.sign('recovery', customer.id, jti, jti) };
  });
}
