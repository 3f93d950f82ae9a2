// Frozen migration: never edit after it has landed; add a new one instead.
// Product search reads the vocabulary through indexes only (db/queries/catalog-search.ts): the
// planner is told what trigram similarity really costs, and edit-distance candidates come from a
// table of deletion variants instead of a levenshtein() over every vocabulary word.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // pg_trgm declares `%` (similarity_op) as cheap as `=`, so on a vocabulary of a few pages the
  // planner filters every word with it rather than use the trigram index, although computing the
  // trigrams of each word makes that scan several times slower than the index. A cost in line
  // with the work lets the planner pick the index. (The function belongs to the extension, so a
  // dump does not carry this setting: a database restored from one needs it set again.) Only the
  // extension's owner may change it; where a DBA installed pg_trgm as another role the setting is
  // skipped with a notice rather than blocking the service's start: search stays correct, slower.
  await sql`
    DO $$ BEGIN
      ALTER FUNCTION public.similarity_op(text, text) COST 100;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'similarity_op keeps its cost: the migrating role does not own pg_trgm';
    END $$`.execute(db);

  // The word itself and every string made by deleting one or two of its letters (a string may
  // come more than once). Two words within two edits of each other (insertions, deletions,
  // substitutions) share at least one such variant, so looking up the variants of a query word
  // finds every vocabulary word within two edits of it, which levenshtein then confirms.
  // PL/pgSQL: a SQL function over generate_series costs five times as much per call.
  await sql`
    CREATE FUNCTION catalog_deletion_variants(word text) RETURNS text[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
    DECLARE
      n int := length(word);
      variants text[] := ARRAY[word];
      one text;
    BEGIN
      FOR i IN 1..n LOOP
        one := left(word, i - 1) || substr(word, i + 1);
        variants := variants || one;
        FOR j IN i..n - 1 LOOP
          variants := variants || (left(one, j - 1) || substr(one, j + 1));
        END LOOP;
      END LOOP;
      RETURN variants;
    END $$`.execute(db);
  // Deletion variants of every vocabulary word (a few dozen per word). Like the vocabulary, rows
  // are only ever added, by the trigger below, whoever adds words.
  await sql`
    CREATE TABLE catalog_search_deletions (
      variant text COLLATE "C" NOT NULL,
      word text COLLATE "C" NOT NULL,
      PRIMARY KEY (variant, word)
    )`.execute(db);
  await sql`
    CREATE FUNCTION catalog_search_deletions_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO catalog_search_deletions (variant, word)
      SELECT unnest(public.catalog_deletion_variants(word)), word FROM added_words
      ON CONFLICT DO NOTHING;
      RETURN NULL;
    END $$`.execute(db);
  await sql`CREATE TRIGGER catalog_search_vocabulary_deletions AFTER INSERT ON catalog_search_vocabulary
    REFERENCING NEW TABLE AS added_words FOR EACH STATEMENT EXECUTE FUNCTION catalog_search_deletions_add()`.execute(db);
  await sql`
    INSERT INTO catalog_search_deletions (variant, word)
    SELECT DISTINCT unnest(catalog_deletion_variants(word)), word FROM catalog_search_vocabulary`.execute(db);
  // The longest word bounds the query words worth expanding: a word more than two letters longer
  // than any in the vocabulary is within two edits of none (and a long one has many variants).
  await sql`CREATE INDEX catalog_search_vocabulary_length ON catalog_search_vocabulary (length(word))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER catalog_search_vocabulary_deletions ON catalog_search_vocabulary`.execute(db);
  await sql`DROP FUNCTION catalog_search_deletions_add()`.execute(db);
  await sql`DROP TABLE catalog_search_deletions`.execute(db);
  await sql`DROP INDEX catalog_search_vocabulary_length`.execute(db);
  await sql`DROP FUNCTION catalog_deletion_variants(text)`.execute(db);
  // pg_trgm's own declaration.
  await sql`
    DO $$ BEGIN
      ALTER FUNCTION public.similarity_op(text, text) COST 1;
    EXCEPTION WHEN insufficient_privilege THEN
      NULL;
    END $$`.execute(db);
}
