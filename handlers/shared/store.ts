// The `X-Store-Id` rule shared by every store-dependent operation: the spec leaves the header
// optional, so the operation checks it (422 STORE_REQUIRED / STORE_NOT_FOUND, never a 500).
import { findActiveStore } from '../../db/queries/stores.js';
import { unprocessable } from '../../server/errors.js';
import type { OperationId } from '../../generated/operations.js';
import type { RequestContext } from '../../server/handler-types.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function requireStore<K extends OperationId>(ctx: RequestContext<K>) {
  const raw = ctx.headers['x-store-id'];
  const id = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!id) throw unprocessable('STORE_REQUIRED', 'The X-Store-Id header is required for this operation');
  const store = UUID.test(id) ? await findActiveStore(ctx.deps.db, id) : undefined;
  if (!store) throw unprocessable('STORE_NOT_FOUND', 'No active store has this X-Store-Id');
  // Responses that depend on the store (and language) must not be mixed by caches.
  ctx.res.vary('X-Store-Id');
  ctx.res.vary('Accept-Language');
  return store;
}
