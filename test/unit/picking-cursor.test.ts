// The signed cursor of picker search v2.
import { describe, expect, it } from 'vitest';
import { CURSOR_TTL_SECONDS, decodeCursor, encodeCursor } from '../../server/http/picking-cursor.js';

const scope = { storeId: '5f3c1a9e-8a51-4c3e-9a57-3d2f0c6b7a10', lang: 'en' as const, query: 'milk', barcode: null };
const now = new Date('2026-01-01T00:00:00Z');
const key = { inStock: true, relevance: '1.900000', name: 'Milk 3.2% 1 l', inventoryId: '6d2a8c4e-1f3b-4a5c-9d7e-8b0a2c4e6f81' };

describe('picker search cursor', () => {
  it('round-trips the position of the last row', () => {
    const c = encodeCursor('secret', scope, key, now);
    expect(c.length).toBeLessThanOrEqual(512);
    expect(decodeCursor('secret', scope, c, now)).toEqual({ ok: true, key });
  });
  it('refuses a cursor of another search, store or language', () => {
    const c = encodeCursor('secret', scope, key, now);
    expect(decodeCursor('secret', { ...scope, query: 'kefir' }, c, now)).toEqual({ ok: false, problem: 'other_search' });
    expect(decodeCursor('secret', { ...scope, lang: 'ru' }, c, now)).toEqual({ ok: false, problem: 'other_search' });
  });
  it('refuses a forged, truncated or foreign cursor', () => {
    const c = encodeCursor('secret', scope, key, now);
    const [payload] = c.split('.');
    const forged = Buffer.from(JSON.stringify({ k: [1, '9', 'A', key.inventoryId], s: 'x', t: 0 })).toString('base64url');
    for (const bad of [`${forged}.${c.split('.')[1]}`, payload, 'garbage', encodeCursor('other-secret', scope, key, now)]) {
      expect(decodeCursor('secret', scope, bad!, now)).toEqual({ ok: false, problem: 'malformed' });
    }
  });
  it('expires after an hour', () => {
    const issued = new Date('2026-01-01T10:00:00Z');
    const c = encodeCursor('secret', scope, key, issued);
    expect(decodeCursor('secret', scope, c, new Date(issued.getTime() + (CURSOR_TTL_SECONDS - 1) * 1000)).ok).toBe(true);
    expect(decodeCursor('secret', scope, c, new Date(issued.getTime() + (CURSOR_TTL_SECONDS + 1) * 1000))).toEqual({
      ok: false,
      problem: 'expired',
    });
  });
});
