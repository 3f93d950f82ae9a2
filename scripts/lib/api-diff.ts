// What changed between two bundled OpenAPI 3.1 documents, and which changes break existing
// clients. Used by `npm run api-diff` (scripts/api-diff.ts) in CI.
//
// Why not a maintained tool: none installs from the npm registry and handles 3.1 correctly.
// openapi-diff rejects 3.1 documents; api-smart-diff reads them but takes breaking changes (a
// response field's type changed, an optional request field made required, a new required query
// parameter) for non-breaking ones; oasdiff and @pb33f/openapi-changes are Go binaries
// downloaded at install.
//
// The rules, from a client's point of view (a client built from the old document keeps working):
// - request side (what the client sends): narrowing what the server accepts is breaking (a new
//   required field or parameter, a removed enum value or type, a tighter bound or pattern, a
//   removed property where unknown ones are rejected);
// - response side (what the client receives): widening what the server may send is breaking
//   (a new type such as null, a new enum value, a property no longer required or removed, a looser
//   bound); new optional response properties are not (clients ignore unknown fields), nor new
//   values of an enum marked `x-open-enum: true` (the spec tells clients to handle unknown
//   values, as ErrorCode's codes), nor new variants of a oneOf so marked with the discriminator
//   mapping gaining only their names (a message kind clients are told to ignore when unknown);
// - names are part of the contract: removed operations, changed operationIds or tags (generated
//   clients are named after them), removed component names, removed success statuses, and
//   security that accepts fewer credentials are breaking;
// - changed descriptions, summaries and examples are listed as documentation.
// A component is compared once, by name, in each direction in which operations use it; an
// operation that keeps referring to the same component is not compared again through it.

/** Put this in a commit message when a breaking change to the PROD contract is intended. */
export const BREAKING_MARKER = '[breaking-api]';

/** Whether commit messages declare a breaking change intended (the marker, in any letter case). */
export function commitMessagesSay(messages: string, marker = BREAKING_MARKER): boolean {
  return messages.toLowerCase().includes(marker.toLowerCase());
}

import { resolvePointer, type OpenApiDocument } from '../../server/contract.js';

export type Severity = 'breaking' | 'non-breaking';
export interface Change {
  severity: Severity;
  /** Where: `GET /api/x/ response 200 body .field`, `schema ProfileSchema .phone`, ... */
  where: string;
  what: string;
}

type Doc = OpenApiDocument;
type Direction = 'request' | 'response';

