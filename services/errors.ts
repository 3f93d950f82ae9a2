// One error class for every expected failure, and THE table of which HTTP status each error code
// comes with. It knows nothing about express; server/http/responses.ts turns it into a response.
import type { ErrorCode } from '../domain/errors.js';

export type { ErrorCode };

/** The statuses the service answers errors with. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 500 | 501 | 502 | 503;

/**
 * The HTTP status of each error code: the one place a code or a rule's outcome becomes a status
 * (the spec's ErrorCode description shows the same table; a test holds them together). A few
 * codes come with one of two statuses by operation: both are listed, and the operation picks one
 * of them (the helpers below and AppError refuse, at compile time, a status not listed here).
 */
export const ERROR_STATUS = {
  // General
  VALIDATION_ERROR: 422,
  MALFORMED_JSON: 400,
  BAD_REQUEST: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_IMPLEMENTED: 501,
  RATE_LIMITED: 429,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_ERROR: 500,
  DATABASE_UNAVAILABLE: 503,
  IDEMPOTENCY_KEY_REQUIRED: 422,
  IDEMPOTENCY_KEY_INVALID: 422,
  IDEMPOTENCY_CONFLICT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  STORE_REQUIRED: 422,
  STORE_NOT_FOUND: [404, 422],
  STORE_MISMATCH: 422,
  // Sign-in and accounts
  UNAUTHORIZED: 401,
  TOKEN_INVALID: 401,
  INVALID_REFRESH_TOKEN: 401,
  REFRESH_TOKEN_REUSED: 401,
  RECOVERY_TOKEN_INVALID: 401,
  INVALID_CREDENTIALS: 401,
  ACCOUNT_DISABLED: 403,
  PICKER_INACTIVE: 403,
  STORE_NOT_ASSIGNED: 403,
  OTP_INVALID: 422,
  OTP_EXPIRED: 422,
  OTP_ATTEMPTS_EXCEEDED: 422,
  OTP_RESEND_COOLDOWN: 429,
  OTP_SEND_LIMIT: 429,
  LOGIN_RATE_LIMITED: 429,
  TOO_MANY_ATTEMPTS: 429,
  SMS_DELIVERY_FAILED: 502,
  SMS_PROVIDER_UNAVAILABLE: 503,
  PIN_MISMATCH: 422,
  PIN_TOO_WEAK: 422,
  BIRTH_DATE_INVALID: 422,
  ACCOUNT_HAS_ACTIVE_ORDERS: 409,
  APP_KIND_MISMATCH: 422,
  PUSH_ENVIRONMENT_MISMATCH: 409,
  // Catalog
  CATALOG_NOT_PUBLISHED: 503,
  CATALOG_VERSION_NOT_FOUND: 404,
  INVALID_QUANTITY: 422,
  // Logistics
  LOCATION_NOT_SERVED: 404,
  QUERY_TOO_SHORT: 422,
  DUPLICATE_LOCATION_UUID: 422,
  GEOCODER_UNAVAILABLE: 502,
  // Orders
  DELIVERY_CONTEXT_REQUIRED: 422,
  PICKUP_CONTEXT_REQUIRED: 422,
  DELIVERY_MODE_INVALID: 422,
  CHANGE_NOT_ALLOWED: 422,
  INVALID_CHANGE: 422,
  ONLINE_PAYMENT_DISABLED: [409, 422],
  DUPLICATE_ITEM: 422,
  UNKNOWN_PRODUCT: 422,
  OUT_OF_STOCK: 409,
  LIMIT_EXCEEDED: 409,
  ITEM_UNAVAILABLE: 409,
  BELOW_MINIMUM_ORDER: 422,
  OUTSIDE_DELIVERY_ZONE: 422,
  EXPRESS_UNAVAILABLE: [409, 422],
  EXPRESS_ITEMS_LIMIT: 422,
  SLOT_NOT_FOUND: 422,
  SLOT_UNAVAILABLE: [409, 422],
  SLOT_FULL: [409, 422],
  COURIER_PROVIDER_ERROR: 502,
  ORDER_ALREADY_CANCELLED: 409,
  ORDER_NOT_CANCELLABLE: 409,
  ORDER_HAS_NO_DELIVERY: 409,
  DELIVERY_TRANSITION_NOT_ALLOWED: 409,
  ORDER_NOT_READY_FOR_COURIER: 409,
  ORDER_CLOSED: 409,
  ORDER_NOT_CHANGEABLE: 409,
  PICKING_STARTED: 409,
  INVALID_ORDER_CHANGE: 422,
  ORDER_LINE_NOT_FOUND: 422,
  ORDER_WOULD_BE_EMPTY: 422,
  REPLACEMENT_PREFERENCE_INVALID: 422,
  APPROVAL_ALREADY_DECIDED: 409,
  APPROVAL_WITHDRAWN: 409,
  PICKING_FINISHED: 409,
  // Payments
  ORDER_NOT_PAYABLE_ONLINE: 409,
  ORDER_ALREADY_PAID: 409,
  ORDER_NOT_PAYABLE: 409,
  BANK_PROVIDER_ERROR: 502,
  NO_OPEN_INVOICE: 409,
  // Loyalty
  WALLET_NOT_FOUND: 404,
  WALLET_NOT_LINKED: [404, 409],
  WALLET_SYNC_IN_PROGRESS: 409,
  CARD_NUMBER_INVALID: 422,
  CARD_NOT_FOUND: 422,
  CARD_OWNED_BY_ANOTHER_CUSTOMER: 409,
  CARD_BLOCKED: 409,
  CARD_NOT_ISSUED: 409,
  CARD_ALREADY_ISSUED: 409,
  UNBLOCK_NOT_ALLOWED: 409,
  BLOCK_REASON_INVALID: 422,
  ACCOUNT_NOT_FOUND: 422,
  ACCOUNT_INACTIVE: 409,
  PURCHASE_NOT_FOUND: 404,
  QUANTITY_INVALID: 422,
  LOYALTY_PROVIDER_UNAVAILABLE: 502,
  // Picking
  order_cancelled: 409,
  ORDER_BUSY: 409,
  PICKER_HAS_ACTIVE_SESSION: 409,
  ORDER_NOT_PICKABLE: 409,
  SESSION_CLOSED: 409,
  VERSION_CONFLICT: 409,
  ITEM_STATE_CONFLICT: 409,
  ITEM_NOT_WEIGHT_BASED: 409,
  ITEM_IS_WEIGHT_BASED: 409,
  CONFIRMED_QUANTITY_MISMATCH: 409,
  CONFIRMED_QUANTITY_REQUIRED: 422,
  QUANTITY_ABOVE_ORDERED: 422,
  WEIGHT_INVALID: 422,
  QUANTITY_NOT_INTEGER: 422,
  INVENTORY_NOT_FOUND: 422,
  ADDED_ITEMS_LIMIT: 409,
  PRODUCT_ALREADY_IN_SESSION: 409,
  NOT_READY_TO_FINISH: 409,
  SESSION_NOT_CANCELLED: 409,
  ITEMS_NOT_IN_TOTES: 409,
  BATCH_TOO_LARGE: 422,
  BATCH_STORES_DIFFER: 422,
  TOTE_LABEL_IN_USE: 409,
  TOTE_ALREADY_BOUND: 409,
  TOTE_OF_ANOTHER_ORDER: 409,
  TOTE_TEMPERATURE_MISMATCH: 409,
  TOTE_UNKNOWN: 422,
  SESSION_NOT_IN_BATCH: 409,
  REPLACEMENT_NOT_WANTED: 409,
  REPLACEMENT_NOT_NAMED: 409,
  APPROVAL_PENDING: 409,
  INVALID_CURSOR: 422,
  INVALID_PERIOD: 422,
} as const satisfies Record<ErrorCode, ErrorStatus | readonly [ErrorStatus, ErrorStatus]>;

