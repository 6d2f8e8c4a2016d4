/**
 * A UTF-8 byte buffer JSON text is written into, piece by piece: an ATOF
 * line (the memory relay's encoder, `backends/memory/encode/`) or any text
 * of the native-text writer, a whole trajectory included
 * (`formats/native-text/write.ts`). Here, below both, so the string and
 * escape rules are written once.
 *
 * Building a line as a JS string means concatenating dozens of small pieces;
 * every engine keeps such a string as a rope and copies it flat before it
 * can be encoded, and that copy (plus the rope's garbage) cost more than
 * writing the pieces themselves. Writing bytes straight into one buffer
 * skips the rope, the copy and the separate encoding pass, and the file
 * writer takes the bytes as they are.
 *
 * Strings of up to 128 characters are copied by a JS loop (cheaper there
 * than the few native calls a checked encode takes); longer ones are
 * encoded natively.
 *
 * @module
 */

import { Buffer } from 'node:buffer';
import { wellFormed } from './json.ts';

const INITIAL_CAPACITY = 16 * 1024;
/** A buffer grown past this (a huge payload) is not kept for the next line. */
const KEEP_CAPACITY = 1024 * 1024;
/**
 * Strings up to this length are copied by the JS loop; longer ones are
 * encoded natively, which costs a few calls (checks, encode) per string:
 * short strings are cheaper in the loop, long ones natively, on every
 * runtime (where the two cross: bench/RESULTS.md, "Figures behind the code").
 */
const SHORT_STRING = 128;
/**
 * Deno's `Buffer#write` is a JS layer over `TextEncoder#encodeInto`, so
 * calling that directly is cheaper there. In Node and Bun `Buffer#write` is
 * the cheaper one.
 */
const ENCODE_INTO = 'Deno' in globalThis;
const textEncoder = new TextEncoder();

/** Control characters, which JSON escapes. */
const CONTROL = /[\u0000-\u001f]/;
const HEX = '0123456789abcdef';
/** 1 for the ASCII characters a JSON string holds as they are (a table beats four comparisons per character). */
const PLAIN = new Uint8Array(0x80).fill(1, 0x20);
PLAIN[0x22] = 0;
PLAIN[0x5c] = 0;

/** Who a builder's bytes belong to, when they are a file writer's staging buffer. */
export interface LineOwner {
  /** Ends the line begun at `start`: kept as a whole line, or dropped. */
  endLine(keep: boolean): void;
}

export class LineBuilder {
  /**
   * The bytes. A plain `Uint8Array` (slices and views of a Node `Buffer`
   * are `Buffer`s, whose construction is slow); `encoder` is a `Buffer`
   * over the same memory for native UTF-8 encoding.
   */
  bytes: Uint8Array;
  private encoder: Buffer;
  /** Bytes written so far. */
  length = 0;
  /** Where the line being written starts (a writer's staging buffer holds earlier lines before it). */
  start = 0;
  /** The file writer whose staging buffer this is, or null for a builder of its own. */
  owner: LineOwner | null = null;

  constructor(capacity = INITIAL_CAPACITY) {
    this.bytes = new Uint8Array(capacity);
    this.encoder = bufferOver(this.bytes);
  }

  /** Takes `bytes` as the buffer, emptied. */
  replace(bytes: Uint8Array): void {
    this.bytes = bytes;
    this.encoder = bufferOver(bytes);
    this.length = 0;
    this.start = 0;
  }

