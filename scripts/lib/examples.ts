// Example values from the spec alone, for the mock server (scripts/mock.ts) and for building
// valid requests in its tests. Values take values and return values; nothing here does I/O.
//
// Order of preference for a schema: its own `const`, `examples[0]`, `example`, first `enum`
// value, `default`; otherwise a value composed from its structure (properties, items, formats,
// patterns, bounds). `examplesFirst: false` skips the spec's examples and composes only: the
// caller uses it when an example in the spec does not validate against its own schema.
// Composition is deterministic: the same schema gives the same value on every run.

import { resolvePointer } from '../../server/contract.js';

/** A JSON Schema: the keywords composition reads are typed, any other is kept as it is. */
export type JsonSchema = SchemaNode | boolean;
export interface SchemaNode {
  $ref?: string;
  const?: unknown;
  examples?: unknown;
  example?: unknown;
  enum?: unknown;
  default?: unknown;
  type?: unknown;
  allOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: JsonSchema;
  required?: unknown;
  items?: JsonSchema;
  prefixItems?: JsonSchema[];
  readOnly?: boolean;
  writeOnly?: boolean;
  minItems?: number;
  maxItems?: unknown;
  minimum?: unknown;
  exclusiveMinimum?: unknown;
  maximum?: unknown;
  exclusiveMaximum?: unknown;
  multipleOf?: unknown;
  format?: unknown;
  pattern?: unknown;
  minLength?: unknown;
  maxLength?: unknown;
  [keyword: string]: unknown;
}

export interface SampleOptions {
  /** The whole document, to resolve `#/components/...` references. */
  root: object;
  /** `request` leaves out readOnly properties, `response` leaves out writeOnly ones. */
  direction: 'request' | 'response';
  /** Use the spec's examples/defaults before composing (default true). */
  examplesFirst?: boolean;
}

/** Returned (internally) where a recursive schema would nest without end. */
const OMIT: unique symbol = Symbol('omit');
/** A sampled value, or OMIT (`unknown` includes the symbol; the name says what to check for). */
type Sampled = unknown;

/** A recursive reference may appear this many times on one path through the document. */
const MAX_REF_REPEATS = 2;
const MAX_DEPTH = 24;

const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: '3fa85f64-5717-4562-b3fc-2c963f66afa6',
  'date-time': '2026-01-15T09:30:00Z',
  date: '2026-01-15',
  time: '09:30:00',
  email: 'user@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  'uri-reference': '/example',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  byte: 'ZXhhbXBsZQ==',
  password: 'example-secret',
};

