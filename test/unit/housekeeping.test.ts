import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../db/database.js';
import { runHousekeeping } from '../../server/housekeeping.js';
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
    await db.insertInto('idempotency_keys').values([
      { principal: 'p', operation_id: 'o', key: 'expired', fingerprint: 'f', state: 'completed', expires_at: old },
      { principal: 'p', operation_id: 'o', key: 'live', fingerprint: 'f', state: 'completed', expires_at: soon },
    ]).execute();
    await db.insertInto('rate_events').values([{ subject: 'hk:old', occurred_at: old }, { subject: 'hk:new' }]).execute();
    await db.insertInto('otp_codes').values([
      { phone: '+79990009991', purpose: 'login', code_hash: 'h', expires_at: old, created_at: old },
      { phone: '+79990009992', purpose: 'login', code_hash: 'h', expires_at: soon },
    ]).execute();
    const deleted = await runHousekeeping(db);
    expect(deleted.idempotency_keys).toBeGreaterThanOrEqual(1);
    expect((await db.selectFrom('idempotency_keys').select('key').where('principal', '=', 'p').execute()).map((r) => r.key)).toEqual(['live']);
    expect((await db.selectFrom('rate_events').select('subject').where('subject', 'like', 'hk:%').execute()).map((r) => r.subject)).toEqual(['hk:new']);
    expect((await db.selectFrom('otp_codes').select('phone').where('phone', 'in', ['+79990009991', '+79990009992']).execute()).map((r) => r.phone)).toEqual(['+79990009992']);
  });
});
