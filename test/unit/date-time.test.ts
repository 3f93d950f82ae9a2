// RFC 3339 date-times in every form the request validator admits.
import { describe, expect, it } from 'vitest';
import { parseDateTime } from '../../domain/time/date-time.js';

describe('parseDateTime', () => {
  it('reads every offset form, separator and case as the instant it names', () => {
    const instant = '2025-03-13T21:00:00.000Z';
    for (const text of [
      '2025-03-14T00:00:00+03:00',
      '2025-03-14T00:00:00+0300',
      '2025-03-14T00:00:00+03',
      '2025-03-14 00:00:00+03:00',
      '2025-03-14t00:00:00+03:00',
      '2025-03-13T21:00:00Z',
      '2025-03-13t21:00:00z',
      '2025-03-13T18:30:00-02:30',
    ]) {
      expect([text, parseDateTime(text)?.toISOString()]).toEqual([text, instant]);
    }
    expect(parseDateTime('2025-03-13T21:00:00.1234Z')?.toISOString()).toBe('2025-03-13T21:00:00.123Z');
  });

  it('reads a leap second as the instant after :59', () => {
    expect(parseDateTime('2016-12-31T23:59:60Z')?.toISOString()).toBe('2017-01-01T00:00:00.000Z');
  });

  it('names no instant for dates and times that do not exist, or text that is not a date-time', () => {
    for (const text of [
      '2025-02-29T00:00:00Z',
      '2025-04-31T00:00:00Z',
      '2025-13-01T00:00:00Z',
      '2025-03-14T24:00:00Z',
      '2025-03-14T10:60:00Z',
      '2025-03-14T10:00:00',
      'yesterday',
      '',
    ]) {
      expect([text, parseDateTime(text)]).toEqual([text, null]);
    }
    expect(parseDateTime('2024-02-29T00:00:00Z')?.toISOString()).toBe('2024-02-29T00:00:00.000Z');
  });
});
