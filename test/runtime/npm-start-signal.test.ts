// `npm start` as an operator runs it: a SIGTERM sent to npm reaches the service, which drains and
// stops its embedded PostgreSQL (the README's instance recipe). npm runs the script through
// `sh -c`; without `exec` the shell died and the service kept serving, orphaned.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = mkdtempSync(path.join(os.tmpdir(), 'grocery-npm-start-'));
chmodSync(root, 0o755); // the unprivileged PostgreSQL user must enter it
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('npm start', () => {
  /**
   * `npm start` on a data folder of its own, once its output shows `until` (by default, once it
   * serves: `url`); its output is gathered in `log()`; `ended()` after a signal.
   */
  async function npmStart(dataDir: string, options: { ownGroup?: boolean; until?: RegExp } = {}) {
    const until = options.until ?? /is listening on (http:\/\/\S+)/;
    const npm = spawn('npm', ['start'], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        APP_ENV: 'TEST',
        DATABASE_URL: '',
        LOG_LEVEL: 'debug',
        SHUTDOWN_DELAY_MS: '2000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.ownGroup ?? false,
    });
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const seen = (d: Buffer) => {
        output += String(d);
        const m = until.exec(output);
        if (m) resolve(m[1]!);
      };
      npm.stdout.on('data', seen);
      npm.stderr.on('data', seen);
      npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${output.slice(-2000)}`)));
    });
    // The end of the output npm shares with the service is the end of the last of them; one
    // that does not come is a hung shutdown, reported with what the service said.
    const closed = new Promise((resolve) => npm.stdout.once('close', resolve));
    const ended = () =>
      Promise.race([
        closed,
        new Promise((_, reject) =>
          setTimeout(() => {
            try {
              process.kill(options.ownGroup ? -npm.pid! : npm.pid!, 'SIGKILL');
            } catch {
              /* already gone */
            }
            const said = output.split('\n').filter((l) => !l.includes('"msg":"postgres"'));
            reject(new Error(`npm start did not end within 60 s of the signal:\n${said.slice(-40).join('\n')}`));
          }, 60_000).unref(),
        ),
      ]);
    return { npm, url, ended, log: () => output };
  }

  it('drains and stops its embedded PostgreSQL on a SIGTERM sent to npm', { timeout: 180_000 }, async () => {
    const dataDir = path.join(root, 'term');
    const s = await npmStart(dataDir);
    expect((await fetch(`${s.url}/readyz`)).status).toBe(200);
    s.npm.kill('SIGTERM');
    // npm passes the signal on: readiness turns 503 while requests are still served (with
    // Connection: close) for SHUTDOWN_DELAY_MS, so a load balancer stops sending first.
    let ready = 200;
    for (let i = 0; i < 40 && ready === 200; i++) {
      await new Promise((r) => setTimeout(r, 25));
      ready = (await fetch(`${s.url}/readyz`)).status;
    }
    expect(ready).toBe(503);
    const served = await fetch(`${s.url}/api/logistics/map/config`);
    expect(served.status).toBe(200);
    expect(served.headers.get('connection')).toBe('close');
    await s.ended();
    expect(s.log()).toMatch(/"msg":"signal received","signal":"SIGTERM"/);
    expect(s.log()).toMatch(/"msg":"stopped"/);
    // Nothing answers any more, and the cluster is stopped (its pid file removed).
    await expect(fetch(`${s.url}/readyz`)).rejects.toThrow();
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid'))).toBe(false);
  });

  it('still stops, leaving no PostgreSQL behind, on a signal that comes while it starts', { timeout: 180_000 }, async () => {
    const dataDir = path.join(root, 'early');
    // The embedded PostgreSQL has started talking: the service is not up yet.
    const s = await npmStart(dataDir, { until: /"msg":"postgres"()/ });
    s.npm.kill('SIGTERM');
    await s.ended();
    // It finished starting (an initdb cut short would leave a broken cluster) and stopped.
    expect(s.log()).toMatch(/"msg":"stopped"/);
    expect(s.log()).not.toMatch(/is listening on/);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), s.log()).toBe(false);
    // The data folder serves the next start.
    const again = await npmStart(dataDir);
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    again.npm.kill('SIGTERM');
    await again.ended();
  });

  it('drains on Ctrl-C, which the terminal sends to every process of the group', { timeout: 180_000 }, async () => {
    const dataDir = path.join(root, 'int');
    const s = await npmStart(dataDir, { ownGroup: true });
    process.kill(-s.npm.pid!, 'SIGINT');
    await s.ended();
    // One signal, one drain: the copy npm passes on is not taken for a second Ctrl-C.
    expect(s.log().match(/"msg":"signal received"/g), s.log()).toHaveLength(1);
    expect(s.log()).toMatch(/"msg":"stopped"/);
    expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), s.log()).toBe(false);
  });
});
