// Idempotency records (table idempotency_keys of the foundation migration).
import { sql } from 'kysely';
import type { Executor } from '../executor.js';

export interface IdempotencyScope {
  principal: string;
  operationId: string;
  key: string;
}

const scoped = (s: IdempotencyScope) => ({ principal: s.principal, operation_id: s.operationId, key: s.key });

/**
 * Takes the key's in-flight lock for the rest of the transaction, or answers false at once when
 * another transaction holds it. Transaction-scoped: it ends with the commit, the rollback, or the
 * connection (a crash), so it can never be left behind.
 */
export async function tryLockIdempotencyKey(trx: Executor, s: IdempotencyScope): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${`idem:${s.principal}:${s.operationId}:${s.key}`}, 0)) AS locked`.execute(trx);
  return rows[0]?.locked === true;
}

/** Stores the answer of a completed action (or business error) as the key's record, replacing an expired or abandoned one. */
export async function saveIdempotencyAnswer(db: Executor, s: IdempotencyScope, fingerprint: string, ttlSeconds: number, status: number, answer: StoredAnswer | null): Promise<void> {
  const answerColumns = {
    state: 'completed' as const,
    response_status: status,
    response_body: answer && !answer.gzip ? answer.text : null,
    response_gzip: answer?.gzip ?? null,
  };
  await db
    .insertInto('idempotency_keys')
    .values({ ...scoped(s), fingerprint, ...answerColumns, expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})` })
    .onConflict((oc) =>
      oc.columns(['principal', 'operation_id', 'key']).doUpdateSet({
        fingerprint,
        ...answerColumns,
        created_at: sql<Date>`now()`,
        expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
      }),
    )
    .execute();
}

export function findIdempotencyRecord(db: Executor, s: IdempotencyScope) {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'state', 'response_status', 'response_body', 'response_gzip', 'created_at', 'expires_at'])
    .where('principal', '=', s.principal)
    .where('operation_id', '=', s.operationId)
    .where('key', '=', s.key)
    .executeTakeFirst();
}

/** An answer as stored: its JSON text, or (from GZIP_FROM_CHARS on, server/http.ts) that text gzipped. */
export interface StoredAnswer {
  text: string;
  gzip: Buffer | null;
}

export async function deleteExpiredIdempotencyKeys(db: Executor): Promise<number> {
  const r = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', sql<Date>`now()`).executeTakeFirst();
  return Number(r.numDeletedRows);
}
