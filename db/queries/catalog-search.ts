// Product search: typo-tolerant and transliteration-aware, in PostgreSQL (pg_trgm, unaccent,
// fuzzystrmatch).
//
// Names and brands are folded by catalog_fold() (lower case, no accents, Cyrillic written in
// Latin) and split into words, kept in products.search_words (GIN) and in the vocabulary table
// (trigram GIN, plus the deletion variants of each word in catalog_search_deletions). A query is
// folded the same way; each of its words is matched against the vocabulary - exactly, as a
// prefix, by trigram similarity, or within one or two edits (a transposition, "йогрут", is two) -
// which yields a few candidate words per query word. A product matches when, for every query
// word, it contains one of the candidates (array overlap on the GIN index); a barcode or PLU
// matches exactly. So "малоко" (maloko) reaches "moloko", "moloko" typed in Latin is an exact hit
// on the folded "молоко", and the vocabulary lookup costs index probes whatever the size of the
// vocabulary. The page itself (db/queries/catalog.ts) comes, for a word search in the default
// order, from the per-store postings of the candidates (index entries only, one per match); any
// other search reads each match's product and inventory. Either way the cost grows with the
// number of matches, not of products.
import { sql, type RawBuilder } from 'kysely';
import {
  CODE_SCORE,
  EXACT_SCORE,
  keepCandidates,
  MAX_SEARCH_TERMS,
  PREFIX_SCORE,
  type SearchRequest,
} from '../../domain/catalog/search.js';
import type { Executor } from '../executor.js';

/** Candidate words of a query word kept for matching (best first). */
const CANDIDATES_PER_TERM = 30;

export interface SearchPlan {
  /** Boolean condition on `p` (products). */
  condition: RawBuilder<unknown>;
  /**
   * Relevance of `p` (higher is better): code hits, then the sum of the best word scores; null
   * when every match would score the same (nothing to rank by).
   */
  relevance: RawBuilder<unknown> | null;
  /**
   * The same word search as postings to look up (catalog_search_postings): each candidate word
   * with its query word (`term`, from 0) and its score tier; a product matches when it has a
   * candidate of each of the `terms` query words. Null when the text is also a barcode or PLU,
   * whose exact hits only `condition` finds.
   */
  words: { terms: number; term: number[]; word: string[]; score: number[] } | null;
}

interface Candidate {
  term_index: number;
  word: string;
  score: number;
}

/** Scores are ranked in tiers of 0.01: candidates of one tier rank alike. */
const tierOf = (score: number) => Math.round(score * 100) / 100;

