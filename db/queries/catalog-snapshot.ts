// The versioned catalog snapshot: publication (`npm run catalog:publish`) precomputes, for every
// active store and both languages, the bootstrap document as stored bytes (plain and gzip) with a
// strong ETag; reads serve those bytes unchanged.
//
// Atomicity: a publication writes the new version row, all its snapshots and the replacement of
// the previous version in the caller's one transaction, so a reader sees either the old current
// version with all its snapshots or the new one with all of its own - never half a version.
import { createHash, randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import type { components } from '../../generated/api.test.js';
import { parseDecimal } from '../../domain/money/decimal.js';
import type { Executor } from '../executor.js';
import { listAllStoreCards, loadCategoryTree, type Language } from './catalog.js';
import { findMainPageTitles, listActiveBanners } from './content.js';

/** The strong ETag of a snapshot: version, store, language and a digest of its bytes. */
export function snapshotEtag(version: string, storeId: string, language: string, sha256Hex: string): string {
  return `"${version.slice(0, 8)}.${storeId.slice(0, 8)}.${language}.${sha256Hex.slice(0, 16)}"`;
}

type Snapshot = components['schemas']['CatalogSnapshotSchema'];
export const SNAPSHOT_LANGUAGES: Language[] = ['ru', 'en'];

export class PublicationInProgressError extends Error {
  constructor() {
    super('another catalog publication is in progress; try again when it has finished');
    this.name = 'PublicationInProgressError';
  }
}

export interface PublicationSummary {
  version: string;
  published_at: string;
  snapshots: { store_id: string; language: Language; etag: string; bytes: number; gzip_bytes: number; products: number }[];
  expired_versions: number;
}

/** Builds the snapshot document of one store and language from the current catalog. */
export async function buildSnapshot(
  db: Executor,
  version: string,
  publishedAt: string,
  storeId: string,
  lang: Language,
): Promise<Snapshot> {
  const [tree, cards, banners, titles] = await Promise.all([
    loadCategoryTree(db, lang, storeId),
    listAllStoreCards(db, storeId, lang),
    listActiveBanners(db, lang),
    findMainPageTitles(db, lang),
  ]);
  const ids = (pick: (c: (typeof cards)[number]) => boolean) => cards.filter(pick).map((c) => c.id);
  const top = cards.filter((c) => c.flags.top).sort((a, b) => b.flags.popularity - a.flags.popularity || (a.id < b.id ? -1 : 1));
  // Largest discount first; equal discounts keep catalog order (the sort is stable).
  const percent = (c: (typeof cards)[number]) => parseDecimal(c.discount_percent as string, 2)!;
  const discounted = cards
    .filter((c) => c.discount_percent !== null)
    .sort((a, b) => (percent(b) > percent(a) ? 1 : percent(b) < percent(a) ? -1 : 0));
  return {
    version,
    published_at: publishedAt,
    store_id: storeId,
    language: lang,
    menu_categories: tree.menu(),
    main_page_categories: tree.mainPageBlocks(),
    banners,
    products: cards.map(({ flags: _flags, ...card }) => card),
    sections: {
      top: top.map((c) => c.id),
      new: ids((c) => c.flags.new),
      fresh: ids((c) => c.flags.fresh),
      discounted: discounted.map((c) => c.id),
    },
    titles,
  };
}

/**
 * Publishes a new catalog version. Call it inside a REPEATABLE READ transaction so that every
 * snapshot of the version is built from the same state of the catalog. Versions replaced more
 * than `retentionHours` ago are deleted with their snapshots.
 */
export async function publishCatalogVersion(trx: Executor, retentionHours: number, now: Date): Promise<PublicationSummary> {
  // Two publications at once would race for "current"; the second one stops instead of waiting
  // (waiting inside REPEATABLE READ would build from a state older than the first's result).
  const { rows: lock } = await sql<{
    locked: boolean;
  }>`SELECT pg_try_advisory_xact_lock(hashtext('catalog_publication')) AS locked`.execute(trx);
  if (!lock[0]!.locked) throw new PublicationInProgressError();

  const version = randomUUID();
  const publishedAt = now.toISOString();
  await trx.updateTable('catalog_versions').set({ replaced_at: now }).where('replaced_at', 'is', null).execute();
  await trx.insertInto('catalog_versions').values({ id: version, published_at: now, replaced_at: null }).execute();

  const stores = await trx.selectFrom('stores').select('id').where('is_active', '=', true).orderBy('id').execute();
  const summary: PublicationSummary['snapshots'] = [];
  for (const { id: storeId } of stores) {
    for (const lang of SNAPSHOT_LANGUAGES) {
      const snapshot = await buildSnapshot(trx, version, publishedAt, storeId, lang);
      const body = Buffer.from(JSON.stringify(snapshot));
      const bodyGzip = gzipSync(body, { level: 6 });
      const etag = snapshotEtag(version, storeId, lang, createHash('sha256').update(body).digest('hex'));
      await trx
        .insertInto('catalog_snapshots')
        .values({ version_id: version, store_id: storeId, language: lang, etag, body, body_gzip: bodyGzip })
        .execute();
      summary.push({
        store_id: storeId,
        language: lang,
        etag,
        bytes: body.length,
        gzip_bytes: bodyGzip.length,
        products: snapshot.products.length,
      });
    }
  }
  const expired = await trx
    .deleteFrom('catalog_versions')
    .where('replaced_at', '<', new Date(now.getTime() - retentionHours * 3600_000))
    .executeTakeFirst();
  return { version, published_at: publishedAt, snapshots: summary, expired_versions: Number(expired.numDeletedRows) };
}

/** The current version with the ETag of its snapshot for the store and language, or why there is none. */
export async function findCurrentVersion(db: Executor, storeId: string, lang: Language) {
  const row = await db
    .selectFrom('catalog_versions as v')
    .leftJoin('catalog_snapshots as s', (j) =>
      j.onRef('s.version_id', '=', 'v.id').on('s.store_id', '=', storeId).on('s.language', '=', lang),
    )
    .select(['v.id', 'v.published_at', 's.etag'])
    .where('v.replaced_at', 'is', null)
    .executeTakeFirst();
  return row ? { version: row.id, published_at: row.published_at, etag: row.etag } : null;
}

export type SnapshotPart = 'etag' | 'body' | 'gzip';

/**
 * The stored snapshot of a servable version (the current one, or one replaced less than
 * `retentionHours` ago), reading only the part the request needs; null when there is none.
 */
export async function findServableSnapshot(
  db: Executor,
  version: string,
  storeId: string,
  lang: Language,
  retentionHours: number,
  part: SnapshotPart,
) {
  const bytes = part === 'body' ? sql<Buffer>`s.body` : part === 'gzip' ? sql<Buffer>`s.body_gzip` : sql<null>`NULL::bytea`;
  // servable_for_seconds: how long the snapshot stays servable at the least (a current version
  // stays servable for the whole retention after it is replaced, whenever that happens).
  const { rows } = await sql<{ etag: string; bytes: Buffer | null; servable_for_seconds: number }>`
    SELECT s.etag, ${bytes} AS bytes,
           extract(epoch FROM coalesce(v.replaced_at, now()) + make_interval(hours => ${retentionHours}) - now())::float8 AS servable_for_seconds
    FROM catalog_snapshots s JOIN catalog_versions v ON v.id = s.version_id
    WHERE s.version_id = ${version} AND s.store_id = ${storeId} AND s.language = ${lang}
      AND (v.replaced_at IS NULL OR v.replaced_at > now() - make_interval(hours => ${retentionHours}))`.execute(db);
  return rows[0] ?? null;
}

/** Why a snapshot could not be served: nothing published, an unknown or expired version, or a store without one. */
export async function whySnapshotMissing(
  db: Executor,
  version: string,
  retentionHours: number,
): Promise<'not_published' | 'unknown_version' | 'store_not_published'> {
  const { rows } = await sql<{ has_current: boolean; servable: boolean }>`
    SELECT EXISTS (SELECT 1 FROM catalog_versions WHERE replaced_at IS NULL) AS has_current,
           EXISTS (SELECT 1 FROM catalog_versions WHERE id = ${version}
                   AND (replaced_at IS NULL OR replaced_at > now() - make_interval(hours => ${retentionHours}))) AS servable`.execute(db);
  if (!rows[0]!.has_current) return 'not_published';
  return rows[0]!.servable ? 'store_not_published' : 'unknown_version';
}
