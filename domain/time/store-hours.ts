// Opening hours and the express-delivery schedule of a store, evaluated at a store-local moment.
import { addDays, secondsOfTime, type LocalMoment } from './local-time.js';

export interface DayHours {
  /** ISO weekday, 1 = Monday ... 7 = Sunday. */
  weekday: number;
  isClosed: boolean;
  /** "HH:MM:SS" store-local; null when closed all day. */
  opensAt: string | null;
  closesAt: string | null;
}

/**
 * Exactly one entry per weekday, Monday first. A weekday the store has not described is closed:
 * promising hours nobody entered would send customers to a locked door.
 */
export function fullWeek(rows: readonly DayHours[]): DayHours[] {
  const byDay = new Map(rows.map((r) => [r.weekday, r]));
  return [1, 2, 3, 4, 5, 6, 7].map((weekday) => byDay.get(weekday) ?? { weekday, isClosed: true, opensAt: null, closesAt: null });
}

const previousWeekday = (weekday: number) => (weekday === 1 ? 7 : weekday - 1);

/**
 * Whether the store is open at `now`. Hours of a day: opens < closes - that span; closes < opens
 * - from opening until closing after midnight (the tail belongs to the day the shift started);
 * opens = closes - around the clock. A closure date closes that day's hours, including a tail
 * running into the next morning.
 */
export function isOpenAt(week: readonly DayHours[], closedDates: ReadonlySet<string>, now: LocalMoment): boolean {
  const t = now.secondsOfDay;
  const today = week.find((d) => d.weekday === now.isoWeekday);
  if (today && !today.isClosed && today.opensAt && today.closesAt && !closedDates.has(now.date)) {
    const opens = secondsOfTime(today.opensAt);
    const closes = secondsOfTime(today.closesAt);
    if (opens === closes) return true;
    if (opens < closes ? t >= opens && t < closes : t >= opens) return true;
  }
  const yesterday = week.find((d) => d.weekday === previousWeekday(now.isoWeekday));
  if (yesterday && !yesterday.isClosed && yesterday.opensAt && yesterday.closesAt && !closedDates.has(addDays(now.date, -1))) {
    const opens = secondsOfTime(yesterday.opensAt);
    const closes = secondsOfTime(yesterday.closesAt);
    if (closes < opens && t < closes) return true;
  }
  return false;
}

export interface ExpressWindow {
  weekday: number;
  /** "HH:MM:SS" store-local, inclusive. */
  startTime: string;
  /** "HH:MM:SS" store-local, exclusive. */
  endTime: string;
  isActive: boolean;
}

/** Express can be ordered now: an active window of today contains `now` and the store accepts express orders. */
export function isExpressAvailableAt(schedule: readonly ExpressWindow[], isAccepting: boolean, now: LocalMoment): boolean {
  if (!isAccepting) return false;
  return schedule.some(
    (w) =>
      w.isActive &&
      w.weekday === now.isoWeekday &&
      now.secondsOfDay >= secondsOfTime(w.startTime) &&
      now.secondsOfDay < secondsOfTime(w.endTime),
  );
}
