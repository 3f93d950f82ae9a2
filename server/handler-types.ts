// Types that tie handlers to the contract. All of them derive from generated/ (openapi-typescript
// output), so a change to the spec shows up as a compile error in every handler it touches.
import type { IncomingHttpHeaders } from 'node:http';
import type express from 'express';
import type { operations } from '../generated/api.test.js';
import type { OperationId } from '../generated/operations.js';
import type { Principal } from './auth/tokens.js';
import type { AppDeps } from './deps.js';
import type { Logger } from './logger.js';

type Op<K extends OperationId> = operations[K];
type JsonContent<T> = T extends { content: { 'application/json': infer B } } ? B : undefined;

export type RequestBody<K extends OperationId> = Op<K> extends { requestBody: infer RB }
  ? JsonContent<NonNullable<RB>>
  : Op<K> extends { requestBody?: infer RB } ? JsonContent<NonNullable<RB>> | undefined : undefined;

type Params<K extends OperationId> = Op<K> extends { parameters: infer P } ? P : never;
export type PathParams<K extends OperationId> = Params<K> extends { path: infer P } ? P : Params<K> extends { path?: infer P } ? NonNullable<P> | Record<string, never> : Record<string, never>;
export type QueryParams<K extends OperationId> = Params<K> extends { query?: infer Q } ? NonNullable<Q> : Record<string, never>;

type Responses<K extends OperationId> = Op<K>['responses'];

/** What a handler returns: one of the operation's declared statuses with its body type. */
export type Reply<K extends OperationId> = {
  [S in keyof Responses<K>]: {
    status: S;
    body: JsonContent<Responses<K>[S]>;
    headers?: Record<string, string>;
  };
}[keyof Responses<K>];

/** Successful replies only (2xx and 304); errors are thrown as AppError. */
export type SuccessReply<K extends OperationId> = Extract<Reply<K>, { status: 200 | 201 | 202 | 204 | 304 }>;

export interface RequestContext<K extends OperationId> {
  operationId: K;
  body: RequestBody<K>;
  path: PathParams<K>;
  query: QueryParams<K>;
  headers: IncomingHttpHeaders;
  /** The authenticated caller, or null on a Public operation called without a token. */
  principal: Principal | null;
  /** `ru` when Accept-Language prefers Russian, otherwise `en`. */
  lang: 'ru' | 'en';
  requestId: string;
  log: Logger;
  deps: AppDeps;
  req: express.Request;
  res: express.Response;
}

export type OperationHandler<K extends OperationId> = (ctx: RequestContext<K>) => Promise<SuccessReply<K>> | SuccessReply<K>;

/** Marks an operation whose issue is still open: it answers 501 NOT_IMPLEMENTED. */
export interface NotImplemented {
  readonly notImplemented: true;
  /** Which issue will implement it. */
  readonly issue: number;
}

export const notImplemented = (issue: number): NotImplemented => ({ notImplemented: true, issue });

export function isNotImplemented(h: unknown): h is NotImplemented {
  return typeof h === 'object' && h !== null && (h as NotImplemented).notImplemented === true;
}

/** A handler for every TEST operation: a missing one is a compile error. */
export type HandlerMap = { [K in OperationId]: OperationHandler<K> | NotImplemented };
