// The text rules of address search (GET /api/logistics/map/address-suggestions) that do not
// depend on the geocoder: what counts as the query and when it is long enough.

/** The query as searched: trimmed, every run of whitespace collapsed to one space. */
export function normalizeAddressQuery(raw: string): string {
  return raw.trim().replace(/\s+/gu, ' ');
}

/** Length in characters (code points, so "ё" or an emoji counts once), as the customer sees it. */
export const queryLength = (query: string): number => [...query].length;

export function isQueryLongEnough(query: string, minLength: number): boolean {
  return queryLength(query) >= minLength;
}