// The nodes of the documents as the rules read them: each keyword a rule looks at is typed, any
// other is `unknown` (compared as JSON).
type Schema = SchemaNode | boolean;
interface SchemaNode {
  $ref?: string;
  type?: unknown;
  enum?: unknown;
  const?: unknown;
  default?: unknown;
  required?: string[];
  readOnly?: boolean;
  format?: string;
  pattern?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema;
  unevaluatedProperties?: Schema;
  items?: Schema;
  prefixItems?: Schema[];
  oneOf?: Schema[];
  anyOf?: Schema[];
  allOf?: Schema[];
  [keyword: string]: unknown;
}
interface Parameter {
  $ref?: string;
  in?: string;
  name?: string;
  required?: boolean;
  description?: string;
  example?: unknown;
  schema?: Schema;
  [key: string]: unknown;
}
interface Header {
  $ref?: string;
  description?: string;
  example?: unknown;
  schema?: Schema;
  [key: string]: unknown;
}
interface Media {
  schema?: Schema;
  example?: unknown;
  examples?: unknown;
}
interface Response {
  $ref?: string;
  description?: string;
  headers?: Record<string, Header>;
  content?: Record<string, Media>;
}
interface RequestBody {
  $ref?: string;
  required?: boolean;
  content?: Record<string, Media>;
}
type Security = Record<string, string[]>;
interface Operation {
  operationId?: string;
  tags?: string[];
  summary?: string;
  description?: string;
  deprecated?: boolean;
  security?: Security[];
  parameters?: Parameter[];
  requestBody?: RequestBody;
  responses?: Record<string, Response>;
  [key: string]: unknown;
}
interface Components {
  schemas?: Record<string, Schema>;
  parameters?: Record<string, Parameter>;
  responses?: Record<string, Response>;
  headers?: Record<string, Header>;
  requestBodies?: Record<string, RequestBody>;
  securitySchemes?: Record<string, Record<string, unknown>>;
  [kind: string]: Record<string, unknown> | undefined;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
/** Keywords that only document: their changes are listed, never breaking. */
const DOC_KEYWORDS = new Set(['description', 'summary', 'title', 'examples', 'example', '$comment', 'externalDocs', 'deprecated']);
/** Keywords handled by a rule below; any other changed keyword is reported as breaking (unclassified). */
const SCHEMA_RULE_KEYWORDS = new Set([
  '$ref',
  'type',
  'enum',
  'const',
  'format',
  'pattern',
  'default',
  'required',
  'properties',
  'additionalProperties',
  'unevaluatedProperties',
  'items',
  'prefixItems',
  'oneOf',
  'anyOf',
  'allOf',
  'discriminator',
  'maximum',
  'exclusiveMaximum',
  'maxLength',
  'maxItems',
  'maxProperties',
  'minimum',
  'exclusiveMinimum',
  'minLength',
  'minItems',
  'minProperties',
  'multipleOf',
  'uniqueItems',
]);
const UPPER_BOUNDS = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'];
const LOWER_BOUNDS = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'];

export function compareSpecs(before: Doc, after: Doc): Change[] {
  const changes: Change[] = [];
  const ctx = new DiffContext(before, after, changes);
  for (const key of ['title', 'summary', 'description', 'version']) {
    if (before.info?.[key] !== after.info?.[key]) changes.push({ severity: 'non-breaking', where: 'info', what: `${key} changed` });
  }
  const tagText = (doc: Doc) => JSON.stringify(doc.tags ?? []);
  if (tagText(before) !== tagText(after))
    changes.push({ severity: 'non-breaking', where: 'tags', what: 'tag list or descriptions changed' });
  ctx.compareOperations();
  ctx.compareComponents();
  return changes;
}

class DiffContext {
  constructor(
    readonly before: Doc,
    readonly after: Doc,
    readonly changes: Change[],
  ) {}

  private add(severity: Severity, where: string, what: string) {
    this.changes.push({ severity, where, what });
  }

  compareOperations(): void {
    const a = operationsOf(this.before);
    const b = operationsOf(this.after);
    for (const [key, op] of a) {
      if (!b.has(key)) this.add('breaking', key, `operation removed (${op.operationId ?? 'no operationId'})`);
    }
    for (const [key, op] of b) {
      if (!a.has(key)) this.add('non-breaking', key, `operation added (${op.operationId ?? 'no operationId'})`);
    }
    for (const [key, opA] of a) {
      const opB = b.get(key);
      if (opB) this.compareOperation(key, opA, opB);
    }
  }

  private compareOperation(where: string, a: Operation, b: Operation): void {
    if (a.operationId !== b.operationId) {
      this.add('breaking', where, `operationId changed from ${a.operationId} to ${b.operationId} (generated clients call it by name)`);
    }
    if (JSON.stringify(a.tags ?? []) !== JSON.stringify(b.tags ?? [])) {
      this.add(
        'breaking',
        where,
        `tags changed from [${(a.tags ?? []).join(', ')}] to [${(b.tags ?? []).join(', ')}] (generated clients group operations by tag)`,
      );
    }
    for (const key of ['summary', 'description']) {
      if (a[key] !== b[key]) this.add('non-breaking', where, `${key} changed`);
    }
    if (!a.deprecated && b.deprecated) this.add('non-breaking', where, 'deprecated');
    this.compareSecurity(where, a.security ?? this.before.security ?? [], b.security ?? this.after.security ?? []);
    this.compareParameters(where, [...(a.parameters ?? [])], [...(b.parameters ?? [])]);
    this.compareRequestBody(where, a.requestBody, b.requestBody);
    this.compareResponses(where, a.responses ?? {}, b.responses ?? {});
  }

