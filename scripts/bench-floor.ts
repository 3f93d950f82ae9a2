// npm run bench:floor: how fast a retry-safe picker command can be in this stack on this machine,
// with none of this project's code in the way (not a test, not part of npm run bench), on toy
// tables. The floors of the service's own write paths - its statements on its schema, bare - are
// scripts/lib/write-path-floor.ts, which npm run bench measures beside the service.
//
// The picking target (an item command at 0.30 of the trivial operation's throughput) is far from
// what the service does. To tell this project's costs from the stack's, this measures stripped
// commands on a bare node:http server with pg - no Express, no openapi-backend, no validation, no
// Kysely - pinned to core 0 like the service, on an embedded PostgreSQL with the same settings,
// 32 clients, each on its own session of 40 items. Every variant verifies a JWT and does the
// writes a command must: check the auth session, claim the Idempotency-Key, raise the session's
// version, change the item, write an outbox row (with the NOTIFY trigger):
//   statements    - one prepared statement per step in a transaction, reading the session's 40
//                   items, storing a small answer (9 round trips, as the service's commands);
//   session       - the same, answering (and storing, gzipped) a session-sized answer of 40 items
//                   as the picker commands do;
//   one-statement - every write in one statement (data-modifying CTEs), not prepared;
//   one-prepared  - the same statement prepared once per connection (the floor);
//   optimistic    - a session-sized answer with two prepared statements and no transaction: one
//                   read of the session and its items, then one write (claim the key with the
//                   answer, raise the version only if it is still the one read, change the item,
//                   the outbox row) - the fewest a command answering the contract's session can make.
// Each is reported as a ratio to the service's own trivial operation measured in the same run
// (GET /api/logistics/map/config on the full service, scripts/lib/bench-service.ts).
import { fork } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import autocannon from 'autocannon';
import jwt from 'jsonwebtoken';
import pg from 'pg';
import { connect } from '../db/connection.js';
import { migrateToLatest } from '../db/migrate.js';
import { openBenchDatabase } from './lib/bench-database.js';
import { startBenchService } from './lib/bench-service.js';

const VARIANTS = ['statements', 'session', 'one-statement', 'one-prepared', 'optimistic'] as const;
type Variant = (typeof VARIANTS)[number];
const CLIENTS = 32;
const ITEMS = 40;
const SECRET = 'floor-secret-floor-secret-floor-secret-0';
const gzipAsync = promisify(gzip);

const SCHEMA = `
  CREATE TABLE floor_auth (id int PRIMARY KEY, revoked_at timestamptz);
  CREATE TABLE floor_sessions (id int PRIMARY KEY, version int NOT NULL DEFAULT 1);
  CREATE TABLE floor_items (id int PRIMARY KEY, session_id int NOT NULL, quantity int, state text, name text, pad text);
  CREATE INDEX ON floor_items (session_id, id);
  CREATE TABLE floor_outbox (id bigserial PRIMARY KEY, payload jsonb, created_at timestamptz DEFAULT now());
  CREATE FUNCTION floor_notify() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('floor', NEW.id::text); RETURN NEW; END $$;
  CREATE TRIGGER floor_outbox_notify AFTER INSERT ON floor_outbox FOR EACH ROW EXECUTE FUNCTION floor_notify();
  CREATE TABLE floor_keys (key text PRIMARY KEY, fingerprint text, answer bytea, created_at timestamptz DEFAULT now());
  INSERT INTO floor_auth SELECT g FROM generate_series(1, ${CLIENTS}) g;
  INSERT INTO floor_sessions SELECT g FROM generate_series(1, ${CLIENTS}) g;
  INSERT INTO floor_items SELECT s * 100 + i, s, 1, 'pending', 'Молоко 3,2% 930 мл', repeat('x', 300)
    FROM generate_series(1, ${CLIENTS}) s, generate_series(0, ${ITEMS - 1}) i;
  ANALYZE;`;

const ONE_STATEMENT = `
  WITH auth AS (SELECT 1 FROM floor_auth WHERE id = $1 AND revoked_at IS NULL),
       k AS (INSERT INTO floor_keys (key, fingerprint) SELECT $2, $3 FROM auth ON CONFLICT DO NOTHING RETURNING key),
       s AS (UPDATE floor_sessions SET version = version + 1 WHERE id = $1 AND EXISTS (SELECT 1 FROM k) RETURNING id, version),
       i AS (UPDATE floor_items SET quantity = $4, state = 'picked' WHERE id = $5 AND session_id = $1 AND EXISTS (SELECT 1 FROM s)
             RETURNING id, quantity, state),
       e AS (INSERT INTO floor_outbox (payload) SELECT jsonb_build_object('session', s.id, 'version', s.version) FROM s)
  SELECT s.version, i.id, i.quantity, i.state FROM s, i`;

