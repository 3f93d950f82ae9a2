// A mock of the service built from the spec alone (npm run mock), for mobile engineers working
// before a feature lands. It routes and validates requests exactly as the service does (the same
// compiled routing, openapi-backend and Ajv 2020 setup), so a request the mock accepts is one the
// service accepts, and answers every operation with the examples of its responses.
//
// - Success: the operation's lowest declared 2xx status, with its example body and content type.
// - `Prefer: code=404` (any declared status) and `Prefer: example=<name>` (a named media example)
//   choose another answer, as in Prism, so apps can exercise their error handling.
// - A secured operation called without credentials answers its 401; tokens are not verified
//   (any bearer token passes), since the mock has no accounts.
// - Invalid input answers 422 with the `{loc, msg, type}` list, unknown paths 404, wrong methods 405.
//
// Every answer is chosen and checked against the spec when the mock starts: an example that does
// not match its own schema is replaced by a composed one and reported in `problems`.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import express from 'express';
import { OpenAPIBackend, type Context, type Document, type Request as BackendRequest } from 'openapi-backend';
import YAML from 'yaml';
import type { ErrorCode } from '../../domain/errors.js';
import { requestValidationAjv } from '../../server/ajv.js';
import { projectRoot, type AppEnv } from '../../platform/config.js';
import {
  loadSpec,
  ResponseValidator,
  stampSpec,
  type MediaTypeObject,
  type OpenApiDocument,
  type OperationObject,
  type ResponseObject,
} from '../../server/contract.js';
import { docsHandler } from '../../server/docs.js';
import { requestValidationFailed } from '../../server/http/responses.js';
import { installCompiledRouting, routeTableFor } from '../../server/router.js';
import { resolveRef, sampleSchema, type JsonSchema } from './examples.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** A header of a response, as the mock reads it. */
interface HeaderObject {
  $ref?: string;
  example?: unknown;
  schema?: JsonSchema;
}

/** A security scheme of the document, as the mock reads it. */
interface SecuritySchemeObject {
  type?: string;
  scheme?: unknown;
  in?: string;
  name?: unknown;
}

export interface MockAnswer {
  status: number;
  contentType: string | null;
  body: unknown;
  headers: Record<string, string>;
}

export interface MockApp {
  express: express.Express;
  document: OpenApiDocument;
  /** Per operationId and status, the answer the mock gives. */
  answers: Map<string, Map<number, MockAnswer>>;
  /** Examples of the spec that did not match their schema (replaced by composed values). */
  problems: string[];
}

export interface MockOptions {
  env: AppEnv;
  /** Stamped into the served spec and the docs page; default BUILD_COMMIT or the git commit. */
  buildCommit?: string;
}

