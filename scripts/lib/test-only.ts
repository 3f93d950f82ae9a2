// What PROD's contract leaves out of the shared spec files: the schema properties of capabilities
// still in TEST (operations are left out by the PROD root, which does not route them).

/**
 * PROD's contract without the schema properties marked `x-test-only: true` (and without them in
 * `required`): a request field of a capability still in TEST is not accepted by PROD (its request
 * validator rejects it where the schema allows no other properties), and PROD's clients do not see it.
 */
export function withoutTestOnlyProperties(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutTestOnlyProperties);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withoutTestOnlyProperties(value);
  const properties = out.properties as Record<string, { 'x-test-only'?: unknown }> | undefined;
  if (properties && typeof properties === 'object' && !Array.isArray(properties)) {
    const dropped = Object.keys(properties).filter((name) => properties[name]?.['x-test-only'] === true);
    for (const name of dropped) delete properties[name];
    if (dropped.length && Array.isArray(out.required)) out.required = (out.required as string[]).filter((r) => !dropped.includes(r));
  }
  return out;
}
