// One error class for every expected failure. It knows a status and a stable code, nothing about
// express; server/http/responses.ts maps it to a response in one place.

export interface AppErrorOptions {
  /** Extra fields of the error body (e.g. `lines`, `session`, `retry_after_seconds`). */
  extra?: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After). */
  headers?: Record<string, string>;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string | ValidationIssue[];
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, detail: string | ValidationIssue[], options: AppErrorOptions = {}) {
    super(typeof detail === 'string' ? detail : `${code}: ${detail.length} validation issue(s)`);
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export const badRequest = (code: string, detail: string) => new AppError(400, code, detail);
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
export const forbidden = (code: string, detail: string) => new AppError(403, code, detail);
export const notFound = (detail = 'Not found', code = 'NOT_FOUND') => new AppError(404, code, detail);
export const conflict = (code: string, detail: string, options?: AppErrorOptions) => new AppError(409, code, detail, options);
export const unprocessable = (code: string, detail: string, options?: AppErrorOptions) =>
  new AppError(422, code, detail, options);
export const validationFailed = (issues: ValidationIssue[]) => new AppError(422, 'VALIDATION_ERROR', issues);
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
export const rateLimited = (code: string, detail: string, retryAfterSeconds: number, policy: RateLimitPolicy) =>
  new AppError(429, code, detail, { headers: rateLimitHeaders(policy, retryAfterSeconds), extra: { retry_after_seconds: retryAfterSeconds } });

export const tooManyRequests = (detail: string, retryAfterSeconds: number, policy: RateLimitPolicy) =>
  rateLimited('RATE_LIMITED', detail, retryAfterSeconds, policy);
export const serviceUnavailable = (code: string, detail: string, retryAfterSeconds = 5) =>
  new AppError(503, code, detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
export const badGateway = (code: string, detail: string) => new AppError(502, code, detail);
