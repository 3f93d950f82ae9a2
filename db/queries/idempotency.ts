// Idempotency records (table idempotency_keys of the foundation migration).
import { sql, type Expression, type RawBuilder } from 'kysely';
import type { Executor } from '../executor.js';

export interface IdempotencyScope {
  principal: string;
  operationId: string;
  key: string;
}

const scoped = (s: IdempotencyScope) => ({ principal: s.principal, operation_id: s.operationId, key: s.key });

/**
 * A completed record's answer columns: the JSON text, or (when it was gzipped) the gzip only. The
 * one list every completion writes, with Kysely (`.set(...)`) or in SQL (completeIdempotencyKeySql).
 */
export const storedAnswerColumns = (status: number, answer: StoredAnswer | null) => ({
  state: 'completed' as const,
  response_status: status,
  response_body: answer && !answer.gzip ? answer.text : null,
  response_gzip: answer?.gzip ?? null,
});
type AnswerColumn = keyof ReturnType<typeof storedAnswerColumns>;
/** Casts a parameter needs where SQL cannot take its type from the column (`INSERT ... SELECT`). */
const ANSWER_CASTS: Record<AnswerColumn, string | null> = {
  state: null,
  response_status: null,
  response_body: 'json',
  response_gzip: null,
};

/** The answer columns' values as SQL, each with its cast, in the order of storedAnswerColumns. */
function answerValuesSql(status: number, answer: StoredAnswer | null) {
  return Object.entries(storedAnswerColumns(status, answer)).map(([column, value]) => {
    const cast = ANSWER_CASTS[column as AnswerColumn];
    return { column, value: cast ? sql`${value}::${sql.raw(cast)}` : sql`${value}` };
  });
}

/** The key's row: its primary key. */
const keyWhereSql = (s: IdempotencyScope) => sql`principal = ${s.principal} AND operation_id = ${s.operationId} AND key = ${s.key}`;

/**
 * The UPDATE completing the key's record with its answer, for a data-modifying CTE of a write
 * that stores the answer with its effect in one statement: only when `when` holds (the effect
 * happened), with `RETURNING 1` when asked. completeIdempotencyKey is the same in Kysely.
 */
export function completeIdempotencyKeySql(
  s: IdempotencyScope,
  status: number,
  answer: StoredAnswer | null,
  opts: { when?: Expression<boolean>; returning?: boolean } = {},
): RawBuilder<unknown> {
  const set = sql.join(answerValuesSql(status, answer).map(({ column, value }) => sql`${sql.ref(column)} = ${value}`));
  return sql`UPDATE idempotency_keys SET ${set}
    WHERE ${keyWhereSql(s)}${opts.when ? sql` AND ${opts.when}` : sql``}${opts.returning ? sql` RETURNING 1` : sql``}`;
}

/**
 * The INSERT of a completed record with its answer, for a statement that writes it with the
 * action's effect: only when `when` holds; on a conflict with an existing record, either nothing
 * (`onConflict` 'nothing') or the whole statement fails (23505 on idempotency_keys_pk). RETURNING 1.
 */
export function insertCompletedIdempotencyKeySql(
  s: IdempotencyScope,
  fingerprint: string,
  ttlSeconds: number,
  status: number,
  answer: StoredAnswer | null,
  opts: { when?: Expression<boolean>; onConflict: 'nothing' | 'fail' },
): RawBuilder<unknown> {
  const values = answerValuesSql(status, answer);
  return sql`INSERT INTO idempotency_keys (principal, operation_id, key, fingerprint, ${sql.join(values.map((v) => sql.ref(v.column)))}, expires_at)
    SELECT ${s.principal}, ${s.operationId}, ${s.key}, ${fingerprint}, ${sql.join(values.map((v) => v.value))},
           now() + make_interval(secs => ${ttlSeconds})
    ${opts.when ? sql`WHERE ${opts.when}` : sql``}
    ${opts.onConflict === 'nothing' ? sql`ON CONFLICT (principal, operation_id, key) DO NOTHING` : sql``}
    RETURNING 1`;
}

/**
 * Takes the key's in-flight lock for the rest of the transaction, or answers false at once when
 * another transaction holds it. Transaction-scoped: it ends with the commit, the rollback, or the
 * connection (a crash), so it can never be left behind.
 */
