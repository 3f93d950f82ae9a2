// A service started as its own process (scripts/serve.ts, or the built dist/scripts/serve.js):
// everything it prints is collected, and the URL comes from its "listening" log line.
import type { ChildProcess } from 'node:child_process';

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