export async function createMockApp({ env, buildCommit = currentCommit() }: MockOptions): Promise<MockApp> {
  installCompiledRouting();
  const source = loadSpec(env);
  const served = stampSpec(source, env, buildCommit);
  const servedYaml = YAML.stringify(served);
  const validator = new ResponseValidator(source);
  const problems: string[] = [];
  const answers = new Map<string, Map<number, MockAnswer>>();
  const namedExamples = new Map<string, Map<string, unknown>>(); // `${operationId} ${status}` -> name -> value

  for (const [, item] of Object.entries(source.paths ?? {})) {
    for (const method of METHODS) {
      const op: OperationObject | undefined = item?.[method];
      if (!op?.operationId) continue;
      const byStatus = new Map<number, MockAnswer>();
      for (const [key, declared] of Object.entries(op.responses ?? {})) {
        const status = Number(key);
        if (!Number.isInteger(status)) continue; // `default` / `4XX` ranges: not in this contract
        const response = declared?.$ref ? (resolveRef(source, declared.$ref) as ResponseObject) : declared;
        const chosen = answerFor(source, validator, op.operationId, status, response, problems);
        byStatus.set(status, chosen.answer);
        if (chosen.named.size) namedExamples.set(`${op.operationId} ${status}`, chosen.named);
      }
      answers.set(op.operationId, byStatus);
    }
  }

  const api = new OpenAPIBackend({
    // The document as openapi-backend types it (it reads the same JSON).
    definition: structuredClone(source) as Document,
    strict: true,
    quick: true,
    validate: true,
    coerceTypes: true,
    ignoreTrailingSlashes: false,
    customizeAjv: requestValidationAjv(),
  });
  // OpenAPI 3.1: openapi-backend's 3.0 meta-schema check would reject it (see server/app.ts).
  api.validateDefinition = () => api.definition;

  // Credentials are checked for presence only: the mock has no accounts to verify them against.
  for (const [name, scheme] of Object.entries((source.components?.securitySchemes ?? {}) as Record<string, SecuritySchemeObject>)) {
    api.registerSecurityHandler(name, (c: Context) => {
      const headers = c.request.headers as Record<string, string | string[] | undefined>;
      if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer') {
        return /^Bearer\s+\S+/i.test(String(headers.authorization ?? ''));
      }
      if (scheme.type === 'apiKey' && scheme.in === 'header') return Boolean(headers[String(scheme.name).toLowerCase()]);
      return false;
    });
  }

  const errorAnswer = (status: number, code: string, detail: unknown, headers: Record<string, string> = {}): MockAnswer => ({
    status,
    contentType: 'application/json',
    body: { detail, code },
    headers,
  });

  const answerOf = (c: Context, req: express.Request): MockAnswer => {
    const operationId = c.operation.operationId!;
    const byStatus = answers.get(operationId)!;
    const prefer = parsePrefer(req.headers.prefer);
    let status = lowestSuccess([...byStatus.keys()]);
    let note: string | undefined;
    if (prefer.code !== undefined) {
      if (byStatus.has(prefer.code)) status = prefer.code;
      else note = `status ${prefer.code} is not declared for ${operationId}; answered ${status}`;
    }
    const answer = byStatus.get(status)!;
    const named = prefer.example ? namedExamples.get(`${operationId} ${status}`)?.get(prefer.example) : undefined;
    if (prefer.example && named === undefined) note = `no example "${prefer.example}" for ${operationId} ${status}`;
    return {
      ...answer,
      body: named ?? answer.body,
      headers: { ...answer.headers, ...(note ? { 'X-Mock-Note': note } : {}) },
    };
  };

  api.register({
    notImplemented: (c, req: express.Request) => answerOf(c, req),
    notFound: () => errorAnswer(404, 'NOT_FOUND', 'No operation at this path'),
    methodNotAllowed: (_c, req: express.Request) =>
      errorAnswer(405, 'METHOD_NOT_ALLOWED', `Method ${req.method} is not allowed here`, {
        Allow: routeTableFor(api.definition).allowedMethods(req.path).join(', '),
      }),
    validationFail: (c) => {
      const failure = requestValidationFailed(c.validation.errors ?? []);
      return {
        ...errorAnswer(422, 'VALIDATION_ERROR', failure.detail),
        body: { detail: failure.detail, code: failure.code, ...failure.extra },
      };
    },
    unauthorizedHandler: (c) => {
      const declared = answers.get(c.operation.operationId!)?.get(401);
      return declared ?? errorAnswer(401, 'UNAUTHORIZED', 'Authentication credentials were not provided');
    },
  });
  await api.init();

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.use((req, res, next) => {
    res.setHeader('X-Request-Id', randomUUID());
    res.setHeader('X-Mock', 'true'); // nobody mistakes a mock answer for the service's
    next();
  });
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(served);
  });
  app.get('/openapi.yaml', (_req, res) => {
    res.type('application/yaml').send(servedYaml);
  });
  app.get('/docs', docsHandler(env, buildCommit));
  app.use(express.json({ limit: 1024 * 1024, type: ['application/json', 'application/*+json'], strict: false }));
  app.use(async (req, res, next) => {
    if (!req.path.startsWith('/api/')) {
      next();
      return;
    }
    const answer = (await api.handleRequest(
      {
        method: req.method,
        path: req.path,
        query: req.query as BackendRequest['query'],
        headers: req.headers as BackendRequest['headers'],
        body: req.body as unknown,
      },
      req,
      res,
    )) as MockAnswer;
    send(res, answer);
  });
  app.use((req, res) => {
    send(res, errorAnswer(404, 'NOT_FOUND', `Nothing at ${req.path}`));
  });
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    const err = error as { type?: unknown } | null | undefined; // body-parser's errors name their type
    if (err?.type === 'entity.too.large') send(res, errorAnswer(413, 'PAYLOAD_TOO_LARGE', 'Body larger than 1048576 bytes'));
    else if (err?.type === 'entity.parse.failed') send(res, errorAnswer(400, 'MALFORMED_JSON', 'The body is not valid JSON'));
    else send(res, errorAnswer(500, 'INTERNAL_ERROR', 'Internal server error'));
  });

  return { express: app, document: served, answers, problems };
}

