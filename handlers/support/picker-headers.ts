// The headers of a picker command - Idempotency-Key, X-Expected-Version and Prefer - read once
// here, so the picking use cases take plain values and never a request.
import { isUuid } from '../../domain/ids.js';
import { unprocessable } from '../../services/errors.js';
import type { PickerAction, PickerCommand } from '../../services/picking/runner.js';
import { declaredHeader, type OperationsWithHeader, type RequestContext } from '../../server/handler-types.js';
import { pickerIdOf } from './principal.js';

/** The picker commands on a session: the operations that declare Idempotency-Key, X-Expected-Version and Prefer. */
export type PickerCommandOperation = OperationsWithHeader<'idempotency-key'> &
  OperationsWithHeader<'x-expected-version'> &
  OperationsWithHeader<'prefer'>;

/** The UUID Idempotency-Key every picker command requires (checked here: the header schema is optional). */
function commandKey<K extends OperationsWithHeader<'idempotency-key'>>(ctx: RequestContext<K>): string {
  const key = declaredHeader(ctx, 'idempotency-key')?.trim();
  if (!key) throw unprocessable('IDEMPOTENCY_KEY_REQUIRED', 'Picker commands need an Idempotency-Key header (a UUID, new for each action)');
  if (!isUuid(key)) throw unprocessable('IDEMPOTENCY_KEY_INVALID', 'The Idempotency-Key of a picker command must be a UUID');
  return key.toLowerCase();
}

/** X-Expected-Version, already checked by the contract to be an integer >= 1; undefined when absent. */
function expectedVersionOf<K extends OperationsWithHeader<'x-expected-version'>>(ctx: RequestContext<K>): number | undefined {
  const value = declaredHeader(ctx, 'x-expected-version');
  return value === undefined || value === '' ? undefined : Number(value);
}

/**
 * Whether the command's caller asked for the whole session (`Prefer: return=representation`,
 * RFC 7240); otherwise it answers the delta. Other preferences in the header are ignored.
 */
function wantsFullSession<K extends OperationsWithHeader<'prefer'>>(ctx: RequestContext<K>): boolean {
  const text = declaredHeader(ctx, 'prefer');
  if (!text) return false;
  return text.split(',').some((p) => /^\s*return\s*=\s*"?representation"?\s*(;|$)/i.test(p));
}

/** The caller and key of a retry-safe picker request: 401 before the key's 422. */
export function pickerActionOf<K extends OperationsWithHeader<'idempotency-key'>>(ctx: RequestContext<K>): PickerAction {
  const pickerId = pickerIdOf(ctx);
  return { pickerId, operationId: ctx.operationId, key: commandKey(ctx), lang: ctx.lang };
}

/** The caller, key, expected version and wanted representation of a command on a session. */
export function pickerCommandOf<K extends PickerCommandOperation>(ctx: RequestContext<K>): PickerCommand {
  return { ...pickerActionOf(ctx), expectedVersion: expectedVersionOf(ctx), fullSession: wantsFullSession(ctx) };
}

/** A command on a session whose answer has one shape (no `Prefer`): the caller, key and expected version. */
export function pickerVersionedCommandOf<K extends OperationsWithHeader<'idempotency-key'> & OperationsWithHeader<'x-expected-version'>>(
  ctx: RequestContext<K>,
): PickerCommand {
  return { ...pickerActionOf(ctx), expectedVersion: expectedVersionOf(ctx), fullSession: false };
}
