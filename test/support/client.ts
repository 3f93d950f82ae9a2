// The contract test client: typed by the generated spec types (openapi-fetch), and every
// response it receives is checked against the spec: the status is declared for the operation,
// the content type is the declared one and the body matches the schema. A violation throws,
// so the test fails. 501 is accepted only from operations this build does not implement.
import createClient, { type Client, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { paths } from '../../generated/api.test.js';
import type { AppEnv } from '../../platform/config.js';
import { loadSpec, ResponseValidator } from '../../server/contract.js';
import { RouteTable } from '../../server/router.js';
import { recordExercised } from './coverage.js';

const specs = new Map<AppEnv, { validator: ResponseValidator; routes: RouteTable }>();
function specOf(env: AppEnv) {
  let s = specs.get(env);
  if (!s) {
    const doc = loadSpec(env);
    s = { validator: new ResponseValidator(doc), routes: new RouteTable(doc) };
    specs.set(env, s);
  }
  return s;
}

export class ContractViolation extends Error {}

/** Throws unless `value` matches the spec's schema `name` (WebSocket messages, push payloads). */
export function assertMatchesSchema(name: string, value: unknown, env: AppEnv = 'TEST'): void {
  const problems = specOf(env).validator.checkSchema(name, value);
  if (problems.length) throw new ContractViolation(`${problems.join('; ')} in ${JSON.stringify(value)}`);
}

export interface CheckedResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON body (undefined when there is none). */
  body: any;
  /** The body as sent, decoded (replays are compared byte for byte). */
  text: string;
  operationId: string | undefined;
}

export interface ContractClientOptions {
  baseUrl: string;
  env?: AppEnv;
  /** Operations answering 501 in the server under test. */
  notImplemented: ReadonlySet<string>;
  /**
   * Count the responses in the contract coverage report (default true). False for servers that
   * are not the service (the mock server answers every operation from examples).
   */
  recordCoverage?: boolean;
}

/** What a request and its answer leave behind for `call`: the body as sent and the operation. */
interface Seen {
  text: string;
  operationId: string | undefined;
}

// The argument types of openapi-fetch's methods (its `ClientMethod`, whose `InitParam` is not exported).
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
/** A typed request of `api` (same arguments, same compile-time checks) answering a `CheckedResponse`. */
export type CheckedMethod<M extends HttpMethod> = <Path extends PathsWithMethod<paths, M>, Init extends MaybeOptionalInit<paths[Path], M>>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<CheckedResponse>;

function answering<M extends HttpMethod>(
  seen: WeakMap<Response, Seen>,
  send: (url: string, init?: object) => Promise<{ response: Response }>,
): CheckedMethod<M> {
  return async (url: string, init?: object): Promise<CheckedResponse> => {
    const { response } = await send(url, init);
    const { text, operationId } = seen.get(response) ?? { text: '', operationId: undefined };
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text, operationId };
  };
}

function typedCalls(api: Client<paths>, seen: WeakMap<Response, Seen>) {
  // openapi-fetch's methods are generic over the path; called here with the caller's checked arguments.
  const methods = api as unknown as Record<string, (url: string, init?: object) => Promise<{ response: Response }>>;
  const send = (m: string) => (url: string, init?: object) => methods[m]!(url, init);
  return {
    GET: answering<'get'>(seen, send('GET')),
    PUT: answering<'put'>(seen, send('PUT')),
    POST: answering<'post'>(seen, send('POST')),
    DELETE: answering<'delete'>(seen, send('DELETE')),
    PATCH: answering<'patch'>(seen, send('PATCH')),
    HEAD: answering<'head'>(seen, send('HEAD')),
  };
}

/**
 * A request body whose fields `D` have a default in the spec: openapi-typescript types them as
 * required (as the server sees them, defaults applied), while a client may leave them out.
 */
export type Defaulted<T, D extends keyof T> = Omit<T, D> & Partial<Pick<T, D>>;

export class ContractClient {
  /** The typed client (openapi-fetch): path, parameters and body are checked by the compiler. */
  readonly api: Client<paths>;
  /**
   * The requests of `api`, typed the same way (same arguments), answering `{ status, headers,
   * body, text }` as `invalid` does, so an assertion reads the status and the parsed body whatever
   * the status is: `client.call.POST('/api/orders/{order_id}/cancel', { params: { path: { order_id } }, headers, body })`.
   */
  readonly call: ReturnType<typeof typedCalls>;
  private readonly env: AppEnv;

  constructor(private readonly opts: ContractClientOptions) {
    this.env = opts.env ?? 'TEST';
    const seen = new WeakMap<Response, Seen>();
    const check: Middleware = {
      onResponse: async ({ request, response }) => {
        const text = await response.clone().text();
        const operationId = await this.verify(request.method, new URL(request.url).pathname, response, text);
        seen.set(response, { text, operationId });
        return undefined;
      },
    };
    this.api = createClient<paths>({ baseUrl: opts.baseUrl });
    this.api.use(check);
    this.call = typedCalls(this.api, seen);
  }

  /**
   * A request whose operation is only known at run time (a sweep over every operation of the spec),
   * so no compile-time type exists for it; checked like the typed ones. Everything else is `call`
   * (valid requests) or `invalid` (deliberately invalid ones).
   */
  untyped(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string | object | Uint8Array } = {},
  ): Promise<CheckedResponse> {
    return this.invalid(method, path, init);
  }

  /**
   * A deliberately invalid request (malformed or mistyped bodies, unknown paths and methods, wrong
   * content types), checked like the typed ones. Valid requests go through `api` or `call`, whose
   * types come from the spec. A `Uint8Array` body is sent as is, with no Content-Type unless
   * `headers` give one.
   */
  async invalid(
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: string | object | Uint8Array } = {},
  ): Promise<CheckedResponse> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    let body: string | Uint8Array | undefined;
    if (init.body instanceof Uint8Array) {
      body = init.body;
    } else if (init.body !== undefined) {
      body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.opts.baseUrl}${path}`, { method, headers, body: body as BodyInit | undefined });
    const text = await response.text();
    const operationId = await this.verify(method, new URL(`${this.opts.baseUrl}${path}`).pathname, response, text);
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined, text, operationId };
  }

  private async verify(method: string, pathname: string, response: Response, text: string): Promise<string | undefined> {
    const { validator, routes } = specOf(this.env);
    const route = routes.matchPath(pathname);
    const op = route?.methods.get(method.toLowerCase());
    const contentType = response.headers.get('content-type') ?? undefined;
    let parsed: unknown;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new ContractViolation(`${method} ${pathname} ${response.status}: body is not JSON`);
      }
    }
    if (!op?.operationId) {
      // Not an operation of the spec (unknown path, wrong method): the error model still holds.
      const ok = typeof parsed === 'object' && parsed !== null && 'code' in parsed && 'detail' in parsed;
      if (!ok) throw new ContractViolation(`${method} ${pathname} ${response.status}: not an ErrorResponse`);
      return undefined;
    }
    const id = op.operationId;
    if (response.status === 501 && this.opts.notImplemented.has(id)) {
      if (this.opts.recordCoverage !== false) recordExercised(id, 501);
      return id;
    }
    const problems = validator.check({ operationId: id, status: response.status, contentType, body: parsed, hasBody: text.length > 0 });
    if (problems.length) throw new ContractViolation(`${method} ${pathname}: ${problems.join('; ')}`);
    if (this.opts.recordCoverage !== false) recordExercised(id, response.status);
    return id;
  }
}