  private compareSecurity(where: string, a: Security[], b: Security[]): void {
    const norm = (req: Record<string, string[]>) =>
      JSON.stringify(
        Object.keys(req)
          .sort()
          .map((k) => [k, [...(req[k] ?? [])].sort()]),
      );
    const setA = new Set(a.map(norm));
    const setB = new Set(b.map(norm));
    const anonymous = (s: Set<string>) => s.size === 0 || s.has('[]');
    if (anonymous(setA) && !anonymous(setB)) {
      this.add('breaking', where, 'now requires authentication');
      return;
    }
    if (anonymous(setA)) return;
    const lost = [...setA].filter((r) => !setB.has(r));
    const gained = [...setB].filter((r) => !setA.has(r));
    if (lost.length) this.add('breaking', where, `no longer accepts security ${lost.join(' or ')}`);
    if (gained.length) this.add('non-breaking', where, `also accepts security ${gained.join(' or ')}`);
  }

  private compareParameters(where: string, a: Parameter[], b: Parameter[]): void {
    const index = (doc: Doc, list: Parameter[]) => {
      const out = new Map<string, { param: Parameter; ref?: string }>();
      for (const p of list) {
        const param = p?.$ref ? resolve<Parameter>(doc, p.$ref) : p;
        if (!param) continue;
        const name = param.in === 'header' ? String(param.name).toLowerCase() : param.name;
        out.set(`${param.in} parameter ${name}`, { param, ref: p?.$ref });
      }
      return out;
    };
    const pa = index(this.before, a);
    const pb = index(this.after, b);
    for (const [key, { param }] of pb) {
      if (!pa.has(key))
        this.add(param.required ? 'breaking' : 'non-breaking', where, `${param.required ? 'required' : 'optional'} ${key} added`);
    }
    for (const [key] of pa) {
      if (!pb.has(key)) this.add('breaking', where, `${key} removed (clients that send it lose its effect)`);
    }
    for (const [key, x] of pa) {
      const y = pb.get(key);
      if (!y) continue;
      // The same shared parameter on both sides is compared once, under components.
      if (x.ref && x.ref === y.ref) continue;
      this.compareParameter(`${where} ${key}`, x.param, y.param);
    }
  }

  compareParameter(where: string, a: Parameter, b: Parameter): void {
    if (!a.required && b.required) this.add('breaking', where, 'became required');
    if (a.required && !b.required) this.add('non-breaking', where, 'became optional');
    for (const key of ['style', 'explode', 'allowReserved']) {
      if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) this.add('breaking', where, `serialization (${key}) changed`);
    }
    if (a.description !== b.description || JSON.stringify(a.example) !== JSON.stringify(b.example)) {
      this.add('non-breaking', where, 'documentation changed');
    }
    this.compareSchema(where, a.schema, b.schema, 'request');
  }

  private compareRequestBody(where: string, a: RequestBody | undefined, b: RequestBody | undefined): void {
    const bodyA = a?.$ref ? resolve<RequestBody>(this.before, a.$ref) : a;
    const bodyB = b?.$ref ? resolve<RequestBody>(this.after, b.$ref) : b;
    const at = `${where} request body`;
    if (!bodyA && bodyB) {
      this.add(bodyB.required ? 'breaking' : 'non-breaking', at, `${bodyB.required ? 'required' : 'optional'} body added`);
      return;
    }
    if (bodyA && !bodyB) {
      this.add('breaking', at, 'removed (clients that send one are refused or ignored)');
      return;
    }
    if (!bodyA || !bodyB) return;
    if (!bodyA.required && bodyB.required) this.add('breaking', at, 'became required');
    if (a?.$ref && a.$ref === b?.$ref) return;
    this.compareContent(at, bodyA.content ?? {}, bodyB.content ?? {}, 'request');
  }

