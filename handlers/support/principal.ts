// The caller of an operation whose security already ran (openapi-backend refuses the request
// before the handler otherwise); these only narrow the type.
import type { OperationId } from '../../generated/operations.js';
import { unauthorized } from '../../services/errors.js';
import type { RequestContext } from '../../server/handler-types.js';

export function customerIdOf<K extends OperationId>(ctx: RequestContext<K>): string {
  if (ctx.principal?.kind !== 'customer') throw unauthorized(undefined, ctx);
  return ctx.principal.customerId;
}

/** The customer when a token was sent to an optionally authorized operation, else null. */
export function optionalCustomerIdOf<K extends OperationId>(ctx: RequestContext<K>): string | null {
  return ctx.principal?.kind === 'customer' ? ctx.principal.customerId : null;
}

export function pickerIdOf<K extends OperationId>(ctx: RequestContext<K>): number {
  if (ctx.principal?.kind !== 'picker') throw unauthorized(undefined, ctx);
  return Number(ctx.principal.pickerId);
}