const OPTIMISTIC_READ = `
  SELECT s.version, i.id, i.quantity, i.state, i.name, i.pad FROM floor_auth a, floor_sessions s, floor_items i
  WHERE a.id = $1 AND a.revoked_at IS NULL AND s.id = $1 AND i.session_id = $1 ORDER BY i.id`;
const OPTIMISTIC_CLAIM_READ = `
  WITH k AS (INSERT INTO floor_keys (key, fingerprint) VALUES ($2, $3) ON CONFLICT DO NOTHING RETURNING key)
  SELECT r.*, EXISTS (SELECT 1 FROM k) AS claimed FROM (${OPTIMISTIC_READ}) r`;
const OPTIMISTIC_WRITE = `
  WITH s AS (UPDATE floor_sessions SET version = version + 1 WHERE id = $1 AND version = $5 RETURNING id, version),
       i AS (UPDATE floor_items SET quantity = $3, state = 'picked' WHERE id = $4 AND session_id = $1 AND EXISTS (SELECT 1 FROM s) RETURNING id),
       k AS (UPDATE floor_keys SET answer = $6 WHERE key = $2 AND EXISTS (SELECT 1 FROM s) RETURNING key),
       e AS (INSERT INTO floor_outbox (payload) SELECT jsonb_build_object('session', s.id, 'version', s.version) FROM s)
  SELECT s.version FROM s, i, k`;

