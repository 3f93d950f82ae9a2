// A service started as its own process (scripts/serve.ts, or the built dist/scripts/serve.js):
// everything it prints is collected, and the URL comes from its "listening" log line.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../platform/config.js';
import { TEST_JWT_SECRET } from './service.js';

export interface ServiceProcess {
  url: string;
  /** All it printed so far (stdout and stderr), for assertions and failure messages. */
  log(): string;
  /** The parsed "listening" log line (url, node, commit, ...). */
  listening: Record<string, unknown>;
}

export function untilListening(child: ChildProcess, what = 'the service'): Promise<ServiceProcess> {
  let output = '';
  child.stderr?.on('data', (chunk) => (output += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n').find((l) => l.includes('"msg":"listening"'));
      if (line) {
        const listening = JSON.parse(line) as Record<string, unknown>;
        resolve({ url: String(listening.url), listening, log: () => output });
      }
    });
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}:\n${output}`)));
  });
}

/**
 * `npm start`'s entry point (scripts/serve.ts) in its own process on `databaseUrl`, as TEST with
 * the tests' JWT secret and no demo data, plus `env`; `listening` resolves once it listens.
 */
export function spawnServe(databaseUrl: string, env: Record<string, string> = {}, what = 'the service process') {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(projectRoot, 'scripts/serve.ts')], {
    cwd: projectRoot,
    env: {
      ...process.env,
      APP_ENV: 'TEST',
      DATABASE_URL: databaseUrl,
      JWT_SECRET: TEST_JWT_SECRET,
      HOST: '127.0.0.1',
      PORT: '0',
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, listening: untilListening(child, what) };
}
