// npm run check:consumers: the contract from the mobile teams' side (CI runs it).
//
//   1. Clients. For each bundled spec (generated/openapi.{test,prod}.json) and each generator the
//      mobile teams use - @hey-api/openapi-ts (fetch client + SDK) and orval (fetch client), both
//      pinned dev dependencies - generate a client into .tmp/consumers/<generator>-<env>/ and
//      compile it with `tsc --strict --noEmit` (lib es2022 + dom, moduleResolution bundler, no
//      skipLibCheck) together with test/consumers/clients/<generator>.ts: typed code that uses the
//      journeys' operations and fields the way an app does (and <generator>.test-only.ts, the QA
//      tools, for TEST). A contract change that breaks the generated code or that code fails.
//   2. Workflows. Start the service (TEST, scratch embedded PostgreSQL in .tmp/consumers/data with
//      the demo data, or DATABASE_URL when set), run the Arazzo workflows of
//      test/consumers/journeys.arazzo.yaml with `redocly respect` against it (sign-in by code,
//      checkout with a repeated Idempotency-Key, online payment, a picking walk, and the customer
//      approving a named replacement live; Respect also checks every answer against the spec),
//      stop it with SIGTERM.
//
//   npm run check:consumers                      both
//   npm run check:consumers -- --clients         only the clients
//   npm run check:consumers -- --workflows       only the workflows
//   npm run check:consumers -- --spec-dir DIR    clients from DIR/openapi.{test,prod}.json instead of generated/
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import path from 'node:path';
import { randomInt } from 'node:crypto';

const root = path.resolve(import.meta.dirname, '..');
const out = path.join(root, '.tmp', 'consumers');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
const rel = (p: string) => path.relative(root, p) || '.';
const quietEnv = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1', FORCE_COLOR: '0' };

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const onlyClients = flag('clients');
const onlyWorkflows = flag('workflows');
const specDir = path.resolve(root, option('spec-dir') ?? 'generated');

type Env = 'test' | 'prod';
type Generator = 'hey-api' | 'orval';
const ENVS: Env[] = ['test', 'prod'];
const GENERATORS: Record<Generator, { label: string; generate: (spec: string, dir: string) => [string, string[]]; entry: string }> = {
  'hey-api': {
    label: '@hey-api/openapi-ts',
    // Its defaults: the types, the SDK and its fetch client (@hey-api/client-fetch, bundled into the output).
    generate: (spec, dir) => [bin('openapi-ts'), ['--input', spec, '--output', dir]],
    entry: 'index.ts',
  },
  orval: {
    label: 'orval',
    generate: (spec, dir) => [
      bin('orval'),
      ['--input', spec, '--output', path.join(dir, 'api.ts'), '--client', 'fetch', '--mode', 'single'],
    ],
    entry: 'api.ts',
  },
};

function run(cmd: string, cmdArgs: string[], timeoutMs = 300_000): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    // The bins are node scripts: run them on this Node (the project's pinned one under npm scripts).
    execFile(
      process.execPath,
      [cmd, ...cmdArgs],
      { cwd: root, env: quietEnv, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        resolve({ code, output: `${stdout}${stderr}`.trim() });
      },
    );
  });
}

const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)}s`;

/** Generate one client and compile it with the consumer code; null when it passes, else the failure. */
async function checkClient(gen: Generator, env: Env): Promise<string | null> {
  const started = Date.now();
  const g = GENERATORS[gen];
  const spec = path.join(specDir, `openapi.${env}.json`);
  const what = `${g.label} client of the ${env.toUpperCase()} spec (${rel(spec)})`;
  if (!existsSync(spec)) return `${what}: ${rel(spec)} does not exist`;
  const dir = path.join(out, `${gen}-${env}`);
  const clientDir = path.join(dir, 'client');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(clientDir, { recursive: true });

  const [cmd, cmdArgs] = g.generate(spec, clientDir);
  const generated = await run(cmd, cmdArgs);
  if (generated.code !== 0 || !existsSync(path.join(clientDir, g.entry))) {
    return `${what}: generation failed (exit ${generated.code})\n${generated.output}`;
  }

  const usage = path.join(root, 'test', 'consumers', 'clients');
  const files = [path.join(usage, `${gen}.ts`), ...(env === 'test' ? [path.join(usage, `${gen}.test-only.ts`)] : [])];
  const tsconfig = {
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['es2022', 'dom', 'dom.iterable'],
      types: [],
      // The generated code is checked as strictly as the code on it.
      skipLibCheck: false,
      isolatedModules: true,
      noUnusedLocals: true,
      noFallthroughCasesInSwitch: true,
      paths: { 'consumer-client': [`./client/${g.entry}`], 'consumer-client/*': ['./client/*'] },
    },
    files: files.map((f) => path.relative(dir, f)),
    include: ['client/**/*.ts'],
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2) + '\n');
  const compiled = await run(path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), [
    '-p',
    path.join(dir, 'tsconfig.json'),
    '--strict',
    '--noEmit',
  ]);
  if (compiled.code !== 0) {
    // tsc names files relative to the working directory: the consumer code under test/consumers/clients, the client under .tmp.
    return `${what}: does not compile with tsc --strict (generated into ${rel(clientDir)}, consumer code ${files.map(rel).join(', ')})\n${compiled.output}`;
  }
  console.log(`  ok  ${what}  (${seconds(started)})`);
  return null;
}

async function checkClients(): Promise<string[]> {
  console.log(
    `clients: ${Object.values(GENERATORS)
      .map((g) => g.label)
      .join(' and ')} from ${rel(specDir)}/openapi.{test,prod}.json, tsc --strict`,
  );
  const jobs = (Object.keys(GENERATORS) as Generator[]).flatMap((gen) => ENVS.map((env) => () => checkClient(gen, env)));
  // Two at a time: generators and tsc are CPU-bound, and CI machines are small.
  const failures: string[] = [];
  const queue = [...jobs];
  await Promise.all(
    [0, 1].map(async () => {
      for (let job = queue.shift(); job; job = queue.shift()) {
        const failure = await job();
        if (failure) failures.push(failure);
      }
    }),
  );
  return failures;
}

interface Service {
  url: string;
  stop: () => Promise<void>;
  log: string;
}

/** The service as `npm start` runs it, on a free port, with its own scratch data (or DATABASE_URL). */
async function startService(): Promise<Service> {
  const dataDir = path.join(out, 'data');
  const logFile = path.join(out, 'service.log');
  if (!process.env.DATABASE_URL) rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    APP_ENV: 'TEST',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    SEED_DEMO_DATA: 'true',
    // Every delivery slot of the two weeks counts as due for picking, so the walk's order is in
    // the queue whatever the hour of the run.
    PICKING_QUEUE_HORIZON_HOURS: '720',
    LOG_LEVEL: 'info',
    WARM_VALIDATORS: 'false',
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'scripts/serve.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  child.stderr!.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`the service did not say it was listening within 180 s (log: ${rel(logFile)})`));
    }, 180_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (!line.includes('"msg":"listening"')) continue;
        try {
          const parsed = JSON.parse(line) as { url?: string };
          if (parsed.url) {
            clearTimeout(timer);
            resolve(parsed.url.replace('://localhost:', '://127.0.0.1:'));
          }
        } catch {
          /* not a log line */
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (code ${code}) before listening (log: ${rel(logFile)})`));
    });
  });

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timeout = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timeout);
    log.end();
  };
  return { url, stop, log: logFile };
}

