// RFC 3339 date-times as the contract's `format: date-time` admits them. The request validator
// (ajv-formats) accepts forms that JavaScript's Date cannot read: an hours-only or colon-less
// offset ("+03", "+0300"), a space or lower-case "t" between date and time, a lower-case "z" and
// a leap second ("23:59:60"). Parsed here by hand, so each is the instant it names.

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

/** The instant an RFC 3339 date-time names, or null when it names none (Feb 30, hour 25). */
export function parseDateTime(text: string): Date | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  const offsetHours = m[10] === undefined ? 0 : Number(m[10]);
  const offsetMinutes = m[11] === undefined ? 0 : Number(m[11]);
  const daysInMonth = new Date(Date.UTC(year!, month, 0)).getUTCDate();
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth) return null;
  if (hour! > 23 || minute! > 59 || second! > 60 || offsetHours > 23 || offsetMinutes > 59) return null;
  // A leap second is the instant after :59 (Date.UTC carries second 60 into the next minute).
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  const sign = m[9] === '-' ? -1 : 1;
  const local = Date.UTC(year!, month! - 1, day, hour, minute, second, millis);
  const utc = local - sign * (offsetHours * 60 + offsetMinutes) * 60_000;
  const date = new Date(utc);
  return Number.isNaN(date.getTime()) ? null : date;
}
