// The contract at run time: the bundled spec of an environment, stamped with the build, and a
// checker of responses against it (used by the TEST environment and by every test).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { createAjv } from './ajv.js';
import { generatedDir, type AppEnv } from '../platform/config.js';

// The parts of an OpenAPI 3.1 document the service reads; everything else is kept as it is
// (`unknown` members), since the bundled spec is generated and checked by its own linter.

/** A reference to another node of the document (`#/components/...`). */
export interface ReferenceObject {
  $ref: string;
}

/** A JSON Schema of the document: read keyword by keyword. */
export interface SchemaObject {
  $ref?: string;
  properties?: Record<string, SchemaObject>;
  [keyword: string]: unknown;
}

export interface MediaTypeObject {
  schema?: SchemaObject;
  example?: unknown;
  examples?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface ResponseObject {
  $ref?: string;
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaTypeObject>;
  [key: string]: unknown;
}

export interface RequestBodyObject {
  $ref?: string;
  required?: boolean;
  content?: Record<string, MediaTypeObject>;
  [key: string]: unknown;
}

/** Which credentials an operation accepts: scheme name -> scopes. */
export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: unknown[];
  requestBody?: RequestBodyObject;
  responses?: Record<string, ResponseObject>;
  security?: SecurityRequirement[];
  [key: string]: unknown;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** A path item: its operations by (lower-case) method, and path-level parameters. */
export type PathItemObject = { [M in HttpMethod]?: OperationObject } & { parameters?: unknown[]; [key: string]: unknown };

export interface OpenApiDocument {
  openapi?: string;
  info: { title?: string; version: string; [key: string]: unknown };
  servers?: { url: string; description?: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, PathItemObject>;
  components: Record<string, Record<string, unknown>>;
  security?: SecurityRequirement[];
  [key: string]: unknown;
}

/** Whether a member of a path item is an operation (an object with an operationId). */
export function isOperation(value: unknown): value is OperationObject & { operationId: string } {
  return !!value && typeof value === 'object' && !!(value as { operationId?: unknown }).operationId;
}

/** A fresh copy of the bundled spec of `env` (generated/openapi.<env>.json). */
export function loadSpec(env: AppEnv): OpenApiDocument {
  const file = path.join(generatedDir, `openapi.${env.toLowerCase()}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as OpenApiDocument;
}

/** The first server of the served spec: wherever the document was fetched from. */
export const SERVED_ORIGIN = {
  url: '/',
  description:
    'This service: the host the document was fetched from (a relative URL, so a client generator or a Redocly Respect run against a local service needs no override).',
} as const;

/**
 * The spec a running service serves: its environment and build (Versioning 1), and itself as the
 * first server, before the documented public hosts.
 */
export function stampSpec(doc: OpenApiDocument, env: AppEnv, commit: string): OpenApiDocument {
  return {
    ...doc,
    servers: [SERVED_ORIGIN, ...(doc.servers ?? [])],
    info: { ...doc.info, version: `${doc.info.version}+${commit}` },
    'x-environment': env,
    'x-build-commit': commit,
  };
}

const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export interface ResponseCheck {
  operationId: string;
  status: number;
  contentType: string | undefined;
  /** Parsed JSON body, or undefined when the response had none. */
  body: unknown;
  hasBody: boolean;
}

/**
 * Checks responses against the spec: the status is declared for the operation, the content type
 * is the declared one, and the body matches the declared schema. Validators compile once each.
 */
export class ResponseValidator {
  private readonly ajv = createAjv();
  private readonly operations = new Map<string, { pointer: string; responses: Record<string, ResponseObject> }>();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApiDocument) {
    this.ajv.addSchema(doc, 'openapi.json');
    for (const [p, item] of Object.entries(doc.paths ?? {})) {
      for (const [method, op] of Object.entries(item)) {
        if (isOperation(op)) {
          this.operations.set(op.operationId, {
            pointer: `#/paths/${escapePointer(p)}/${method}/responses`,
            responses: op.responses ?? {},
          });
        }
      }
    }
  }

  hasOperation(operationId: string): boolean {
    return this.operations.has(operationId);
  }

  declaredStatuses(operationId: string): string[] {
    return Object.keys(this.operations.get(operationId)?.responses ?? {});
  }

  /** Problems found, empty when the response conforms. */
  check(r: ResponseCheck): string[] {
    const op = this.operations.get(r.operationId);
    if (!op) return [`operation ${r.operationId} is not in the spec`];
    const key =
      String(r.status) in op.responses
        ? String(r.status)
        : `${String(r.status)[0]}XX` in op.responses
          ? `${String(r.status)[0]}XX`
          : 'default' in op.responses
            ? 'default'
            : undefined;
    if (!key) return [`status ${r.status} is not declared for ${r.operationId} (declared: ${Object.keys(op.responses).join(', ')})`];
    let response: ResponseObject | undefined = op.responses[key];
    let pointer = `${op.pointer}/${escapePointer(key)}`;
    if (response?.$ref) {
      pointer = response.$ref;
      response = this.resolve(response.$ref) as ResponseObject | undefined;
    }
    const content = response?.content;
    if (!content || Object.keys(content).length === 0) {
      return r.hasBody ? [`${r.operationId} ${r.status} declares no body but one was sent`] : [];
    }
    const mediaType = (r.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    if (!(mediaType in content)) {
      return [`${r.operationId} ${r.status}: content type "${mediaType}" is not declared (${Object.keys(content).join(', ')})`];
    }
    if (!content[mediaType]?.schema) return [];
    if (!r.hasBody) return [`${r.operationId} ${r.status} declares a body but none was sent`];
    const schemaPointer = `${pointer}/content/${escapePointer(mediaType)}/schema`;
    let validate = this.compiled.get(schemaPointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json${schemaPointer}` });
      this.compiled.set(schemaPointer, validate);
    }
    if (validate(r.body)) return [];
    return (validate.errors ?? []).slice(0, 10).map((e) => `${r.operationId} ${r.status} body${e.instancePath}: ${e.message}`);
  }

  /**
   * Problems of a value against a schema of `components/schemas`: the messages that are not HTTP
   * responses (WebSocket envelopes, push payloads) are held to the contract too.
   */
  checkSchema(name: string, value: unknown): string[] {
    const pointer = `#/components/schemas/${escapePointer(name)}`;
    if (this.resolve(pointer) === undefined) return [`schema ${name} is not in the spec`];
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).slice(0, 10).map((e) => `${name}${e.instancePath}: ${e.message}`);
  }

  private resolve(ref: string): unknown {
    return resolvePointer(this.doc, ref);
  }
}

/**
 * The node a local JSON pointer (`#/components/schemas/X`) names in `root`, or undefined when a
 * step is missing. A step into a primitive reads the primitive's member, as plain `node?.[part]`.
 */
export function resolvePointer(root: unknown, ref: string): unknown {
  let node: unknown = root;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    node = node == null ? undefined : (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}
