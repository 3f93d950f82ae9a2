// A database of its own for a test file: a copy of the migrated, seeded template.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { connect, type ConnectionLimits } from '../../db/connection.js';
import type { OpenedDatabase } from '../../db/database.js';

export async function createTestDatabase(limits?: ConnectionLimits, poolMax = 10): Promise<OpenedDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const name = `grocery_t_${inject('pgRunId')}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('pgTemplate')}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const handle = connect(url, { max: poolMax, limits });
  return {
    ...handle,
    url,
    directUrl: url,
    embedded: null,
    async shutdown() {
      await handle.close();
      const a = new pg.Client(adminUrl);
      await a.connect();
      try {
        await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await a.end();
      }
    },
  };
}