  private compareResponses(where: string, a: Record<string, Response>, b: Record<string, Response>): void {
    for (const status of Object.keys(a)) {
      if (status in b) continue;
      const success = /^2/.test(status) || status === '304';
      this.add(
        success ? 'breaking' : 'non-breaking',
        `${where} response ${status}`,
        success ? 'success response removed' : 'response no longer declared',
      );
    }
    for (const status of Object.keys(b)) {
      if (!(status in a)) this.add('non-breaking', `${where} response ${status}`, 'response added');
    }
    for (const status of Object.keys(a)) {
      if (!(status in b)) continue;
      const ra = a[status];
      const rb = b[status];
      if (ra?.$ref && ra.$ref === rb?.$ref) continue; // a shared response, compared once under components
      this.compareResponse(
        `${where} response ${status}`,
        ra?.$ref ? resolve<Response>(this.before, ra.$ref) : ra,
        rb?.$ref ? resolve<Response>(this.after, rb.$ref) : rb,
      );
    }
  }

  compareResponse(where: string, a: Response | undefined, b: Response | undefined): void {
    if (a?.description !== b?.description) this.add('non-breaking', where, 'description changed');
    const ha = a?.headers ?? {};
    const hb = b?.headers ?? {};
    const lower = (o: Record<string, Header>) => new Map(Object.entries(o).map(([k, v]) => [k.toLowerCase(), v]));
    const la = lower(ha);
    const lb = lower(hb);
    for (const [name] of la) if (!lb.has(name)) this.add('breaking', where, `header ${name} removed`);
    for (const [name] of lb) if (!la.has(name)) this.add('non-breaking', where, `header ${name} added`);
    for (const [name, x] of la) {
      const y = lb.get(name);
      if (!y || (x?.$ref && x.$ref === y?.$ref)) continue;
      const hx = x?.$ref ? resolve<Header>(this.before, x.$ref) : x;
      const hy = y?.$ref ? resolve<Header>(this.after, y.$ref) : y;
      this.compareSchema(`${where} header ${name}`, hx?.schema, hy?.schema, 'response');
    }
    this.compareContent(where, a?.content ?? {}, b?.content ?? {}, 'response');
  }

  private compareContent(where: string, a: Record<string, Media>, b: Record<string, Media>, direction: Direction): void {
    for (const type of Object.keys(a)) if (!(type in b)) this.add('breaking', where, `content type ${type} removed`);
    for (const type of Object.keys(b)) if (!(type in a)) this.add('non-breaking', where, `content type ${type} added`);
    for (const type of Object.keys(a)) {
      if (!(type in b)) continue;
      const ma = a[type] ?? {};
      const mb = b[type] ?? {};
      if (JSON.stringify([ma.example, ma.examples]) !== JSON.stringify([mb.example, mb.examples])) {
        this.add('non-breaking', `${where} ${type}`, 'examples changed');
      }
      this.compareSchema(`${where} body`, ma.schema, mb.schema, direction);
    }
  }

