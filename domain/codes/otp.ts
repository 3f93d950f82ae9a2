// One-time code rules, as pure functions of values (the spec's table in POST /api/auth/otp/send).
import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

export const OTP_LENGTH = 6;

/** Six decimal digits from a cryptographic RNG. */
export function generateOtp(): string {
  return String(randomInt(0, 10 ** OTP_LENGTH)).padStart(OTP_LENGTH, '0');
}

/** Codes are stored only as an HMAC bound to phone and purpose. */
export function hashOtp(key: string, phone: string, purpose: string, code: string): string {
  return createHmac('sha256', key).update(`${purpose}:${phone}:${code}`).digest('base64url');
}

export function otpMatches(key: string, phone: string, purpose: string, code: string, storedHash: string): boolean {
  const a = Buffer.from(hashOtp(key, phone, purpose, code));
  const b = Buffer.from(storedHash);
  return a.length === b.length && timingSafeEqual(a, b);
}

export type OtpState = 'active' | 'used' | 'expired' | 'attempts_exceeded';

export interface OtpRecord {
  attempts: number;
  expires_at: Date;
  consumed_at: Date | null;
  superseded_at: Date | null;
}

export function otpState(code: OtpRecord, maxAttempts: number, now: Date): OtpState {
  if (code.consumed_at) return 'used';
  if (code.attempts >= maxAttempts) return 'attempts_exceeded';
  if (code.superseded_at || code.expires_at <= now) return 'expired';
  return 'active';
}

/** Seconds a client must wait before `until` (at least 1). */
export function secondsUntil(until: Date, now: Date): number {
  return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
}

/**
 * Whether a new code may be sent now: the resend cooldown of this purpose and the hourly cap of
 * the phone. Returns the limit hit and when it ends, or null.
 */
export function sendLimit(
  now: Date,
  lastSendOfPurpose: Date | null,
  sendsInLastHourOldestFirst: Date[],
  cfg: { cooldownSeconds: number; maxPerHour: number },
): { code: 'OTP_RESEND_COOLDOWN' | 'OTP_SEND_LIMIT'; retryAfterSeconds: number } | null {
  if (lastSendOfPurpose) {
    const ends = new Date(lastSendOfPurpose.getTime() + cfg.cooldownSeconds * 1000);
    if (ends > now) return { code: 'OTP_RESEND_COOLDOWN', retryAfterSeconds: secondsUntil(ends, now) };
  }
  if (sendsInLastHourOldestFirst.length >= cfg.maxPerHour) {
    // A send slot frees when the oldest send that keeps the count at the cap leaves the window.
    const oldest = sendsInLastHourOldestFirst[sendsInLastHourOldestFirst.length - cfg.maxPerHour];
    return { code: 'OTP_SEND_LIMIT', retryAfterSeconds: secondsUntil(new Date(oldest!.getTime() + 3600_000), now) };
  }
  return null;
}

export function isTestPhone(phone: string, prefixes: readonly string[]): boolean {
  return prefixes.some((p) => phone.startsWith(p));
}

export function otpSmsText(code: string, lang: 'ru' | 'en'): string {
  return lang === 'ru' ? `Код для входа: ${code}. Никому его не сообщайте.` : `Your sign-in code: ${code}. Do not share it.`;
}