/** The statuses a code may come with. */
export type StatusOf<C extends ErrorCode> = C extends ErrorCode
  ? (typeof ERROR_STATUS)[C] extends readonly (infer S extends ErrorStatus)[]
    ? S
    : (typeof ERROR_STATUS)[C]
  : never;
/** The codes that may come with `status`. */
export type CodeWithStatus<S extends ErrorStatus> = { [C in ErrorCode]: S extends StatusOf<C> ? C : never }[ErrorCode];
/** The codes with a single status: an error of one needs no status from its caller. */
export type SingleStatusCode = { [C in ErrorCode]: (typeof ERROR_STATUS)[C] extends ErrorStatus ? C : never }[ErrorCode];

/** The status of a code that has one (domain outcomes are mapped through this). */
export const statusOf = <C extends SingleStatusCode>(code: C): StatusOf<C> => ERROR_STATUS[code] as StatusOf<C>;

export interface AppErrorOptions {
  /** Extra fields of the error body (e.g. `lines`, `session`, `retry_after_seconds`). */
  extra?: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
}

class ExpectedError extends Error {
  readonly status: ErrorStatus;
  readonly code: ErrorCode;
  readonly detail: string | ValidationIssue[];
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: ErrorStatus, code: ErrorCode, detail: string | ValidationIssue[], options: AppErrorOptions = {}) {
    super(typeof detail === 'string' ? detail : `${code}: ${detail.length} validation issue(s)`);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

/**
 * `new AppError(status, code, detail)`: the construct signature is generic so that `status` must be
 * one ERROR_STATUS lists for `code` (a compile error otherwise), while the class itself is not
 * (`err instanceof AppError` is a plain AppError, with no `any` type argument).
 */
interface AppErrorConstructor {
  new <C extends ErrorCode = ErrorCode>(
    status: StatusOf<C>,
    code: C,
    detail: string | ValidationIssue[],
    options?: AppErrorOptions,
  ): ExpectedError;
  readonly prototype: ExpectedError;
}
export type AppError = ExpectedError;
export const AppError = ExpectedError as AppErrorConstructor;

/** An error of a code with a single status: the status comes from ERROR_STATUS. */
export const appError = (code: SingleStatusCode, detail: string, options?: AppErrorOptions) =>
  new AppError(statusOf(code), code, detail, options);

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export const badRequest = (code: CodeWithStatus<400>, detail: string) => new AppError(400, code, detail);
/**
 * The Bearer challenge of a 401 (RFC 6750 3.1): `error="invalid_token"` only when the request sent
 * a bearer token; a request without credentials (or with another scheme) gets the bare challenge.
 */
export const bearerChallenge = (authorization: string | string[] | undefined) => {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  return value && /^\s*Bearer(\s|$)/i.test(value) ? 'Bearer error="invalid_token"' : 'Bearer';
};
/**
 * 401 UNAUTHORIZED. `request` (the request's headers) lets the challenge say whether a token was
 * sent; without it a token is assumed (the callers that hold a verified principal).
 */
export const unauthorized = (
  detail = 'Authentication credentials were not provided or are invalid',
  request?: { headers: { authorization?: string | string[] } },
) =>
  new AppError(401, 'UNAUTHORIZED', detail, {
    headers: { 'WWW-Authenticate': request ? bearerChallenge(request.headers.authorization) : 'Bearer error="invalid_token"' },
  });
export const forbidden = (code: CodeWithStatus<403>, detail: string) => new AppError(403, code, detail);
export const notFound = (detail = 'Not found', code: CodeWithStatus<404> = 'NOT_FOUND') => new AppError(404, code, detail);
export const conflict = (code: CodeWithStatus<409>, detail: string, options?: AppErrorOptions) => new AppError(409, code, detail, options);
export const unprocessable = (code: CodeWithStatus<422>, detail: string, options?: AppErrorOptions) =>
  new AppError(422, code, detail, options);
/** How many validation issues an answer lists; the rest are counted in `issues_not_shown`. */
export const VALIDATION_ISSUES_SHOWN = 20;
/**
 * 422 VALIDATION_ERROR listing the first VALIDATION_ISSUES_SHOWN issues, and how many more there
 * are (`uncounted`: issues found but not among `issues`), so the answer stays small whatever was sent.
 */
export const validationFailed = (issues: ValidationIssue[], uncounted = 0) => {
  const notShown = Math.max(0, issues.length - VALIDATION_ISSUES_SHOWN) + uncounted;
  return new AppError(422, 'VALIDATION_ERROR', issues.slice(0, VALIDATION_ISSUES_SHOWN), {
    extra: notShown > 0 ? { issues_not_shown: notShown } : undefined,
  });
};
/** A limit a 429 reports: its name, how many requests (`quota`) it allows per `windowSeconds`. */
export interface RateLimitPolicy {
  name: string;
  quota: number;
  windowSeconds: number;
}

/**
 * The headers of a 429: `Retry-After`, and the IETF RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers: structured-field lists) naming the limit that was hit -
 * `RateLimit-Policy: "ip";q=120;w=60` (quota per window, seconds) and `RateLimit: "ip";r=0;t=42`
 * (nothing left, `t` seconds until the client may retry, as `Retry-After`).
 */
export function rateLimitHeaders(policy: RateLimitPolicy, retryAfterSeconds: number): Record<string, string> {
  const name = JSON.stringify(policy.name.replace(/[^\x20-\x7e]|["\\]/g, ''));
  return {
    'Retry-After': String(retryAfterSeconds),
    'RateLimit-Policy': `${name};q=${policy.quota};w=${policy.windowSeconds}`,
    RateLimit: `${name};r=0;t=${retryAfterSeconds}`,
  };
}

/** 429: the limit's headers and `retry_after_seconds` in the body. */
export const rateLimited = (code: CodeWithStatus<429>, detail: string, retryAfterSeconds: number, policy: RateLimitPolicy) =>
  new AppError(429, code, detail, {
    headers: rateLimitHeaders(policy, retryAfterSeconds),
    extra: { retry_after_seconds: retryAfterSeconds },
  });

export const tooManyRequests = (detail: string, retryAfterSeconds: number, policy: RateLimitPolicy) =>
  rateLimited('RATE_LIMITED', detail, retryAfterSeconds, policy);
export const serviceUnavailable = (code: CodeWithStatus<503>, detail: string, retryAfterSeconds = 5) =>
  new AppError(503, code, detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
export const badGateway = (code: CodeWithStatus<502>, detail: string) => new AppError(502, code, detail);
