// Store-local wall-clock time. Slots, opening hours and express schedules are kept as local times
// of the store's IANA zone; the API writes them with the UTC offset in force (RFC 3339
// full-time, "10:00:00+03:00"), and instants as "2025-03-14T10:00:00+03:00".

export interface LocalMoment {
  /** Store-local calendar date, "YYYY-MM-DD". */
  date: string;
  /** Store-local time, "HH:MM:SS". */
  time: string;
  /** UTC offset in force at that instant, "+03:00". */
  offset: string;
  /** ISO weekday of `date`, 1 = Monday ... 7 = Sunday. */
  isoWeekday: number;
  /** Seconds since local midnight. */
  secondsOfDay: number;
}

// Intl is the source of truth for offsets, but formatting every instant through it is slow
// (tens of microseconds); a slot list has hundreds of instants. Offsets only change at
// transitions, which real zones schedule on quarter hours (UTC), so the offset is asked once per
// zone and quarter hour and the wall clock is then plain arithmetic.
const QUARTER_HOUR_MS = 15 * 60_000;
const offsetFormatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, Map<number, number>>();

function offsetFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = offsetFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormatters.set(timeZone, f);
  }
  return f;
}

/** Minutes east of UTC in force in `timeZone` at `instant` (Moscow: 180). */
export function utcOffsetMinutes(instant: Date, timeZone: string): number {
  const bucket = Math.floor(instant.getTime() / QUARTER_HOUR_MS);
  let zone = offsetCache.get(timeZone);
  if (!zone) offsetCache.set(timeZone, (zone = new Map<number, number>()));
  let minutes = zone.get(bucket);
  if (minutes === undefined) {
    // "GMT+03:00", "GMT-09:30", or plain "GMT" for a zero offset.
    const gmt =
      offsetFormatter(timeZone)
        .formatToParts(instant)
        .find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    const m = /^GMT([+-])(\d{1,2})(?::(\d{2}))?/.exec(gmt);
    minutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : 0;
    if (zone.size > 50_000) zone.clear();
    zone.set(bucket, minutes);
  }
  return minutes;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** "+03:00" for 180 minutes. */
export function formatOffset(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The wall-clock reading of `instant` in `timeZone`. */
export function localMoment(instant: Date, timeZone: string): LocalMoment {
  const offset = utcOffsetMinutes(instant, timeZone);
  // The shifted instant's UTC fields are the local wall clock.
  const wall = new Date(instant.getTime() + offset * 60_000);
  const time = `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}`;
  const day = wall.getUTCDay();
  return {
    date: wall.toISOString().slice(0, 10),
    time,
    offset: formatOffset(offset),
    isoWeekday: day === 0 ? 7 : day,
    secondsOfDay: wall.getUTCHours() * 3600 + wall.getUTCMinutes() * 60 + wall.getUTCSeconds(),
  };
}

/** "HH:MM:SS" (or "HH:MM") as seconds since midnight. */
export function secondsOfTime(time: string): number {
  const [h, m, s = '0'] = time.split(':');
  return Number(h) * 3600 + Number(m) * 60 + Math.floor(Number(s));
}

/** "10:00:00" and "+03:00" -> "10:00:00+03:00" (seconds kept, fractions dropped). */
export function timeWithOffset(time: string, offset: string): string {
  const [h, m, s = '00'] = time.split(':');
  return `${h!.padStart(2, '0')}:${m!.padStart(2, '0')}:${s.slice(0, 2).padStart(2, '0')}${offset}`;
}

/** An instant as store-local RFC 3339 date-time with offset ("2025-03-14T10:00:00+03:00"). */
export function localDateTime(instant: Date, timeZone: string): string {
  const m = localMoment(instant, timeZone);
  return `${m.date}T${m.time}${m.offset}`;
}

/** The calendar date `days` after `date` ("YYYY-MM-DD"; negative goes back). */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** ISO weekday of a calendar date. */
export function isoWeekdayOf(date: string): number {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 ? 7 : day;
}
