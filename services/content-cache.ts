// Content the apps read at every start and that changes a few times a month (banners, stories,
// pages, main-page titles and category blocks, support contacts, update messages, units), kept in
// this instance's memory: a request for it reads no PostgreSQL, and answers with a strong ETag, so
// an app that sends it back in If-None-Match gets a 304 without a body.
//
// How a change reaches every instance: a statement changing one of the tables notifies
// `content_changed` with the table's name (migration 2026_12_03_1101_content_changes, whoever
// runs it: a service, the catalog import, the content team's SQL), every instance hears it on its
// LISTEN connection (server/realtime/outbox-feed.ts) and drops what it kept from that table, and
// the next request reads it again. A notification can be missed (the listener's connection broke
// and a NOTIFY reaches only listeners connected at commit), so:
// - when that connection is made again, the instance drops everything it kept (`changed(null)`);
// - nothing is kept longer than CONTENT_SAFETY_TTL_MS, whatever was heard;
// - an answer that depends on the clock (a banner's or story's display window opening or
//   closing) is kept only until the next such moment.
// A read that overlaps a change it may not have seen (it began before the notification came) is
// answered but not kept, so a notification is never undone by a read that was already under way.
//
// The ETag is a hash of the answer's JSON and what it was read for (operation, language, store),
// so it differs by language and store, and two instances that read the same rows give the same tag
// (a balancer may send the revalidation elsewhere).
import { createHash } from 'node:crypto';
import type { Language } from '../db/queries/catalog.js';
import type { Clock } from '../platform/clock.js';
import { serializeBody } from './stored-body.js';

/** The tables kept answers are read from (the tables of the migration's triggers). */
export type ContentTable =
  | 'banners'
  | 'stories'
  | 'story_slides'
  | 'content_pages'
  | 'main_page_titles'
  | 'support_contacts'
  | 'mobile_update_messages'
  | 'measurement_units'
  | 'categories'
  | 'products'
  | 'inventories';

/**
 * The longest a kept answer is served without being read again: how long a change whose
 * notification was lost (and no reconnect followed) may stay unseen on an instance. One read per
 * kept answer a minute is nothing to the database; a minute of a stale banner is nothing to a
 * customer.
 */
export const CONTENT_SAFETY_TTL_MS = 60_000;

/** What an answer is for: together, its key and what its ETag hashes. */
export interface ContentKey {
  /** The operation (or internal use) the answer is read for. */
  name: string;
  lang: Language;
  /** The store, for answers that depend on one. */
  storeId?: string;
}

/** A kept answer: `value` (null: nothing to show, kept as well) and its strong ETag. */
export interface KeptContent<T> {
  value: T;
  etag: string;
}

/** What a read of the database returns. */
export interface ContentRead<T> {
  value: T;
  /** Milliseconds after which the answer changes by the clock alone (a display window), or null. */
  changesInMs?: number | null;
}

interface Entry {
  kept: KeptContent<unknown>;
  tables: readonly ContentTable[];
  until: number;
}

export class ContentCache {
  private readonly entries = new Map<string, Entry>();
  /** Reads under way by key: concurrent requests for an answer not kept share one read. */
  private readonly reading = new Map<string, Promise<KeptContent<unknown>>>();
  /** Moves on at every change heard; a read that began under another value is not kept. */
  private generation = 0;

  constructor(private readonly maxEntries = 10_000) {}

  /** A statement changed `table` (null: changes may have gone unheard); what was read from it is dropped. */
  changed(table: string | null): void {
    this.generation++;
    for (const [key, entry] of this.entries) {
      if (table === null || (entry.tables as readonly string[]).includes(table)) this.entries.delete(key);
    }
    // Requests from now on must not join a read that may have begun before the change.
    this.reading.clear();
  }

  /**
   * The kept answer of `key` while it is live, else `read()` (once for all who ask meanwhile),
   * kept until a change of one of `tables` is heard, the safety TTL, or the moment the read says
   * its answer changes. A failed read is not kept.
   */
  get<T>(key: ContentKey, tables: readonly ContentTable[], clock: Clock, read: () => Promise<ContentRead<T>>): Promise<KeptContent<T>> {
    const text = keyText(key);
    const hit = this.entries.get(text);
    if (hit && hit.until > clock.nowMs()) return Promise.resolve(hit.kept as KeptContent<T>);
    const pending = this.reading.get(text);
    if (pending) return pending as Promise<KeptContent<T>>;
    const started = this.load(key, text, tables, clock, read);
    this.reading.set(text, started);
    const done = () => {
      if (this.reading.get(text) === started) this.reading.delete(text);
    };
    started.then(done, done);
    return started;
  }

  private async load<T>(
    key: ContentKey,
    text: string,
    tables: readonly ContentTable[],
    clock: Clock,
    read: () => Promise<ContentRead<T>>,
  ): Promise<KeptContent<T>> {
    const generation = this.generation;
    const readAt = clock.nowMs();
    const { value, changesInMs } = await read();
    // One JSON text per kept answer: its ETag, and the text (and gzip) every reply sends.
    const json = value !== null && typeof value === 'object' ? (await serializeBody(deepFreeze(value))).text : JSON.stringify(value);
    const kept: KeptContent<T> = { value, etag: etagOf(key, text, json) };
    if (generation === this.generation) {
      const lifetime = Math.min(CONTENT_SAFETY_TTL_MS, changesInMs ?? Infinity);
      this.entries.delete(text);
      if (lifetime > 0) this.entries.set(text, { kept, tables, until: readAt + lifetime });
      if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    }
    return kept;
  }
}

const keyText = (key: ContentKey) => `${key.name}\n${key.lang}\n${key.storeId ?? ''}`;

/** `"<language>-<hash>"`: a strong ETag (RFC 9110 8.8.3) of the answer's JSON for its key. */
function etagOf(key: ContentKey, keyText: string, json: string): string {
  const hash = createHash('sha256').update(keyText).update('\n').update(json).digest('base64url').slice(0, 22);
  return `"${key.lang}-${hash}"`;
}

/** Kept answers are shared by every request: a change to one would reach all who read it after. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