  /** Makes room for `extra` more bytes. */
  ensure(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.bytes.length) return;
    let capacity = this.bytes.length * 2;
    while (capacity < needed) capacity *= 2;
    const grown = new Uint8Array(capacity);
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.encoder = bufferOver(grown);
  }

  /** Writes one ASCII byte. */
  byte(code: number): void {
    if (this.length === this.bytes.length) this.ensure(1);
    this.bytes[this.length++] = code;
  }

  /** Writes text known to be ASCII and free of characters JSON escapes (uuids, stamps, numbers, fixed words). */
  ascii(text: string): void {
    const n = text.length;
    this.ensure(n);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < n; i++) bytes[at++] = text.charCodeAt(i);
    this.length = at;
  }

  /** Writes pre-encoded bytes. */
  raw(source: Uint8Array): void {
    const n = source.length;
    this.ensure(n);
    const bytes = this.bytes;
    let at = this.length;
    if (n > 24) {
      bytes.set(source, at);
      at += n;
    } else {
      for (let i = 0; i < n; i++) bytes[at++] = source[i]!;
    }
    this.length = at;
  }

  /** Writes any text as UTF-8 (text that is already JSON, such as a general-path payload). */
  utf8(text: string): void {
    const n = text.length;
    if (n <= SHORT_STRING) {
      // Short ASCII text by the JS loop (a native encode costs a few calls); anything else natively.
      this.ensure(n * 3);
      const bytes = this.bytes;
      const at = this.length;
      let i = 0;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c >= 0x80) break;
        bytes[at + i] = c;
      }
      if (i === n) {
        this.length = at + n;
        return;
      }
    }
    this.ensure(text.length * 3);
    this.length += ENCODE_INTO
      ? textEncoder.encodeInto(text, this.bytes.subarray(this.length)).written
      : this.encoder.write(text, this.length, 'utf8');
  }

  /** Writes `text` as a JSON string, lone surrogates as U+FFFD: `JSON.stringify(wellFormed(text))`. */
  jsonString(text: string): void {
    const n = text.length;
    if (n > SHORT_STRING) {
      this.longString(text);
      return;
    }
    this.ensure(n * 6 + 2);
    const bytes = this.bytes;
    let at = this.length;
    bytes[at++] = 34;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x80 && PLAIN[c] === 1) {
        bytes[at++] = c;
        continue;
      }
      at = this.special(text, i, c, at);
      // A surrogate pair took two code units.
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) i++;
      }
    }
    bytes[at++] = 34;
    this.length = at;
  }

  /** Writes `text` as `JSON.stringify(text)` does (a lone surrogate as its escape): names and ids, as events carry them. */
  jsonStringAsGiven(text: string): void {
    const n = text.length;
    if (n <= SHORT_STRING) {
      // The usual short ASCII name in one pass; a surrogate (paired or lone) rolls back to the checked path.
      this.ensure(n + 2);
      const bytes = this.bytes;
      let at = this.length;
      bytes[at++] = 34;
      let i = 0;
      for (; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c < 0x80 && PLAIN[c] === 1) bytes[at++] = c;
        else break;
      }
      if (i === n) {
        bytes[at++] = 34;
        this.length = at;
        return;
      }
      if (wellFormed(text) === text) {
        this.jsonString(text);
        return;
      }
    } else if (wellFormed(text) === text) {
      // Well formed, so `longString` writes exactly `JSON.stringify(text)`.
      this.longString(text);
      return;
    }
    this.utf8(JSON.stringify(text));
  }

  /** Writes `value` (a non-negative integer) in decimal, zero-padded to `width` digits. */
  digits(value: number, width: number): void {
    this.ensure(width);
    const bytes = this.bytes;
    let at = this.length + width;
    this.length = at;
    for (let i = 0; i < width; i++) {
      const next = Math.floor(value / 10);
      bytes[--at] = 48 + value - next * 10;
      value = next;
    }
  }

  /** The bytes from `from` to `end`, as text. */
  text(from = 0, end = this.length): string {
    // TextDecoder is the cheapest decode on all three runtimes (a copy into a new Uint8Array costs more).
    return decoder.decode(this.bytes.subarray(from, end));
  }

  /**
   * A long string: checked for characters to escape (`indexOf` for quote and
   * backslash, a one-range regex for controls: a regex over the whole
   * escape class scans more slowly on V8) and encoded as it is, or,
   * when it needs escapes, `JSON.stringify`'d first. The check beats
   * `JSON.stringify` on every engine here, even V8 13.8+'s fast path in
   * Deno, which still allocates the copy.
   */
  private longString(text: string): void {
    if (
      text.indexOf('"') >= 0 ||
      text.indexOf('\\') >= 0 ||
      CONTROL.test(text) ||
      wellFormed(text) !== text
    ) {
      this.utf8(JSON.stringify(wellFormed(text)));
    } else {
      this.ensure(text.length * 3 + 2);
      this.bytes[this.length++] = 34;
      this.utf8(text);
      this.bytes[this.length++] = 34;
    }
  }

  /** Writes one character that is not plain printable ASCII; returns the new position. */
  private special(text: string, i: number, c: number, at: number): number {
    const bytes = this.bytes;
    if (c < 0x80) {
      bytes[at++] = 0x5c;
      switch (c) {
        case 0x22:
        case 0x5c:
          bytes[at++] = c;
          return at;
        case 0x08:
          bytes[at++] = 0x62; // \b
          return at;
        case 0x0c:
          bytes[at++] = 0x66; // \f
          return at;
        case 0x0a:
          bytes[at++] = 0x6e; // \n
          return at;
        case 0x0d:
          bytes[at++] = 0x72; // \r
          return at;
        case 0x09:
          bytes[at++] = 0x74; // \t
          return at;
        default:
          bytes[at++] = 0x75; // \u00XX
          bytes[at++] = 0x30;
          bytes[at++] = 0x30;
          bytes[at++] = HEX.charCodeAt(c >> 4);
          bytes[at++] = HEX.charCodeAt(c & 15);
          return at;
      }
    }
    if (c < 0x800) {
      bytes[at++] = 0xc0 | (c >> 6);
      bytes[at++] = 0x80 | (c & 0x3f);
      return at;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && i + 1 < text.length) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          const point = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00);
          bytes[at++] = 0xf0 | (point >> 18);
          bytes[at++] = 0x80 | ((point >> 12) & 0x3f);
          bytes[at++] = 0x80 | ((point >> 6) & 0x3f);
          bytes[at++] = 0x80 | (point & 0x3f);
          return at;
        }
      }
      // A lone surrogate: U+FFFD.
      bytes[at++] = 0xef;
      bytes[at++] = 0xbf;
      bytes[at++] = 0xbd;
      return at;
    }
    bytes[at++] = 0xe0 | (c >> 12);
    bytes[at++] = 0x80 | ((c >> 6) & 0x3f);
    bytes[at++] = 0x80 | (c & 0x3f);
    return at;
  }
}

const decoder = new TextDecoder();
/** Made by the first `takeBuilder`, not at import: a host that imports the plugin and never records does not allocate it. */
let spare: LineBuilder | null = null;

/**
 * A builder for one line, emptied. A payload getter that emits an event
 * while a line is being built gets a builder of its own.
 */
export function takeBuilder(): LineBuilder {
  const builder = spare ?? new LineBuilder();
  spare = null;
  builder.length = 0;
  builder.start = 0;
  return builder;
}

/** Returns a builder taken with `takeBuilder` (one that grew huge is let go). */
export function giveBack(builder: LineBuilder): void {
  if (builder.bytes.length > KEEP_CAPACITY) return;
  spare = builder;
}

/** `text` as UTF-8 in a new array of its exact size: fixed text encoded once for `LineBuilder.raw`, or a whole text written as it is. */
export function encoded(text: string): Uint8Array {
  return textEncoder.encode(text);
}

/** A `Buffer` over the memory of `bytes`, for its native `write`. */
function bufferOver(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
