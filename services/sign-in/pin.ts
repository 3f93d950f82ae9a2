// Sign-in by phone and PIN, and setting a new PIN with a recovery token (bought with a PIN
// recovery code in codes.ts). PIN rules are in domain/codes/pin.ts.
import { findCustomer, findCustomerByPhone, setCustomerPin } from '../../db/queries/accounts.js';
import { lockRecoveryToken, markRecoveryTokenUsed, revokeSessions } from '../../db/queries/auth.js';
import { hashSecret, verifySecret } from '../../domain/codes/passwords.js';
import { pinProblem } from '../../domain/codes/pin.js';
import { CLOCK_SKEW_SECONDS, TokenError, type TokenClaims } from '../../platform/tokens.js';
import type { AppDeps } from '../deps.js';
import { AppError, forbidden, unprocessable } from '../errors.js';
import { assertUnderLimit, clearRateEvents, oneAttemptAtATime, recordRateEvent } from '../limits.js';
import { startSession, type TokenPair } from '../sessions.js';

/** The subject counting a phone's wrong PINs; a PIN recovery clears it. */
const pinSubject = (phone: string) => `pin:${phone}`;

/** A recovery token's id as issued (randomUUID): the record is found by it, so it is the record's. */
const ISSUED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Whether a recovery token's claims are those issued with its record (verifyRecoveryCode in
 * codes.ts): its own id as session, the record's customer, and times inside the record's life,
 * give or take the clock skew between instances (the record's times are the database's and the
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

const invalidRecovery = () => new AppError(401, 'RECOVERY_TOKEN_INVALID', 'The recovery token is not valid; verify a new code');

export interface PinUpdated {
  phone: string;
  pair: TokenPair;
}

/**
 * Sets a new PIN with a recovery token, using the token up, and signs in. The token is checked
 * before the PINs, so a bad token is answered 401 whatever PINs came with it.
 */
export async function updatePinWithRecovery(
  deps: Pick<AppDeps, 'db' | 'tokens' | 'clock'>,
  recoveryToken: string,
  pin: string,
  pinRepeat: string,
): Promise<PinUpdated> {
  const { db, tokens } = deps;
  let claims: TokenClaims;
  try {
    claims = tokens.verify(recoveryToken, 'recovery');
  } catch (err) {
    if (err instanceof TokenError) throw invalidRecovery();
    throw err;
  }
  // Issued ids are lower-case UUIDs (randomUUID); any other id matches no record, and would
  // fail the uuid column's parse as a 500.
  if (!ISSUED_ID.test(claims.jti)) throw invalidRecovery();
  if (pin !== pinRepeat) throw unprocessable('PIN_MISMATCH', 'The PINs do not match');
  if (pinProblem(pin)) throw unprocessable('PIN_TOO_WEAK', 'Choose a PIN that is not a sequence or a repeated digit');
  const pinHash = await hashSecret(pin);
  return db.transaction().execute(async (trx) => {
    const token = await lockRecoveryToken(trx, claims.jti);
    if (!token || token.used_at || token.revoked_at || token.expires_at <= deps.clock.now()) throw invalidRecovery();
    // A token whose claims differ from what was issued for its record was signed with a leaked
    // key: it is refused without using the record up (the throw rolls back), so the customer's
    // genuine token still works, and the key is what needs replacing.
    if (!recoveryTokenMatches(claims, token)) throw invalidRecovery();
    const customer = await findCustomer(trx, token.customer_id);
    if (!customer?.phone) throw invalidRecovery();
    if (customer.is_disabled) throw forbidden('ACCOUNT_DISABLED', 'This account is disabled');
    await setCustomerPin(trx, customer.id, pinHash);
    // A customer locked out by wrong PINs recovers with a code: the new PIN works at once.
    await clearRateEvents(trx, pinSubject(customer.phone));
    await markRecoveryTokenUsed(trx, token.jti);
    // A new PIN ends every other sign-in of the account.
    await revokeSessions(trx, { customerId: customer.id }, 'pin_changed');
    const pair = await startSession(trx, tokens, { kind: 'customer', customerId: customer.id }, deps.clock.now());
    return { phone: customer.phone, pair };
  });
}

/**
 * Signs in with phone and PIN. Attempts on one phone run one at a time, so the lockout after
 * `pinMaxFailures` wrong PINs is exact; the right PIN of an enabled account clears the count.
 */
export async function tokenPairByPin(
  deps: Pick<AppDeps, 'db' | 'config' | 'tokens' | 'clock' | 'caches'>,
  phone: string,
  pin: string,
): Promise<TokenPair> {
  const { db, config, tokens } = deps;
  const subject = pinSubject(phone);
  const customer = await oneAttemptAtATime(
    db,
    deps.caches.signInQueues,
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
        deps.clock.now(),
      );
      const found = await findCustomerByPhone(trx, phone);
      // verifySecret runs scrypt even without a PIN, so timing does not tell whether the phone exists.
      if (!(await verifySecret(pin, found?.pin_hash ?? null)) || !found) {
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
  return startSession(db, tokens, { kind: 'customer', customerId: customer.id }, deps.clock.now());
}
