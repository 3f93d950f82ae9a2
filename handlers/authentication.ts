// Handlers of the Authentication tag: one-time codes, PIN sign-in, token refresh and verify,
// PIN recovery. Rules are in domain/codes/otp.ts and pin.ts; sessions in services/sessions.ts.
import { randomUUID } from 'node:crypto';
import type { HandlerMap, StepsMap } from '../server/handler-types.js';
import { createCustomer, findCustomer, findCustomerByPhone, getOrCreatePreferences, setCustomerPin } from '../db/queries/accounts.js';
import {
  consumeOtpCode,
  insertOtpCode,
  insertRecoveryToken,
  isSessionActive,
  lastOtpSend,
  latestOtpCode,
  lockOtpPhone,
  lockRecoveryToken,
  lockSession,
  markRecoveryTokenUsed,
  otpSendsSince,
  recordOtpAttempt,
  revokeSessions,
} from '../db/queries/auth.js';
import type { Executor } from '../db/executor.js';
import { activePrincipal } from '../services/principal.js';
import { verifySecret, hashSecret } from '../domain/codes/passwords.js';
import { CLOCK_SKEW_SECONDS, TokenError, type TokenClaims } from '../platform/tokens.js';
import type { Config } from '../platform/config.js';
import { AppError, forbidden, rateLimited, serviceUnavailable, badGateway, unprocessable } from '../services/errors.js';
import type { RequestContext } from '../server/handler-types.js';
import { SmsError } from '../platform/providers/sms/index.js';
import { generateOtp, hashOtp, isTestPhone, otpMatches, otpSmsText, otpState, sendLimit, OTP_LENGTH } from '../domain/codes/otp.js';
import { pinProblem } from '../domain/codes/pin.js';
import { assertUnderLimit, clearRateEvents, oneAttemptAtATime, recordRateEvent } from '../services/limits.js';
import { invalidRefresh, rotateRefreshToken, startSession } from '../services/sessions.js';

type Purpose = 'login' | 'update_pin';
type AnyCtx = RequestContext<'sendOtp' | 'sendPinRecoveryOtp'>;

/** How long a code's send or check waits for one phone's send before it: the SMS deadline and a second. */
const otpPhoneLockWaitMs = (config: { sms: { timeoutMs: number } }) => config.sms.timeoutMs + 1000;

/** Sends a new code, unless a limit says no. Everything happens under the phone's row lock, and
 *  a failed SMS rolls the whole send back: no new code, no cooldown, not counted. */