const testPhone = (taken: Set<string>): string => {
  for (;;) {
    const phone = `+7999000${String(randomInt(0, 10_000)).padStart(4, '0')}`;
    if (!taken.has(phone)) {
      taken.add(phone);
      return phone;
    }
  }
};

/** A delivery slot of the demo store with room for the run's orders (the workflows place four). */
async function pickSlot(base: string): Promise<string> {
  const located = await fetch(`${base}/api/logistics/stores/delivery/check-location`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ lon: 37.6106, lat: 55.7579 }),
  });
  if (!located.ok) throw new Error(`check-location answered ${located.status}`);
  const store = ((await located.json()) as { store: { id: string } }).store.id;
  const slots = await fetch(`${base}/api/logistics/stores/delivery/slots`, { headers: { 'X-Store-Id': store } });
  if (!slots.ok) throw new Error(`delivery slots answered ${slots.status}`);
  const list = (await slots.json()) as { id: string; is_available: boolean; remaining_capacity: number }[];
  const slot = list.find((s) => s.is_available && s.remaining_capacity >= 4);
  if (!slot) throw new Error('no delivery slot of the demo store has room for four orders');
  return slot.id;
}

async function checkWorkflows(starting: Promise<Service>, startedAt: number): Promise<string[]> {
  const workflows = path.join(root, 'test', 'consumers', 'journeys.arazzo.yaml');
  console.log(`workflows: redocly respect ${rel(workflows)} against the started service`);
  let service: Service | null = null;
  try {
    service = await starting;
    console.log(
      `  service listening on ${service.url} (${process.env.DATABASE_URL ? 'DATABASE_URL' : `scratch data in ${rel(path.join(out, 'data'))}`}, up after ${seconds(startedAt)})`,
    );
    const started = Date.now();
    const phones = new Set<string>();
    const inputs: Record<string, string> = {
      phone: testPhone(phones),
      checkout_phone: testPhone(phones),
      payment_phone: testPhone(phones),
      picking_phone: testPhone(phones),
      deciding_phone: testPhone(phones),
      slot_id: await pickSlot(service.url),
    };
    const respect = await run(bin('redocly'), [
      'respect',
      workflows,
      '--server',
      `grocery=${service.url}`,
      ...Object.entries(inputs).flatMap(([k, v]) => ['--input', `${k}=${v}`]),
    ]);
    const summary = respect.output.split('\n').filter((l) => /^\s*(Workflows|Steps|Checks):/.test(l));
    if (respect.code !== 0) {
      return [
        `Redocly Respect workflows (${rel(workflows)}) failed against the TEST service (service log: ${rel(service.log)}):\n${respect.output}`,
      ];
    }
    console.log(`  ok  ${summary.map((l) => l.trim()).join(', ')}  (${seconds(started)})`);
    return [];
  } catch (err) {
    return [`Redocly Respect workflows: ${(err as Error).message}`];
  } finally {
    await service?.stop();
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  const failures: string[] = [];
  // The service starts (mostly initdb and the demo data) while the clients are generated.
  const starting = onlyClients ? null : startService();
  starting?.catch(() => {}); // reported by checkWorkflows
  if (!onlyWorkflows) failures.push(...(await checkClients()));
  if (starting) failures.push(...(await checkWorkflows(starting, started)));
  for (const failure of failures) console.error(`\nconsumer check failed: ${failure}`);
  console.log(
    failures.length ? `\nconsumer checks: ${failures.length} failed (${seconds(started)})` : `consumer checks passed (${seconds(started)})`,
  );
  return failures.length ? 1 : 0;
}

process.exit(await main());
