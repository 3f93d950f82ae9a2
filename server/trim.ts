// Request-body text fields the contract marks `x-trim: true` ("surrounding whitespace is trimmed")
// are trimmed before the body is validated, so the schema's checks (format, maxLength) apply to
// the value that will be stored: "ivan@example.com " from an autocompleting keyboard is the
// address "ivan@example.com", and a 50-character patronymic with a trailing space fits 50.
import { isOperation, resolvePointer, type OpenApiDocument } from './contract.js';

type Schema = { $ref?: string; properties?: Record<string, Schema>; 'x-trim'?: boolean };

/** operationId -> the top-level body properties the contract trims. */
export function trimmedBodyFields(doc: OpenApiDocument): Map<string, string[]> {
  const resolve = (s: Schema | undefined): Schema | undefined => {
    let cur = s;
    for (let i = 0; cur?.$ref && i < 10; i++) {
      cur = resolvePointer(doc, cur.$ref) as Schema | undefined;
    }
    return cur;
  };
  const out = new Map<string, string[]>();
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      if (!isOperation(op)) continue;
      const schema = resolve(op.requestBody?.content?.['application/json']?.schema);
      const fields = Object.entries(schema?.properties ?? {})
        .filter(([, p]) => resolve(p)?.['x-trim'] === true)
        .map(([name]) => name);
      if (fields.length) out.set(op.operationId, fields);
    }
  }
  return out;
}

/** Trims the named string fields of a JSON object body in place. */
export function trimFields(body: unknown, fields: readonly string[]): void {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const record = body as Record<string, unknown>;
  for (const f of fields) {
    const v = record[f];
    if (typeof v === 'string') record[f] = v.trim();
  }
}
