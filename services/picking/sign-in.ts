// The picker's account: signing in with login and password, refreshing the session's tokens, and
// the signed-in picker as the app shows them.
import { findPicker, findPickerByLogin, pickerStores } from '../../db/queries/accounts.js';
import type { Executor } from '../../db/executor.js';
import { findCurrentSessionRef } from '../../db/queries/picking/sessions.js';
import { hashSecret, verifySecret } from '../../domain/codes/passwords.js';
import type { TokenService } from '../../platform/tokens.js';
import type { AppDeps } from '../deps.js';
import { AppError, forbidden, unauthorized } from '../errors.js';
import { assertUnderLimit, clearRateEvents, countAgainstLimit, oneAttemptAtATime, recordRateEvent } from '../limits.js';
import { toPickerTokens, toPickerUser, type PickerRefreshView, type PickerUserView } from '../presenters/picking.js';
import { invalidRefresh, rotateRefreshToken, startSession } from '../sessions.js';
import type { Lang } from './runner.js';

// A hash to compare against when the login does not exist, so timing does not reveal logins.
const unknownLoginHash = hashSecret('unknown-login-placeholder');
/** Failed picker sign-ins from one address within the lockout window before TOO_MANY_ATTEMPTS. */
const PICKER_ADDRESS_MAX_FAILURES = 50;
/** Refreshes of one picker session (token family) a minute before TOO_MANY_REQUESTS. */
const PICKER_REFRESHES_PER_MINUTE = 30;

const lifetimes = (tokens: TokenService) => ({ access: tokens.ttlSeconds('picker_access'), refresh: tokens.ttlSeconds('picker_refresh') });

/** The signed-in picker (PickerUserSchema): 401 when the account no longer exists. */
export async function pickerProfile(db: Executor, pickerId: number, lang: Lang): Promise<PickerUserView> {
  const picker = await findPicker(db, pickerId);
  if (!picker) throw unauthorized();
  const [stores, current] = await Promise.all([pickerStores(db, pickerId), findCurrentSessionRef(db, pickerId)]);
  return toPickerUser(picker, stores, current, lang);
}

/** The ids of the stores the picker works in (the picker channel's events come from those). */
export async function pickerStoreIds(db: Executor, pickerId: number): Promise<string[]> {
  return (await pickerStores(db, pickerId)).map((s) => s.id);
}

/**
 * Signs a picker in. Failed attempts are counted per login and per address (one device trying
 * many logins), each with its own limit (TOO_MANY_ATTEMPTS); concurrent attempts of one login or
 * address run one at a time so that the counts hold.
 */
export async function signInPicker(
  deps: Pick<AppDeps, 'db' | 'config' | 'tokens' | 'clock' | 'caches'>,
  input: { login: string; password: string; clientIp: string | undefined; lang: Lang },
): Promise<PickerRefreshView & { picker: PickerUserView }> {
  const { db, config, tokens } = deps;
  const { login, password } = input;
  // The login as the lookup compares it: "Picker1 " is the same login as "picker1".
  const subject = `picker:${login.trim().toLowerCase()}`;
  const address = `picker-ip:${input.clientIp ?? 'unknown'}`;
  const picker = await oneAttemptAtATime(
    db,
    deps.caches.signInQueues,
    [subject, address],
    { code: 'TOO_MANY_ATTEMPTS', detail: 'Too many sign-ins for this login at once; retry in a second' },
    async (trx) => {
      await assertUnderLimit(
        trx,
        subject,
        config.auth.pickerMaxFailures,
        config.auth.lockoutSeconds,
        { code: 'TOO_MANY_ATTEMPTS', detail: 'Too many failed sign-ins for this login; wait before trying again' },
        deps.clock.now(),
      );
      await assertUnderLimit(
        trx,
        address,
        PICKER_ADDRESS_MAX_FAILURES,
        config.auth.lockoutSeconds,
        { code: 'TOO_MANY_ATTEMPTS', detail: 'Too many failed sign-ins from this address; wait before trying again' },
        deps.clock.now(),
      );
      const found = await findPickerByLogin(trx, login);
      if (!(await verifySecret(password, found?.password_hash ?? (await unknownLoginHash))) || !found) {
        await recordRateEvent(trx, subject);
        await recordRateEvent(trx, address);
        return null;
      }
      if (found.is_active) await clearRateEvents(trx, subject);
      return found;
    },
  );
  if (!picker)
    throw new AppError(401, 'INVALID_CREDENTIALS', 'Login or password is not correct', { headers: { 'WWW-Authenticate': 'Bearer' } });
  if (!picker.is_active) throw forbidden('PICKER_INACTIVE', 'This picker account is disabled');
  const pair = await startSession(db, tokens, { kind: 'picker', pickerId: picker.id }, deps.clock.now());
  return { ...toPickerTokens(pair, lifetimes(tokens)), picker: await pickerProfile(db, picker.id, input.lang) };
}

/** The session a picker refresh token belongs to, or null when it is not one (rotation says why). */
function refreshFamilyOf(tokens: TokenService, refresh: string): string | null {
  try {
    return tokens.verify(refresh, 'picker_refresh').sid;
  } catch {
    return null;
  }
}

/**
 * Rotates a picker's refresh token. A token family refreshing in a loop (an app bug) is stopped
 * at 30 a minute (TOO_MANY_REQUESTS); a reused token ends its session.
 */
export async function refreshPickerSession(
  deps: Pick<AppDeps, 'db' | 'config' | 'tokens' | 'clock'>,
  refresh: string,
): Promise<PickerRefreshView> {
  const { db, config, tokens } = deps;
  const family = refreshFamilyOf(tokens, refresh);
  if (family) {
    await countAgainstLimit(
      db,
      `picker-refresh:${family}`,
      PICKER_REFRESHES_PER_MINUTE,
      60,
      { code: 'TOO_MANY_REQUESTS', detail: 'Too many refreshes of this session; retry later' },
      deps.clock.now(),
    );
  }
  const outcome = await db
    .transaction()
    .execute((trx) =>
      rotateRefreshToken(
        trx,
        tokens,
        refresh,
        'picker_refresh',
        (claims) => ({ kind: 'picker', pickerId: Number(claims.sub) }),
        config.jwt.refreshReuseGraceSeconds,
        deps.clock.now(),
      ),
    );
  if (outcome === 'reused') throw invalidRefresh('REFRESH_TOKEN_REUSED', 'Refresh token already used; the session was ended');
  if (outcome === 'invalid') throw invalidRefresh('INVALID_REFRESH_TOKEN');
  return toPickerTokens(outcome, lifetimes(tokens));
}
