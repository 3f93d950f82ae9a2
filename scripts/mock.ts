// npm run mock -- --env TEST|PROD --port N [--host H]
// Serves example answers for every operation of one environment from the spec alone: no
// database, no configuration. See scripts/lib/mock-server.ts for what it answers and how to ask
// for another status (`Prefer: code=404`).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMockApp } from './lib/mock-server.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  const value = at >= 0 ? process.argv[at + 1] : undefined;
  if (value !== undefined) return value;
  const inline = process.argv.find((a) => a.startsWith(`--${name}=`));
  return inline ? inline.slice(name.length + 3) : fallback;
}

const env = option('env', process.env.APP_ENV ?? 'TEST').toUpperCase();
const port = Number(option('port', process.env.PORT ?? '4010'));
const host = option('host', process.env.HOST ?? '127.0.0.1');
if (env !== 'TEST' && env !== 'PROD') {
  console.error(`--env must be TEST or PROD, got "${env}"`);
  process.exit(2);
}
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port must be a port number, got "${option('port', '')}"`);
  process.exit(2);
}

const mock = await createMockApp({ env });
for (const problem of mock.problems) console.warn(`spec example replaced: ${problem}`);
const server = http.createServer(mock.express);
server.listen(port, host, () => {
  const { port: actual } = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const operations = mock.answers.size;
  // The first line is machine-readable: tools (and the tests) read the port from it.
  process.stdout.write(`${JSON.stringify({ mock: 'listening', env, port: actual, operations })}\n`);
  process.stdout.write(
    `Mock of the ${env} contract (${operations} operations) on http://${shown}:${actual}\n` +
      `  docs: http://${shown}:${actual}/docs    spec: http://${shown}:${actual}/openapi.json\n` +
      '  other answers: header "Prefer: code=404" (any declared status) or "Prefer: example=<name>"\n',
  );
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
