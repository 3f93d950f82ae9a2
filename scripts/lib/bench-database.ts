// A throwaway database for a benchmark: on BENCH_DATABASE_URL when set, else on an embedded
// PostgreSQL started in a temporary folder. `close()` drops it and stops what it started.
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../../db/embedded.js';

export async function openBenchDatabase(prefix: string): Promise<{ url: string; close(): Promise<void> }> {
  const name = `${prefix}_${randomUUID().slice(0, 8)}`;
  let cluster: EmbeddedCluster | null = null;
  let dir: string | null = null;
  let adminUrl = process.env.BENCH_DATABASE_URL;
  if (!adminUrl) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'grocery-bench-pg-'));
    chmodSync(dir, 0o755); // the unprivileged PostgreSQL user must enter it
    cluster = await startEmbeddedPostgres(path.join(dir, 'data'));
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
