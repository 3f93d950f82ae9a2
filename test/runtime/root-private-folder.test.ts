// Issue 19, finding 4: `npm start` as root from a clone in a folder other users cannot enter
// (mktemp -d, mode 0700). PostgreSQL runs as the `postgres` user, which could reach neither the
// binaries under node_modules nor the data folder: initdb failed with EACCES, and a
// world-readable /tmp/pg-password-* stayed behind. The clone is made of hard links (no copying
// of node_modules), so it costs a second.
import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../platform/config.js';

const asRoot = process.getuid?.() === 0;
const root = mkdtempSync(path.join(os.tmpdir(), 'grocery-private-')); // mode 0700
const clone = path.join(root, 'app');
let relocated: string | null = null;
afterAll(() => {
  if (relocated) rmSync(relocated, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

/** Files in the temporary folder that others may read and that name a password. */
const exposedPasswordFiles = () =>
  readdirSync(os.tmpdir())
    .filter((f) => f.startsWith('pg-password-') || f.startsWith('grocery-initdb-'))
    .filter((f) => statSync(path.join(os.tmpdir(), f)).mode & 0o044);

describe.runIf(asRoot)('npm start as root in a 0700 folder', () => {
  it('starts, serves, and stops, leaving no secret readable by others', { timeout: 240_000 }, async () => {
    expect(statSync(root).mode & 0o777).toBe(0o700);
    execFileSync('mkdir', [clone]);
    for (const entry of readdirSync(projectRoot)) {
      if (['.git', '.data', '.tmp'].includes(entry)) continue;
      execFileSync('cp', ['-al', path.join(projectRoot, entry), path.join(clone, entry)], { stdio: 'ignore' });
    }
    const before = new Set(exposedPasswordFiles());
    const npm = spawn('npm', ['start'], {
      cwd: clone,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        APP_ENV: 'TEST',
        DATABASE_URL: '',
        DATA_DIR: '',
        LOG_LEVEL: 'info',
        SEED_DEMO_DATA: 'false',
        SHUTDOWN_DELAY_MS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += String(d);
        const m = /is listening on (http:\/\/\S+)/.exec(output);
        if (m) resolve(m[1]!);
      };
      npm.stdout.on('data', seen);
      npm.stderr.on('data', seen);
      npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${output.slice(-3000)}`)));
    });
    const data = path.join(clone, '.data', 'pg');
    if (lstatSync(data).isSymbolicLink()) relocated = readlinkSync(data);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    expect((await fetch(`${url}/api/logistics/map/config`)).status).toBe(200);
    const ended = new Promise((r) => npm.stdout.once('close', r));
    npm.kill('SIGTERM');
    await ended;
    expect(output).toMatch(/"msg":"stopped"/);
    expect(output).not.toMatch(/EACCES/);
    expect(exposedPasswordFiles().filter((f) => !before.has(f))).toEqual([]);
    // The JWT secret the service keeps in its data folder is its owner's alone.
    expect(statSync(path.join(clone, '.data', 'jwt-secret')).mode & 0o077).toBe(0);
  });
});
