import { describe, expect, it } from 'vitest';
import { generateOtp, hashOtp, isTestPhone, otpMatches, otpState, sendLimit } from '../../domain/codes/otp.js';
import { pinProblem } from '../../domain/codes/pin.js';

const at = (s: number) => new Date(Date.UTC(2026, 10, 22, 12, 0, s));

describe('one-time code rules', () => {
  it('generates six digits, uniformly enough to use every position', () => {
    const codes = Array.from({ length: 2000 }, generateOtp);
    expect(codes.every((c) => /^[0-9]{6}$/.test(c))).toBe(true);
    expect(new Set(codes.map((c) => c[0])).size).toBe(10);
  });

  it('binds the hash to phone and purpose', () => {
    const h = hashOtp('k', '+79990000001', 'login', '123456');
    expect(otpMatches('k', '+79990000001', 'login', '123456', h)).toBe(true);
    expect(otpMatches('k', '+79990000002', 'login', '123456', h)).toBe(false);
    expect(otpMatches('k', '+79990000001', 'update_pin', '123456', h)).toBe(false);
    expect(otpMatches('other-key', '+79990000001', 'login', '123456', h)).toBe(false);
  });

  it('derives the state: used, burned, superseded or expired, else active', () => {
    const base = { attempts: 0, expires_at: at(300), consumed_at: null, superseded_at: null };
    expect(otpState(base, 5, at(0))).toBe('active');
    expect(otpState({ ...base, consumed_at: at(1) }, 5, at(2))).toBe('used');
    expect(otpState({ ...base, attempts: 5 }, 5, at(2))).toBe('attempts_exceeded');
    expect(otpState({ ...base, superseded_at: at(1) }, 5, at(2))).toBe('expired');
    expect(otpState(base, 5, at(300))).toBe('expired');
  });

  it('applies the cooldown first, then the hourly cap with the right Retry-After', () => {
    const cfg = { cooldownSeconds: 60, maxPerHour: 5 };
    expect(sendLimit(at(30), at(0), [at(0)], cfg)).toEqual({ code: 'OTP_RESEND_COOLDOWN', retryAfterSeconds: 30 });
    expect(sendLimit(at(60), at(0), [at(0)], cfg)).toBeNull();
    const five = [at(0), at(10), at(20), at(30), at(40)];
    expect(sendLimit(at(59 * 60), at(40), five, cfg)).toEqual({ code: 'OTP_SEND_LIMIT', retryAfterSeconds: 60 });
    expect(sendLimit(at(59 * 60), at(40), five.slice(1), cfg)).toBeNull();
  });

  it('recognises test phones by prefix', () => {
    expect(isTestPhone('+79990001234', ['+7999000'])).toBe(true);
    expect(isTestPhone('+79160001234', ['+7999000'])).toBe(false);
    expect(isTestPhone('+79990001234', [])).toBe(false);
  });
});

describe('PIN rule', () => {
  it('accepts 4-8 digits that are not a repeat or a run', () => {
    for (const pin of ['1357', '2580', '13572468', '1123']) expect(pinProblem(pin), pin).toBeNull();
    for (const pin of ['0000', '1234', '98765', '23456789']) expect(pinProblem(pin), pin).toBe('PIN_TOO_WEAK');
    for (const pin of ['123', '123456789', '12a4']) expect(pinProblem(pin), pin).toBe('PIN_FORMAT');
  });
});
