// Retry-safe commands. One key is one action of one principal on one operation:
//   - same key, same body            -> the stored answer again (same status and body)
//   - same key, another body         -> 409 IDEMPOTENCY_CONFLICT (stop retrying)
//   - same key while the first runs  -> 409 IDEMPOTENCY_IN_PROGRESS with Retry-After, no second effect
// The answer is stored in the same transaction as the action, so a crash can never leave an
// action done without its record (which would let a retry do it twice), nor a record of an
// action that was not done.
import { createHash } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import {
  completeIdempotencyKey,
  findIdempotencyRecord,
  releaseIdempotencyKey,
  saveIdempotencyAnswer,
  takeOverIdempotencyKey,
  tryLockIdempotencyKey,
  type IdempotencyScope,
} from '../db/queries/idempotency.js';
import type { DB } from '../db/schema.js';
import type { Clock } from '../platform/clock.js';
import { AppError, conflict, type ErrorCode, type ErrorStatus, type ValidationIssue } from './errors.js';
import { gunzipBody, serializeBody } from './stored-body.js';

export interface StoredReply {
  status: number;
  body: unknown;
}

export interface IdempotencyOptions {
  /** How long a key is honoured (at least 24 hours by the contract). */
  ttlSeconds?: number;
  /**
   * After this long an `in_progress` record (committed by an instance of the previous release,
   * which claimed keys before acting) is considered abandoned by a crashed process.
   */
  staleSeconds?: number;
  /** Errors whose answer is stored and replayed (business outcomes); others release the key. */
  replayableError?: (err: AppError) => boolean;
  /**
   * storeRefusal keeps a record another request of the key wrote meanwhile (a path that read no
   * record before acting, so any record found now is that request's), instead of replacing it.
   */
  keepExisting?: boolean;
}

const DEFAULT_TTL = 24 * 3600;
const DEFAULT_STALE = 60;

/** Stable fingerprint of what makes two requests "the same action". */
export function fingerprintOf(...parts: unknown[]): string {
  return createHash('sha256').update(canonicalJson(parts)).digest('base64url');
}

function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v ?? null);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}

/** Thrown to replay a stored error answer exactly. */
export class ReplayedError extends AppError {}

/** What the action's transaction ended with: an answer, or a business error stored for replay. */
type Outcome<R> = { reply: R } | { error: AppError };

/**
 * Runs `action` once per key. The in-flight marker is a transaction-scoped advisory lock of the
 * key, taken in the action's own transaction, and the answer is stored in that transaction: a
 * crash of the service or of PostgreSQL mid-action leaves nothing behind (the lock ends with the
 * connection, the transaction never committed), so a retry with the same key after a restart
 * runs the action afresh - or replays the answer when its commit had been acknowledged. (A
 * committed `in_progress` claim, as before, stayed for `staleSeconds` and answered 409 for a
 * minute after every crash.) No session state: safe behind PgBouncer in transaction mode.
 */
export async function withIdempotency<R extends StoredReply>(
  { db, clock }: { db: Kysely<DB>; clock: Clock },
  scope: IdempotencyScope,
  fingerprint: string,
  action: (trx: Transaction<DB>) => Promise<R>,
  options: IdempotencyOptions = {},
): Promise<R> {
  const ttl = options.ttlSeconds ?? DEFAULT_TTL;
  const stale = options.staleSeconds ?? DEFAULT_STALE;
  const replayable = options.replayableError ?? ((e) => e.status === 409 || e.status === 422);
  const inProgress = () =>
    conflict('IDEMPOTENCY_IN_PROGRESS', 'The first request with this Idempotency-Key is still running; retry shortly', {
      headers: { 'Retry-After': '1' },
      extra: { retry_after_seconds: 1 },
    });

  const outcome = await db.transaction().execute(async (trx): Promise<Outcome<R>> => {
    if (!(await tryLockIdempotencyKey(trx, scope))) throw inProgress();
    // Read after the lock: an attempt that committed before it was taken is seen here.
    const existing = await findIdempotencyRecord(trx, scope);
    if (existing && existing.expires_at > clock.now()) {
      if (existing.fingerprint !== fingerprint) {
        throw conflict('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used with another request; use a new key for a new action');
      }
      if (existing.state === 'completed') return { reply: replay<R>(existing) };
      // A claim committed by an instance of the previous release, still within its time.
      if (existing.created_at.getTime() > clock.nowMs() - stale * 1000) throw inProgress();
    }
    // A business error rolls the action back to here and is stored as the key's answer.
    await sql`SAVEPOINT idempotent_action`.execute(trx);
    try {
      const reply = await action(trx);
      // Written (and gzipped when large) once: stored, and sent as is (server/http/responses.ts).
      await saveIdempotencyAnswer(
        trx,
        scope,
        fingerprint,
        ttl,
        reply.status,
        reply.body === undefined ? null : await serializeBody(reply.body),
      );
      return { reply };
    } catch (err) {
      if (!(err instanceof AppError && replayable(err)) || err instanceof ReplayedError) throw err;
      await sql`ROLLBACK TO SAVEPOINT idempotent_action`.execute(trx);
      const body = { detail: err.detail, code: err.code, ...err.extra };
      await saveIdempotencyAnswer(trx, scope, fingerprint, ttl, err.status, await serializeBody({ error: body, headers: err.headers }));
      return { error: err };
    }
  });
  if ('error' in outcome) throw outcome.error;
  return outcome.reply;
}