export async function tryLockIdempotencyKey(trx: Executor, s: IdempotencyScope): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean;
  }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${`idem:${s.principal}:${s.operationId}:${s.key}`}, 0)) AS locked`.execute(trx);
  return rows[0]?.locked === true;
}

/**
 * Stores the answer of a completed action (or business error) as the key's record, replacing an
 * expired or abandoned one - or, with `existing` 'keep', leaving any record there is.
 */
export async function saveIdempotencyAnswer(
  db: Executor,
  s: IdempotencyScope,
  fingerprint: string,
  ttlSeconds: number,
  status: number,
  answer: StoredAnswer | null,
  existing: 'replace' | 'keep' = 'replace',
): Promise<void> {
  const answerColumns = storedAnswerColumns(status, answer);
  await db
    .insertInto('idempotency_keys')
    .values({ ...scoped(s), fingerprint, ...answerColumns, expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})` })
    .onConflict((oc) =>
      existing === 'keep'
        ? oc.columns(['principal', 'operation_id', 'key']).doNothing()
        : oc.columns(['principal', 'operation_id', 'key']).doUpdateSet({
            fingerprint,
            ...answerColumns,
            created_at: sql<Date>`now()`,
            expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
          }),
    )
    .execute();
}

// Claiming a key. Order creation claims inside the order's own transaction, with the answer it
// is about to give (the order id it chose): a duplicate waits at the key and then replays, and a
// refusal or a crash rolls the claim back with the order. Picker item commands claim nothing:
// their one write inserts the key's record with the effect (db/queries/picking/commands.ts). So
// neither leaves a record in progress behind a dead process. A record still `in_progress` (only
// takeOverIdempotencyKey writes one, completed by the action's write) after
// IdempotencyOptions.staleSeconds is taken over; withIdempotency (services/idempotency.ts) keeps
// nothing in flight either: a transaction lock.

/**
 * Claims the key for an action whose answer is known before it runs, with a read, in one
 * statement (one round trip where there were three: claim, read, and completing the record after
 * the action): whether the key was claimed, and the read's rows (`columns` of `read`; none when
 * it found nothing). The record is written `completed` with `answer`, and is only ever seen
 * committed, that is with the action's effect: the claim belongs to the action's transaction. The
 * read sees the database as it was before the claim; it takes no locks.
 */
export async function claimIdempotencyKeyWith<Row>(
  db: Executor,
  s: IdempotencyScope,
  fingerprint: string,
  ttlSeconds: number,
  answer: { status: number; stored: StoredAnswer },
  read: { query: Expression<unknown>; columns: readonly string[] } | null,
): Promise<{ claimed: boolean; rows: Row[] }> {
  const insert = insertCompletedIdempotencyKeySql(s, fingerprint, ttlSeconds, answer.status, answer.stored, { onConflict: 'nothing' });
  const { rows } = await sql<{ claimed: boolean } & Record<string, unknown>>`
    WITH k AS (${insert})
    SELECT EXISTS (SELECT 1 FROM k) AS claimed${read ? sql`, ${sql.join(read.columns.map((c) => sql.ref(`r.${c}`)))}` : sql``}
    FROM (SELECT 1) one${read ? sql` LEFT JOIN (${read.query}) r ON true` : sql``}`.execute(db);
  const first = read?.columns[0];
  return {
    claimed: rows[0]!.claimed,
    rows: first ? rows.filter((r) => r[first] !== null).map(({ claimed: _, ...r }) => r as Row) : [],
  };
}

/**
 * Takes over a record that can no longer be honoured: expired, or left `in_progress` longer than
 * `staleSeconds` by a process that died before its transaction committed (nothing was done then:
 * the result is stored in the same transaction as the action).
 */
export async function takeOverIdempotencyKey(
  db: Executor,
  s: IdempotencyScope,
  fingerprint: string,
  ttlSeconds: number,
  staleSeconds: number,
): Promise<boolean> {
  const row = await db
    .updateTable('idempotency_keys')
    .set({
      fingerprint,
      state: 'in_progress',
      response_status: null,
      response_body: null,
      response_gzip: null,
      created_at: sql<Date>`now()`,
      expires_at: sql<Date>`now() + make_interval(secs => ${ttlSeconds})`,
    })
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

/**
 * Records the answer of a completed action (null: no body): completeIdempotencyKeySql in Kysely,
 * from the same columns. A large answer is kept gzipped only (migration 2026_11_22_0014): a picker
 * command's (its session) is 33 KB of JSON, 5 KB gzipped.
 */
export async function completeIdempotencyKey(
  db: Executor,
  s: IdempotencyScope,
  status: number,
  answer: StoredAnswer | null,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set(storedAnswerColumns(status, answer))
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

export function findIdempotencyRecord(db: Executor, s: IdempotencyScope) {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'state', 'response_status', 'response_body', 'response_gzip', 'created_at', 'expires_at'])
    .where('principal', '=', s.principal)
    .where('operation_id', '=', s.operationId)
    .where('key', '=', s.key)
    .executeTakeFirst();
}

/** An answer as stored: its JSON text, or (from GZIP_FROM_CHARS on, services/stored-body.ts) that text gzipped. */
export interface StoredAnswer {
  text: string;
  gzip: Buffer | null;
}

export async function deleteExpiredIdempotencyKeys(db: Executor): Promise<number> {
  const r = await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