/** Resolves the query words against the vocabulary (one query) and returns the SQL to filter and rank. */
export async function planProductSearch(db: Executor, request: SearchRequest): Promise<SearchPlan> {
  // Each kind of candidate is found through an index, so the cost follows the number of
  // candidates, not the size of the vocabulary: similar words through the trigram index (which
  // the planner prefers once `%` is priced right, migration 2026_11_22_0009), words the term
  // begins through the C-collated primary key (they sort from `term` up to, excluding, `term`
  // followed by '{', the character after 'z'), and words within one or two edits through their
  // deletion variants (catalog_search_deletions), confirmed by levenshtein. Written as one OR,
  // the whole vocabulary would be read.
  const { rows } = await sql<{ term_index: number; word: string | null; score: number | null }>`
    WITH terms AS (
      SELECT term, idx::int AS idx FROM unnest(catalog_search_words(${request.text})) WITH ORDINALITY AS t(term, idx)
      ORDER BY length(term) DESC, term LIMIT ${MAX_SEARCH_TERMS}
    )
    SELECT t.idx AS term_index, m.word, m.score
    FROM terms t
    LEFT JOIN LATERAL (
      SELECT c.word,
             CASE WHEN c.word = t.term THEN ${EXACT_SCORE}::float8
                  WHEN c.word >= t.term AND c.word < t.term || '{' THEN ${PREFIX_SCORE}::float8
                  ELSE greatest(similarity(c.word, t.term),
                                1 - levenshtein_less_equal(c.word, t.term, 2)::float8 / greatest(length(c.word), length(t.term))) END AS score
      FROM (
        SELECT v.word FROM catalog_search_vocabulary v WHERE v.word % t.term
        UNION
        SELECT v.word FROM catalog_search_vocabulary v WHERE v.word >= t.term AND v.word < t.term || '{'
        UNION
        -- one edit in words of 5 letters, two from 6 (a transposition is two edits); a term more
        -- than two letters longer than the longest word is within two edits of none
        SELECT d.word FROM catalog_search_deletions d
        WHERE length(t.term) >= 5
          AND length(t.term) <= (SELECT max(length(w.word)) + 2 FROM catalog_search_vocabulary w)
          AND d.variant = ANY(catalog_deletion_variants(t.term))
          AND levenshtein_less_equal(d.word, t.term, 2) <= CASE WHEN length(t.term) >= 6 THEN 2 ELSE 1 END
      ) c
      ORDER BY score DESC, c.word
      LIMIT ${CANDIDATES_PER_TERM}
    ) m ON true
    -- Longest query word first (the query words are numbered, and their scores added up by the
    -- page statement, in this order); candidates best first, as each term's subquery gave them.
    ORDER BY length(t.term) DESC, t.term, t.idx, m.score DESC, m.word`.execute(db);

  const byTerm = new Map<number, Candidate[]>();
  for (const r of rows) {
    if (!byTerm.has(r.term_index)) byTerm.set(r.term_index, []);
    if (r.word !== null) byTerm.get(r.term_index)!.push({ term_index: r.term_index, word: r.word, score: r.score! });
  }
  for (const [term, found] of byTerm) byTerm.set(term, keepCandidates(found));
  // Every query word must match (AND); a word with no candidate makes the text match nothing.
  const textMatch: RawBuilder<unknown> =
    byTerm.size === 0 || [...byTerm.values()].some((c) => c.length === 0)
      ? sql`false`
      : sql.join(
          [...byTerm.values()].map((c) => sql`p.search_words && ${c.map((x) => x.word)}::text[]`),
          sql` AND `,
        );

  const codeMatch: RawBuilder<unknown>[] = [];
  if (request.barcodes.length) {
    codeMatch.push(sql`p.id IN (SELECT b.product_id FROM product_barcodes b WHERE b.barcode = ANY(${request.barcodes}::text[]))`);
  }
  if (request.plu) codeMatch.push(sql`p.plu = ${request.plu}`);
  const codeHit = codeMatch.length ? sql`(${sql.join(codeMatch, sql` OR `)})` : sql`false`;

  // Relevance: per query word, the score of the best candidate the product contains. Candidates
  // are grouped by score, so this is a few array overlaps per row (GIN-friendly, no unnest); a
  // query whose words each have one score tier ranks every match alike and skips it.
  const termScores: RawBuilder<unknown>[] = [];
  const words = { terms: byTerm.size, term: [] as number[], word: [] as string[], score: [] as number[] };
  let ranksMatches = codeMatch.length > 0;
  for (const [term, found] of [...byTerm.values()].entries()) {
    if (found.length === 0) continue; // nothing matches by words; only a code hit can
    const tiers = new Map<number, string[]>();
    for (const c of found) {
      const score = tierOf(c.score);
      words.term.push(term);
      words.word.push(c.word);
      words.score.push(score);
      if (!tiers.has(score)) tiers.set(score, []);
      tiers.get(score)!.push(c.word);
    }
    if (tiers.size > 1) ranksMatches = true;
    const ordered = [...tiers.entries()].sort((a, b) => b[0] - a[0]);
    termScores.push(
      sql`CASE ${sql.join(
        ordered.map(([score, words]) => sql`WHEN p.search_words && ${words}::text[] THEN ${score}::float8`),
        sql` `,
      )} ELSE 0 END`,
    );
  }
  const wordScore = termScores.length ? sql.join(termScores, sql` + `) : sql`0`;
  return {
    condition: sql`(${codeHit} OR (${textMatch}))`,
    relevance: ranksMatches ? sql`(CASE WHEN ${codeHit} THEN ${CODE_SCORE} ELSE 0 END + ${wordScore})` : null,
    words: codeMatch.length ? null : words,
  };
}

export const productSearchCondition = (plan: SearchPlan): RawBuilder<unknown> => plan.condition;
