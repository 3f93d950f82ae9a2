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

/**
 * The folded forms a folded query word may take once it is typed to the end. The gazetteer folds
 * letter pairs of a whole word (ie, io -> e; ts, tz -> c; kh -> h; sch, shch -> sh: see
 * gazetteer_fold), so a word cut inside such a pair folds to something that is no longer a
 * prefix of the folded full word: "Ки" is "ki", but "Киевский" is "kevski". Each variant is the
 * word with its unfinished pair completed; any of them beginning a word of the entry matches.
 */
export function typedWordVariants(folded: string): string[] {
  const variants = new Set([folded]);
  const cut = (n: number, then: string) => variants.add(folded.slice(0, -n) + then);
  if (folded.endsWith('i')) cut(1, 'e'); // ie, io -> e
  if (folded.endsWith('t')) cut(1, 'c'); // ts, tz -> c
  if (folded.endsWith('k')) cut(1, 'h'); // kh -> h
  if (folded.endsWith('sc')) cut(2, 'sh'); // sch -> sh
  if (folded.endsWith('shc')) cut(3, 'sh'); // shch -> sh
  return [...variants];
}
