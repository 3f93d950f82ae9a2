// Answers as the idempotency records keep them: JSON text, gzipped from about 1 KB on. The same
// encoding is what the HTTP layer sends, so a stored or just-written answer is reused as it is,
// never written and compressed twice.
import { promisify } from 'node:util';
import { gunzipSync, gzip, gzipSync } from 'node:zlib';

/** JSON bodies from this length (about 1 KB) are gzipped when the client accepts it; below, gzip saves too little. */
export const GZIP_FROM_CHARS = 1024;

/**
 * Bodies already written as JSON (and gzipped when large), keyed by the body object so an entry
 * lives exactly as long as its reply: the sender reuses the text and the gzip.
 */
const serializedBodies = new WeakMap<object, { text: string; gzip: Buffer | null }>();
const remember = (body: unknown, serialized: { text: string; gzip: Buffer | null }) => {
  if (body !== null && typeof body === 'object') serializedBodies.set(body, serialized);
};
const gzipAsync = promisify(gzip);
/**
 * Texts up to this length are gzipped on the event loop: handing a few KB to zlib's thread pool
 * and back cost twice the compression itself (27 us against 63 for a picker command's 1.8 KB
 * answer; 52 against 81 at 33 KB), and a command's answer is compressed once per command.
 */
const GZIP_INLINE_MAX_CHARS = 32 * 1024;
export const gzipText = (text: string, level: number): Promise<Buffer> | Buffer =>
  text.length <= GZIP_INLINE_MAX_CHARS ? gzipSync(text, { level }) : gzipAsync(text, { level });
/** The fastest level: JSON answers are repetitive, and level 1 already takes a session to a sixth. */
const gzipFast = (text: string) => gzipText(text, 1);

/** A body as JSON text, gzipped from GZIP_FROM_CHARS on; the sender will reuse both for this body. */
export async function serializeBody(body: unknown): Promise<{ text: string; gzip: Buffer | null }> {
  const text = JSON.stringify(body);
  const serialized = { text, gzip: text.length >= GZIP_FROM_CHARS ? await gzipFast(text) : null };
  remember(body, serialized);
  return serialized;
}

/** The body of gzipped JSON (a stored answer); the sender will reuse the text and the gzip. */
export function gunzipBody(gzipped: Buffer): unknown {
  const text = gunzipSync(gzipped).toString('utf8');
  const body: unknown = JSON.parse(text);
  remember(body, { text, gzip: gzipped });
  return body;
}

/** The JSON text and gzip already written for this body, if it was serialized or read here. */
export const serializedFormOf = (body: unknown): { text: string; gzip: Buffer | null } | undefined =>
  body !== null && typeof body === 'object' ? serializedBodies.get(body) : undefined;