function send(res: express.Response, answer: MockAnswer): void {
  for (const [k, v] of Object.entries(answer.headers)) res.setHeader(k, v);
  res.status(answer.status);
  if (answer.contentType === null || answer.status === 204 || answer.status === 304) {
    res.end();
    return;
  }
  // Error bodies carry the request's id, as the service's do.
  const payload = isErrorBody(answer.body) ? { ...answer.body, request_id: res.getHeader('X-Request-Id') } : answer.body;
  res.setHeader('Content-Type', `${answer.contentType}; charset=utf-8`);
  res.end(/json/.test(answer.contentType) ? JSON.stringify(payload) : String(payload));
}

interface ChosenAnswer {
  answer: MockAnswer;
  named: Map<string, unknown>;
}

/**
 * The error body of a status, for responses whose spec gives no example of their own: a code the
 * service really answers with that status (ErrorCode), the shared responses' example where there is one.
 */
const GENERIC_ERRORS: Record<number, { detail: string; code: ErrorCode }> = {
  400: { detail: 'The body is not valid JSON', code: 'MALFORMED_JSON' },
  401: { detail: 'Authentication credentials were not provided or are invalid', code: 'UNAUTHORIZED' },
  403: { detail: 'You do not work in this store', code: 'STORE_NOT_ASSIGNED' },
  404: { detail: 'Not found', code: 'NOT_FOUND' },
  405: { detail: 'Method not allowed', code: 'METHOD_NOT_ALLOWED' },
  409: { detail: 'This Idempotency-Key was used with another request; use a new key for a new action', code: 'IDEMPOTENCY_CONFLICT' },
  413: { detail: 'Body larger than 1048576 bytes', code: 'PAYLOAD_TOO_LARGE' },
  422: { detail: 'The request does not match the contract', code: 'VALIDATION_ERROR' },
  429: { detail: 'Too many requests; retry later', code: 'RATE_LIMITED' },
  500: { detail: 'Internal server error', code: 'INTERNAL_ERROR' },
  501: { detail: 'Not implemented yet', code: 'NOT_IMPLEMENTED' },
  502: { detail: 'A provider did not answer; retry later', code: 'GEOCODER_UNAVAILABLE' },
  503: { detail: 'The service cannot reach its database right now; retry shortly', code: 'DATABASE_UNAVAILABLE' },
};

