// Counted limits kept in PostgreSQL (so every instance enforces the same count): per client IP
// on sign-in operations, and lockouts after failed sign-ins.
import { clearRateEvents, rateEventsSince, recordRateEvent } from '../../db/queries/auth.js';
import type { Executor } from '../../db/executor.js';
import { AppError } from '../../server/errors.js';
import { secondsUntil } from '../rules/otp.js';

/** Throws 429 when `subject` already has `max` events inside the window. */
export async function assertUnderLimit(
  db: Executor,
  subject: string,
  max: number,
  windowSeconds: number,
  error: { code: string; detail: string },
): Promise<void> {
  const now = new Date();
  const events = await rateEventsSince(db, subject, new Date(now.getTime() - windowSeconds * 1000));
  if (events.length < max) return;
  const frees = new Date(events[events.length - max].occurred_at.getTime() + windowSeconds * 1000);
  const retryAfter = secondsUntil(frees, now);
  throw new AppError(429, error.code, error.detail, {
    headers: { 'Retry-After': String(retryAfter) },
    extra: { retry_after_seconds: retryAfter },
  });
}

/** Counts this request against the client's per-minute budget for sign-in operations. */
export async function limitClientIp(db: Executor, operation: string, ip: string | undefined, perMinute: number): Promise<void> {
  const subject = `ip:${operation}:${ip ?? 'unknown'}`;
  await assertUnderLimit(db, subject, perMinute, 60, { code: 'RATE_LIMITED', detail: 'Too many requests from this client; retry later' });
  await recordRateEvent(db, subject);
}

export { clearRateEvents, recordRateEvent };