  compareComponents(): void {
    const ca = (this.before.components ?? {}) as Components;
    const cb = (this.after.components ?? {}) as Components;
    for (const kind of ['schemas', 'parameters', 'responses', 'headers', 'requestBodies', 'securitySchemes']) {
      const a = ca[kind] ?? {};
      const b = cb[kind] ?? {};
      for (const name of Object.keys(a)) {
        if (!(name in b)) this.add('breaking', `components.${kind}.${name}`, 'removed (generated clients name types after components)');
      }
      for (const name of Object.keys(b)) if (!(name in a)) this.add('non-breaking', `components.${kind}.${name}`, 'added');
    }
    const usage = mergeUsage(schemaUsage(this.before), schemaUsage(this.after));
    for (const [name, schemaA] of Object.entries(ca.schemas ?? {})) {
      const schemaB = cb.schemas?.[name];
      if (schemaB === undefined) continue;
      const directions = usage.get(name) ?? new Set<Direction>(['request', 'response']);
      // Changes found in each direction a schema is used in; a change breaking in either is breaking.
      const found = new Map<string, Change>();
      for (const direction of directions) {
        const scratch: Change[] = [];
        new DiffContext(this.before, this.after, scratch).compareSchema(`schema ${name}`, schemaA, schemaB, direction);
        for (const c of scratch) {
          const key = `${c.where}\u0000${c.what}`;
          if (!found.has(key) || c.severity === 'breaking') found.set(key, c);
        }
      }
      this.changes.push(...found.values());
    }
    for (const [name, pa] of Object.entries(ca.parameters ?? {})) {
      const pb = cb.parameters?.[name];
      if (pb) this.compareParameter(`components.parameters.${name}`, pa, pb);
    }
    for (const [name, ra] of Object.entries(ca.responses ?? {})) {
      const rb = cb.responses?.[name];
      if (rb) this.compareResponse(`components.responses.${name}`, ra, rb);
    }
    for (const [name, ha] of Object.entries(ca.headers ?? {})) {
      const hb = cb.headers?.[name];
      if (!hb) continue;
      if (ha.description !== hb.description || JSON.stringify(ha.example) !== JSON.stringify(hb.example)) {
        this.add('non-breaking', `components.headers.${name}`, 'documentation changed');
      }
      this.compareSchema(`components.headers.${name}`, ha.schema, hb.schema, 'response');
    }
    for (const [name, sa] of Object.entries(ca.securitySchemes ?? {})) {
      const sb = cb.securitySchemes?.[name];
      if (!sb) continue;
      for (const key of ['type', 'scheme', 'in', 'name', 'bearerFormat']) {
        if (sa[key] !== sb[key])
          this.add('breaking', `components.securitySchemes.${name}`, `${key} changed from ${String(sa[key])} to ${String(sb[key])}`);
      }
    }
  }

  /**
   * A discriminator is compared by its property and mapping: a mapping that only gains names is
   * the open union's new kinds (non-breaking in a response when the schema is `x-open-enum`);
   * anything else changes how clients pick a variant.
   */
  private compareDiscriminator(where: string, a: SchemaNode, b: SchemaNode, request: boolean): void {
    const da = a.discriminator as { propertyName?: string; mapping?: Record<string, string> } | undefined;
    const db = b.discriminator as { propertyName?: string; mapping?: Record<string, string> } | undefined;
    if (JSON.stringify(da) === JSON.stringify(db)) return;
    const ma = da?.mapping ?? {};
    const mb = db?.mapping ?? {};
    const onlyGained =
      da !== undefined &&
      db !== undefined &&
      da.propertyName === db.propertyName &&
      Object.entries(ma).every(([name, ref]) => mb[name] === ref);
    if (!onlyGained) {
      this.add('breaking', where, 'discriminator changed (not classified; treated as breaking)');
      return;
    }
    const gained = Object.keys(mb).filter((name) => !(name in ma));
    this.add(
      !request && b['x-open-enum'] !== true ? 'breaking' : 'non-breaking',
      where,
      `discriminator mapping gained ${gained.join(', ')}`,
    );
  }

