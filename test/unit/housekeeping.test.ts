import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import { runHousekeeping } from '../../server/jobs/housekeeping.js';
import { createTestDatabase } from '../support/db.js';

let database: OpenedDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database?.shutdown());

describe('housekeeping', () => {
  it('deletes what has expired and keeps what is live', async () => {
    const db = database.db;
    const old = new Date(Date.now() - 2 * 86400_000);
    const soon = new Date(Date.now() + 3600_000);
    await db
      .insertInto('idempotency_keys')
      .values([
        { principal: 'p', operation_id: 'o', key: 'expired', fingerprint: 'f', state: 'completed', expires_at: old },
        { principal: 'p', operation_id: 'o', key: 'live', fingerprint: 'f', state: 'completed', expires_at: soon },
      ])
      .execute();
    await db
      .insertInto('rate_events')
      .values([{ subject: 'hk:old', occurred_at: old }, { subject: 'hk:new' }])
      .execute();
    await db
      .insertInto('otp_codes')
      .values([
        { phone: '+79990009991', purpose: 'login', code_hash: 'h', expires_at: old, created_at: old },
        { phone: '+79990009992', purpose: 'login', code_hash: 'h', expires_at: soon },
      ])
      .execute();
    const weekAgo = new Date(Date.now() - 8 * 86400_000);
    const monthAgo = new Date(Date.now() - 31 * 86400_000);
    const [oldEvent, newEvent] = [randomUUID(), randomUUID()];
    await db
      .insertInto('outbox_events')
      .values([
        { event_id: oldEvent, type: 'order.changed', payload: '{}', created_at: weekAgo },
        { event_id: newEvent, type: 'order.changed', payload: '{}' },
      ])
      .execute();
    const push = (state: 'sent' | 'pending', createdAt: Date) => ({
      notification_id: randomUUID(),
      device_id: randomUUID(),
      event_id: randomUUID(),
      customer_id: randomUUID(),
      title: 't',
      body: 'b',
      data: '{}',
      state,
      created_at: createdAt,
    });
    const [sentLongAgo, pendingLongAgo, sentRecently] = [push('sent', monthAgo), push('pending', monthAgo), push('sent', weekAgo)];
    await db.insertInto('push_deliveries').values([sentLongAgo, pendingLongAgo, sentRecently]).execute();
    const deleted = await runHousekeeping(db);
    expect(deleted.idempotency_keys).toBeGreaterThanOrEqual(1);
    expect((await db.selectFrom('idempotency_keys').select('key').where('principal', '=', 'p').execute()).map((r) => r.key)).toEqual([
      'live',
    ]);
    expect((await db.selectFrom('rate_events').select('subject').where('subject', 'like', 'hk:%').execute()).map((r) => r.subject)).toEqual(
      ['hk:new'],
    );
    expect(
      (await db.selectFrom('outbox_events').select('event_id').where('event_id', 'in', [oldEvent, newEvent]).execute()).map(
        (r) => r.event_id,
      ),
    ).toEqual([newEvent]);
    // A delivery still pending is kept whatever its age (the worker decides its fate).
    const kept = (await db.selectFrom('push_deliveries').select('notification_id').execute()).map((r) => r.notification_id).sort();
    expect(kept).toEqual([pendingLongAgo.notification_id, sentRecently.notification_id].sort());
    expect(
      (await db.selectFrom('otp_codes').select('phone').where('phone', 'in', ['+79990009991', '+79990009992']).execute()).map(
        (r) => r.phone,
      ),
    ).toEqual(['+79990009992']);
  });
});
