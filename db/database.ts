// Opening the service's database: DATABASE_URL when given, else the embedded PostgreSQL whose
// data lives in `<dataDir>/pg` (started by the service itself, zero configuration).
import path from 'node:path';
import pg from 'pg';
import { connect, type ConnectionLimits, type DatabaseHandle } from './connection.js';
import { startEmbeddedPostgres, type EmbeddedCluster, type EmbeddedOptions } from './embedded.js';

export const EMBEDDED_DATABASE = 'grocery';

export interface OpenedDatabase extends DatabaseHandle {
  /** Where the request pool connects: PostgreSQL, or a transaction-mode pooler in front of it. */
  url: string;
  /**
   * A direct, session-capable connection to the same database, for what a transaction-mode pooler
   * cannot carry: LISTEN (the outbox feed) and migrations. Equal to `url` unless
   * DATABASE_DIRECT_URL says otherwise.
   */
  directUrl: string;
  embedded: EmbeddedCluster | null;
  /** Closes the pool and stops the embedded server, if any. */
  shutdown(): Promise<void>;
}

export async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client(adminUrl);
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

export async function openDatabase(
  opts: {
    databaseUrl: string | null;
    directUrl?: string | null;
    namedStatements?: boolean;
    dataDir: string;
    poolMax: number;
    limits?: ConnectionLimits;
    report?: EmbeddedOptions['report'];
  },
  log: (line: string) => void = () => {},
): Promise<OpenedDatabase> {
  let embedded: EmbeddedCluster | null = null;
  let url = opts.databaseUrl;
  if (!url) {
    // Durable (the default): what the service acknowledged survives a crash of PostgreSQL or of the machine.
    embedded = await startEmbeddedPostgres(path.join(opts.dataDir, 'pg'), log, [], { report: opts.report });
    await ensureDatabase(embedded.adminUrl, EMBEDDED_DATABASE);
    url = embedded.urlFor(EMBEDDED_DATABASE);
  }
  const handle = connect(url, { max: opts.poolMax, limits: opts.limits, namedStatements: opts.namedStatements });
  return {
    ...handle,
    url,
    directUrl: (opts.databaseUrl && opts.directUrl) || url,
    embedded,
    async shutdown() {
      await handle.close();
      await embedded?.stop();
    },
  };
}
