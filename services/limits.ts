// Counted limits kept in PostgreSQL (so every instance enforces the same count): per client IP
// on sign-in operations, and lockouts after failed sign-ins.
import { sql, type Kysely, type Transaction } from 'kysely';
import { clearRateEvents, countRateEvent, rateEventsSince, recordRateEvent } from '../db/queries/auth.js';
import type { Executor } from '../db/executor.js';
import { waitingLongerForLock } from '../db/lock-wait.js';
import type { DB } from '../db/schema.js';
import { rateLimited, type CodeWithStatus } from './errors.js';
import type { AttemptQueue } from './caches.js';
import { secondsUntil } from '../domain/codes/otp.js';

/** Throws 429 when `subject` already has `max` events inside the window. */
export async function assertUnderLimit(
  db: Executor,
  subject: string,
  max: number,
  windowSeconds: number,
  error: LimitError,
  now: Date,
): Promise<void> {
  const events = await rateEventsSince(db, subject, new Date(now.getTime() - windowSeconds * 1000));
  if (events.length >= max) throw refusal(subject, max, windowSeconds, error, events[events.length - max]!.occurred_at, now);
}

/**
 * Counts one event of `subject` when it has fewer than `max` inside the window, else throws 429;
 * exact under concurrency. The count and the insert are one statement under a transaction-scoped
 * advisory lock of the subject (without the lock, a burst of 250 parallel sign-ins from one
 * address admitted 165-176 against a limit of 120). The lock is per subject, so different clients
 * never wait for each other; it is held for two index scans, and it ends with the statement (no
 * session state: safe behind PgBouncer in transaction mode).
 */
export async function countAgainstLimit(
  db: Executor,
  subject: string,
  max: number,
  windowSeconds: number,
  error: LimitError,
  now: Date,
): Promise<void> {
  const since = new Date(now.getTime() - windowSeconds * 1000);
  const blocking = await countRateEvent(db, subject, max, since, SUBJECT_LOCK_WAIT_MS);
  if (blocking) throw refusal(subject, max, windowSeconds, error, blocking, now);
}

type LimitError = { code: CodeWithStatus<429>; detail: string };

/** The 429 for a subject whose `blocking` event leaves the window at the earliest free place. */
function refusal(subject: string, max: number, windowSeconds: number, error: LimitError, blocking: Date, now: Date) {
  const retryAfter = secondsUntil(new Date(blocking.getTime() + windowSeconds * 1000), now);
  // The policy is named after the kind of subject ("ip", "pin", "picker-refresh"), never its value.
  return rateLimited(error.code, error.detail, retryAfter, { name: subject.split(':')[0]!, quota: max, windowSeconds });
}

/** Counts this request against the client's per-minute budget for sign-in operations. */
export async function limitClientIp(
  db: Kysely<DB>,
  operation: string,
  ip: string | undefined,
  perMinute: number,
  now: Date,
): Promise<void> {
  const subject = `ip:${operation}:${ip ?? 'unknown'}`;
  await countAgainstLimit(
    db,
    subject,
    perMinute,
    60,
    { code: 'RATE_LIMITED', detail: 'Too many requests from this client; retry later' },
    now,
  );
}

/**
 * Takes the transaction-scoped advisory lock of each subject, in one order for every caller (so
 * two transactions sharing subjects cannot deadlock). A burst on one subject queues here for as
 * long as its holders' work takes, so the wait may exceed a request's lock timeout: it is counted
 * or refused by the rules, never answered 503.
 */
async function lockSubjects(trx: Executor, subjects: readonly string[]): Promise<void> {
  await waitingLongerForLock(trx, SUBJECT_LOCK_WAIT_MS, async () => {
    for (const subject of [...subjects].sort()) await sql`SELECT pg_advisory_xact_lock(hashtextextended(${subject}, 0))`.execute(trx);
  });
}

/** How long a transaction waits for the ones before it on the same subject (phone, login, address). */
const SUBJECT_LOCK_WAIT_MS = 5000;

/**
 * Sign-in attempts of one set of subjects that may wait on this instance; one more is refused at
 * once (429 with Retry-After: 1). A person taps twice at most; a burst of guesses at one phone
 * would otherwise hold a pooled connection per attempt while the attempts before it hash their
 * secrets, and starve every other request of connections.
 */
export const MAX_WAITING_ATTEMPTS = 8;

/**
 * Runs one sign-in attempt at a time for each of `subjects` (a phone, a login, an address): the
 * failure count is read, the secret checked and a failure recorded in one transaction, under a
 * transaction-scoped advisory lock per subject (one at a time across instances). Without it,
 * concurrent wrong attempts all pass the count before any is recorded, and a lockout of 5 lets
 * dozens through. On this instance the attempts queue in memory before they take a connection,
 * at most MAX_WAITING_ATTEMPTS of them; `busy` is the 429 of one more. `attempt` returns its
 * outcome rather than throwing a 401, so that the failure it records is committed.
 */
export async function oneAttemptAtATime<T>(
  db: Kysely<DB>,
  waitingAttempts: Map<string, AttemptQueue>,
  subjects: readonly string[],
  busy: { code: CodeWithStatus<429>; detail: string },
  attempt: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const key = [...subjects].sort().join('\n');
  const queue = waitingAttempts.get(key) ?? { waiting: 0, last: Promise.resolve() };
  if (queue.waiting >= MAX_WAITING_ATTEMPTS) {
    throw rateLimited(busy.code, busy.detail, 1, {
      name: `${subjects[0]!.split(':')[0]}-at-once`,
      quota: MAX_WAITING_ATTEMPTS,
      windowSeconds: 1,
    });
  }
  waitingAttempts.set(key, queue);
  queue.waiting++;
  const before = queue.last;
  let done!: () => void;
  queue.last = new Promise((resolve) => (done = resolve));
  try {
    await before;
    return await db.transaction().execute(async (trx) => {
      await lockSubjects(trx, subjects);
      return attempt(trx);
    });
  } finally {
    queue.waiting--;
    if (queue.waiting === 0) waitingAttempts.delete(key);
    done();
  }
}

export { clearRateEvents, recordRateEvent };
