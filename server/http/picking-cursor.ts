// The opaque cursor of picker product search v2: the sort key of the last row of a page, bound to
// the search it was issued for and signed, so a client can neither forge a position nor reuse it
// for another search. Keyset paging on (in stock, relevance, name, inventory id) keeps pages
// stable while products are added or removed elsewhere in the order.
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface CursorKey {
  inStock: boolean;
  relevance: string;
  name: string;
  inventoryId: string;
}

/** What a cursor is bound to: the search parameters and the store and language it ran in. */
export interface CursorScope {
  storeId: string;
  lang: 'ru' | 'en';
  query: string | null;
  barcode: string | null;
}

export const CURSOR_TTL_SECONDS = 3600;

const scopeDigest = (scope: CursorScope): string =>
  createHmac('sha256', 'picker-search-scope')
    .update(JSON.stringify([scope.storeId, scope.lang, scope.query ?? '', scope.barcode ?? '']))
    .digest('base64url')
    .slice(0, 16);

const sign = (secret: string, payload: string): string => createHmac('sha256', secret).update(payload).digest('base64url').slice(0, 22);

export function encodeCursor(secret: string, scope: CursorScope, key: CursorKey, now: Date): string {
  const payload = Buffer.from(
    JSON.stringify({
      k: [key.inStock ? 1 : 0, key.relevance, key.name, key.inventoryId],
      s: scopeDigest(scope),
      t: Math.floor(now.getTime() / 1000),
    }),
  ).toString('base64url');
  return `${payload}.${sign(secret, payload)}`;
}

export type CursorProblem = 'malformed' | 'expired' | 'other_search';

export function decodeCursor(
  secret: string,
  scope: CursorScope,
  cursor: string,
  now: Date,
): { ok: true; key: CursorKey } | { ok: false; problem: CursorProblem } {
  const [payload, signature, extra] = cursor.split('.');
  if (!payload || !signature || extra !== undefined) return { ok: false, problem: 'malformed' };
  const expected = Buffer.from(sign(secret, payload));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, problem: 'malformed' };
  let data: { k?: unknown; s?: unknown; t?: unknown };
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof data;
  } catch {
    return { ok: false, problem: 'malformed' };
  }
  const k = data.k;
  if (!Array.isArray(k) || k.length !== 4 || typeof data.t !== 'number' || typeof data.s !== 'string')
    return { ok: false, problem: 'malformed' };
  const [inStock, relevance, name, inventoryId] = k as unknown[];
  if (
    (inStock !== 0 && inStock !== 1) ||
    typeof relevance !== 'string' ||
    !/^-?[0-9]+(\.[0-9]+)?$/.test(relevance) ||
    typeof name !== 'string' ||
    typeof inventoryId !== 'string' ||
    !/^[0-9a-f-]{36}$/i.test(inventoryId)
  ) {
    return { ok: false, problem: 'malformed' };
  }
  if (data.s !== scopeDigest(scope)) return { ok: false, problem: 'other_search' };
  if (now.getTime() / 1000 - data.t > CURSOR_TTL_SECONDS) return { ok: false, problem: 'expired' };
  return { ok: true, key: { inStock: inStock === 1, relevance, name, inventoryId } };
}
