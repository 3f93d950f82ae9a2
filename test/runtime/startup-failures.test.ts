// Issue 19, finding 5: every start-up failure of `npm start` ends in one plain line on stderr that
// names the cause and the fix - no stack - and a non-zero exit code.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../support/db.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'grocery-startfail-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/serve.ts'], {
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => (stdout += d));
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
  });
}

function expectOnePlainLine(r: { code: number | null; stderr: string; stdout: string }, cause: RegExp) {
  expect(r.code).toBe(1);
  const lines = r.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^Cannot start: /);
  expect(lines[0]).toMatch(cause);
  expect(r.stderr + r.stdout).not.toMatch(/\n\s+at /); // no stack anywhere
}

describe('npm start that cannot start', () => {
  it('says so in one line when DATA_DIR is a file', { timeout: 60_000 }, async () => {
    const file = path.join(dir, 'a-file');
    writeFileSync(file, '');
    expectOnePlainLine(await start({ DATA_DIR: file }), /a-file is not a folder.*set DATA_DIR/);
  });

  it.runIf(process.getuid?.() === 0)('says so in one line when DATA_DIR is immutable', { timeout: 60_000 }, async () => {
    const immutable = mkdtempSync(path.join(dir, 'immutable-'));
    execFileSync('chattr', ['+i', immutable]);
    try {
      expectOnePlainLine(await start({ DATA_DIR: immutable }), /EPERM.*DATA_DIR/);
    } finally {
      execFileSync('chattr', ['-i', immutable]);
    }
  });

  it('says so in one line in PROD without JWT_SECRET', { timeout: 60_000 }, async () => {
    expectOnePlainLine(await start({ APP_ENV: 'PROD', DATABASE_URL: 'postgres://u@127.0.0.1:1/x' }), /JWT_SECRET/);
  });

  it('says so in one line when the database cannot be reached', { timeout: 60_000 }, async () => {
    expectOnePlainLine(
      await start({ DATABASE_URL: 'postgres://u@127.0.0.1:1/x', DATA_DIR: dir }),
      /Cannot reach the database.*DATABASE_URL/,
    );
  });

  it('says so in one line when the port is taken', { timeout: 60_000 }, async () => {
    const database = await createTestDatabase();
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      expectOnePlainLine(
        await start({ DATABASE_URL: database.url, SEED_DEMO_DATA: 'false', PORT: String(port), DATA_DIR: dir }),
        new RegExp(`Port ${port} is already in use.*PORT`),
      );
    } finally {
      taken.close();
      await database.shutdown();
    }
  });
});
