// The embedded PostgreSQL of `npm start` left running by a run that died without stopping it
// (killed, or its terminal closed): the next start stops it and starts cleanly, and a start next
// to a live instance on the same DATA_DIR fails with a clear error instead of taking its database.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../db/embedded.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'grocery-leftover-'));
chmodSync(root, 0o755); // the unprivileged PostgreSQL user must enter it
const dataDir = path.join(root, 'pg');
const holders: ChildProcess[] = [];
afterAll(async () => {
  for (const h of holders) h.kill('SIGKILL');
  // A failed run may leave the holder's server behind: stop it before removing its folder.
  const pid = existsSync(path.join(dataDir, 'postmaster.pid')) ? postmasterPid() : 0;
  if (pid && alive(pid)) {
    process.kill(pid, 'SIGINT');
    for (let i = 0; alive(pid) && i < 100; i++) await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(root, { recursive: true, force: true });
});

/** Another process (a stand-in for `npm start`) that starts the cluster and keeps it. */
async function startHolder(): Promise<ChildProcess> {
  const source = `import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve('db/embedded.ts'))};
    await startEmbeddedPostgres(${JSON.stringify(dataDir)}); console.log('up'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  holders.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => String(d).includes('up') && resolve());
    child.on('exit', (code) => reject(new Error(`holder exited with ${code}`)));
  });
  return child;
}

const postmasterPid = () => Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a PostgreSQL left running on the data folder', () => {
  it('refuses to start next to a live instance, and stops the server of one that died', { timeout: 120_000 }, async () => {
    const holder = await startHolder();
    const first = postmasterPid();
    await expect(startEmbeddedPostgres(dataDir)).rejects.toThrow(/Another instance \(pid \d+\) is running/);
    expect(alive(first)).toBe(true);

    // The holder dies without stopping its server (SIGKILL, as an OOM kill or a closed terminal would).
    holder.kill('SIGKILL');
    await new Promise((r) => holder.once('exit', r));
    expect(alive(first)).toBe(true);

    const cluster = await startEmbeddedPostgres(dataDir);
    try {
      expect(alive(first)).toBe(false);
      expect(postmasterPid()).not.toBe(first);
    } finally {
      await cluster.stop();
    }
  });

  it('stops at once when the server already ended (a terminal Ctrl-C reaches the postmaster too)', { timeout: 60_000 }, async () => {
    const cluster = await startEmbeddedPostgres(dataDir);
    const pid = postmasterPid();
    process.kill(pid, 'SIGINT');
    for (let i = 0; alive(pid) && i < 100; i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(pid)).toBe(false);
    // The package's own stop() would wait for an exit that already happened, for ever.
    await expect(Promise.race([cluster.stop().then(() => 'stopped'), new Promise((r) => setTimeout(() => r('hung'), 5000))])).resolves.toBe(
      'stopped',
    );
  });
});