  /** Compares two schemas as seen from `direction`; `where` names the place for the report. */
  compareSchema(where: string, a: Schema | undefined, b: Schema | undefined, direction: Direction, seen = new Set<string>()): void {
    if (a === undefined && b === undefined) return;
    if (a === undefined || b === undefined) {
      // No schema means anything goes.
      const narrowed = direction === 'request' ? a === undefined : b === undefined;
      this.add(narrowed ? 'breaking' : 'non-breaking', where, a === undefined ? 'schema added' : 'schema removed');
      return;
    }
    if (typeof a === 'boolean' || typeof b === 'boolean') {
      if (a !== b) this.add('breaking', where, `schema changed from ${JSON.stringify(a)} to ${JSON.stringify(b)}`);
      return;
    }
    if (a.$ref && b.$ref) {
      if (a.$ref === b.$ref) {
        // The component itself is compared once, by name; keywords beside the $ref (OpenAPI 3.1
        // allows a description there) are this place's own.
        const ownA = without(a, '$ref');
        const ownB = without(b, '$ref');
        if (Object.keys(ownA).length || Object.keys(ownB).length) this.compareSchema(where, ownA, ownB, direction, seen);
        return;
      }
      const key = `${a.$ref}|${b.$ref}|${direction}`;
      if (seen.has(key)) return;
      seen.add(key);
      this.add('non-breaking', where, `now refers to ${refName(b.$ref)} instead of ${refName(a.$ref)}`);
      this.compareSchema(where, resolve<Schema>(this.before, a.$ref), resolve<Schema>(this.after, b.$ref), direction, seen);
      return;
    }
    if (a.$ref || b.$ref) {
      const key = `${a.$ref ?? ''}|${b.$ref ?? ''}|${direction}`;
      if (seen.has(key)) return;
      seen.add(key);
      const ra: Schema = a.$ref ? { ...resolve<SchemaNode>(this.before, a.$ref), ...without(a, '$ref') } : a;
      const rb: Schema = b.$ref ? { ...resolve<SchemaNode>(this.after, b.$ref), ...without(b, '$ref') } : b;
      this.compareSchema(where, ra, rb, direction, seen);
      return;
    }

    const breakingIf = (narrows: boolean, what: string) => this.add(narrows ? 'breaking' : 'non-breaking', where, what);
    const request = direction === 'request';

    // Types (integer counts as a kind of number).
    const ta = typeSet(a);
    const tb = typeSet(b);
    if (ta && tb) {
      const removed = [...ta].filter((t) => !tb.has(t) && !(t === 'integer' && tb.has('number')));
      const added = [...tb].filter((t) => !ta.has(t) && !(t === 'integer' && ta.has('number')));
      if (removed.length) breakingIf(request, `type no longer allows ${removed.join(', ')}`);
      if (added.length) breakingIf(!request, `type now also allows ${added.join(', ')}`);
    } else if (ta && !tb) breakingIf(!request, 'type constraint removed');
    else if (!ta && tb) breakingIf(request, `type constraint added (${[...tb].join(', ')})`);

    // Enumerations and constants.
    const ea = enumOf(a);
    const eb = enumOf(b);
    if (ea && eb) {
      const removed = ea.filter((v) => !eb.some((w) => same(v, w)));
      const added = eb.filter((v) => !ea.some((w) => same(v, w)));
      if (removed.length) breakingIf(request, `enum values removed: ${removed.map((v) => JSON.stringify(v)).join(', ')}`);
      if (added.length)
        breakingIf(!request && b['x-open-enum'] !== true, `enum values added: ${added.map((v) => JSON.stringify(v)).join(', ')}`);
    } else if (!ea && eb) breakingIf(request, 'now restricted to an enumeration');
    else if (ea && !eb) breakingIf(!request, 'no longer restricted to an enumeration');

    for (const key of ['format', 'pattern'] as const) {
      if (a[key] === b[key]) continue;
      if (a[key] === undefined) breakingIf(request, `${key} added (${b[key]})`);
      else if (b[key] === undefined) breakingIf(!request, `${key} removed (was ${a[key]})`);
      else this.add('breaking', where, `${key} changed from ${a[key]} to ${b[key]}`);
    }
    // Bounds are numbers.
    const bound = (s: SchemaNode, key: string) => s[key] as number | undefined;
    for (const key of UPPER_BOUNDS) {
      if (a[key] === b[key]) continue;
      const tighter = b[key] !== undefined && (a[key] === undefined || bound(b, key)! < bound(a, key)!);
      breakingIf(request ? tighter : !tighter, `${key} ${describeBound(a[key], b[key])}`);
    }
    for (const key of LOWER_BOUNDS) {
      if (a[key] === b[key]) continue;
      const tighter = b[key] !== undefined && (a[key] === undefined || bound(b, key)! > bound(a, key)!);
      breakingIf(request ? tighter : !tighter, `${key} ${describeBound(a[key], b[key])}`);
    }
    for (const key of ['multipleOf', 'uniqueItems']) {
      if (JSON.stringify(a[key]) === JSON.stringify(b[key])) continue;
      const added = a[key] === undefined || b[key] === true;
      breakingIf(request ? added : !added, `${key} ${describeBound(a[key], b[key])}`);
    }
    if (JSON.stringify(a.default) !== JSON.stringify(b.default)) {
      // A client that leaves the field out gets a different behaviour.
      breakingIf(request, `default ${describeBound(a.default, b.default)}`);
    }

    // Object shape.
    const reqA = new Set<string>(a.required ?? []);
    const reqB = new Set<string>(b.required ?? []);
    for (const name of reqB) {
      if (!reqA.has(name))
        breakingIf(request && (b.properties?.[name] as SchemaNode | undefined)?.readOnly !== true, `${name} became required`);
    }
    for (const name of reqA) {
      if (!reqB.has(name) && (b.properties?.[name] !== undefined || !request)) breakingIf(!request, `${name} no longer required`);
    }
    const propsA = a.properties ?? {};
    const propsB = b.properties ?? {};
    const closed = (s: SchemaNode) => s.additionalProperties === false || s.unevaluatedProperties === false;
    for (const name of Object.keys(propsA)) {
      if (name in propsB) continue;
      breakingIf(request ? closed(b) : true, `property ${name} removed`);
    }
    for (const name of Object.keys(propsB)) {
      if (!(name in propsA)) this.add('non-breaking', where, `property ${name} added${reqB.has(name) ? ' (required)' : ''}`);
    }
    for (const name of Object.keys(propsA)) {
      if (name in propsB) this.compareSchema(`${where} .${name}`, propsA[name], propsB[name], direction, seen);
    }
    for (const key of ['additionalProperties', 'unevaluatedProperties']) {
      const x = a[key];
      const y = b[key];
      if (JSON.stringify(x) === JSON.stringify(y)) continue;
      if (typeof x === 'object' && typeof y === 'object') this.compareSchema(`${where} ${key}`, x as Schema, y as Schema, direction, seen);
      else if (y === false) breakingIf(request, `${key} no longer allowed`);
      else this.add('non-breaking', where, `${key} now ${JSON.stringify(y) ?? 'unrestricted'}`);
    }

    // Arrays.
    if (a.items !== undefined || b.items !== undefined) this.compareSchema(`${where} []`, a.items, b.items, direction, seen);
    if (a.prefixItems || b.prefixItems) {
      const n = Math.max(a.prefixItems?.length ?? 0, b.prefixItems?.length ?? 0);
      for (let i = 0; i < n; i++) this.compareSchema(`${where} [${i}]`, a.prefixItems?.[i], b.prefixItems?.[i], direction, seen);
    }

    // Composition: variants are compared by position.
    for (const key of ['oneOf', 'anyOf'] as const) {
      const va: Schema[] = a[key] ?? [];
      const vb: Schema[] = b[key] ?? [];
      if (!va.length && !vb.length) continue;
      if (vb.length < va.length) breakingIf(request, `${key} lost ${va.length - vb.length} variant(s)`);
      if (vb.length > va.length) breakingIf(!request && b['x-open-enum'] !== true, `${key} gained ${vb.length - va.length} variant(s)`);
      for (let i = 0; i < Math.min(va.length, vb.length); i++) this.compareSchema(`${where} ${key}[${i}]`, va[i], vb[i], direction, seen);
    }
    this.compareDiscriminator(where, a, b, request);
    const allA: Schema[] = a.allOf ?? [];
    const allB: Schema[] = b.allOf ?? [];
    if (allA.length !== allB.length)
      this.add('breaking', where, `allOf changed from ${allA.length} to ${allB.length} parts (not classified)`);
    for (let i = 0; i < Math.min(allA.length, allB.length); i++)
      this.compareSchema(`${where} allOf[${i}]`, allA[i], allB[i], direction, seen);

    // Documentation, and anything no rule covers.
    const docChanged = [...DOC_KEYWORDS].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
    if (docChanged.length) this.add('non-breaking', where, `${docChanged.join(', ')} changed`);
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      if (DOC_KEYWORDS.has(key) || SCHEMA_RULE_KEYWORDS.has(key) || key.startsWith('x-')) continue;
      if (JSON.stringify(a[key]) !== JSON.stringify(b[key]))
        this.add('breaking', where, `${key} changed (not classified; treated as breaking)`);
    }
  }
}

