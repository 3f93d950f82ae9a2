// Types that tie handlers to the contract. All of them derive from generated/ (openapi-typescript
// output), so a change to the spec shows up as a compile error in every handler it touches.
import type { operations } from '../generated/api.test.js';
import type { OperationId } from '../generated/operations.js';
import type { Principal } from '../platform/tokens.js';
import type { AppDeps } from '../services/deps.js';
import type { Logger } from '../platform/logger.js';

type Op<K extends OperationId> = operations[K];
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : undefined;

export type RequestBody<K extends OperationId> =
  Op<K> extends { requestBody: infer RB }
    ? JsonContent<NonNullable<RB>>
    : Op<K> extends { requestBody?: infer RB }
      ? JsonContent<NonNullable<RB>> | undefined
      : undefined;

type Params<K extends OperationId> = Op<K> extends { parameters: infer P } ? P : never;
export type PathParams<K extends OperationId> =
  Params<K> extends { path: infer P }
    ? P
    : Params<K> extends { path?: infer P }
      ? NonNullable<P> | Record<string, never>
      : Record<string, never>;
export type QueryParams<K extends OperationId> = Params<K> extends { query?: infer Q } ? NonNullable<Q> : Record<string, never>;

type HeaderParams<K extends OperationId> = Params<K> extends { header?: infer H } ? NonNullable<H> : never;
/**
 * The request headers the operation declares (spec `in: header` parameters), by their lower-case
 * names as Node gives them: `ctx.headers['x-store-id']`. A header the operation does not declare
 * is a compile error; the runtime's own headers are in `RequestContext.transport`.
 */
export type RequestHeaders<K extends OperationId> = [HeaderParams<K>] extends [never]
  ? Record<never, never>
  : { readonly [N in keyof HeaderParams<K> & string as Lowercase<N>]?: string };
/** The operations that declare the header `N` (lower-case): helpers reading it accept only those. */
export type OperationsWithHeader<N extends string> = { [K in OperationId]: N extends keyof RequestHeaders<K> ? K : never }[OperationId];

/** The value of header `name`, which every operation `K` declares (see OperationsWithHeader). */
export function declaredHeader<N extends string, K extends OperationsWithHeader<N>>(ctx: RequestContext<K>, name: N): string | undefined {
  return (ctx.headers as Partial<Record<N, string>>)[name];
}

/**
 * Headers that are no operation's parameter but that the runtime reads: the one escape from
 * `RequestContext.headers`, each named here rather than read through an index.
 */
export interface TransportHeaders {
  /** Accept-Encoding: whether stored bytes may be sent gzip-compressed. */
  readonly acceptEncoding: string | undefined;
  /** X-Recovery-Key: the credential of the `RecoveryTokenApiKey` security scheme (not a parameter). */
  readonly recoveryKey: string | undefined;
}

type Responses<K extends OperationId> = Op<K>['responses'];

/** What a handler returns: one of the operation's declared statuses with its body type. */
export type Reply<K extends OperationId> = {
  [S in keyof Responses<K>]: {
    status: S;
    body: JsonContent<Responses<K>[S]>;
    headers?: Record<string, string>;
    /** JSON already written and stored (a catalog snapshot): sent as these bytes, never re-serialised. */
    storedJson?: StoredJson;
  };
}[keyof Responses<K>];

/** Stored JSON bytes, gzipped or not; the reply's `body` is then parsed only if someone reads it. */
export interface StoredJson {
  bytes: Buffer;
  gzip: boolean;
}

/** Successful replies only (2xx and 304); errors are thrown as AppError. */
export type SuccessReply<K extends OperationId> = Extract<Reply<K>, { status: 200 | 201 | 202 | 204 | 304 }>;

export interface RequestContext<K extends OperationId> {
  operationId: K;
  body: RequestBody<K>;
  path: PathParams<K>;
  query: QueryParams<K>;
  /** The headers this operation declares, typed from the spec (see RequestHeaders). */
  headers: RequestHeaders<K>;
  /** Headers the runtime needs that no operation declares (see TransportHeaders). */
  transport: TransportHeaders;
  /** The authenticated caller, or null on a Public operation called without a token. */
  principal: Principal | null;
  /** `ru` when Accept-Language prefers Russian, otherwise `en`. */
  lang: 'ru' | 'en';
  requestId: string;
  log: Logger;
  deps: AppDeps;
  /** The client's address (behind trusted proxies, the one they report). */
  clientIp: string | undefined;
  /** Scheme and Host the client used, for links back to this service (the picker socket's URL). */
  origin: { secure: boolean; host: string | undefined };
}

export type OperationHandler<K extends OperationId> = (ctx: RequestContext<K>) => Promise<SuccessReply<K>> | SuccessReply<K>;

/** Marks an operation in the contract that this build does not serve yet: it answers 501 NOT_IMPLEMENTED. */
export interface NotImplemented {
  readonly notImplemented: true;
  /** What it is waiting for, for the reader of the handler map. */
  readonly waitingFor: string;
}

export const notImplemented = (waitingFor: string): NotImplemented => ({ notImplemented: true, waitingFor });

export function isNotImplemented(h: unknown): h is NotImplemented {
  return typeof h === 'object' && h !== null && (h as NotImplemented).notImplemented === true;
}

/** Request headers an answer may depend on, as `Vary` names them. */
export type VaryHeader = 'Accept-Language' | 'X-Store-Id' | 'Authorization' | 'Accept-Encoding';

/**
 * What the runtime does around an operation's handler, declared beside it rather than written in
 * it: the same rule for every reply of the operation, errors included.
 */
export interface OperationSteps {
  /** Counts the call against the client address's per-minute budget of sign-in operations (429 RATE_LIMITED). */
  limitPerClientIp?: true;
  /** Takes a token from the client address's in-memory budget of public reads (429 TOO_MANY_REQUESTS). */
  perClientBudget?: true;
  /** The request headers every answer depends on, sent as `Vary` (in this order). */
  varyBy?: readonly VaryHeader[];
  /** `Cache-Control: no-store`: answers that carry credentials. */
  noStore?: true;
}

/** The steps of each operation that has any. */
export type StepsMap = { readonly [K in OperationId]?: OperationSteps };

/** A handler for every TEST operation: a missing one is a compile error. */
export type HandlerMap = { [K in OperationId]: OperationHandler<K> | NotImplemented };