/** The node a local `$ref` names in `root` (a schema, a parameter, an example...). */
export function resolveRef(root: object, ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported, got ${ref}`);
  const node = resolvePointer(root, ref);
  if (node === undefined) throw new Error(`unresolved reference ${ref}`);
  return node;
}

/** An example value for `schema`. */
export function sampleSchema(schema: JsonSchema | undefined, options: SampleOptions): unknown {
  const value = sample(schema, { ...options, examplesFirst: options.examplesFirst ?? true }, [], 0);
  return value === OMIT ? null : value;
}

function sample(schema: JsonSchema | undefined, opts: Required<SampleOptions>, refs: string[], depth: number): Sampled {
  if (schema === undefined || schema === true) return 'example';
  if (schema === false) return OMIT;
  if (depth > MAX_DEPTH) return OMIT;

  if ('const' in schema) return clone(schema.const);
  if (opts.examplesFirst) {
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return clone(schema.examples[0]);
    if ('example' in schema) return clone(schema.example);
  }
  if (typeof schema.$ref === 'string') {
    const repeats = refs.filter((r) => r === schema.$ref).length;
    if (repeats >= MAX_REF_REPEATS) return OMIT;
    return sample(resolveRef(opts.root, schema.$ref) as JsonSchema, opts, [...refs, schema.$ref], depth + 1);
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return clone(schema.enum.find((v: unknown) => v !== null) ?? schema.enum[0]);
  }
  if (opts.examplesFirst && 'default' in schema) return clone(schema.default);

  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s: JsonSchema) => sample(s, opts, refs, depth + 1)).filter((v: Sampled) => v !== OMIT);
    const { allOf: _allOf, ...rest } = schema;
    const own = Object.keys(rest).some((k) => k === 'properties' || k === 'type') ? sample(rest, opts, refs, depth + 1) : OMIT;
    if (own !== OMIT) parts.push(own);
    if (parts.every(isPlainObject)) return Object.assign({}, ...parts);
    return parts.length ? parts[parts.length - 1] : OMIT;
  }
  for (const key of ['oneOf', 'anyOf'] as const) {
    if (!Array.isArray(schema[key])) continue;
    // The first variant that is not plain null and does not recurse without end.
    const variants = [...schema[key]].sort((a, b) => Number(isNullSchema(a)) - Number(isNullSchema(b)));
    for (const variant of variants) {
      const v = sample(variant, opts, refs, depth + 1);
      if (v !== OMIT) return v;
    }
    return OMIT;
  }

  switch (typeOf(schema)) {
    case 'null':
      return null;
    case 'boolean':
      return true;
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'string':
      return sampleString(schema);
    case 'array':
      return sampleArray(schema, opts, refs, depth);
    case 'object':
      return sampleObject(schema, opts, refs, depth);
    default:
      return 'example';
  }
}

function sampleObject(schema: SchemaNode, opts: Required<SampleOptions>, refs: string[], depth: number): Sampled {
  const out: Record<string, unknown> = {};
  const required = new Set<string>(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const node = prop as SchemaNode | undefined;
    const skip = opts.direction === 'request' ? node?.readOnly === true : node?.writeOnly === true;
    if (skip && !required.has(name)) continue;
    const v = sample(prop, opts, refs, depth + 1);
    if (v !== OMIT) out[name] = v;
    else if (required.has(name)) {
      // A required property that would recurse without end: its emptiest valid form.
      const empty = emptyValue(prop, opts.root);
      if (empty === OMIT) return OMIT;
      out[name] = empty;
    }
  }
  // A map (`additionalProperties: {schema}` without named properties): one entry shows its shape.
  if (!schema.properties && isPlainObject(schema.additionalProperties)) {
    const v = sample(schema.additionalProperties, opts, refs, depth + 1);
    if (v !== OMIT) out.key = v;
  }
  return out;
}

function sampleArray(schema: SchemaNode, opts: Required<SampleOptions>, refs: string[], depth: number): Sampled {
  const out: unknown[] = [];
  if (Array.isArray(schema.prefixItems)) {
    for (const item of schema.prefixItems) {
      const v = sample(item, opts, refs, depth + 1);
      if (v === OMIT) return out;
      out.push(v);
    }
    return out;
  }
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const count = Math.min(Math.max(1, schema.minItems ?? 0), max);
  if (count === 0) return out;
  const item = sample(schema.items, opts, refs, depth + 1);
  if (item === OMIT) return (schema.minItems ?? 0) > 0 ? OMIT : out;
  for (let i = 0; i < count; i++) out.push(clone(item));
  return out;
}

function sampleNumber(schema: SchemaNode, integer: boolean): number {
  let value = 0;
  if (typeof schema.minimum === 'number') value = schema.minimum;
  if (typeof schema.exclusiveMinimum === 'number') value = schema.exclusiveMinimum + (integer ? 1 : 0.5);
  if (typeof schema.maximum === 'number' && value > schema.maximum) value = schema.maximum;
  if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum)
    value = schema.exclusiveMaximum - (integer ? 1 : 0.5);
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  return integer ? Math.ceil(value) : value;
}

function sampleString(schema: SchemaNode): string {
  if (typeof schema.format === 'string' && FORMAT_EXAMPLES[schema.format]) return FORMAT_EXAMPLES[schema.format]!;
  if (typeof schema.pattern === 'string') {
    const matching = stringMatching(schema.pattern, schema.minLength as number | undefined, schema.maxLength as number | undefined);
    if (matching !== undefined) return matching;
  }
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  let s = 'example';
  while (s.length < min) s += 'x';
  return s.slice(0, Math.max(min, Math.min(max, s.length)));
}

/** The emptiest value a schema allows, for a required property that would recurse. */
function emptyValue(schema: JsonSchema | undefined, root: object): Sampled {
  const target = (schema && typeof schema === 'object' && typeof schema.$ref === 'string' ? resolveRef(root, schema.$ref) : schema) as
    JsonSchema | undefined;
  const types = typesOf(target);
  if (types.includes('null')) return null;
  if (types.includes('array') && !(((target as SchemaNode).minItems as number) > 0)) return [];
  return OMIT;
}

function typeOf(schema: SchemaNode): string | undefined {
  const types = typesOf(schema);
  const nonNull = types.filter((t) => t !== 'null');
  if (nonNull.length) return nonNull[0];
  if (types.length) return types[0];
  if (schema.properties || schema.additionalProperties || schema.required) return 'object';
  if (schema.items || schema.prefixItems) return 'array';
  if (schema.pattern || schema.format || schema.minLength !== undefined || schema.maxLength !== undefined) return 'string';
  return undefined;
}

function typesOf(schema: JsonSchema | undefined): string[] {
  if (!schema || typeof schema !== 'object') return [];
  if (Array.isArray(schema.type)) return schema.type as string[];
  return typeof schema.type === 'string' ? [schema.type] : [];
}

function isNullSchema(schema: JsonSchema): boolean {
  const types = typesOf(schema);
  return types.length === 1 && types[0] === 'null';
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

// --- strings matching a pattern --------------------------------------------------------------
// A small generator for the regular expressions contracts use (anchors, literals, escapes,
// classes with ranges, groups, alternation, quantifiers; lookarounds are skipped). It tries a few
// deterministic variants (first/second alternatives and class members, minimal/one-more
// repetitions) and returns the first that the real RegExp accepts within the length bounds.

type Node =
  | { kind: 'chars'; chars: string[] }
  | { kind: 'group'; alternatives: Node[][] }
  | { kind: 'repeat'; node: Node; min: number; max: number }
  | { kind: 'empty' };

export function stringMatching(pattern: string, minLength = 0, maxLength = Infinity): string | undefined {
  let regex: RegExp;
  let tree: Node;
  try {
    regex = new RegExp(pattern, 'u');
    tree = new PatternParser(pattern).parse();
  } catch {
    return undefined;
  }
  for (let variant = 0; variant < 12; variant++) {
    const candidate = generate(tree, variant);
    if (candidate.length >= minLength && candidate.length <= maxLength && regex.test(candidate)) return candidate;
  }
  return undefined;
}

function generate(node: Node, variant: number): string {
  switch (node.kind) {
    case 'empty':
      return '';
    case 'chars':
      return node.chars[Math.min(node.chars.length - 1, variant % 3 === 1 ? 1 : variant % 3 === 2 ? node.chars.length >> 1 : 0)] ?? '';
    case 'group': {
      const alternative = node.alternatives[variant % node.alternatives.length];
      return alternative!.map((n) => generate(n, variant)).join('');
    }
    case 'repeat': {
      const extra = variant >= 6 ? 2 : variant % 2;
      const count = Math.min(node.max, node.min + extra);
      let out = '';
      for (let i = 0; i < count; i++) out += generate(node.node, variant);
      return out;
    }
  }
}

const DIGITS = [...'0123456789'];
const WORD = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_'];
const SPACE = [' '];
const PRINTABLE = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,:/+#@'];

class PatternParser {
  private i = 0;
  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.i < this.src.length) throw new Error(`unexpected ${this.src[this.i]} at ${this.i}`);
    return node;
  }

  private alternation(): Node {
    const alternatives: Node[][] = [this.sequence()];
    while (this.src[this.i] === '|') {
      this.i++;
      alternatives.push(this.sequence());
    }
    return { kind: 'group', alternatives };
  }

  private sequence(): Node[] {
    const out: Node[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') {
      const atom = this.atom();
      out.push(this.quantified(atom));
    }
    return out;
  }

  private atom(): Node {
    const c = this.src[this.i++];
    if (c === '^' || c === '$') return { kind: 'empty' };
    if (c === '.') return { kind: 'chars', chars: PRINTABLE };
    if (c === '[') return this.charClass();
    if (c === '\\') return { kind: 'chars', chars: this.escape() };
    if (c === '(') {
      let lookaround = false;
      if (this.src[this.i] === '?') {
        const next = this.src.slice(this.i, this.i + 3);
        if (next.startsWith('?:')) this.i += 2;
        else if (next.startsWith('?=') || next.startsWith('?!')) {
          lookaround = true;
          this.i += 2;
        } else if (next.startsWith('?<=') || next.startsWith('?<!')) {
          lookaround = true;
          this.i += 3;
        } else if (next.startsWith('?<')) {
          this.i = this.src.indexOf('>', this.i) + 1; // named group
        }
      }
      const inner = this.alternation();
      if (this.src[this.i++] !== ')') throw new Error('unclosed group');
      return lookaround ? { kind: 'empty' } : inner;
    }
    return { kind: 'chars', chars: [c!] };
  }

  private quantified(node: Node): Node {
    const c = this.src[this.i];
    let min: number;
    let max: number;
    if (c === '?') [min, max] = [0, 1];
    else if (c === '*') [min, max] = [0, Infinity];
    else if (c === '+') [min, max] = [1, Infinity];
    else if (c === '{' && /^\{\d+(,\d*)?\}/.test(this.src.slice(this.i))) {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i))!;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
      this.i += m[0].length - 1;
    } else return node;
    this.i++;
    if (this.src[this.i] === '?') this.i++; // lazy: same strings
    return { kind: 'repeat', node, min, max };
  }

  private escape(): string[] {
    const c = this.src[this.i++];
    if (c === 'd') return DIGITS;
    if (c === 'w') return WORD;
    if (c === 's') return SPACE;
    if (c === 'D' || c === 'W' || c === 'S') return c === 'D' ? ['a'] : c === 'W' ? ['-'] : ['a'];
    if (c === 'n') return ['\n'];
    if (c === 't') return ['\t'];
    return [c!];
  }

  private charClass(): Node {
    let negated = false;
    if (this.src[this.i] === '^') {
      negated = true;
      this.i++;
    }
    const members: string[] = [];
    let first = true;
    while (this.i < this.src.length && (this.src[this.i] !== ']' || first)) {
      first = false;
      let from: string[];
      if (this.src[this.i] === '\\') {
        this.i++;
        from = this.escape();
      } else from = [this.src[this.i++]!];
      if (from.length === 1 && this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length) {
        this.i++;
        let to = this.src[this.i++];
        if (to === '\\') to = this.escape()[0];
        for (let code = from[0]!.codePointAt(0)!; code <= to!.codePointAt(0)!; code++) members.push(String.fromCodePoint(code));
      } else members.push(...from);
    }
    if (this.src[this.i++] !== ']') throw new Error('unclosed class');
    const chars = negated ? PRINTABLE.filter((ch) => !members.includes(ch)) : members;
    return { kind: 'chars', chars: chars.length ? chars : ['a'] };
  }
}