/** The answer of one declared response: the first candidate example that matches the schema. */
function answerFor(
  doc: OpenApiDocument,
  validator: ResponseValidator,
  operationId: string,
  status: number,
  response: ResponseObject | undefined,
  problems: string[],
): ChosenAnswer {
  const headers = headerExamples(doc, (response?.headers ?? {}) as Record<string, HeaderObject | undefined>);
  const content = response?.content;
  const named = new Map<string, unknown>();
  if (!content || Object.keys(content).length === 0) return { answer: { status, contentType: null, body: undefined, headers }, named };
  const contentType = Object.keys(content).includes('application/json') ? 'application/json' : (Object.keys(content)[0] ?? null);
  const media: MediaTypeObject = content[contentType!] ?? {};
  const conforms = (body: unknown) => validator.check({ operationId, status, contentType: contentType ?? undefined, body, hasBody: true });

  for (const [name, entry] of Object.entries(media.examples ?? {})) {
    const example = entry as { $ref?: string; value?: unknown } | null | undefined;
    const value = example?.$ref ? (resolveRef(doc, example.$ref) as { value?: unknown }).value : example?.value;
    const issues = conforms(value);
    if (issues.length === 0) named.set(name, value);
    else problems.push(`${operationId} ${status} example "${name}": ${issues.join('; ')}`);
  }
  const candidates: { from: string; value: unknown }[] = [];
  if ('example' in media) candidates.push({ from: 'media example', value: media.example });
  if (named.size) candidates.push({ from: 'named example', value: named.values().next().value });
  // An error without an example of its own says what its status means: the shared ErrorResponse
  // example is a 401's, and an app tested against the mock picks its reaction by `code`.
  if (status >= 400 && GENERIC_ERRORS[status]) candidates.push({ from: 'status error', value: GENERIC_ERRORS[status] });
  if (media.schema) {
    const schema = media.schema as JsonSchema;
    candidates.push({ from: 'schema examples', value: sampleSchema(schema, { root: doc, direction: 'response' }) });
    candidates.push({ from: 'composed', value: sampleSchema(schema, { root: doc, direction: 'response', examplesFirst: false }) });
  }
  const failures: string[] = [];
  for (const candidate of candidates) {
    const issues = conforms(candidate.value);
    if (issues.length === 0) {
      if (failures.length) problems.push(`${operationId} ${status}: ${failures.join(' | ')}`);
      return { answer: { status, contentType, body: candidate.value, headers }, named };
    }
    failures.push(`${candidate.from}: ${issues.slice(0, 3).join('; ')}`);
  }
  problems.push(`${operationId} ${status}: no candidate matches the schema (${failures.join(' | ')})`);
  const fallback = candidates.length ? candidates[candidates.length - 1]!.value : {};
  return { answer: { status, contentType, body: fallback, headers }, named };
}

function headerExamples(doc: OpenApiDocument, declared: Record<string, HeaderObject | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, header] of Object.entries(declared)) {
    const h = header?.$ref ? (resolveRef(doc, header.$ref) as HeaderObject) : header;
    const value = h && 'example' in h ? h.example : sampleSchema(h?.schema ?? { type: 'string' }, { root: doc, direction: 'response' });
    // Header examples are scalars (the contract has no other); anything else is sent as JSON.
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
    else if (value !== null && value !== undefined) out[name] = JSON.stringify(value);
  }
  return out;
}

/** `Prefer: code=404, example=empty` (RFC 7240 preferences, as Prism reads them). */
export function parsePrefer(header: string | string[] | undefined): { code?: number; example?: string } {
  const out: { code?: number; example?: string } = {};
  for (const part of String(header ?? '').split(/[,;]/)) {
    const [key, raw] = part.split('=').map((s) => s?.trim());
    const value = raw?.replace(/^"|"$/g, '');
    if (key === 'code' && value && /^\d{3}$/.test(value)) out.code = Number(value);
    if (key === 'example' && value) out.example = value;
  }
  return out;
}

function lowestSuccess(statuses: number[]): number {
  const sorted = [...statuses].sort((a, b) => a - b);
  return sorted.find((s) => s >= 200 && s < 300) ?? sorted[0]!;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isErrorBody = (v: unknown): v is Record<string, unknown> => isPlainObject(v) && 'code' in v && 'detail' in v && !('request_id' in v);

function currentCommit(): string {
  if (process.env.BUILD_COMMIT) return process.env.BUILD_COMMIT;
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
  } catch {
    return 'unknown';
  }
}
