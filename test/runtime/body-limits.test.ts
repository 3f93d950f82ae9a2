// A body over the limit is refused as soon as that is known, and a slow one is cut off: a client
// (or an attacker) that declares 100 MB, or sends a chunked body without end, or sends a request
// byte by byte, holds nothing of the instance for long. Raw sockets, because an HTTP client
// neither sends a body shorter than it declares nor stops to read an early answer.
import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { REQUEST_TIMEOUT_MS: '1500' } });
});
afterAll(() => svc?.close());

interface Exchange {
  /** Everything the server sent, as text. */
  text: string;
  /** Milliseconds from the first byte written to the first byte of the answer (null: none came). */
  answeredMs: number | null;
  /** Milliseconds until the server closed the connection (null: it was still open at the end). */
  closedMs: number | null;
}

/** Writes `head` and then `chunks` (one per `gapMs`) on a raw connection; collects what comes back for `waitMs`. */
async function exchange(head: string, chunks: (string | Buffer)[], opts: { gapMs?: number; waitMs: number }): Promise<Exchange> {
  const port = new URL(svc.url).port;
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const started = performance.now();
  const result: Exchange = { text: '', answeredMs: null, closedMs: null };
  socket.on('data', (data) => {
    result.answeredMs ??= performance.now() - started;
    result.text += data.toString('latin1');
  });
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      result.closedMs = performance.now() - started;
      resolve();
    }),
  );
  socket.on('error', () => {});
  socket.write(head);
  for (const chunk of chunks) {
    if (socket.destroyed || result.closedMs !== null) break;
    socket.write(chunk);
    if (opts.gapMs) await new Promise((r) => setTimeout(r, opts.gapMs));
  }
  await Promise.race([closed, new Promise((r) => setTimeout(r, opts.waitMs))]);
  socket.destroy();
  return result;
}

const execFileAsync = promisify(execFile);

/** Writes a 2 MB body without pausing and prints what came back (run in a process of its own). */
const FULL_SPEED_CLIENT = `
  const socket = require('node:net').connect(Number(process.argv[1]), '127.0.0.1');
  const body = Buffer.alloc(2 * 1024 * 1024, 0x20);
  let text = '';
  socket.on('data', (d) => (text += d.toString('latin1')));
  socket.on('error', () => {});
  socket.on('close', () => process.stdout.write(text));
  socket.write('POST /api/auth/otp/send HTTP/1.1\\r\\nHost: x\\r\\nContent-Type: application/json\\r\\nContent-Length: ' + body.length + '\\r\\n\\r\\n');
  socket.write(body);
`;

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { code: string; detail: string };

describe('request body limits', () => {
  it('answers 413 PAYLOAD_TOO_LARGE at once to a declared 100 MB body of which 10 bytes came, and closes the connection', async () => {
    const r = await exchange(
      'POST /api/auth/otp/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 104857600\r\n\r\n',
      ['{"phone":"'],
      { waitMs: 5000 },
    );
    expect(statusOf(r.text)).toBe(413);
    expect(r.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(bodyOf(r.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(r.answeredMs).toBeLessThan(1000);
    expect(r.closedMs).not.toBeNull();
    expect(r.closedMs!).toBeLessThan(1000);
  });

  it('lets a client that sends a 2 MB body at full speed read its 413 (a lingering close, not a reset)', async () => {
    // From another process, as a phone is: a client sharing the service's event loop never has
    // unread bytes in flight when the service closes, so it would not see a reset.
    const port = new URL(svc.url).port;
    for (let round = 0; round < 5; round++) {
      const { stdout } = await execFileAsync(process.execPath, ['-e', FULL_SPEED_CLIENT, port], { timeout: 10_000 });
      expect(statusOf(stdout), `round ${round}: ${stdout.slice(0, 80)}`).toBe(413);
    }
  });

  it('answers 413 as soon as a chunked body passes the limit, without waiting for its end', async () => {
    // 1.25 MiB in 64 KiB chunks, and then nothing: the body never ends.
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const chunks = Array.from({ length: 20 }, () =>
      Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]),
    );
    const r = await exchange(
      'POST /api/orders/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      [Buffer.from('1\r\n{\r\n'), ...chunks],
      { waitMs: 1000 },
    );
    expect(statusOf(r.text)).toBe(413);
    expect(bodyOf(r.text)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(r.closedMs).not.toBeNull();
  });

  it('still reads a body just under the limit, chunked or not', async () => {
    const body = JSON.stringify({ phone: '+79990001234', pad: ' '.repeat(900 * 1024) });
    const plain = await svc.client.invalid('POST', '/api/auth/otp/send', { body });
    expect(plain.status).toBe(422);
    expect(plain.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'pad'] })]);
    const chunked = await exchange(
      'POST /api/auth/otp/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
      [`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`],
      { waitMs: 5000 },
    );
    expect(statusOf(chunked.text)).toBe(422);
  });

  it('ends a request whose body does not arrive within REQUEST_TIMEOUT_MS with 408', async () => {
    // 10 of 100 declared bytes, then a byte every 200 ms: the connection stays busy but slow.
    const r = await exchange(
      'POST /api/auth/otp/send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
      ['{"phone":"', ...Array.from({ length: 40 }, () => '1')],
      { gapMs: 200, waitMs: 4000 },
    );
    expect(statusOf(r.text)).toBe(408);
    expect(r.closedMs).not.toBeNull();
    // 1.5 s of timeout, checked every second.
    expect(r.closedMs!).toBeLessThan(3500);
  });
});
