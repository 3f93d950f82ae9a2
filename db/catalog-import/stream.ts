// Reads a catalog file (one JSON object of sections) as a stream of events: each top-level
// section as it begins, and each element of the array sections asked for, parsed one at a time.
// A file of a million products is over a gigabyte, more than one JavaScript string may hold, so it
// is never read whole: memory stays at one chunk plus one row. Elements of sections not asked
// for are skipped by scanning their brackets, without parsing them.
import { createReadStream } from 'node:fs';

export type CatalogEvent =
  /** A top-level key; `value` is the parsed value of a section that is not an array. */
  | { kind: 'section'; name: string; isArray: boolean; value?: unknown }
  | { kind: 'row'; section: string; index: number; value: unknown }
  /** The document is not a JSON object (nothing more follows). */
  | { kind: 'not-an-object' };

/** Reads the catalog's events again from the start; rows are parsed only for `rowsOf` sections. */
export type CatalogSource = (rowsOf: ReadonlySet<string>) => AsyncIterable<CatalogEvent>;

export class CatalogSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogSyntaxError';
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** Index just past the quote closing a string whose contents start at `from`; -1 when not in `buf` yet. */
function endOfString(buf: string, from: number): number {
  for (let i = from; ;) {
    const q = buf.indexOf('"', i);
    if (q < 0) return -1;
    let slashes = 0;
    for (let b = q - 1; b >= from && buf.charCodeAt(b) === BACKSLASH; b--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** Index just past the JSON value starting at `start`; -1 when it does not end within `buf`. */
function endOfValue(buf: string, start: number, atEof: boolean): number {
  const c = buf.charCodeAt(start);
  if (c === QUOTE) return endOfString(buf, start + 1);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let i = start; i < buf.length; i++) {
      const ch = buf.charCodeAt(i);
      if (ch === QUOTE) {
        const end = endOfString(buf, i + 1);
        if (end < 0) return -1;
        i = end - 1;
      } else if (ch === OPEN_BRACE || ch === OPEN_BRACKET) depth++;
      else if ((ch === CLOSE_BRACE || ch === CLOSE_BRACKET) && --depth === 0) return i + 1;
    }
    return -1;
  }
  for (let i = start; i < buf.length; i++) {
    const ch = buf.charCodeAt(i);
    if (ch === COMMA || ch === CLOSE_BRACE || ch === CLOSE_BRACKET || isSpace(ch)) return i;
  }
  return atEof ? buf.length : -1;
}

/** A window on the text: the unread rest of what the chunks gave so far. */
class Cursor {
  private buf = '';
  private pos = 0;
  private eof = false;
  /** Characters consumed before `buf` (for error positions). */
  private offset = 0;

  constructor(private readonly chunks: AsyncIterator<string>) {}

  private async more(): Promise<boolean> {
    if (this.eof) return false;
    const next = await this.chunks.next();
    if (next.done) {
      this.eof = true;
      return false;
    }
    this.offset += this.pos;
    this.buf = this.buf.slice(this.pos) + next.value;
    this.pos = 0;
    return true;
  }

  fail(what: string): never {
    throw new CatalogSyntaxError(`${what} at character ${this.offset + this.pos}`);
  }

  /** The next character that is not white space (not consumed), or -1 at the end. */
  async peek(): Promise<number> {
    for (;;) {
      while (this.pos < this.buf.length && isSpace(this.buf.charCodeAt(this.pos))) this.pos++;
      if (this.pos < this.buf.length) return this.buf.charCodeAt(this.pos);
      if (!(await this.more())) return -1;
    }
  }

  async expect(code: number): Promise<void> {
    if ((await this.peek()) !== code) this.fail(`expected '${String.fromCharCode(code)}'`);
    this.pos++;
  }

  skip(): void {
    this.pos++;
  }

  /** The text of the next value, consumed. */
  async valueText(): Promise<string> {
    if ((await this.peek()) < 0) this.fail('unexpected end of the document');
    for (;;) {
      const end = endOfValue(this.buf, this.pos, this.eof);
      if (end >= 0) {
        const text = this.buf.slice(this.pos, end);
        this.pos = end;
        return text;
      }
      if (!(await this.more())) this.fail('unexpected end of the document');
    }
  }

  /** The next value, parsed. */
  async value(): Promise<unknown> {
    const text = await this.valueText();
    try {
      return JSON.parse(text);
    } catch (err) {
      return this.fail(`${(err as Error).message.split('\n')[0]} (in the value ending here)`);
    }
  }
}

/** The events of a JSON document given as text chunks. */
export async function* readCatalogJson(chunks: AsyncIterable<string>, rowsOf: ReadonlySet<string>): AsyncGenerator<CatalogEvent> {
  const cursor = new Cursor(chunks[Symbol.asyncIterator]());
  if ((await cursor.peek()) !== OPEN_BRACE) {
    yield { kind: 'not-an-object' };
    return;
  }
  cursor.skip();
  for (let first = true; ; first = false) {
    let c = await cursor.peek();
    if (c === CLOSE_BRACE) {
      cursor.skip();
      break;
    }
    if (!first) {
      await cursor.expect(COMMA);
      c = await cursor.peek();
    }
    if (c !== QUOTE) cursor.fail('expected a section name');
    const name = (await cursor.value()) as string;
    await cursor.expect(COLON);
    if ((await cursor.peek()) !== OPEN_BRACKET) {
      yield { kind: 'section', name, isArray: false, value: await cursor.value() };
      continue;
    }
    cursor.skip();
    yield { kind: 'section', name, isArray: true };
    const parse = rowsOf.has(name);
    for (let index = 0; ; index++) {
      if ((await cursor.peek()) === CLOSE_BRACKET) {
        cursor.skip();
        break;
      }
      if (index > 0) await cursor.expect(COMMA);
      if (parse) yield { kind: 'row', section: name, index, value: await cursor.value() };
      else await cursor.valueText();
    }
  }
  if ((await cursor.peek()) !== -1) cursor.fail('unexpected text after the document');
}

/** A catalog file on disk, read in chunks of a megabyte; `onRead` hears the bytes read so far. */
export function catalogFileSource(path: string, onRead?: (bytes: number) => void): CatalogSource {
  async function* chunks(): AsyncGenerator<string> {
    const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
    try {
      for await (const chunk of stream) {
        onRead?.(stream.bytesRead);
        yield chunk as string;
      }
    } finally {
      stream.destroy();
    }
  }
  return (rowsOf) => readCatalogJson(chunks(), rowsOf);
}

/** A catalog already in memory (the demo data, tests). */
export function catalogObjectSource(file: unknown): CatalogSource {
  return async function* (rowsOf) {
    if (typeof file !== 'object' || file === null || Array.isArray(file)) {
      yield { kind: 'not-an-object' };
      return;
    }
    for (const [name, value] of Object.entries(file as Record<string, unknown>)) {
      if (!Array.isArray(value)) {
        yield { kind: 'section', name, isArray: false, value };
        continue;
      }
      yield { kind: 'section', name, isArray: true };
      if (rowsOf.has(name))
        for (let index = 0; index < value.length; index++) yield { kind: 'row', section: name, index, value: value[index] };
    }
  };
}
