// Runtime assembly of the HTTP side: node:http -> openapi-backend (routing by operationId,
// request validation with Ajv 2020, security handlers) -> typed handler -> Kysely. Express serves
// only the paths outside /api (docs, the spec, health, metrics).
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { OpenAPIBackend, type Context, type Document, type Operation, type Request as RoutedRequest } from 'openapi-backend';
import YAML from 'yaml';
import { OPERATIONS, type OperationId } from '../generated/operations.js';
import { ifNoneMatchMatches } from './http/conditional.js';
import { requestValidationAjv } from './ajv.js';
import { activePrincipal } from '../services/principal.js';
import { bearerToken, TokenError, type Principal } from '../platform/tokens.js';
import { isOperation, loadSpec, ResponseValidator, stampSpec, type OpenApiDocument } from './contract.js';
import type { AppDeps } from '../services/deps.js';
import { docsHandler } from './docs.js';
import type { EventLoopWatch } from '../platform/event-loop.js';
import { faviconHandler } from './favicon.js';
import { AppError, notFound, unauthorized, validationFailed, type ErrorCode, type StatusOf } from '../services/errors.js';
import {
  isNotImplemented,
  type HandlerMap,
  type PathParams,
  type RequestBody,
  type RequestContext,
  type StepsMap,
} from './handler-types.js';
import { limitClientIp } from '../services/limits.js';
import { takeRequestBudget } from '../services/logistics.js';
import {
  errorReply,
  isDatabaseUnavailable,
  nulCharacterIssues,
  preferredLanguage,
  send,
  requestValidationFailed,
  type HttpReply,
} from './http/responses.js';
import { serializeBody } from '../services/stored-body.js';
import { hasBody, readJsonBody } from './http/json-body.js';
import { addVary, clientAddress, requestProtocol, splitTarget, type Exchange } from './http/exchange.js';
import { redactUrl } from '../platform/logger.js';
import { createMetrics, metricsHandler, type Metrics } from '../platform/metrics.js';
import { installCompiledRouting, routeTableFor, validatedParams, type RouteTable } from './router.js';
import { trimFields, trimmedBodyFields } from './trim.js';

export interface CreateAppOptions {
  deps: AppDeps;
  handlers: Partial<HandlerMap>;
  /** What the runtime does around each operation's handler (IP limit and budget, Vary, no-store). */
  steps?: StepsMap;
  /** Override of the served document (the router benchmark serves a one-operation spec). */
  document?: OpenApiDocument;
  /** The event loop's delay, for readiness and metrics (none: not judged, not reported). */
  eventLoop?: EventLoopWatch;
}

export interface App {
  /** Answers the paths outside /api (docs, the spec, health, metrics). */
  express: express.Express;
  /** The server's request listener: /api requests straight, the rest through express. */
  listener: (req: IncomingMessage, res: ServerResponse) => void;
  api: OpenAPIBackend;
  routes: RouteTable;
  /** The stamped document served at /openapi.json. */
  document: OpenApiDocument;
  /** Operations answering 501 NOT_IMPLEMENTED in this build. */
  notImplemented: Set<string>;
  /** Requests currently being handled (for draining on shutdown). */
  inFlight(): number;
  /** From now on /readyz answers 503 and responses close their connections. */
  beginShutdown(): void;
  /** Compiles every request validator now, yielding between operations. */
  warmValidators(): Promise<void>;
  /** Request figures and scrape-time gauges served at /metrics. */
  metrics: Metrics;
}

type Reply = HttpReply;

/** openapi-backend's context with its request typed as this service reads it (its defaults are `any`). */
type RoutedContext = Context<unknown, Record<string, string>, Record<string, unknown>, IncomingHttpHeaders>;

