// Accept-Language negotiation (RFC 9110 12.5.4): every range counts with its weight, not only the
// first tag; Android's `ru_RU` is `ru-RU`.
import { describe, expect, it } from 'vitest';
import { preferredLanguage } from '../../server/http/responses.js';

describe('preferredLanguage', () => {
  it.each([
    ['ru', 'ru'],
    ['ru-RU', 'ru'],
    ['ru_RU', 'ru'], // Locale.toString() on Android
    ['RU-ru', 'ru'],
    ['de-DE, ru;q=0.5', 'ru'], // German is not offered, Russian is acceptable
    ['de-DE,de;q=0.9,ru;q=0.8,en;q=0.7', 'ru'],
    ['en;q=0.3, ru;q=0.6', 'ru'],
    ['fr, en-GB;q=0.8, ru;q=0.5', 'en'],
    ['ru;q=0.5, *;q=0.8', 'en'], // anything (English) is preferred to Russian
    ['*', 'en'],
    ['en, ru', 'en'],
    ['ru, en', 'ru'],
    ['de-DE', 'en'], // nothing offered is acceptable
    ['ru;q=0', 'en'],
    ['', 'en'],
    [undefined, 'en'],
  ] as const)('%j -> %s', (header, lang) => {
    expect(preferredLanguage(header)).toBe(lang);
  });
});
