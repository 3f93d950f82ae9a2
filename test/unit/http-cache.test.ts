import { describe, expect, it } from 'vitest';
import { snapshotEtag } from '../../db/queries/catalog-snapshot.js';
import { acceptsGzip, ifNoneMatchMatches } from '../../server/http/conditional.js';

describe('snapshot ETags', () => {
  it('is a strong, quoted tag naming version, store, language and content', () => {
    const tag = snapshotEtag('7e2b8c96-6a85-4c4e-9e7c-0f5d2a6b1c85', '5f3c1a9e-8a51-4c3e-9a57-3d2f0c6b7a10', 'ru', 'ab'.repeat(32));
    expect(tag).toBe('"7e2b8c96.5f3c1a9e.ru.abababababababab"');
  });

  it('matches If-None-Match by weak comparison, in lists and with *', () => {
    const tag = '"a.b.ru.1"';
    expect(ifNoneMatchMatches('"a.b.ru.1"', tag)).toBe(true);
    expect(ifNoneMatchMatches('W/"a.b.ru.1"', tag)).toBe(true);
    expect(ifNoneMatchMatches('"x", "a.b.ru.1"', tag)).toBe(true);
    expect(ifNoneMatchMatches('*', tag)).toBe(true);
    expect(ifNoneMatchMatches('"a.b.en.1"', tag)).toBe(false);
    expect(ifNoneMatchMatches('a.b.ru.1', tag)).toBe(false); // unquoted is not an entity tag
    expect(ifNoneMatchMatches(undefined, tag)).toBe(false);
  });
});

describe('Accept-Encoding', () => {
  it('allows gzip when listed or covered by * with a q-value above 0', () => {
    expect(acceptsGzip('gzip, deflate, br')).toBe(true);
    expect(acceptsGzip('br;q=1.0, gzip;q=0.8')).toBe(true);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('*, gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip(undefined)).toBe(false);
  });
});
