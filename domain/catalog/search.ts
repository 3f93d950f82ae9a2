// What a search text asks for, before the database folds its words: a barcode or PLU is looked up
// exactly; the words go to the trigram search (db/queries/catalog-search.ts).
import { barcodeLookupKeys, isPlu } from '../codes/barcode.js';

export const MAX_SEARCH_TERMS = 8;

export interface SearchRequest {
  /** The trimmed text (words are folded and split by catalog_search_words() in SQL). */
  text: string;
  /** Barcode forms to look up exactly (empty unless the text is a valid barcode). */
  barcodes: string[];
  /** PLU to look up exactly, or null. */
  plu: string | null;
}

/** Null for a blank search (ignored, as the spec says). */
export function parseSearch(raw: string | undefined): SearchRequest | null {
  const text = (raw ?? '').replace(/\s+/g, ' ').trim();
  if (!text) return null;
  const compact = text.replace(/[\s-]/g, '');
  const digits = /^[0-9]+$/.test(compact);
  return {
    text,
    barcodes: digits ? barcodeLookupKeys(compact) : [],
    plu: digits && isPlu(compact) ? pluOf(compact) : null,
  };
}

/** A PLU as the catalog keeps it: scale labels print it in five digits, so 04011 is PLU 4011. */
const pluOf = (code: string): string => (code.length === 5 && code.startsWith('0') ? code.slice(1) : code);

/**
 * Score of a vocabulary word for a query term: exact, prefix, then the better of trigram similarity
 * and edit distance (1 - edits / length).
 */
export const EXACT_SCORE = 1;
export const PREFIX_SCORE = 0.9;
/** A barcode or PLU hit outranks any word match. */
export const CODE_SCORE = 100;

export interface WordCandidate {
  word: string;
  score: number;
}

/** How far below the best typo candidate another one may score and still count. */
export const FUZZY_MARGIN = 0.1;

/**
 * The candidates a query word keeps. Typo tolerance is a fallback: when the vocabulary holds the
 * word itself or words it begins (score >= PREFIX_SCORE), only those count, so "moloko" does not
 * also bring "molotyy" (ground coffee) along. A word the vocabulary lacks keeps its nearest
 * neighbours only: "maloko" keeps "moloko" (one edit) and drops "marokko" (two).
 */
export function keepCandidates<T extends WordCandidate>(candidates: T[]): T[] {
  const direct = candidates.filter((c) => c.score >= PREFIX_SCORE);
  if (direct.length) return direct;
  const best = Math.max(...candidates.map((c) => c.score));
  return candidates.filter((c) => c.score >= best - FUZZY_MARGIN);
}