/** Child side: the bare server of one variant. */
function serveVariant(variant: Variant, url: string): void {
  const pool = new pg.Pool({ connectionString: url, max: 20 });
  // A session-sized answer: 40 items of about the size (800 bytes of JSON, 30 fields) of the
  // service's PickingItemSchema objects, varied enough to gzip about as well. Built from numbers,
  // not random UUIDs: generating 400 of them per answer would cost more than the rest.
  const sessionItems = (version: number) =>
    Array.from({ length: ITEMS }, (_, n) => {
      const item: Record<string, string> = {};
      for (let f = 0; f < 30; f++)
        item[`field_${f}`] =
          f % 3 === 0 ? ((n * 7919 + f * 104729 + version) >>> 0).toString(36).padStart(8, 'k') : `Молоко ${n}.${f}.${version}`;
      return item;
    });
  const command = async (
    sessionId: number,
    key: string,
    fingerprint: string,
    quantity: number,
    itemId: number,
  ): Promise<{ body: Buffer; gzipped: boolean }> => {
    if (variant === 'one-statement' || variant === 'one-prepared') {
      const r = await pool.query({
        name: variant === 'one-prepared' ? 'floor_command' : undefined,
        text: ONE_STATEMENT,
        values: [sessionId, key, fingerprint, quantity, itemId],
      });
      if (!r.rows.length) throw new Error('not applied');
      return { body: Buffer.from(JSON.stringify({ applied: true, ...r.rows[0] })), gzipped: false };
    }
    if (variant === 'optimistic') {
      // The key is claimed with the read; a command that lost a race for the version reads again
      // (the service would, when the caller sent no expected version).
      let read = await pool.query<{ claimed?: boolean; version: number }>({
        name: 'floor_claim_read',
        text: OPTIMISTIC_CLAIM_READ,
        values: [sessionId, key, fingerprint],
      });
      if (!read.rows[0]?.claimed) throw new Error('key taken');
      for (let attempt = 0; attempt < 3; attempt++) {
        if (attempt)
          read = await pool.query<{ claimed?: boolean; version: number }>({
            name: 'floor_read',
            text: OPTIMISTIC_READ,
            values: [sessionId],
          });
        const version = read.rows[0]!.version;
        const body = await gzipAsync(JSON.stringify({ applied: true, version: version + 1, items: sessionItems(version + 1) }), {
          level: 1,
        });
        const written = await pool.query({
          name: 'floor_write',
          text: OPTIMISTIC_WRITE,
          values: [sessionId, key, quantity, itemId, version, body],
        });
        if (written.rows.length) return { body, gzipped: true };
      }
      throw new Error('not applied');
    }
    await pool.query({ name: 'floor_auth', text: 'SELECT 1 FROM floor_auth WHERE id = $1 AND revoked_at IS NULL', values: [sessionId] });
    const claimed = await pool.query({
      name: 'floor_claim',
      text: 'INSERT INTO floor_keys (key, fingerprint) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING key',
      values: [key, fingerprint],
    });
    if (!claimed.rows.length) throw new Error('key taken');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query({
        name: 'floor_lock',
        text: 'SELECT id, version FROM floor_sessions WHERE id = $1 FOR UPDATE',
        values: [sessionId],
      });
      const items = await client.query({
        name: 'floor_items',
        text: 'SELECT id, session_id, quantity, state, name, pad FROM floor_items WHERE session_id = $1 ORDER BY id',
        values: [sessionId],
      });
      const item = await client.query<Record<string, unknown>>({
        name: 'floor_item',
        text: "UPDATE floor_items SET quantity = $1, state = 'picked' WHERE id = $2 RETURNING id, quantity, state",
        values: [quantity, itemId],
      });
      const v = await client.query<{ version: number }>({
        name: 'floor_version',
        text: 'UPDATE floor_sessions SET version = version + 1 WHERE id = $1 RETURNING version',
        values: [sessionId],
      });
      await client.query({
        name: 'floor_event',
        text: 'INSERT INTO floor_outbox (payload) VALUES ($1)',
        values: [JSON.stringify({ session: sessionId, version: v.rows[0]!.version })],
      });
      const text = JSON.stringify(
        variant === 'session'
          ? { applied: true, items: sessionItems(v.rows[0]!.version) }
          : { applied: true, item: item.rows[0], items: items.rows.length },
      );
      const body = variant === 'session' ? await gzipAsync(text, { level: 1 }) : Buffer.from(text);
      await client.query({ name: 'floor_answer', text: 'UPDATE floor_keys SET answer = $2 WHERE key = $1', values: [key, body] });
      await client.query('COMMIT');
      return { body, gzipped: variant === 'session' };
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      void (async () => {
        try {
          const claims = jwt.verify(String(req.headers.authorization).slice('Bearer '.length), SECRET) as { sid: number };
          const input = JSON.parse(raw) as { quantity: number };
          const itemId = Number(/\/items\/(\d+)\//.exec(req.url ?? '')?.[1]);
          const key = String(req.headers['idempotency-key']);
          const fingerprint = createHash('sha256').update(raw).digest('base64url');
          const answer = await command(claims.sid, key, fingerprint, input.quantity, itemId);
          res.writeHead(200, {
            'content-type': 'application/json',
            ...(answer.gzipped ? { 'content-encoding': 'gzip' } : {}),
          });
          res.end(answer.body);
        } catch (err) {
          res.writeHead(500);
          res.end(String(err));
        }
      })();
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
}

async function measureVariant(variant: Variant, url: string, seconds: number): Promise<number> {
  const child = fork(import.meta.filename, ['--floor-variant', variant, url], {
    execPath: 'taskset',
    execArgv: ['-c', '0', process.execPath, '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      child.on('message', (m: { port: number }) => resolve(m.port));
      child.on('exit', (code) => reject(new Error(`${variant} server exited with ${code}`)));
    });
    const tokens = Array.from({ length: CLIENTS }, (_, n) => `Bearer ${jwt.sign({ sid: n + 1 }, SECRET)}`);
    let nextLane = 0;
    const run = (duration: number) =>
      autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: CLIENTS,
        duration,
        requests: [
          {
            method: 'POST',
            setupRequest: (req, context) => {
              const lane = ((context as { lane?: { session: number; n: number } }).lane ??= { session: (nextLane++ % CLIENTS) + 1, n: 0 });
              lane.n++;
              return {
                ...req,
                path: `/api/picker/orders/x/items/${lane.session * 100 + (lane.n % ITEMS)}/piece-quantity`,
                headers: {
                  'content-type': 'application/json',
                  'accept-encoding': 'gzip',
                  authorization: tokens[lane.session - 1],
                  'idempotency-key': randomUUID(),
                },
                body: JSON.stringify({ quantity: (lane.n % 3) + 1 }),
              };
            },
          },
        ],
      });
    await run(1);
    const result = await run(seconds);
    if (result.non2xx || result.errors) throw new Error(`${variant}: ${result.non2xx} non-2xx, ${result.errors} errors`);
    return result.requests.average;
  } finally {
    child.kill('SIGKILL');
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const database = await openBenchDatabase('grocery_bench_floor');
  const handle = connect(database.url, { max: 2 });
  try {
    await migrateToLatest(handle.db);
    const admin = new pg.Client(database.url);
    await admin.connect();
    await admin.query(SCHEMA);
    await admin.end();

    const service = await startBenchService(database.url);
    let trivial: number;
    try {
      const url = `http://127.0.0.1:${service.port}/api/logistics/map/config`;
      await autocannon({ url, connections: CLIENTS, duration: 1 });
      trivial = (await autocannon({ url, connections: CLIENTS, duration: seconds })).requests.average;
    } finally {
      await service.stop();
    }
    console.log(`trivial operation on the full service   ${Math.round(trivial)} req/s`);
    // BENCH_FLOOR_VARIANTS=a,b runs only those.
    const only = process.env.BENCH_FLOOR_VARIANTS?.split(',');
    for (const variant of VARIANTS.filter((v) => !only || only.includes(v))) {
      const rps = await measureVariant(variant, database.url, seconds);
      console.log(
        `${`bare command, ${variant}`.padEnd(40)} ${String(Math.round(rps)).padStart(5)} commands/s   ratio ${(rps / trivial).toFixed(3)}`,
      );
    }
  } finally {
    await handle.close();
    await database.close();
  }
}

const at = process.argv.indexOf('--floor-variant');
if (at >= 0) serveVariant(process.argv[at + 1] as Variant, process.argv[at + 2]!);
else if (process.argv[1] && import.meta.filename === (await import('node:path')).resolve(process.argv[1])) await main();
