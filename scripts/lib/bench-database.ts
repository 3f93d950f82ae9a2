// A throwaway database for a benchmark: on BENCH_DATABASE_URL when set, else on an embedded
// PostgreSQL started in a temporary folder. `close()` drops it and stops what it started.
//
// BENCH_PG_STATEMENTS=1 (embedded only) loads pg_stat_statements, and a scenario prints the
// statements that cost PostgreSQL most during its measured phase (topStatements).
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../../db/embedded.js';
import type { DB } from '../../db/schema.js';

const statementsWanted = () => process.env.BENCH_PG_STATEMENTS === '1' && !process.env.BENCH_DATABASE_URL;

export async function openBenchDatabase(
  prefix: string,
  opts: { durable?: boolean } = {},
): Promise<{ url: string; close(): Promise<void> }> {
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  let cluster: EmbeddedCluster | null = null;
  let dir: string | null = null;
  let adminUrl = process.env.BENCH_DATABASE_URL;
  if (!adminUrl) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'grocery-bench-pg-'));
    chmodSync(dir, 0o755); // the unprivileged PostgreSQL user must enter it
    // A throwaway cluster: durability off, as every benchmark runs (unless `durable`:
    // fsync and synchronous commit on, as `npm start` and production run).
    cluster = await startEmbeddedPostgres(
      path.join(dir, 'data'),
      () => {},
      statementsWanted() ? ['shared_preload_libraries=pg_stat_statements'] : [],
      { durable: opts.durable ?? false },
    );
    adminUrl = cluster.adminUrl;
  }
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async close() {
      const a = new pg.Client(adminUrl);
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
      await cluster?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * With BENCH_PG_STATEMENTS=1: `start()` forgets the statements run so far (call it when the
 * measured phase begins), `print()` lists the costliest since, per call. Otherwise both do nothing.
 */
export function topStatements(db: Kysely<DB>) {
  const on = statementsWanted();
  return {
    async start(): Promise<void> {
      if (!on) return;
      await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.execute(db);
      await sql`SELECT pg_stat_statements_reset()`.execute(db);
    },
    async print(label: string): Promise<void> {
      if (!on) return;
      const { rows } = await sql<{ calls: number; total: number; mean: number; max: number; query: string }>`
        SELECT calls::int, total_exec_time AS total, mean_exec_time AS mean, max_exec_time AS max, regexp_replace(query, '\\s+', ' ', 'g') AS query
        FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT 12`.execute(db);
      console.log(`\n${label}: costliest statements in PostgreSQL (calls, total ms, ms per call, longest ms)`);
      for (const r of rows)
        console.log(
          `  ${String(r.calls).padStart(6)} ${r.total.toFixed(0).padStart(7)} ${r.mean.toFixed(3).padStart(7)} ${r.max.toFixed(0).padStart(6)}  ${r.query.slice(0, 110)}`,
        );
    },
  };
}
