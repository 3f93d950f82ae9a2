// Idempotency records (table idempotency_keys of the foundation migration).
import { sql } from 'kysely';
import type { Executor } from '../executor.js';

export interface IdempotencyScope {
  principal: string;
  operationId: string;
  key: string;
}

const scoped = (s: IdempotencyScope) => ({ principal: s.principal, operation_id: s.operationId, key: s.key });

/** Claims the key for a new action; false when a record already exists. */
export async function claimIdempotencyKey(db: Executor, s: IdempotencyScope, fingerprint: string, ttlSeconds: number): Promise<boolean> {
  const row = await db
    .insertInto('idempotency_keys')
    .values({ ...scoped(s), fingerprint, state: 'in_progress', expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})` })
    .onConflict((oc) => oc.columns(['principal', 'operation_id', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  return row !== undefined;
}

export function findIdempotencyRecord(db: Executor, s: IdempotencyScope) {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'state', 'response_status', 'response_body', 'created_at', 'expires_at'])
    .where('principal', '=', s.principal)
    .where('operation_id', '=', s.operationId)
    .where('key', '=', s.key)
    .executeTakeFirst();
}

/**
 * Takes over a record that can no longer be honoured: expired, or left `in_progress` longer than
 * `staleSeconds` by a process that died before its transaction committed (nothing was done then:
 * the result is stored in the same transaction as the action).
 */
export async function takeOverIdempotencyKey(db: Executor, s: IdempotencyScope, fingerprint: string, ttlSeconds: number, staleSeconds: number): Promise<boolean> {
  const row = await db
    .updateTable('idempotency_keys')
    .set({ fingerprint, state: 'in_progress', response_status: null, response_body: null, created_at: sql<Date>`now()`, expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})` })
    .where('principal', '=', s.principal)
    .where('operation_id', '=', s.operationId)
    .where('key', '=', s.key)
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', sql<Date>`now()`),
        eb.and([eb('state', '=', 'in_progress'), eb('created_at', '<=', sql<Date>`now() - make_interval(secs => ${staleSeconds})`)]),
      ]),
    )
    .returning('key')
    .executeTakeFirst();
  return row !== undefined;
}

export async function completeIdempotencyKey(db: Executor, s: IdempotencyScope, status: number, body: unknown): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'completed', response_status: status, response_body: body === undefined ? null : JSON.stringify(body) })
    .where('principal', '=', s.principal)
    .where('operation_id', '=', s.operationId)
    .where('key', '=', s.key)
    .execute();
}

export async function releaseIdempotencyKey(db: Executor, s: IdempotencyScope): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('principal', '=', s.principal)
    .where('operation_id', '=', s.operationId)
    .where('key', '=', s.key)
    .where('state', '=', 'in_progress')
    .execute();
}

export async function deleteExpiredIdempotencyKeys(db: Executor): Promise<number> {
  const r = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', sql<Date>`now()`).executeTakeFirst();
  return Number(r.numDeletedRows);
}
