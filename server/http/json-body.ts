// Reading a JSON request body within the service's limit. body-parser reads the whole of a body
// over the limit before it answers (to keep the connection usable), so a client that declares
// 100 MB and sends 10 bytes would hold a request open until the request timeout, and one that
// sends fast would make the instance read all of it. Here a body over the limit is refused the moment it is
// known to be (its Content-Length, or the bytes of a chunked body passing the limit) and the
// connection is closed.
import { AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { AppError, badRequest } from '../../services/errors.js';
import { errorReply, send } from './responses.js';
import { declaresJsonBody, type Exchange } from './exchange.js';

/** Whether the request carries a body (RFC 9112 6.3: a Content-Length above 0, or chunked). */
export function hasBody(req: { headers: IncomingMessage['headers'] }): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = Number(req.headers['content-length'] ?? 0);
  return Number.isFinite(length) && length > 0;
}

/** How long a refused connection reads and drops what its client still sends: without a pause, and in all. */
const LINGER_IDLE_MS = 500;
const LINGER_MAX_MS = 2000;

/**
 * Makes the close that follows a refusal a lingering one, as nginx's `lingering_close`: Node
 * destroys a `Connection: close` socket once the answer is written, and closing a socket with
 * unread bytes sends a reset, on which a client still sending its body drops the 413 it was
 * about to read. Instead the socket is half-closed after the answer and what still arrives is
 * read and dropped, until the client stops (LINGER_IDLE_MS without a byte) or LINGER_MAX_MS.
 */
function lingerOnClose(socket: Socket): void {
  socket.destroySoon = () => {
    const destroy = () => socket.destroy();
    let idle = setTimeout(destroy, LINGER_IDLE_MS);
    const atMost = setTimeout(destroy, LINGER_MAX_MS);
    socket.on('data', () => {
      clearTimeout(idle);
      idle = setTimeout(destroy, LINGER_IDLE_MS);
    });
    socket.once('close', () => {
      clearTimeout(idle);
      clearTimeout(atMost);
    });
    socket.end();
  };
}

/** The decoded stream of a body sent with `Content-Encoding` (null: an encoding not supported). */
function decoded(req: IncomingMessage): Readable | null {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (encoding === 'identity') return req;
  const decoder =
    encoding === 'gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  return decoder ? req.pipe(decoder) : null;
}

/**
 * Whether a request carries a body at all for the parser, as express's parsers judge it: chunked,
 * or any numeric Content-Length (`0` is an empty body, read as `{}`).
 */
function carriesBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && !Number.isNaN(Number(length)));
}

/**
 * Parses a JSON body (any JSON value; an empty body is `{}`) into `req.body`, then calls `next`.
 * A request with another Content-Type is left unread (`req.body` undefined), for the operation to
 * refuse; a body that cannot be taken is answered here.
 */
export function readJsonBody(exchange: Exchange, limitBytes: number, next: () => void): void {
  const { req, res, log } = exchange;
  if (!carriesBody(req) || !declaresJsonBody(req)) {
    next();
    return;
  }
  const fail = (err: AppError, closeConnection = false) => {
    if (closeConnection) {
      res.setHeader('Connection', 'close');
      lingerOnClose(req.socket);
    }
    send(res, errorReply(err, exchange.requestId, log));
  };
  const tooLarge = () => new AppError(413, 'PAYLOAD_TOO_LARGE', `Body larger than ${limitBytes} bytes`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    fail(tooLarge(), true);
    return;
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    fail(new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `The body must be UTF-8 JSON (it was ${charset})`));
    return;
  }
  const stream = decoded(req);
  if (!stream) {
    fail(new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${req.headers['content-encoding']} is not supported`));
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  // The stream's events run outside the request's async context; the outcome runs inside it, so
  // what the handler does (queries, log lines, spans) is still attributed to its request.
  const finish = AsyncResource.bind((outcome: () => void) => {
    if (done) return;
    done = true;
    stream.removeAllListeners('data');
    outcome();
  });
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > limitBytes) finish(() => fail(tooLarge(), true));
    else chunks.push(chunk);
  });
  stream.on('error', () => finish(() => fail(badRequest('BAD_REQUEST', 'The body could not be read (a broken Content-Encoding?)'), true)));
  stream.on('end', () =>
    finish(() => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        req.body = text.length === 0 ? {} : (JSON.parse(text) as unknown);
      } catch {
        fail(badRequest('MALFORMED_JSON', 'The body is not valid JSON'));
        return;
      }
      next();
    }),
  );
}