/**
 * A key whose claim found a record: the stored answer to replay, or a takeover of a record that
 * can no longer be honoured (expired, or abandoned in progress), after which the action runs as
 * if claimed. Throws IDEMPOTENCY_CONFLICT (another body) or IDEMPOTENCY_IN_PROGRESS.
 */
export async function settleTakenKey<R extends StoredReply>(
  db: Kysely<DB>,
  scope: IdempotencyScope,
  fingerprint: string,
  now: Date,
  options: IdempotencyOptions = {},
): Promise<{ replay: R | null }> {
  const existing = await findIdempotencyRecord(db, scope);
  if (existing && existing.fingerprint !== fingerprint && existing.expires_at > now) {
    throw conflict('IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used with another request; use a new key for a new action');
  }
  if (existing?.state === 'completed' && existing.expires_at > now) return { replay: replay<R>(existing) };
  if (!(await takeOverIdempotencyKey(db, scope, fingerprint, options.ttlSeconds ?? DEFAULT_TTL, options.staleSeconds ?? DEFAULT_STALE))) {
    throw conflict('IDEMPOTENCY_IN_PROGRESS', 'The first request with this Idempotency-Key is still running; retry shortly', {
      headers: { 'Retry-After': '1' },
      extra: { retry_after_seconds: 1 },
    });
  }
  return { replay: null };
}

/** After a claimed action failed: a business outcome (409/422 by default) is stored for replay; any other failure releases the key. */
export async function settleFailedAction(
  db: Kysely<DB>,
  scope: IdempotencyScope,
  err: unknown,
  options: IdempotencyOptions = {},
): Promise<void> {
  const replayable = options.replayableError ?? ((e) => e.status === 409 || e.status === 422);
  if (err instanceof AppError && replayable(err)) {
    const body = { detail: err.detail, code: err.code, ...err.extra };
    await completeIdempotencyKey(db, scope, err.status, await serializeBody({ error: body, headers: err.headers }));
  } else {
    await releaseIdempotencyKey(db, scope).catch(() => {});
  }
}

/** How long a key is honoured unless the caller says otherwise (the contract: at least 24 hours). */
export const IDEMPOTENCY_TTL_SECONDS = DEFAULT_TTL;

/**
 * After an action whose claim was part of its own transaction rolled back: a business outcome
 * (409/422 by default) becomes the key's stored answer, as withIdempotency stores it.
 */
export async function storeRefusal(
  db: Kysely<DB>,
  scope: IdempotencyScope,
  fingerprint: string,
  err: unknown,
  options: IdempotencyOptions = {},
): Promise<void> {
  const replayable = options.replayableError ?? ((e) => e.status === 409 || e.status === 422);
  if (!(err instanceof AppError && replayable(err)) || err instanceof ReplayedError) return;
  const body = { detail: err.detail, code: err.code, ...err.extra };
  await saveIdempotencyAnswer(
    db,
    scope,
    fingerprint,
    options.ttlSeconds ?? DEFAULT_TTL,
    err.status,
    await serializeBody({ error: body, headers: err.headers }),
    options.keepExisting ? 'keep' : 'replace',
  );
}

/** What storeRefusal keeps of an error (any other stored body is passed through as it is). */
interface StoredErrorBody {
  error?: { detail?: string | ValidationIssue[]; code?: string; [field: string]: unknown };
  headers?: Record<string, string>;
}

function replay<R extends StoredReply>(record: {
  response_status: number | null;
  response_body: unknown;
  response_gzip: Buffer | null;
}): R {
  const status = record.response_status ?? 500;
  // A small answer is kept as json (read back parsed), a large one gzipped.
  const body = (record.response_gzip ? gunzipBody(record.response_gzip) : record.response_body) as StoredErrorBody | null | undefined;
  if (status >= 400) {
    const { detail, code, ...extra } = body?.error ?? {};
    // A stored error was an AppError when it was saved, so its code and status are the table's.
    throw new ReplayedError(status as ErrorStatus, (code ?? 'INTERNAL_ERROR') as ErrorCode, detail ?? 'Replayed error', {
      extra,
      headers: body?.headers ?? {},
    });
  }
  return { status, body: status === 204 ? undefined : body } as R;
}
