// Routing that does not slow down as the spec grows.
//
// openapi-backend's OpenAPIRouter rebuilds its whole operation list with lodash on every
// getOperations()/getOperation() call and builds a `new RegExp` per templated path per request, so
// every request costs more with every operation of the spec. Here the list is built once per
// dereferenced definition and requests are matched through a table compiled once: exact paths in a
// Map, templated paths as regexes ordered by specificity.
import { createRequire } from 'node:module';
import { OpenAPIRouter, type Operation, type ParsedRequest, type Request } from 'openapi-backend';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface RouteMatch {
  template: string;
  methods: Map<string, Operation>;
}

/** What the table reads of a definition: its path items and the document-wide security. */
interface RoutedDefinition {
  paths?: Record<string, Record<string, unknown> | undefined>;
  security?: unknown[];
}

/** An operation object of a path item, as far as the table reads it. */
type RoutedOperation = Record<string, unknown> & { parameters?: unknown[]; security?: unknown[] };

/** The OpenAPIRouter methods replaced by the compiled table (one signature for matchOperation). */
interface CompiledRouterMethods {
  parseRequest: (this: OpenAPIRouter, req: Request, operation?: Operation) => ParsedRequest;
  parseRequestQuery: (this: OpenAPIRouter, req: Request) => Record<string, unknown>;
  getOperations(this: OpenAPIRouter): Operation[];
  getOperation(this: OpenAPIRouter, operationId: string): Operation | undefined;
  matchOperation(this: OpenAPIRouter, req: Request, strict?: boolean): Operation | undefined;
}

export class RouteTable {
  private readonly exact = new Map<string, RouteMatch>();
  private readonly templated: { regex: RegExp; route: RouteMatch }[] = [];
  readonly operations: Operation[];
  readonly byId = new Map<string, Operation>();

  constructor(document: object) {
    const definition = document as RoutedDefinition | undefined;
    this.operations = [];
    const routes: RouteMatch[] = [];
    for (const [template, item] of Object.entries(definition?.paths ?? {})) {
      const route: RouteMatch = { template, methods: new Map() };
      for (const method of METHODS) {
        const op = item?.[method] as RoutedOperation | undefined;
        if (!op) continue;
        const operation = {
          ...op,
          path: template,
          method,
          parameters: [...(op.parameters ?? []), ...((item?.parameters as unknown[] | undefined) ?? [])],
          security: op.security ?? definition?.security ?? [],
        } as unknown as Operation;
        this.operations.push(operation);
        if (operation.operationId) this.byId.set(operation.operationId, operation);
        route.methods.set(method, operation);
      }
      routes.push(route);
    }
    // Exact paths first, keyed as written; the other trailing-slash form is accepted too unless
    // the spec itself declares that form (clients written against `/x/` or `/x` both work).
    for (const route of routes) if (!route.template.includes('{')) this.exact.set(route.template, route);
    for (const route of routes) {
      if (route.template.includes('{')) continue;
      const alt = toggleSlash(route.template);
      if (alt && !this.exact.has(alt)) this.exact.set(alt, route);
    }
    const templatedRoutes = routes.filter((r) => r.template.includes('{'));
    // Most literal characters first, so /orders/roadmap/{id}/short beats /orders/{id}/{x}.
    templatedRoutes.sort((a, b) => literalLength(b.template) - literalLength(a.template));
    for (const route of templatedRoutes) {
      // Templated paths match exactly as written (trailing slash included): openapi-backend
      // extracts path parameters with the template itself.
      const body = route.template
        .split(/\{[^}]+\}/)
        .map(escapeRegExp)
        .join('[^/]+');
      this.templated.push({ regex: new RegExp(`^${body}$`), route });
    }
  }

  /** The route of a request path (without query string), or undefined. */
  matchPath(path: string): RouteMatch | undefined {
    const exact = this.exact.get(path);
    if (exact) return exact;
    for (const { regex, route } of this.templated) if (regex.test(path)) return route;
    return undefined;
  }

  /** Allowed methods of a path, upper case, for the `Allow` header of a 405. */
  allowedMethods(path: string): string[] {
    const route = this.matchPath(path);
    return route ? [...route.methods.keys()].map((m) => m.toUpperCase()) : [];
  }
}

function toggleSlash(p: string): string | undefined {
  if (p === '/') return undefined;
  return p.endsWith('/') ? p.slice(0, -1) : `${p}/`;
}

function literalLength(template: string): number {
  return template.replace(/\{[^}]+\}/g, '').length;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const tables = new WeakMap<object, RouteTable>();

/** The compiled table of a (dereferenced) definition, built on first use. */
export function routeTableFor(definition: object): RouteTable {
  let table = tables.get(definition);
  if (!table) {
    table = new RouteTable(definition);
    tables.set(definition, table);
  }
  return table;
}

let installed = false;

/**
 * Replaces OpenAPIRouter's per-request work with the compiled table. Applied once per process;
 * behaviour is the library's (404 and 405 errors, strict mode), only the cost changes.
 */
