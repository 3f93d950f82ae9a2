import { describe, expect, it } from 'vitest';
import { addDays, isoWeekdayOf, localDateTime, localMoment, secondsOfTime, timeWithOffset } from '../../domain/time/local-time.js';

describe('localMoment', () => {
  it('reads an instant on the wall clock of the store, with its offset', () => {
    // 2025-03-14 21:30 UTC is 00:30 on Saturday the 15th in Moscow (UTC+3, no DST).
    const m = localMoment(new Date('2025-03-14T21:30:05Z'), 'Europe/Moscow');
    expect(m).toEqual({ date: '2025-03-15', time: '00:30:05', offset: '+03:00', isoWeekday: 6, secondsOfDay: 1805 });
  });

  it('writes a zero offset as +00:00 and follows DST where there is one', () => {
    expect(localMoment(new Date('2025-01-10T12:00:00Z'), 'UTC').offset).toBe('+00:00');
    expect(localMoment(new Date('2025-01-10T12:00:00Z'), 'Europe/Berlin').offset).toBe('+01:00');
    expect(localMoment(new Date('2025-07-10T12:00:00Z'), 'Europe/Berlin').offset).toBe('+02:00');
    expect(localMoment(new Date('2025-07-10T12:00:00Z'), 'America/St_Johns').offset).toBe('-02:30');
  });

  it('formats instants as local date-time with offset', () => {
    expect(localDateTime(new Date('2025-03-14T07:00:00Z'), 'Europe/Moscow')).toBe('2025-03-14T10:00:00+03:00');
  });
});

describe('time helpers', () => {
  it('adds days across month and year ends', () => {
    expect(addDays('2025-12-31', 1)).toBe('2026-01-01');
    expect(addDays('2024-03-01', -1)).toBe('2024-02-29');
  });
  it('knows ISO weekdays', () => {
    expect(isoWeekdayOf('2025-03-16')).toBe(7);
    expect(isoWeekdayOf('2025-03-17')).toBe(1);
  });
  it('converts times', () => {
    expect(secondsOfTime('01:02:03')).toBe(3723);
    expect(secondsOfTime('08:00')).toBe(28800);
    expect(timeWithOffset('8:05', '+03:00')).toBe('08:05:00+03:00');
    expect(timeWithOffset('23:59:59.5', '-02:30')).toBe('23:59:59-02:30');
  });
});

describe('localMoment against Intl at every quarter hour around DST changes', () => {
  it('agrees with Intl formatting across the transitions of several zones', () => {
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Europe/Moscow'];
    for (const timeZone of zones) {
      const f = new Intl.DateTimeFormat('en-CA', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: '2-digit',
        day: '2-digit',
        hour: '2-digit',
        minute: '2-digit',
        second: '2-digit',
      });
      // Every 7 minutes through March and early April and through late October / early November.
      for (const [from, to] of [
        ['2025-03-01', '2025-04-10'],
        ['2025-10-20', '2025-11-10'],
      ]) {
        for (let t = Date.parse(`${from}T00:00:00Z`); t < Date.parse(`${to}T00:00:00Z`); t += 7 * 60_000 + 13_000) {
          const parts = Object.fromEntries(f.formatToParts(new Date(t)).map((p) => [p.type, p.value]));
          const m = localMoment(new Date(t), timeZone);
          expect(`${m.date} ${m.time}`, `${timeZone} ${new Date(t).toISOString()}`).toBe(
            `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`,
          );
        }
      }
    }
  });
});
