// The `X-Store-Id` rule shared by every store-dependent operation: the spec leaves the header
// optional, so the operation checks it (422 STORE_REQUIRED / STORE_NOT_FOUND, never a 500).
import { unprocessable } from '../../services/errors.js';
import { declaredHeader, type OperationsWithHeader, type RequestContext } from '../../server/handler-types.js';
import { findActiveStoreCached } from '../../services/stores.js';

export async function requireStore<K extends OperationsWithHeader<'x-store-id'>>(ctx: RequestContext<K>) {
  const id = declaredHeader(ctx, 'x-store-id')?.trim();
  if (!id) throw unprocessable('STORE_REQUIRED', 'The X-Store-Id header is required for this operation');
  const store = await findActiveStoreCached(ctx.deps, id);
  if (!store) throw unprocessable('STORE_NOT_FOUND', 'No active store has this X-Store-Id');
  return store;
}