function operationsOf(doc: Doc): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    for (const m of METHODS) {
      const op = item?.[m] as Operation | undefined;
      if (!op) continue;
      // Path-item parameters apply to every operation of the path.
      out.set(`${m.toUpperCase()} ${p}`, { ...op, parameters: [...((item.parameters ?? []) as Parameter[]), ...(op.parameters ?? [])] });
    }
  }
  return out;
}

/** For each component schema, the directions in which the document's operations use it. */
function schemaUsage(doc: Doc): Map<string, Set<Direction>> {
  const usage = new Map<string, Set<Direction>>();
  const visit = (node: unknown, direction: Direction, seen: Set<string>) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node as unknown[]) visit(n, direction, seen);
      return;
    }
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      if (seen.has(ref)) return;
      seen.add(ref);
      if (ref.startsWith('#/components/schemas/')) {
        const name = refName(ref);
        if (!usage.has(name)) usage.set(name, new Set());
        usage.get(name)!.add(direction);
      }
      visit(resolve(doc, ref), direction, seen);
    }
    for (const [k, v] of Object.entries(node)) if (k !== '$ref') visit(v, direction, seen);
  };
  for (const op of operationsOf(doc).values()) {
    visit(op.parameters, 'request', new Set());
    visit(op.requestBody, 'request', new Set());
    visit(op.responses, 'response', new Set());
  }
  return usage;
}

