// Conditional and negotiated reads of stored representations (the catalog snapshot): strong
// ETags, If-None-Match matching and Accept-Encoding negotiation (RFC 9110).

/**
 * Whether an If-None-Match header matches `etag`: `*`, or any listed tag equal under the weak
 * comparison that RFC 9110 prescribes for If-None-Match (a `W/` prefix is ignored).
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  const tags = header.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.some((t) => t.replace(/^W\//, '') === opaque);
}

/** Whether Accept-Encoding allows gzip (explicitly or through `*`, with a q-value above 0). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let gzip: number | null = null;
  let star: number | null = null;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const weight = Number.isFinite(q) ? q : 0;
    if (name!.trim() === 'gzip' || name!.trim() === 'x-gzip') gzip = weight;
    else if (name!.trim() === '*') star = weight;
  }
  return (gzip ?? star ?? 0) > 0;
}
