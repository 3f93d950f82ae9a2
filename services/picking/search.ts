// Product search in the store the picker works in now: their current session's store, else their
// default store. Pages by offset, or by keyset after the last row of the previous page.
import { findPicker } from '../../db/queries/accounts.js';
import type { Executor } from '../../db/executor.js';
import { searchStoreProducts, searchStoreProductsAfter, type PickerSearch, type SearchKey } from '../../db/queries/picking/catalog.js';
import { toPickerCatalogProduct, type PickerCatalogProduct } from '../presenters/picker-catalog.js';
import { findCurrentSessionRef } from '../../db/queries/picking/sessions.js';
import { readScannedCode } from '../../domain/codes/scale-label.js';
import { unprocessable } from '../errors.js';
import type { Lang } from './runner.js';

/** What the picker searches for, as the query sent it. */
export interface SearchInput {
  lang: Lang;
  query: string | null | undefined;
  barcode: string | null | undefined;
}

/** What a search cursor is bound to: a cursor of one search cannot page another. */
export interface SearchScope {
  storeId: string;
  lang: Lang;
  query: string | null;
  barcode: string | null;
}

/**
 * How the caller turns the last row's key into an opaque cursor and back; `read` throws when the
 * cursor is not one it issued for this scope.
 */
export interface SearchCursors {
  read(scope: SearchScope, cursor: string): SearchKey;
  write(scope: SearchScope, last: SearchKey): string;
}

/** The store picker search looks in: the current session's, else the picker's default store. */
async function pickerSearch(db: Executor, pickerId: number, input: SearchInput): Promise<PickerSearch> {
  const current = await findCurrentSessionRef(db, pickerId);
  const storeId = current?.store_id ?? (await findPicker(db, pickerId))?.default_store_id ?? null;
  if (!storeId) throw unprocessable('STORE_REQUIRED', 'You have no current session and no default store to search in');
  const code = input.barcode?.trim();
  return { storeId, lang: input.lang, query: input.query ?? null, code: code ? readScannedCode(code) : null };
}

export async function searchProducts(
  db: Executor,
  pickerId: number,
  input: SearchInput,
  page: { limit: number; offset: number },
): Promise<{ items: PickerCatalogProduct[]; total: number; limit: number; offset: number; has_more: boolean }> {
  const { limit, offset } = page;
  const { rows, total } = await searchStoreProducts(db, await pickerSearch(db, pickerId, input), limit, offset);
  return { items: rows.map((r) => toPickerCatalogProduct(r, input.lang)), total, limit, offset, has_more: offset + rows.length < total };
}

export async function searchProductsAfter(
  db: Executor,
  pickerId: number,
  input: SearchInput,
  page: { limit: number; cursor: string | null | undefined },
  cursors: SearchCursors,
): Promise<{ items: PickerCatalogProduct[]; has_more: boolean; next_cursor: string | null }> {
  const search = await pickerSearch(db, pickerId, input);
  const scope = { storeId: search.storeId, lang: input.lang, query: input.query ?? null, barcode: input.barcode ?? null };
  const after = page.cursor ? cursors.read(scope, page.cursor) : null;
  const found = await searchStoreProductsAfter(db, search, page.limit, after);
  return {
    items: found.rows.map((r) => toPickerCatalogProduct(r, input.lang)),
    has_more: found.hasMore,
    next_cursor: found.hasMore && found.last ? cursors.write(scope, found.last) : null,
  };
}