export function installCompiledRouting(): void {
  if (installed) return;
  installed = true;
  const { pathParser, parseCookies } = libraryHelpers();
  const proto = OpenAPIRouter.prototype as unknown as CompiledRouterMethods;
  // The library's parse, which runs three times per request, without its lodash walks: the
  // result is the same object (headers lower-cased, cookies, query, path parameters, body).
  proto.parseRequest = function parseRequest(this: OpenAPIRouter, req: Request, operation?: Operation): ParsedRequest {
    let requestBody: unknown = req.body;
    if (req.body && typeof req.body !== 'object') {
      try {
        requestBody = JSON.parse(String(req.body));
      } catch {
        // left as sent: validation reports the body that is not JSON
      }
    }
    const headers: Record<string, string | string[] | undefined> = {};
    for (const name of Object.keys(req.headers)) headers[name.toLowerCase()] = req.headers[name];
    const cookieHeader = headers.cookie;
    const cookies = cookieHeader === undefined ? {} : parseCookies([cookieHeader].flat().join('; '));
    const query = this.parseRequestQuery(req);
    const normalized = this.normalizeRequest(req);
    let params: Record<string, string> = {};
    if (operation) {
      params = pathParser(operation.path).params(this.normalizePath(normalized.path)) ?? {};
      for (const name of Object.keys(query)) if (query[name]) query[name] = styledQueryValue(operation, name, query[name]);
    }
    return { ...normalized, params, headers, query, cookies, requestBody };
  };
  // The library serialises an object query back to a string it then discards, and deep-copies it
  // with lodash, on each of the three parses of every request. The copy is still made (validation
  // coerces the values it is given in place), by a plain walk of what a query parser yields.
  const parseQueryString = proto.parseRequestQuery;
  proto.parseRequestQuery = function parseRequestQuery(this: OpenAPIRouter, req: Request) {
    if (req.query === null || typeof req.query !== 'object') return parseQueryString.call(this, req);
    return copyOfQuery(req.query) as Record<string, unknown>;
  };
  proto.getOperations = function getOperations(this: OpenAPIRouter) {
    return routeTableFor(this.definition).operations;
  };
  proto.getOperation = function getOperation(this: OpenAPIRouter, operationId: string) {
    return routeTableFor(this.definition).byId.get(operationId);
  };
  proto.matchOperation = function matchOperation(this: OpenAPIRouter, req: Request, strict?: boolean) {
    const path = requestPath(req);
    const route = routeTableFor(this.definition).matchPath(path);
    if (!route) {
      if (strict) throw Error('404-notFound: no route matches request');
      return undefined;
    }
    const op = route.methods.get(String(req.method).toLowerCase());
    if (!op) {
      if (strict) throw Error('405-methodNotAllowed: this method is not registered for the route');
      return undefined;
    }
    return op;
  };
}

interface PathParser {
  params(path: string): Record<string, string> | null;
}

/**
 * The path-parameter and cookie parsers openapi-backend itself resolves. The path parser is kept
 * per template: bath compiles the template's patterns each time it is called, and a template
 * always yields the same parser.
 */
function libraryHelpers(): {
  pathParser: (template: string) => PathParser;
  parseCookies: (header: string) => Record<string, string | undefined>;
} {
  const requireFromBackend = createRequire(createRequire(import.meta.url).resolve('openapi-backend'));
  const bath = requireFromBackend('bath-es5') as { default: (template: string) => PathParser };
  const cookie = requireFromBackend('cookie') as { parse: (header: string) => Record<string, string | undefined> };
  const parsers = new Map<string, PathParser>();
  const pathParser = (template: string) => {
    let parser = parsers.get(template);
    if (!parser) parsers.set(template, (parser = bath.default(template)));
    return parser;
  };
  return { pathParser, parseCookies: (header) => cookie.parse(header) };
}

/**
 * A query value as its parameter declares it, as openapi-backend reads it: JSON for a
 * `content: application/json` parameter, and a non-exploded array split on its delimiter.
 */
function styledQueryValue(operation: Operation, name: string, raw: unknown): unknown {
  const parameter = (
    operation.parameters as
      { in?: string; name?: string; $ref?: string; content?: Record<string, unknown>; explode?: boolean; style?: string }[] | undefined
  )?.find((p) => !('$ref' in p) && p.in === 'query' && p.name === name);
  if (!parameter) return raw;
  if (parameter.content?.['application/json']) {
    if (typeof raw !== 'string') return raw;
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return raw; // validation reports the malformed JSON
    }
  }
  if (parameter.explode !== false) return raw;
  // An array of several values has been decoded already (type coercion).
  if (Array.isArray(raw) && raw.length > 1) return raw;
  const value: unknown = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== 'string') return raw;
  let decoded = value.replace(/%2C/g, ',');
  if (parameter.style === 'spaceDelimited') decoded = decoded.replace(/ /g, ',').replace(/%20/g, ',');
  if (parameter.style === 'pipeDelimited') decoded = decoded.replace(/\|/g, ',').replace(/%7C/g, ',');
  return decoded.split(',');
}

/** A copy of a parsed query: strings, arrays and plain objects, as query parsers yield them. */
function copyOfQuery(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyOfQuery);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) copy[key] = copyOfQuery((value as Record<string, unknown>)[key]);
  return copy;
}

export function requestPath(req: Pick<Request, 'path'>): string {
  let path = req.path || '/';
  const q = path.indexOf('?');
  if (q >= 0) path = path.slice(0, q);
  return path.startsWith('/') ? path : `/${path}`;
}

/**
 * The path parameters of a request openapi-backend has validated (and coerced) against its
 * operation just before: typed as the operation declares them.
 */
export const validatedParams = <P>(params: Record<string, string>): P => params as unknown as P;