function mergeUsage(a: Map<string, Set<Direction>>, b: Map<string, Set<Direction>>): Map<string, Set<Direction>> {
  const out = new Map<string, Set<Direction>>();
  for (const m of [a, b]) for (const [k, v] of m) out.set(k, new Set([...(out.get(k) ?? []), ...v]));
  return out;
}

/** The node a local `$ref` names, read as the kind of node the caller expects there. */
function resolve<T>(doc: Doc, ref: string): T | undefined {
  if (!ref.startsWith('#/')) return undefined;
  return resolvePointer(doc, ref) as T | undefined;
}

const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);
const without = (o: SchemaNode, key: string) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== key));
const same = (x: unknown, y: unknown) => JSON.stringify(x) === JSON.stringify(y);

function typeSet(schema: SchemaNode): Set<string> | null {
  if (Array.isArray(schema.type)) return new Set(schema.type as string[]);
  if (typeof schema.type === 'string') return new Set([schema.type]);
  return null;
}

function enumOf(schema: SchemaNode): unknown[] | null {
  if ('const' in schema) return [schema.const];
  return Array.isArray(schema.enum) ? (schema.enum as unknown[]) : null;
}

function describeBound(before: unknown, after: unknown): string {
  if (before === undefined) return `added (${JSON.stringify(after)})`;
  if (after === undefined) return `removed (was ${JSON.stringify(before)})`;
  return `changed from ${JSON.stringify(before)} to ${JSON.stringify(after)}`;
}

/** The report printed by CI: breaking changes first, then the rest. */
export function formatChanges(title: string, changes: Change[]): string {
  const breaking = changes.filter((c) => c.severity === 'breaking');
  const other = changes.filter((c) => c.severity !== 'breaking');
  const lines = [`${title}: ${changes.length === 0 ? 'no changes' : `${breaking.length} breaking, ${other.length} non-breaking`}`];
  if (breaking.length) lines.push('  breaking:', ...breaking.map((c) => `    ${c.where}: ${c.what}`));
  if (other.length) lines.push('  non-breaking:', ...other.map((c) => `    ${c.where}: ${c.what}`));
  return lines.join('\n');
}
