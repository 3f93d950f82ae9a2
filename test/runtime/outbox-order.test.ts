// The outbox feed hands events out in id order (per order: version order, as OrderTrackingMessage
// promises), even when the read of a later batch of notifications ends before the read of an
// earlier one, and after a reconnect, the catch-up scan goes before what the new connection hears.
// A row whose transaction commits after a later id was read is delivered when it commits. A large
// batch is handed out in slices, the event loop running between them.
import {
  sql,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type UnknownRow,
} from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import { systemClock } from '../../platform/clock.js';
import { createLogger } from '../../platform/logger.js';
import {
  HAND_OUT_SLICE,
  LISTENER_APPLICATION_NAME,
  startOutboxFeed,
  type OutboxFeed,
  type OutboxRow,
} from '../../server/realtime/outbox-feed.js';
import { createTestDatabase } from '../support/db.js';
import { eventually } from '../orders/fixtures.js';

/** Holds back the result of the next `holds` reads of outbox rows by id for `ms`. */
class SlowReads implements KyselyPlugin {
  holds = 0;
  constructor(private readonly ms: number) {}
  transformQuery(args: PluginTransformQueryArgs) {
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const rows = args.result.rows;
    if (this.holds > 0 && rows.length && 'event_id' in rows[0]!) {
      this.holds--;
      await new Promise((r) => setTimeout(r, this.ms));
    }
    return args.result;
  }
}

describe('outbox feed order', () => {
  let database: OpenedDatabase;
  let feed: OutboxFeed;
  const slow = new SlowReads(400);
  const got: number[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    feed = await startOutboxFeed({ db: database.db.withPlugin(slow), log: createLogger('silent'), clock: systemClock }, database.url);
    feed.subscribe((row: OutboxRow) => got.push(row.id));
  });
  afterAll(async () => {
    await feed?.close();
    await database?.shutdown();
  });

  const writeEvent = async (): Promise<number> => {
    const row = await database.db
      .insertInto('outbox_events')
      .values({ type: 'test.ordering', payload: JSON.stringify({}) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };

  it('hands a batch out only after every batch read before it, however slow its read', async () => {
    got.length = 0;
    slow.holds = 1;
    const first = await writeEvent();
    // The first batch's read is under way (and held back) when the second event commits.
    await new Promise((r) => setTimeout(r, 100));
    const second = await writeEvent();
    await eventually(
      async () => [...got],
      (ids) => ids.includes(first) && ids.includes(second),
    );
    expect(got).toEqual([first, second]);
  });

  it('after a reconnect, hands out the catch-up scan before what the new connection hears', async () => {
    got.length = 0;
    // The listener's connection is cut; an event commits while it is gone.
    await sql`SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
      WHERE application_name = ${LISTENER_APPLICATION_NAME} AND datname = current_database()`.execute(database.db);
    const missed = await writeEvent();
    // The scan that finds it is slow; an event committed after the new LISTEN is read at once.
    slow.holds = 1;
    const listening = await eventually(
      () =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = ${LISTENER_APPLICATION_NAME} AND datname = current_database()`.execute(database.db),
      (r) => r.rows[0]!.n === 1,
    );
    expect(listening.rows[0]!.n).toBe(1);
    await new Promise((r) => setTimeout(r, 150)); // LISTEN has run; the scan is being held back
    const heard = await writeEvent();
    await eventually(
      async () => [...got],
      (ids) => ids.includes(missed) && ids.includes(heard),
    );
    expect(got).toEqual([missed, heard]);
  });

  it('hands a large batch out in order, in slices with the event loop running between them', async () => {
    got.length = 0;
    const total = HAND_OUT_SLICE * 2 + 100;
    // One statement: its rows commit together, and one read brings them all.
    const written = await database.db
      .insertInto('outbox_events')
      .values(Array.from({ length: total }, () => ({ type: 'test.ordering', payload: JSON.stringify({}) })))
      .returning('id')
      .execute();
    const handedOutAtEachTurn: number[] = [];
    const watch = () => {
      handedOutAtEachTurn.push(got.length);
      if (got.length < total) setImmediate(watch);
    };
    setImmediate(watch);
    await eventually(
      async () => got.length,
      (n) => n >= total,
    );
    expect(got).toEqual(written.map((r) => r.id));
    // Seen part-way: other work (pings, upgrades, requests) got turns during the hand-out.
    expect(handedOutAtEachTurn.some((n) => n > 0 && n < total)).toBe(true);
  });

  it('delivers a row whose transaction commits after a later row was handed out (its id was a gap)', async () => {
    got.length = 0;
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let lateId = 0;
    const late = database.db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto('outbox_events')
        .values({ type: 'test.ordering', payload: JSON.stringify({}) })
        .returning('id')
        .executeTakeFirstOrThrow();
      lateId = row.id;
      await held;
    });
    await eventually(
      async () => lateId,
      (id) => id > 0,
    );
    const early = await writeEvent();
    await eventually(
      async () => [...got],
      (ids) => ids.includes(early),
    );
    expect(got).toEqual([early]);
    commit();
    await late;
    await eventually(
      async () => [...got],
      (ids) => ids.includes(lateId),
    );
    expect(got).toEqual([early, lateId]);
  });
});
