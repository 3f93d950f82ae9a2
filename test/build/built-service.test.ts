// The deployable build: `npm run build` compiles the service to dist/, a scratch folder gets only
// dist/, package.json and the lockfile, `npm ci --omit=dev` installs the production dependencies
// (no TypeScript, no tsx), and `npm run start:prod` must serve: /readyz and one operation of every
// tag of the spec, each answer checked against the contract.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../platform/config.js';
import { loadSpec } from '../../server/contract.js';
import { ContractClient, type CheckedResponse } from '../support/client.js';
import { createTestDatabase } from '../support/db.js';
import { randomTestPhone } from '../support/accounts.js';
import { TEST_JWT_SECRET } from '../support/service.js';
import { untilListening, type ServiceProcess } from '../support/service-process.js';
import type { OpenedDatabase } from '../../db/database.js';

const scratch = path.join(projectRoot, '.tmp', `built-service-${process.pid}`);
let database: OpenedDatabase;
let service: ChildProcess;
let client: ContractClient;
let baseUrl: string;
let running: ServiceProcess;

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

beforeAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch, { recursive: true });
  // The same commands as the README's build and the Dockerfile's build stage.
  run('npm', ['run', '--silent', 'build', '--', '--out', path.join(scratch, 'dist')], projectRoot);
  cpSync(path.join(projectRoot, 'package.json'), path.join(scratch, 'package.json'));
  cpSync(path.join(projectRoot, 'package-lock.json'), path.join(scratch, 'package-lock.json'));
  run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], scratch);

  database = await createTestDatabase();
  service = spawn('npm', ['run', '--silent', 'start:prod'], {
    cwd: scratch,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      APP_ENV: 'TEST',
      DATABASE_URL: database.url,
      JWT_SECRET: TEST_JWT_SECRET,
      HOST: '127.0.0.1',
      PORT: '0',
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running = await untilListening(service, 'the built service');
  baseUrl = running.url;
  client = new ContractClient({ baseUrl, notImplemented: new Set() });
}, 300_000);

afterAll(async () => {
  if (service && service.exitCode === null) {
    const exited = new Promise((r) => service.once('exit', r));
    service.kill('SIGTERM');
    await exited;
  }
  await database?.shutdown();
  rmSync(scratch, { recursive: true, force: true });
}, 60_000);

describe('the built service with production dependencies only', () => {
  it('has no TypeScript tooling installed and runs on the pinned Node line', () => {
    for (const dev of ['typescript', 'tsx', 'vitest', 'esbuild'])
      expect(existsSync(path.join(scratch, 'node_modules', dev)), dev).toBe(false);
    const pinned = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).engines.node as string;
    const listening = running.listening;
    expect(listening.node).toBe(`v${pinned}`);
    // The commit comes from dist/build-info.json: the scratch folder has no git.
    expect(listening.commit).toMatch(/^[0-9a-f]{7,}$|^unknown$/);
    expect(JSON.parse(readFileSync(path.join(scratch, 'dist', 'build-info.json'), 'utf8')).commit).toBe(listening.commit);
  });

  it('is ready', async () => {
    const r = await fetch(`${baseUrl}/readyz`);
    expect(r.status).toBe(200);
  });

  it('answers one operation of every tag, as the contract says', async () => {
    const phone = randomTestPhone();
    const exercised = new Map<string, number>();
    const tagged = async (tag: string, request: Promise<CheckedResponse>) => {
      const r = await request;
      exercised.set(tag, r.status);
      return r;
    };

    expect((await tagged('Authentication', client.call.POST('/api/auth/otp/send', { body: { phone } }))).status).toBe(200);
    const code = (await tagged('QA', client.call.GET('/api/qa/otp/last', { params: { query: { phone } } }))).body.code as string;
    const confirmed = await client.call.POST('/api/auth/otp/confirm', { body: { phone, code } });
    expect(confirmed.status).toBe(200);
    const auth = { authorization: `Bearer ${confirmed.body.access}` };

    expect((await tagged('Accounts', client.call.GET('/api/accounts/me/', { headers: auth }))).status).toBe(200);
    expect((await tagged('Catalog', client.call.GET('/api/catalog/features/units/'))).status).toBe(200);
    expect((await tagged('Content', client.call.GET('/api/core/support-contact/'))).status).toBe(200);
    expect((await tagged('Logistics', client.call.GET('/api/logistics/map/config'))).status).toBe(200);
    expect((await tagged('Orders', client.call.GET('/api/orders/', { headers: auth }))).status).toBe(200);
    expect((await tagged('Payments', client.call.GET('/api/payments/bank/preferences', { headers: auth }))).status).toBe(200);
    expect((await tagged('Loyalty', client.call.GET('/api/loaylty/programs/', { headers: auth }))).status).toBe(200);
    const picker = await tagged(
      'Picker',
      client.call.POST('/api/picker/auth/login', { body: { login: 'picker1', password: 'picker-demo-1' } }),
    );
    expect(picker.status).toBe(200);

    const tags = new Set<string>((loadSpec('TEST').tags as { name: string }[]).map((t) => t.name));
    expect(new Set(exercised.keys())).toEqual(tags);
  });
});
