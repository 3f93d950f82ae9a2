// The idempotency module on real PostgreSQL: replay, conflict, in-flight duplicates, crashes.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import { systemClock } from '../../platform/clock.js';
import { unprocessable } from '../../services/errors.js';
import { fingerprintOf, withIdempotency } from '../../services/idempotency.js';
import { createTestDatabase } from '../support/db.js';

let database: OpenedDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.shutdown());

const scope = () => ({ principal: `customer:${randomUUID()}`, operationId: 'createOrder', key: randomUUID() });

describe('withIdempotency', () => {
  it('runs an action once and replays its answer for the same key and body', async () => {
    const s = scope();
    let runs = 0;
    const act = async () => ({ status: 201, body: `order-${++runs}` });
    const first = await withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ a: 1 }), act);
    const second = await withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ a: 1 }), act);
    expect(first).toEqual({ status: 201, body: 'order-1' });
    expect(second).toEqual(first);
    expect(runs).toBe(1);
  });

  it('answers 409 IDEMPOTENCY_CONFLICT for the same key with another body', async () => {
    const s = scope();
    await withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ a: 1 }), async () => ({ status: 201, body: 'x' }));
    await expect(
      withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ a: 2 }), async () => ({ status: 201, body: 'y' })),
    ).rejects.toMatchObject({
      status: 409,
      code: 'IDEMPOTENCY_CONFLICT',
    });
  });

  it('lets exactly one of 50 parallel duplicates act; the others replay or are told to retry', async () => {
    const s = scope();
    let runs = 0;
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, () =>
        withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ same: true }), async (trx) => {
          runs++;
          await sql`SELECT pg_sleep(0.05)`.execute(trx);
          return { status: 201, body: 'only-one' };
        }),
      ),
    );
    expect(runs).toBe(1);
    for (const r of results) {
      if (r.status === 'fulfilled') expect(r.value).toEqual({ status: 201, body: 'only-one' });
      else expect(r.reason).toMatchObject({ status: 409, code: 'IDEMPOTENCY_IN_PROGRESS', headers: { 'Retry-After': '1' } });
    }
  });

  it('replays a business error without acting again', async () => {
    const s = scope();
    let runs = 0;
    const act = async () => {
      runs++;
      throw unprocessable('BELOW_MINIMUM_ORDER', 'The order is below the minimum');
    };
    await expect(withIdempotency({ db: database.db, clock: systemClock }, s, 'f', act)).rejects.toMatchObject({
      status: 422,
      code: 'BELOW_MINIMUM_ORDER',
    });
    await expect(withIdempotency({ db: database.db, clock: systemClock }, s, 'f', act)).rejects.toMatchObject({
      status: 422,
      code: 'BELOW_MINIMUM_ORDER',
    });
    expect(runs).toBe(1);
  });

  it('rolls back the action and frees the key on an unexpected failure', async () => {
    const s = scope();
    const marker = randomUUID();
    await expect(
      withIdempotency({ db: database.db, clock: systemClock }, s, 'f', async (trx) => {
        await trx
          .insertInto('outbox_events')
          .values({ type: 'test', payload: JSON.stringify({ marker }) })
          .execute();
        throw new Error('database went away');
      }),
    ).rejects.toThrow('database went away');
    const leaked = await sql<{ n: number }>`SELECT count(*)::int AS n FROM outbox_events WHERE payload->>'marker' = ${marker}`.execute(
      database.db,
    );
    expect(leaked.rows[0]!.n).toBe(0);
    const retried = await withIdempotency({ db: database.db, clock: systemClock }, s, 'f', async () => ({
      status: 201,
      body: 'second try',
    }));
    expect(retried.body).toBe('second try');
  });

  it('takes over a key left in progress by a crashed process', async () => {
    const s = scope();
    await database.db
      .insertInto('idempotency_keys')
      .values({
        principal: s.principal,
        operation_id: s.operationId,
        key: s.key,
        fingerprint: 'f',
        state: 'in_progress',
        created_at: new Date(Date.now() - 120_000),
        expires_at: new Date(Date.now() + 3600_000),
      })
      .execute();
    const r = await withIdempotency({ db: database.db, clock: systemClock }, s, 'f', async () => ({ status: 201, body: 'recovered' }));
    expect(r.body).toBe('recovered');
  });

  it('leaves nothing behind when the connection dies mid-action: a retry at once acts (no 409 for a minute)', async () => {
    const s = scope();
    let pid = 0;
    const crashed = withIdempotency({ db: database.db, clock: systemClock }, s, 'f', async (trx) => {
      pid = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid;
      await sql`SELECT pg_sleep(30)`.execute(trx);
      return { status: 201, body: 'never' };
    });
    while (!pid) await new Promise((r) => setTimeout(r, 10));
    // The service or PostgreSQL dies with the action under way: its connection ends.
    await sql`SELECT pg_terminate_backend(${pid})`.execute(database.db);
    await expect(crashed).rejects.toThrow();
    const left = await database.db.selectFrom('idempotency_keys').select('state').where('key', '=', s.key).execute();
    expect(left).toEqual([]);
    const retried = await withIdempotency({ db: database.db, clock: systemClock }, s, 'f', async () => ({ status: 201, body: 'retried' }));
    expect(retried).toEqual({ status: 201, body: 'retried' });
  });

  it('never replays into another principal or operation', async () => {
    const s = scope();
    await withIdempotency({ db: database.db, clock: systemClock }, s, 'f', async () => ({ status: 201, body: 'mine' }));
    const other = await withIdempotency({ db: database.db, clock: systemClock }, { ...s, principal: 'customer:other' }, 'g', async () => ({
      status: 201,
      body: 'theirs',
    }));
    expect(other.body).toBe('theirs');
  });
});

