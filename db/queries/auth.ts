// Sign-in state: sessions (refresh families), one-time codes, recovery tokens, counted events.
import { sql } from 'kysely';
import type { Executor } from '../executor.js';
import { waitingLongerForLock } from '../lock-wait.js';
import { SESSIONS_REVOKED_EVENT, writeOutboxEvent } from './outbox.js';

export type SessionOwner = { kind: 'customer'; customerId: string } | { kind: 'picker'; pickerId: number };

export async function insertSession(
  db: Executor,
  s: { id: string; owner: SessionOwner; refreshJti: string; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('auth_sessions')
    .values({
      id: s.id,
      principal_kind: s.owner.kind,
      customer_id: s.owner.kind === 'customer' ? s.owner.customerId : null,
      picker_id: s.owner.kind === 'picker' ? s.owner.pickerId : null,
      refresh_jti: s.refreshJti,
      expires_at: s.expiresAt,
    })
    .execute();
}

/** The session row, locked for rotation, with the database's clock (`rotated_at` is by it). */
export function lockSession(db: Executor, id: string) {
  return db
    .selectFrom('auth_sessions')
    .selectAll()
    .select(sql<Date>`now()`.as('db_now'))
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

export async function rotateSession(db: Executor, id: string, newJti: string, expiresAt: Date): Promise<void> {
  await db
    .updateTable('auth_sessions')
    .set((eb) => ({
      previous_refresh_jti: eb.ref('refresh_jti'),
      refresh_jti: newJti,
      rotated_at: sql<Date>`now()`,
      expires_at: expiresAt,
    }))
    .where('id', '=', id)
    .execute();
}

/**
 * Revokes sessions, drops the push registrations they made (no pushes to a signed-out phone) and
 * tells the WebSocket channels (SESSIONS_REVOKED_EVENT).
 */
export async function revokeSessions(
  db: Executor,
  where: { sessionId: string } | { customerId: string } | { pickerId: number },
  reason: string,
): Promise<string[]> {
  let q = db
    .updateTable('auth_sessions')
    .set({ revoked_at: sql<Date>`now()`, revoked_reason: reason })
    .where('revoked_at', 'is', null);
  if ('sessionId' in where) q = q.where('id', '=', where.sessionId);
  else if ('customerId' in where) q = q.where('customer_id', '=', where.customerId);
  else q = q.where('picker_id', '=', where.pickerId);
  const revoked = await q.returning('id').execute();
  const ids = revoked.map((r) => r.id);
  if (ids.length) {
    await db.deleteFrom('push_devices').where('session_id', 'in', ids).execute();
    await writeOutboxEvent(db, SESSIONS_REVOKED_EVENT, { session_ids: ids });
  }
  return ids;
}

/**
 * Whether an access token's session still grants access: not revoked, not expired, and its
 * owner still exists, is not deleted and is not disabled. Checked on every authorized request,
 * so revocation takes effect at once (access tokens are otherwise valid for 15 minutes).
 */
export async function isSessionActive(db: Executor, sessionId: string, owner: SessionOwner): Promise<boolean> {
  // Templates, not the query builder: this runs before every authorized request.
  const { rows } =
    owner.kind === 'customer'
      ? await sql`
          SELECT 1 FROM auth_sessions s JOIN customers c ON c.id = s.customer_id
          WHERE s.id = ${sessionId} AND s.customer_id = ${owner.customerId} AND s.revoked_at IS NULL AND s.expires_at > now()
            AND c.deleted_at IS NULL AND NOT c.is_disabled`.execute(db)
      : await sql`
          SELECT 1 FROM auth_sessions s JOIN pickers p ON p.id = s.picker_id
          WHERE s.id = ${sessionId} AND s.picker_id = ${owner.pickerId} AND s.revoked_at IS NULL AND s.expires_at > now()
            AND p.is_active`.execute(db);
  return rows.length > 0;
}

// --- one-time codes -------------------------------------------------------------------------

/**
 * Serialises everything about one phone's codes (sends, checks) with a row lock. A send holds it
 * while the SMS goes out, so the lock is waited for up to `waitMs` (the SMS deadline and some),
 * longer than a request's lock timeout.
 */
export async function lockOtpPhone(trx: Executor, phone: string, waitMs: number): Promise<void> {
  await waitingLongerForLock(trx, waitMs, async () => {
    await trx
      .insertInto('otp_phones')
      .values({ phone })
      .onConflict((oc) => oc.column('phone').doNothing())
      .execute();
    await trx.selectFrom('otp_phones').select('phone').where('phone', '=', phone).forUpdate().execute();
  });
}

export function lastOtpSend(db: Executor, phone: string, purpose: 'login' | 'update_pin') {
  return db
    .selectFrom('otp_codes')
    .select(['created_at'])
    .where('phone', '=', phone)
    .where('purpose', '=', purpose)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Sends in the rolling hour (all purposes), oldest first. */
export function otpSendsSince(db: Executor, phone: string, since: Date) {
  return db
    .selectFrom('otp_codes')
    .select(['created_at'])
    .where('phone', '=', phone)
    .where('created_at', '>', since)
    .orderBy('created_at', 'asc')
    .execute();
}

export async function insertOtpCode(
  db: Executor,
  c: { phone: string; purpose: 'login' | 'update_pin'; codeHash: string; plainCode: string | null; expiresAt: Date; delivered: boolean },
): Promise<void> {
  // Only the latest code of a phone and purpose is valid.
  await db
    .updateTable('otp_codes')
    .set({ superseded_at: sql<Date>`now()` })
    .where('phone', '=', c.phone)
    .where('purpose', '=', c.purpose)
    .where('superseded_at', 'is', null)
    .where('consumed_at', 'is', null)
    .execute();
  await db
    .insertInto('otp_codes')
    .values({
      phone: c.phone,
      purpose: c.purpose,
      code_hash: c.codeHash,
      plain_code: c.plainCode,
      expires_at: c.expiresAt,
      delivered: c.delivered,
    })
    .execute();
}

/** The latest code of a phone and purpose, whatever its state. */
export function latestOtpCode(db: Executor, phone: string, purpose: 'login' | 'update_pin') {
  return db
    .selectFrom('otp_codes')
    .selectAll()
    .where('phone', '=', phone)
    .where('purpose', '=', purpose)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function recordOtpAttempt(db: Executor, id: number): Promise<void> {
  await db
    .updateTable('otp_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function consumeOtpCode(db: Executor, id: number): Promise<void> {
  await db
    .updateTable('otp_codes')
    .set({ consumed_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
}

// --- recovery tokens ------------------------------------------------------------------------

export async function insertRecoveryToken(db: Executor, t: { jti: string; customerId: string; expiresAt: Date }): Promise<void> {
  // Issuing a new recovery token retires the older unused ones.
  await db
    .updateTable('recovery_tokens')
    .set({ revoked_at: sql<Date>`now()` })
    .where('customer_id', '=', t.customerId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
  await db.insertInto('recovery_tokens').values({ jti: t.jti, customer_id: t.customerId, expires_at: t.expiresAt }).execute();
}

export function lockRecoveryToken(db: Executor, jti: string) {
  return db.selectFrom('recovery_tokens').selectAll().where('jti', '=', jti).forUpdate().executeTakeFirst();
}

export async function markRecoveryTokenUsed(db: Executor, jti: string): Promise<void> {
  await db
    .updateTable('recovery_tokens')
    .set({ used_at: sql<Date>`now()` })
    .where('jti', '=', jti)
    .execute();
}

// --- counted events (lockouts, per-IP limits) -------------------------------------------------

export async function recordRateEvent(db: Executor, subject: string): Promise<void> {
  await db.insertInto('rate_events').values({ subject }).execute();
}

/**
 * Counts one event of `subject` unless it already has `max` since `since`, in one statement under
 * the subject's advisory lock (waited for up to `lockWaitMs`). Returns null when counted, else the
 * occurred_at of the event whose leaving the window frees a place.
 */
export async function countRateEvent(db: Executor, subject: string, max: number, since: Date, lockWaitMs: number): Promise<Date | null> {
  const { rows } = await sql<{ blocking: Date | null }>`
    SELECT count_rate_event(${subject}, ${max}::integer, ${since}::timestamptz, ${Math.round(lockWaitMs)}::integer) AS blocking`.execute(
    db,
  );
  return rows[0]!.blocking;
}

/** Events of a subject inside the window, oldest first (for Retry-After). */
export function rateEventsSince(db: Executor, subject: string, since: Date) {
  return db
    .selectFrom('rate_events')
    .select('occurred_at')
    .where('subject', '=', subject)
    .where('occurred_at', '>', since)
    .orderBy('occurred_at', 'asc')
    .execute();
}

export async function clearRateEvents(db: Executor, subject: string): Promise<void> {
  await db.deleteFrom('rate_events').where('subject', '=', subject).execute();
}
