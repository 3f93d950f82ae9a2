// Marking outbox events published stays a heap-only update (migration 2026_11_28_1301): no index
// of the outbox reads published_at, pages keep room for the marked version, and the two readers of
// unpublished events - the feed's catch-up and the backlog metric - still read a bounded part of a
// week of events rather than all of it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OUTBOX_FIGURES_SQL } from '../../platform/metrics.js';
import { outboxCatchUpQuery } from '../../server/realtime/outbox-feed.js';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { ORDER_WORKER_ENABLED: 'false' } });
});
afterAll(() => svc?.close());

describe('outbox marking', () => {
  it('leaves published_at out of every index of the outbox, and pages with room for the marked version', async () => {
    const { rows } = await sql<{ index: string; definition: string }>`
      SELECT c.relname AS index, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'outbox_events'::regclass`.execute(svc.deps.db);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.definition, r.index).not.toContain('published_at');
    const { rows: options } = await sql<{ options: string[] | null }>`
      SELECT reloptions AS options FROM pg_class WHERE oid = 'outbox_events'::regclass`.execute(svc.deps.db);
    expect(options[0]!.options).toContain('fillfactor=75');
  });

  it('catches up from the last hour of a week of events through the index of creation times, and counts the backlog among the newest', async () => {
    const { db } = svc.deps;
    // A week of published events, written in time order as the service writes them.
    await sql`INSERT INTO outbox_events (type, payload, created_at, published_at)
      SELECT 'order.changed', '{}'::jsonb, now() - interval '7 days' + g * interval '12 seconds', now()
      FROM generate_series(1, 50000) g
      WHERE now() - interval '7 days' + g * interval '12 seconds' < now() - interval '2 hours'`.execute(db);
    await sql`ANALYZE outbox_events`.execute(db);
    for (const brokenAt of [null, new Date()]) {
      const plan = (await outboxCatchUpQuery(db, brokenAt).explain()).map((r) => String(r['QUERY PLAN'])).join('\n');
      expect(plan, plan).toContain('outbox_events_created');
      expect(plan, plan).not.toContain('Seq Scan');
    }
    // The backlog metric reads the newest events only, along the primary key.
    const { rows } = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN ${OUTBOX_FIGURES_SQL}`).execute(db);
    const figuresPlan = rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(figuresPlan, figuresPlan).toContain('Index Scan Backward using outbox_events_pkey');
    expect(figuresPlan, figuresPlan).not.toContain('Seq Scan');
  });
});
