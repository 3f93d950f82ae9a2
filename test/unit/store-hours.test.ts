import { describe, expect, it } from 'vitest';
import { localMoment } from '../../domain/time/local-time.js';
import { fullWeek, isExpressAvailableAt, isOpenAt, type DayHours } from '../../domain/time/store-hours.js';

const TZ = 'Europe/Moscow';
// 2025-03-17 is a Monday.
const at = (localIso: string) => localMoment(new Date(`${localIso}+03:00`), TZ);
const everyDay = (opensAt: string, closesAt: string): DayHours[] =>
  [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({ weekday, isClosed: false, opensAt, closesAt }));
const none = new Set<string>();

describe('fullWeek', () => {
  it('fills the weekdays nobody described as closed, Monday first', () => {
    const week = fullWeek([{ weekday: 3, isClosed: false, opensAt: '08:00:00', closesAt: '20:00:00' }]);
    expect(week.map((d) => d.weekday)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(week.filter((d) => d.isClosed)).toHaveLength(6);
    expect(week[2]).toMatchObject({ isClosed: false, opensAt: '08:00:00' });
  });
});

describe('isOpenAt', () => {
  it('is open from opening (inclusive) to closing (exclusive)', () => {
    const week = everyDay('08:00:00', '23:00:00');
    expect(isOpenAt(week, none, at('2025-03-17T07:59:59'))).toBe(false);
    expect(isOpenAt(week, none, at('2025-03-17T08:00:00'))).toBe(true);
    expect(isOpenAt(week, none, at('2025-03-17T22:59:59'))).toBe(true);
    expect(isOpenAt(week, none, at('2025-03-17T23:00:00'))).toBe(false);
  });

  it('keeps a shift that closes after midnight open into the next morning', () => {
    const week = fullWeek([
      { weekday: 1, isClosed: false, opensAt: '08:00:00', closesAt: '01:00:00' },
      { weekday: 2, isClosed: true, opensAt: null, closesAt: null },
    ]);
    expect(isOpenAt(week, none, at('2025-03-17T23:30:00'))).toBe(true);
    // Tuesday 00:30 is Monday's shift although Tuesday itself is closed.
    expect(isOpenAt(week, none, at('2025-03-18T00:30:00'))).toBe(true);
    expect(isOpenAt(week, none, at('2025-03-18T01:00:00'))).toBe(false);
    expect(isOpenAt(week, none, at('2025-03-17T00:30:00'))).toBe(false); // Sunday was closed
  });

  it('treats opening equal to closing as around the clock', () => {
    const week = everyDay('00:00:00', '00:00:00');
    for (const t of ['00:00:00', '03:00:00', '23:59:59']) expect(isOpenAt(week, none, at(`2025-03-17T${t}`))).toBe(true);
  });

  it('closes a closure date, including its tail after midnight', () => {
    const week = everyDay('08:00:00', '02:00:00');
    const closed = new Set(['2025-03-17']);
    expect(isOpenAt(week, closed, at('2025-03-17T12:00:00'))).toBe(false);
    expect(isOpenAt(week, closed, at('2025-03-18T01:00:00'))).toBe(false);
    // The previous day's tail still runs into the closure date's early morning.
    expect(isOpenAt(week, closed, at('2025-03-17T01:00:00'))).toBe(true);
  });
});

describe('isExpressAvailableAt', () => {
  const schedule = [
    { weekday: 1, startTime: '09:00:00', endTime: '21:00:00', isActive: true },
    { weekday: 2, startTime: '09:00:00', endTime: '21:00:00', isActive: false },
  ];
  it('is true inside an active window of today, end exclusive', () => {
    expect(isExpressAvailableAt(schedule, true, at('2025-03-17T09:00:00'))).toBe(true);
    expect(isExpressAvailableAt(schedule, true, at('2025-03-17T20:59:59'))).toBe(true);
    expect(isExpressAvailableAt(schedule, true, at('2025-03-17T21:00:00'))).toBe(false);
    expect(isExpressAvailableAt(schedule, true, at('2025-03-17T08:59:59'))).toBe(false);
  });
  it('is false on an inactive or missing weekday and when the store stopped taking express orders', () => {
    expect(isExpressAvailableAt(schedule, true, at('2025-03-18T12:00:00'))).toBe(false);
    expect(isExpressAvailableAt(schedule, true, at('2025-03-19T12:00:00'))).toBe(false);
    expect(isExpressAvailableAt(schedule, false, at('2025-03-17T12:00:00'))).toBe(false);
  });
});