async function sendCode(ctx: AnyCtx, phone: string, purpose: Purpose) {
  const { config, db, sms } = ctx.deps;
  const auth = config.auth;
  await db.transaction().execute(async (trx) => {
    await lockOtpPhone(trx, phone, otpPhoneLockWaitMs(config));
    const now = ctx.deps.clock.now();
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
    const lang = customer ? (await getOrCreatePreferences(trx, customer.id)).language : ctx.lang;
    try {
      await sms.send({ phone, text: otpSmsText(code, lang) });
    } catch (err) {
      if (err instanceof SmsError && err.kind === 'refused') throw badGateway('SMS_DELIVERY_FAILED', 'The SMS gateway refused the message');
      if (err instanceof SmsError)
        throw serviceUnavailable('SMS_PROVIDER_UNAVAILABLE', 'The SMS gateway is not answering; retry later', 30);
      throw err;
    }
  });
  return {
    status: 200 as const,
    body: {
      message: 'Code sent',
      data: { resend_after_seconds: auth.otpResendCooldownSeconds, expires_in_seconds: auth.otpTtlSeconds, code_length: OTP_LENGTH },
    },
  };
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
  purpose: Purpose,
  code: string,
  now: Date,
): Promise<CodeCheck> {
  const row = await latestOtpCode(trx, phone, purpose);
  // The spec's table, in its order: no code of this purpose was sent (a recovery code is not a
  // sign-in code) is OTP_INVALID with no attempts to count; then used or expired; then burned.
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

/** Runs `work` in a transaction and throws the error it returned only after the commit, so
 *  what must persist despite the error (a counted wrong attempt) is kept. */
async function commitThenThrow<T>(db: Executor, work: (trx: Executor) => Promise<Outcome<T>>): Promise<T> {
  const outcome = await db.transaction().execute((trx) => work(trx));
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

const customerOwner = (claims: TokenClaims) => ({ kind: 'customer' as const, customerId: claims.sub });

/** A recovery token's id as issued (randomUUID): the record is found by it, so it is the record's. */
const ISSUED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether a recovery token's claims are those issued with its record (verifyPinRecoveryOtp):
 * its own id as session, the record's customer, and times inside the record's life, give or
 * take the clock skew between instances (the record's times are the database's and the
 * service clock's, the token's the wall clock's).
 */
function recoveryTokenMatches(
  claims: TokenClaims,
  record: { jti: string; customer_id: string; created_at: Date; expires_at: Date },
): boolean {
  const skewMs = CLOCK_SKEW_SECONDS * 1000;
  return (
    claims.sid === record.jti &&
    claims.sub === record.customer_id &&
    claims.iat * 1000 >= record.created_at.getTime() - skewMs &&
    claims.exp * 1000 <= record.expires_at.getTime() + skewMs
  );
}

type CodeCtx = RequestContext<'confirmOtp' | 'verifyOtp' | 'verifyPinRecoveryOtp'>;

/**
 * The shared path of every operation that takes a code: the per-client limit, then, under the
 * phone's lock, the code check (a wrong code's counted attempt is committed before the error is
 * answered), then `then` with the checked code in the same transaction.
 */
async function withCheckedCode<T>(
  ctx: CodeCtx,
  purpose: Purpose,
  then: (trx: Executor, code: { codeId: number; expiresAt: Date }) => Promise<Outcome<T>>,
): Promise<T> {
  const { db, config } = ctx.deps;
  const { phone, code } = ctx.body;
  return commitThenThrow(db, async (trx) => {
    await lockOtpPhone(trx, phone, otpPhoneLockWaitMs(config));
    const check = await checkCode(trx, config.auth, phone, purpose, code, ctx.deps.clock.now());
    if (!check.ok) return fail(check.error);
    return then(trx, check);
  });
}

export const authenticationHandlers = {
  // POST /api/auth/otp/send
  sendOtp: (ctx) => sendCode(ctx, ctx.body.phone, 'login'),

  // POST /api/auth/otp/confirm
  confirmOtp: async (ctx) => {
    const { tokens } = ctx.deps;
    const { phone } = ctx.body;
    const body = await withCheckedCode(ctx, 'login', async (trx, check) => {
      let customer = await findCustomerByPhone(trx, phone);
      // The right code is used up either way (the contract's table): once support re-enables the
      // account, this code must not sign in.
      await consumeOtpCode(trx, check.codeId);
      if (customer?.is_disabled) return fail(forbidden('ACCOUNT_DISABLED', 'This account is disabled'));
      const isNewUser = customer === undefined;
      customer ??= await createCustomer(trx, phone, ctx.lang);
      const pair = await startSession(trx, tokens, { kind: 'customer', customerId: customer.id }, ctx.deps.clock.now());
      return { value: { access: pair.access, refresh: pair.refresh, phone, is_new_user: isNewUser, has_pin: customer.pin_hash !== null } };
    });
    return { status: 200, body };
  },

  // POST /api/auth/otp/verify: checks a code without using it up and issues nothing.
  verifyOtp: async (ctx) => {
    const { phone } = ctx.body;
    const body = await withCheckedCode(ctx, 'login', async (trx, check) => {
      const customer = await findCustomerByPhone(trx, phone);
      return { value: { phone, verified: true as const, is_new_user: customer === undefined, expires_at: check.expiresAt.toISOString() } };
    });
    return { status: 200, body };
  },

  // POST /api/auth/otp/update-pin/send
  sendPinRecoveryOtp: (ctx) => sendCode(ctx, ctx.body.phone, 'update_pin'),

  // POST /api/auth/otp/update-pin/verify: a correct code buys a single-use recovery token.
  verifyPinRecoveryOtp: async (ctx) => {
    const { tokens } = ctx.deps;
    const { phone } = ctx.body;
    const body = await withCheckedCode(ctx, 'update_pin', async (trx, check) => {
      const customer = await findCustomerByPhone(trx, phone);
      // Codes for unknown phones were never delivered; a match is answered like a wrong code.
      if (!customer) return fail(unprocessable('OTP_INVALID', 'The code is not correct'));
      await consumeOtpCode(trx, check.codeId);
      const jti = randomUUID();
      await insertRecoveryToken(trx, {
        jti,
        customerId: customer.id,
        expiresAt: new Date(ctx.deps.clock.nowMs() + tokens.ttlSeconds('recovery') * 1000),
      });
      return { value: { phone, token: tokens.sign('recovery', customer.id, jti, jti) } };
    });
    return { status: 200, body };
  },

  // PATCH /api/auth/recovery/update-pin (X-Recovery-Key)
  updatePin: async (ctx) => {
    const { db, tokens } = ctx.deps;
    const { password, password_repeat } = ctx.body;
    const raw = ctx.transport.recoveryKey;
    const invalidRecovery = () => new AppError(401, 'RECOVERY_TOKEN_INVALID', 'The recovery token is not valid; verify a new code');
    let claims: TokenClaims;
    try {
      claims = tokens.verify(String(raw), 'recovery');
    } catch (err) {
      if (err instanceof TokenError) throw invalidRecovery();
      throw err;
    }
    // Issued ids are lower-case UUIDs (randomUUID); any other id matches no record, and would
    // fail the uuid column's parse as a 500.
    if (!ISSUED_ID.test(claims.jti)) throw invalidRecovery();
    if (password !== password_repeat) throw unprocessable('PIN_MISMATCH', 'The PINs do not match');
    if (pinProblem(password)) throw unprocessable('PIN_TOO_WEAK', 'Choose a PIN that is not a sequence or a repeated digit');
    const pinHash = await hashSecret(password);
    const body = await db.transaction().execute(async (trx) => {
      const token = await lockRecoveryToken(trx, claims.jti);
      if (!token || token.used_at || token.revoked_at || token.expires_at <= ctx.deps.clock.now()) throw invalidRecovery();
      // A token whose claims differ from what was issued for its record was signed with a leaked
      // key: it is refused without using the record up (the throw rolls back), so the customer's
      // genuine token still works, and the key is what needs replacing.
      if (!recoveryTokenMatches(claims, token)) throw invalidRecovery();
      const customer = await findCustomer(trx, token.customer_id);
      if (!customer?.phone) throw invalidRecovery();
      if (customer.is_disabled) throw forbidden('ACCOUNT_DISABLED', 'This account is disabled');
      await setCustomerPin(trx, customer.id, pinHash);
      // The spec: a PIN recovery resets the failure counter of POST /api/token/pair.
      await clearRateEvents(trx, `pin:${customer.phone}`);
      await markRecoveryTokenUsed(trx, token.jti);
      // A new PIN ends every other sign-in of the account.
      await revokeSessions(trx, { customerId: customer.id }, 'pin_changed');
      const pair = await startSession(trx, tokens, { kind: 'customer', customerId: customer.id }, ctx.deps.clock.now());
      return { phone: customer.phone, refresh: pair.refresh, access: pair.access };
    });
    return { status: 200, body };
  },

  // POST /api/token/pair: phone + PIN.
  obtainTokenPair: async (ctx) => {
    const { db, config, tokens } = ctx.deps;
    const { phone, password } = ctx.body;
    const subject = `pin:${phone}`;
    const customer = await oneAttemptAtATime(
      db,
      ctx.deps.caches.signInQueues,
      [subject],
      { code: 'LOGIN_RATE_LIMITED', detail: 'Too many sign-ins for this phone at once; retry in a second' },
      async (trx) => {
        await assertUnderLimit(
          trx,
          subject,
          config.auth.pinMaxFailures,
          config.auth.lockoutSeconds,
          {
            code: 'LOGIN_RATE_LIMITED',
            detail: 'Too many wrong PINs for this phone; sign in with a code or wait',
          },
          ctx.deps.clock.now(),
        );
        const found = await findCustomerByPhone(trx, phone);
        // verifySecret runs scrypt even without a PIN, so timing does not tell whether the phone exists.
        if (!(await verifySecret(password, found?.pin_hash ?? null)) || !found) {
          await recordRateEvent(trx, subject);
          return null;
        }
        if (!found.is_disabled) await clearRateEvents(trx, subject);
        return found;
      },
    );
    if (!customer)
      throw new AppError(401, 'INVALID_CREDENTIALS', 'Phone or PIN is not correct', { headers: { 'WWW-Authenticate': 'Bearer' } });
    if (customer.is_disabled) throw forbidden('ACCOUNT_DISABLED', 'This account is disabled');
    const pair = await startSession(db, tokens, { kind: 'customer', customerId: customer.id }, ctx.deps.clock.now());
    return { status: 200, body: { phone, refresh: pair.refresh, access: pair.access } };
  },

  // POST /api/token/refresh
  refreshToken: async (ctx) => {
    const { db, config, tokens } = ctx.deps;
    const outcome = await db
      .transaction()
      .execute((trx) =>
        rotateRefreshToken(
          trx,
          tokens,
          ctx.body.refresh,
          'customer_refresh',
          customerOwner,
          config.jwt.refreshReuseGraceSeconds,
          ctx.deps.clock.now(),
        ),
      );
    if (outcome === 'reused') throw invalidRefresh('REFRESH_TOKEN_REUSED', 'Refresh token already used; the session was ended');
    if (outcome === 'invalid') throw invalidRefresh();
    return { status: 200, body: { refresh: outcome.refresh, access: outcome.access } };
  },

  // POST /api/token/verify
  verifyToken: async (ctx) => {
    const { db, tokens } = ctx.deps;
    const token = ctx.body.token;
    const valid = await activePrincipal(ctx.deps, token, 'customer_access').then(
      () => true,
      async () => {
        try {
          const claims = tokens.verify(token, 'customer_refresh');
          const session = await lockSession(db, claims.sid);
          return session?.refresh_jti === claims.jti && (await isSessionActive(db, claims.sid, customerOwner(claims)));
        } catch (err) {
          if (err instanceof TokenError) return false;
          throw err;
        }
      },
    );
    if (!valid)
      throw new AppError(401, 'TOKEN_INVALID', 'The token is not valid', {
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    return { status: 200, body: {} };
  },
} satisfies Partial<HandlerMap>;

/** What the runtime does around these operations (server/handler-types.ts OperationSteps). */
export const authenticationSteps: StepsMap = {
  sendOtp: { limitPerClientIp: true },
  confirmOtp: { limitPerClientIp: true, noStore: true },
  verifyOtp: { limitPerClientIp: true },
  sendPinRecoveryOtp: { limitPerClientIp: true },
  verifyPinRecoveryOtp: { limitPerClientIp: true, noStore: true },
  updatePin: { noStore: true },
  obtainTokenPair: { limitPerClientIp: true, noStore: true },
  refreshToken: { limitPerClientIp: true, noStore: true },
  verifyToken: { limitPerClientIp: true },
};