export async function createApp({ deps, handlers, steps = {}, document, eventLoop }: CreateAppOptions): Promise<App> {
  const { config, log } = deps;
  installCompiledRouting();
  const source = document ?? loadSpec(config.env);
  const served = stampSpec(source, config.env, config.buildCommit);
  const servedYaml = YAML.stringify(served);
  const responseValidator = config.validateResponses ? new ResponseValidator(source) : null;
  const metrics = createMetrics({ pool: deps.pool, db: deps.db, clock: deps.clock, log, config, eventLoop });
  const trimmed = trimmedBodyFields(source);

  const api = new OpenAPIBackend({
    // The bundled spec is the document openapi-backend types as `Document` (OpenAPI 3.1).
    definition: structuredClone(source) as Document,
    strict: true,
    quick: true, // lazy validator compilation: init in milliseconds; warmValidators() fills the rest
    validate: true,
    coerceTypes: true,
    ignoreTrailingSlashes: false,
    customizeAjv: requestValidationAjv(),
  });
  // The document is OpenAPI 3.1; openapi-backend validates definitions against the 3.0
  // meta-schema and would reject it. `redocly lint` validates the contract in CI instead.
  api.validateDefinition = () => api.definition;

  const notImplemented = new Set<string>();
  // Only the operations of the served document: PROD lacks the TEST-only ones.
  const servedIds = new Set(
    Object.values(source.paths ?? {}).flatMap((item) =>
      Object.values(item)
        .filter(isOperation)
        .map((op) => op.operationId),
    ),
  );
  const operationIds = (Object.keys(OPERATIONS) as OperationId[]).filter((id) => servedIds.has(id));
  for (const id of operationIds) if (!handlers[id] || isNotImplemented(handlers[id])) notImplemented.add(id);

  const principalOf = (c: RoutedContext): Principal | null => {
    for (const result of Object.values(c.security ?? {})) {
      if (result && typeof result === 'object' && 'kind' in result) return result as Principal;
    }
    return null;
  };

  // No token is a plain "not satisfied" (null), not an error: anonymous requests to operations
  // with optional sign-in (the catalog) are the common case and an Error's stack trace is costly.
  const bearerPrincipal = async (c: RoutedContext, kind: 'customer_access' | 'picker_access'): Promise<Principal | null> => {
    const token = bearerToken(c.request.headers.authorization);
    if (!token) return null;
    return activePrincipal(deps, token, kind);
  };

  // openapi-backend turns anything a security handler throws into "not authorized", and so into
  // unauthorizedHandler (a 401). A session check that could not reach the database is no verdict
  // on the token: it is kept in the context (`{ error }`) and answered as the 503 it is, here and
  // in the operation handler (optional sign-in), never as a 401 that signs the user out.
  const databaseFailureOf = (c: RoutedContext): Error | null => {
    for (const result of Object.values(c.security ?? {})) {
      const error = result && typeof result === 'object' && 'error' in result ? (result as { error: unknown }).error : null;
      if (isDatabaseUnavailable(error)) return error as Error;
    }
    return null;
  };

  api.registerSecurityHandler('CustomerJWTAuth', (c: RoutedContext) => bearerPrincipal(c, 'customer_access'));
  api.registerSecurityHandler('PickerJWTAuth', (c: RoutedContext) => bearerPrincipal(c, 'picker_access'));
  // Push-device registration: either kind of access token (the handler matches it to app_kind).
  api.registerSecurityHandler('ApplicationJWTAuth', async (c: RoutedContext) => {
    try {
      return await bearerPrincipal(c, 'customer_access');
    } catch (err) {
      if (isDatabaseUnavailable(err)) throw err;
      return bearerPrincipal(c, 'picker_access');
    }
  });
  // The recovery token is verified and consumed by the operation itself (single use, in the
  // same transaction as the PIN change); here it must at least be present and well-formed.
  api.registerSecurityHandler('RecoveryTokenApiKey', (c: RoutedContext) => {
    const value = c.request.headers['x-recovery-key'];
    const token = Array.isArray(value) ? value[0] : value;
    if (!token) throw new TokenError('no recovery token');
    deps.tokens.verify(token, 'recovery');
    return { recoveryToken: token };
  });

  const errorBody = <C extends ErrorCode>(
    x: Exchange,
    status: StatusOf<C>,
    code: C,
    detail: string,
    extraHeaders?: Record<string, string>,
  ): Reply => ({ status, headers: extraHeaders, body: { detail, code, request_id: x.requestId } });

  api.register({
    notFound: (_c, x: Exchange) => errorBody(x, 404, 'NOT_FOUND', 'No operation at this path'),
    methodNotAllowed: (_c, x: Exchange) => {
      const allow = routes().allowedMethods(x.path).join(', ');
      return errorBody(x, 405, 'METHOD_NOT_ALLOWED', `Method ${x.req.method} is not allowed here`, { Allow: allow });
    },
    validationFail: (c) => {
      throw requestValidationFailed(c.validation.errors ?? []);
    },
    unauthorizedHandler: (c: RoutedContext) => {
      const failure = databaseFailureOf(c);
      if (failure) throw failure; // 503 DATABASE_UNAVAILABLE with Retry-After (server/http/responses.ts errorReply)
      // The recovery operation names its own code for a missing, malformed or expired token.
      if (c.operation.security?.some((s) => 'RecoveryTokenApiKey' in s)) {
        throw new AppError(401, 'RECOVERY_TOKEN_INVALID', 'The recovery token is not valid; verify a new code');
      }
      throw unauthorized(undefined, c.request);
    },
    notImplemented: (c) => {
      throw new AppError(501, 'NOT_IMPLEMENTED', `${c.operation.operationId} is in the contract but not served by this build yet`);
    },
  });

  for (const id of operationIds) {
    const handler = handlers[id];
    if (!handler || isNotImplemented(handler)) continue;
    api.register(id, async (c: RoutedContext, x: Exchange) => {
      const { req, res } = x;
      const principal = principalOf(c);
      // Optional authorization: a token that is sent must be valid, so a client with an expired
      // token refreshes instead of silently browsing as a guest.
      if (!principal && c.operation.security?.length && req.headers.authorization)
        throw databaseFailureOf(c) ?? unauthorized(undefined, req);
      const nul = nulCharacterIssues({ body: c.request.requestBody, query: c.request.query, path: c.request.params });
      if (nul.length) throw validationFailed(nul);
      const loose = looseIntegerIssues(c.operation, x.path);
      if (loose.length) throw validationFailed(loose);
      // Behind TRUST_PROXY_HOPS proxies (a load balancer), the address they report.
      const clientIp = clientAddress(req, config.trustProxyHops);
      const declared = steps[id];
      if (declared?.varyBy) for (const header of declared.varyBy) addVary(res, header);
      if (declared?.noStore) res.setHeader('Cache-Control', 'no-store');
      if (declared?.perClientBudget) takeRequestBudget(deps, clientIp);
      if (declared?.limitPerClientIp) await limitClientIp(deps.db, id, clientIp, config.auth.ipRequestsPerMinute, deps.clock.now());
      const ctx: RequestContext<typeof id> = {
        operationId: id,
        body: c.request.requestBody as RequestBody<typeof id>,
        path: validatedParams<PathParams<typeof id>>(c.request.params),
        query: c.request.query,
        headers: declaredHeaders(c.operation, req),
        transport: { acceptEncoding: headerText(req.headers['accept-encoding']), recoveryKey: headerText(req.headers['x-recovery-key']) },
        principal,
        lang: preferredLanguage(req.headers['accept-language']),
        requestId: x.requestId,
        log: x.log,
        deps,
        clientIp,
        origin: { secure: requestProtocol(req, config.trustProxyHops) === 'https', host: req.headers.host },
      };
      return (handler as (x: typeof ctx) => unknown)(ctx);
    });
  }

  await api.init();
  const routes = () => routeTableFor(api.definition);

  let shuttingDown = false;
  let inFlight = 0;
  const app = express();
  app.disable('x-powered-by');
  // Behind N proxies the client address is the Nth from the right in X-Forwarded-For.
  app.set('trust proxy', config.trustProxyHops);
  app.set('etag', false);
  app.set('query parser', 'extended');

  /**
   * What every request gets, through express or not: its id (the client's when well-formed), its
   * logger, a place in the in-flight count, and its line in the log and the metrics when it ends.
   */
  const beginRequest = (req: IncomingMessage, res: ServerResponse, operationIdOf: () => string | undefined) => {
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && /^[A-Za-z0-9._-]{8,128}$/.test(incoming) ? incoming : randomUUID();
    const started = process.hrtime.bigint();
    res.setHeader('X-Request-Id', requestId);
    if (shuttingDown) res.setHeader('Connection', 'close');
    inFlight++;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight--;
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (config.metrics.enabled) metrics.observeRequest(operationIdOf(), res.statusCode, durationMs / 1000);
      if (!log.enabled('info')) return;
      log.info('request', {
        request_id: requestId,
        method: req.method,
        path: redactUrl(req.url ?? '/'),
        operation_id: operationIdOf(),
        status: res.statusCode,
        duration_ms: durationMs,
      });
    };
    res.on('finish', finish);
    res.on('close', finish);
    return { requestId, log: log.child({ request_id: requestId }) };
  };

  app.use((req, res, next) => {
    const { requestId, log: requestLog } = beginRequest(req, res, () => res.locals.operationId);
    res.locals.requestId = requestId;
    res.locals.log = requestLog;
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    if (shuttingDown) {
      res.status(503).setHeader('Retry-After', '5').json({ status: 'shutting_down' });
      return;
    }
    if (eventLoop?.stalled()) {
      res
        .status(503)
        .setHeader('Retry-After', '1')
        .json({ status: 'event_loop_delayed', event_loop_delay_ms: Math.round(eventLoop.delayMs()) });
      return;
    }
    try {
      await deps.pool.query('SELECT 1');
      res.json({ status: 'ready' });
    } catch {
      res.status(503).setHeader('Retry-After', '5').json({ status: 'database_unavailable' });
    }
  });
  // Half a megabyte of JSON that client generators fetch: written and gzipped once (send()
  // reuses both), answered gzipped to clients that accept it like any JSON answer.
  // Both are fixed for the life of the process: a strong ETag lets generators and the docs site
  // revalidate (304) instead of fetching it again; a new build or environment is a new tag.
  void serializeBody(served);
  const tagOf = (text: string) => `"${createHash('sha256').update(text).digest('hex').slice(0, 32)}"`;
  const jsonTag = tagOf(JSON.stringify(served));
  const yamlTag = tagOf(servedYaml);
  const revalidated = (req: express.Request, res: express.Response, etag: string): boolean => {
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'no-cache');
    if (!ifNoneMatchMatches(req.headers['if-none-match'], etag)) return false;
    res.status(304).end();
    return true;
  };
  app.get('/openapi.json', (req, res) => {
    if (!revalidated(req, res, jsonTag)) send(res, { status: 200, body: served });
  });
  app.get('/openapi.yaml', (req, res) => {
    if (!revalidated(req, res, yamlTag)) res.type('application/yaml').send(servedYaml);
  });
  app.get('/docs', docsHandler(config.env, config.buildCommit));
  app.get('/favicon.ico', faviconHandler());
  if (config.metrics.enabled) app.get('/metrics', metricsHandler(metrics, config.metrics.bearerToken));

  const parseQuery = app.get('query parser fn') as (queryString: string) => Record<string, unknown>;

  const routeApi = async (x: Exchange): Promise<void> => {
    const { req, res } = x;
    // The router decodes path parameters and throws on a broken escape ("%ZZ"): no resource has
    // such a path.
    if (!isDecodablePath(x.path)) {
      send(res, errorReply(notFound('The path is not valid percent-encoding'), x.requestId, x.log));
      return;
    }
    // HEAD is GET without the body (RFC 9110 9.3.2): routed as GET; node writes no body for it.
    const method = req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET');
    let reply: Reply;
    const target = api.router.matchOperation({ method, path: x.path, headers: {} }, false) as Operation | undefined;
    // A body the JSON parser did not read (no Content-Type, text/plain, a form) is refused by name,
    // rather than validated as if no body had been sent.
    if (target?.requestBody && req.body === undefined && hasBody(req)) {
      const sent = req.headers['content-type'];
      send(
        res,
        errorReply(
          new AppError(
            415,
            'UNSUPPORTED_MEDIA_TYPE',
            `The body must be JSON: send it with Content-Type: application/json (${sent ? `it was ${sent.split(';')[0]!.trim()}` : 'no Content-Type was sent'})`,
          ),
          x.requestId,
          x.log,
        ),
      );
      return;
    }
    if (trimmed.size && req.body && typeof req.body === 'object') {
      const fields = target?.operationId ? trimmed.get(target.operationId) : undefined;
      if (fields) trimFields(req.body, fields);
    }
    try {
      reply = (await api.handleRequest(
        {
          method,
          path: x.path,
          query: parseQuery(x.queryString) as RoutedRequest['query'],
          headers: req.headers as RoutedRequest['headers'],
          body: req.body,
        },
        x,
      )) as Reply;
    } catch (err) {
      reply = errorReply(err, x.requestId, x.log);
    }
    x.operationId = target?.operationId;
    if (target?.operationId) deps.telemetry.nameRequest(target.operationId, target.path);
    if (responseValidator && target?.operationId && !(reply.status === 501 && notImplemented.has(target.operationId))) {
      const problems = responseValidator.check({
        operationId: target.operationId,
        status: reply.status,
        contentType: reply.body === undefined ? undefined : 'application/json',
        body: reply.body,
        hasBody: reply.body !== undefined,
      });
      if (problems.length) x.log.error('response violates the contract', { operation_id: target.operationId, problems });
    }
    send(res, reply);
  };

  /** An /api request, off node:http: no express on the way (see server/http/exchange.ts). */
  const handleApi = (req: IncomingMessage, res: ServerResponse, path: string, queryString: string) => {
    const begun = beginRequest(req, res, () => x.operationId);
    const x: Exchange = { req, res, path, queryString, ...begun };
    readJsonBody(x, config.bodyLimitBytes, () => {
      routeApi(x).catch((err: unknown) => send(res, errorReply(err, x.requestId, x.log)));
    });
  };

  app.use((req, res) => {
    send(res, errorReply(notFound(`Nothing at ${req.path}`), res.locals.requestId, log));
  });

  // express's final error handler: anything thrown outside /api. (An AppError's reply logs
  // nothing, so the app's logger does for those.)
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    send(res, errorReply(err, res.locals.requestId ?? 'unknown', res.locals.log ?? log));
  });

  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const { path, queryString } = splitTarget(req.url);
    if (path === '/api' || path.startsWith('/api/')) handleApi(req, res, path, queryString);
    else void app(req, res);
  };

  return {
    express: app,
    listener,
    api,
    routes: routes(),
    document: served,
    notImplemented,
    metrics,
    inFlight: () => inFlight,
    beginShutdown: () => {
      shuttingDown = true;
    },
    warmValidators: async () => {
      const validator = api.validator;
      for (const id of operationIds) {
        if (!routes().byId.has(id)) continue;
        validator.getRequestValidatorsForOperation(id);
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}

/** Whether every percent-escape of a path decodes (`decodeURIComponent` throws on "%ZZ"). */
function isDecodablePath(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** A header's value as one string (Node joins most repeated headers itself; the rest are joined here). */
function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

const headerNamesOf = new WeakMap<object, readonly string[]>();
/** The request's values of the header parameters the operation declares, by lower-case name. */
function declaredHeaders(operation: { parameters?: unknown[] }, req: IncomingMessage): Record<string, string | undefined> {
  let names = headerNamesOf.get(operation);
  if (!names) {
    names = (operation.parameters ?? []).flatMap((p) => {
      const param = p as { in?: string; name?: string };
      return param.in === 'header' && param.name ? [param.name.toLowerCase()] : [];
    });
    headerNamesOf.set(operation, names);
  }
  const headers: Record<string, string | undefined> = {};
  for (const name of names) {
    const value = headerText(req.headers[name]);
    if (value !== undefined) headers[name] = value;
  }
  return headers;
}

const integerPathParams = new WeakMap<object, readonly string[]>();
/** The names of an operation's integer path parameters, read from its parameters once. */
function integerPathParamsOf(operation: { parameters?: unknown[] }): readonly string[] {
  let names = integerPathParams.get(operation);
  if (!names) {
    names = (operation.parameters ?? []).flatMap((p) => {
      const param = p as { in?: string; name?: string; schema?: { type?: unknown } };
      const type = param.schema?.type;
      return param.in === 'path' && param.name && (type === 'integer' || (Array.isArray(type) && type.includes('integer')))
        ? [param.name]
        : [];
    });
    integerPathParams.set(operation, names);
  }
  return names;
}

/**
 * Integer path parameters written other than canonically (`0x1`, `1e0`, `+1`, ` 1`, `01`): type
 * coercion reads each of them as 1, so without this check one resource would have many URLs
 * (and caches, logs and idempotency records would see them as different). Answered 422 like any
 * other invalid value.
 */
function looseIntegerIssues(operation: { path: string; parameters?: unknown[] }, path: string) {
  const names = integerPathParamsOf(operation);
  if (!names.length) return [];
  const template = operation.path.split(/(\{[^}]+\})/);
  const order: string[] = [];
  const pattern = template.map((part) => {
    const m = /^\{([^}]+)\}$/.exec(part);
    if (!m) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    order.push(m[1]!);
    return '([^/]*)';
  });
  const match = new RegExp(`^${pattern.join('')}$`).exec(path);
  if (!match) return [];
  return names.flatMap((name) => {
    const raw = decodeURIComponent(match[order.indexOf(name) + 1] ?? '');
    return /^(0|-?[1-9][0-9]*)$/.test(raw)
      ? []
      : [
          {
            loc: ['path', name],
            msg: 'must be an integer written in decimal digits without sign, spaces or leading zeros',
            type: 'integer',
          },
        ];
  });
}