describe('stored answers', () => {
  const storedForm = (key: string) =>
    database.db.selectFrom('idempotency_keys').select(['response_body', 'response_gzip']).where('key', '=', key).executeTakeFirstOrThrow();

  it('keeps a large answer gzipped (a fraction of its size) and replays it exactly; a small one stays JSON', async () => {
    // Shaped like a picker command's answer: a session of many similar items.
    const large = {
      status: 'picked',
      session: {
        items: Array.from({ length: 60 }, (_, i) => ({ item_id: i, name: `Молоко 3,2% ${i}`, state: 'picked', quantity: '2.000' })),
      },
    };
    const s = scope();
    let runs = 0;
    const act = async () => {
      runs++;
      return { status: 200, body: large };
    };
    await withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ large: true }), act);
    const stored = await storedForm(s.key);
    expect(stored.response_body).toBeNull();
    expect(stored.response_gzip!.length).toBeLessThan(JSON.stringify(large).length / 5);
    expect(await withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ large: true }), act)).toEqual({
      status: 200,
      body: large,
    });
    expect(runs).toBe(1);

    const small = scope();
    await withIdempotency({ db: database.db, clock: systemClock }, small, fingerprintOf({}), async () => ({
      status: 201,
      body: 'order-1',
    }));
    expect(await storedForm(small.key)).toEqual({ response_body: 'order-1', response_gzip: null });
  });

  it('replays a large business error exactly (a picker refusal carries the session)', async () => {
    const session = { items: Array.from({ length: 60 }, (_, i) => ({ item_id: i, state: 'pending' })) };
    const s = scope();
    const refuse = async (): Promise<never> => {
      throw unprocessable('QUANTITY_ABOVE_ORDERED', 'Too many', { extra: { session } });
    };
    await expect(withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ q: 9 }), refuse)).rejects.toMatchObject({
      status: 422,
    });
    expect((await storedForm(s.key)).response_gzip).not.toBeNull();
    await expect(withIdempotency({ db: database.db, clock: systemClock }, s, fingerprintOf({ q: 9 }), refuse)).rejects.toMatchObject({
      status: 422,
      code: 'QUANTITY_ABOVE_ORDERED',
      extra: { session },
    });
  });
});
