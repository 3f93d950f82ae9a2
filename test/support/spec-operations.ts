// The operations of the TEST contract as the sweeps over every operation read them (bad input,
// hostile bodies), with a plausible value for any schema and the headers of a principal each
// operation accepts. Generated from the spec, so a new operation is covered the day it is added.
import { randomUUID } from 'node:crypto';
import { DEMO_STORES } from '../../db/seed/stores.js';
import { loadSpec } from '../../server/contract.js';
import { signInCustomer, signInPicker } from './accounts.js';
import type { TestService } from './service.js';

export type Schema = Record<string, any>;
export const doc = loadSpec('TEST') as any;

/** Follows internal `$ref`s (the bundled spec has only those). */
export function resolve<T = Schema>(node: any): T {
  let n = node;
  for (let hops = 0; n && typeof n === 'object' && typeof n.$ref === 'string' && hops < 20; hops++) {
    n = n.$ref
      .slice(2)
      .split('/')
      .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((o: any, k: string) => o?.[k], doc);
  }
  return n as T;
}

/** A value of the schema's type that is plausible enough to pass it (for the fields not under test). */
export function plausible(schemaRef: Schema | undefined, depth = 0): unknown {
  const s = resolve(schemaRef ?? {});
  if (s.example !== undefined) return s.example;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum)) return s.enum.find((v: unknown) => v !== null) ?? null;
  for (const key of ['oneOf', 'anyOf', 'allOf'] as const) {
    if (Array.isArray(s[key])) {
      const branch = s[key].map((b: Schema) => resolve(b)).find((b: Schema) => b.type !== 'null');
      if (branch) return plausible(branch, depth);
    }
  }
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  if (type === 'object' || s.properties) {
    if (depth > 4) return {};
    const out: Record<string, unknown> = {};
    for (const name of s.required ?? []) out[name] = plausible(s.properties?.[name], depth + 1);
    return out;
  }
  if (type === 'array') return depth > 4 ? [] : [plausible(s.items, depth + 1)];
  if (type === 'integer') return Math.max(1, s.minimum ?? 1);
  if (type === 'number') return Math.max(1, s.minimum ?? 1);
  if (type === 'boolean') return true;
  if (s.format === 'uuid') return randomUUID();
  if (s.format === 'date-time') return new Date().toISOString();
  if (s.format === 'date') return new Date().toISOString().slice(0, 10);
  return 'text';
}

export interface Operation {
  method: string;
  path: string;
  operationId: string;
  params: { name: string; in: string; required?: boolean; schema?: Schema }[];
  body: Schema | null;
  security: Record<string, unknown>[];
}

export const operations: Operation[] = [];
for (const [path, item] of Object.entries<any>(doc.paths)) {
  for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
    const op = item[method];
    if (!op) continue;
    const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => resolve<Operation['params'][number]>(p));
    const body = op.requestBody ? resolve(resolve(op.requestBody).content?.['application/json']?.schema ?? {}) : null;
    operations.push({
      method: method.toUpperCase(),
      path,
      operationId: op.operationId,
      params,
      body,
      security: op.security ?? doc.security ?? [],
    });
  }
}

export async function headersFor(svc: TestService, op: Operation): Promise<Record<string, string>> {
  const schemes = new Set(op.security.flatMap((s) => Object.keys(s)));
  const headers: Record<string, string> = { 'x-store-id': DEMO_STORES[0]!.id, 'accept-language': 'ru' };
  // A fresh principal per operation: one whose junk happens to be accepted (a sign-out) must not
  // turn the rest into 401s.
  if (schemes.has('PickerJWTAuth')) Object.assign(headers, (await signInPicker(svc)).auth);
  else if (schemes.has('CustomerJWTAuth') || schemes.has('ApplicationJWTAuth')) Object.assign(headers, (await signInCustomer(svc)).auth);
  if (schemes.has('RecoveryTokenApiKey')) headers['x-recovery-key'] = 'not-a-recovery-token';
  return headers;
}

/** The URL of the operation with every path parameter plausible, but `junk` in one. */
export function urlOf(op: Operation, junk: { name: string; in: string; value: string } | null): string {
  let path = op.path;
  for (const p of op.params.filter((x) => x.in === 'path')) {
    const value = junk && junk.in === 'path' && junk.name === p.name ? junk.value : String(plausible(p.schema));
    path = path.replace(`{${p.name}}`, encodeURIComponent(value));
  }
  const query = new URLSearchParams();
  for (const p of op.params.filter((x) => x.in === 'query')) {
    if (junk && junk.in === 'query' && junk.name === p.name) query.set(p.name, junk.value);
    else if (p.required) query.set(p.name, String(plausible(p.schema)));
  }
  const qs = query.toString();
  return qs ? `${path}?${qs}` : path;
}
