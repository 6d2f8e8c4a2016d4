/**
 * File access for the CLI: checked opening of inputs and output folders
 * (so a missing file is one clear line, not a stack trace), and streaming
 * line reading so inputs of millions of lines use flat memory, and the
 * sizes of the files a command reports.
 *
 * @module
 */

import { createReadStream, readFileSync, readSync, statSync, accessSync, constants, lstatSync, openSync, fstatSync, closeSync } from 'node:fs';
import { makeDirectory } from '../shared/directory.ts';
import { assertRealFolderInside, UnsafePathError } from '../shared/safe-path.ts';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { describeFsError, InputError } from './errors.ts';
import { COMPRESSION_SNIFF_BYTES, compressedInputReason } from './compressed.ts';

/** The input name that means standard input (`cat hooks.jsonl | nemo-relay-hooks replay - --out x`). */
export const STDIN = '-';

/** How `file` is named in messages: standard input has no path. */
export function inputName(file: string): string {
  return file === STDIN ? '(stdin)' : file;
}

/** Throws `InputError` unless `file` is a readable regular file. Returns its size in bytes. */
export function checkInputFile(file: string): number {
  // Standard input has no size to check up front; 0 turns progress percentages off.
  if (file === STDIN) return 0;
  let size: number;
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw new InputError(`cannot read ${file}: is a directory`);
    // A FIFO or a device (/dev/zero) would block or never end.
    if (!stat.isFile()) throw new InputError(`cannot read ${file}: not a regular file`);
    size = stat.size;
    accessSync(file, constants.R_OK);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(describeFsError(error, 'cannot read', file));
  }
  refuseCompressed(file);
  return size;
}

/** Throws `InputError` when `file` starts as a compressed file does (`compressed.ts`). */
function refuseCompressed(file: string): void {
  const head = Buffer.alloc(COMPRESSION_SNIFF_BYTES);
  let read = 0;
  const descriptor = openRegularFile(file);
  try {
    read = readSync(descriptor, head, 0, head.length, 0);
  } catch (error) {
    throw new InputError(describeFsError(error, 'cannot read', file));
  } finally {
    closeSync(descriptor);
  }
  const reason = compressedInputReason(file, head.subarray(0, read), false);
  if (reason !== undefined) throw new InputError(reason);
}

/** Throws `InputError` when standard input's first chunk starts as a compressed file does. */
function refuseCompressedStdin(first: Uint8Array): void {
  const reason = compressedInputReason(inputName(STDIN), first, true);
  if (reason !== undefined) throw new InputError(reason);
}

/**
 * Opens `file` for reading and throws `InputError` unless what was opened is
 * a regular file. Checked on the descriptor, not on an earlier stat of the
 * path: a file swapped for a FIFO after that stat would block the reader for
 * good (opening a FIFO that has no writer blocks, hence `O_NONBLOCK`), and a
 * device would never end. `followLinks: false` also refuses a link swapped
 * in (for folders whose walk skips links). Returns the descriptor.
 */
export function openRegularFile(file: string, options: { followLinks?: boolean } = {}): number {
  // Read here, not at import: the package's bundle loads `node:fs` at its first use (.ci/bundle.ts).
  const { O_NONBLOCK, O_NOFOLLOW } = constants as { O_NONBLOCK?: number; O_NOFOLLOW?: number };
  const flags = constants.O_RDONLY | (O_NONBLOCK ?? 0) | (options.followLinks === false ? (O_NOFOLLOW ?? 0) : 0);
  let descriptor: number;
  try {
    descriptor = openSync(file, flags);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ELOOP') throw new InputError(`cannot read ${file}: it is a symbolic link`);
    throw new InputError(describeFsError(error, 'cannot read', file));
  }
  let regular = false;
  try {
    regular = fstatSync(descriptor).isFile();
  } finally {
    if (!regular) closeSync(descriptor);
  }
  if (!regular) throw new InputError(`cannot read ${file}: not a regular file`);
  return descriptor;
}

/** The most a document read whole (not line by line) may have: JS strings stop a little above this. */
const MAX_WHOLE_FILE_BYTES = 256 * 1024 * 1024;

/** `text` without a leading UTF-8 byte order mark, which some editors write and JSON does not allow. */
function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Where a file stops being UTF-8: the offset of the first byte of the first bad sequence, and its line (1-based). */
export interface InvalidUtf8 {
  offset: number;
  line: number;
}

/**
 * The warning of a reader that goes on past bytes that are not UTF-8 (`convert`, `replay`): what it read is not quite what
 * the file holds, so it says where, instead of passing U+FFFD on in silence; `validate` reports the file invalid.
 */
export function invalidUtf8Warning(at: InvalidUtf8): string {
  return `line ${at.line}: not valid UTF-8 at byte ${at.offset}; read with U+FFFD in place of the bytes that are not (validate reports the file invalid)`;
}

/** Options of the readers: `onInvalidUtf8` hears of the first bytes that are not UTF-8 (they are read as U+FFFD either way). */
export interface ReadOptions {
  onInvalidUtf8?: (at: InvalidUtf8) => void;
}

/**
 * The offset of the first byte that does not start a well-formed UTF-8
 * sequence (overlong forms, surrogates and code points past U+10FFFF are not
 * well formed; an unfinished sequence at the end is not either), or -1.
 */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    const more = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : 0;
    if (more === 0 || i + more >= bytes.length) return i;
    // The second byte's range is narrower after these leads (RFC 3629 §4): no overlong forms, surrogates or code points past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    const second = bytes[i + 1]!;
    if (second < low || second > high) return i;
    for (let k = 2; k <= more; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += more + 1;
  }
  return -1;
}

/** How many newlines the first `end` bytes hold. */
function newlinesIn(bytes: Uint8Array, end: number): number {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, end);
  let count = 0;
  for (let at = head.indexOf(0x0a); at !== -1; at = head.indexOf(0x0a, at + 1)) count += 1;
  return count;
}

/** Where `bytes` (a whole document) stop being UTF-8, or undefined. The engine's strict decoder answers the common case, valid text. */
function invalidUtf8In(bytes: Uint8Array): InvalidUtf8 | undefined {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return undefined;
  } catch {
    const offset = Math.max(0, firstInvalidUtf8(bytes));
    return { offset, line: newlinesIn(bytes, offset) + 1 };
  }
}

/**
 * Checks a stream chunk by chunk as it is read. `push` returns where in the
 * chunk the first bad sequence starts (negative: in the unfinished sequence
 * the previous chunk ended with), once; `end` says whether the stream ended
 * in an unfinished sequence.
 */
class Utf8Check {
  private readonly strict = new TextDecoder('utf-8', { fatal: true });
  /** The unfinished sequence the last chunk ended with (at most 3 bytes). */
  private tail: Uint8Array = new Uint8Array(0);
  private done = false;

  push(chunk: Uint8Array): number | undefined {
    if (this.done) return undefined;
    try {
      this.strict.decode(chunk, { stream: true });
    } catch {
      this.done = true;
      const joined = Buffer.concat([this.tail, chunk]);
      return Math.max(0, firstInvalidUtf8(joined)) - this.tail.length;
    }
    const last = chunk.length >= 4 ? chunk.subarray(chunk.length - 4) : Buffer.concat([this.tail, chunk]).subarray(-4);
    this.tail = unfinishedEnd(last);
    return undefined;
  }

  /** When the stream ended inside a sequence: where that sequence starts, back from the end (negative), once. */
  end(): number | undefined {
    if (this.done) return undefined;
    this.done = true;
    try {
      this.strict.decode();
      return undefined;
    } catch {
      return -this.tail.length;
    }
  }
}

/** The bytes at the end of `last` that begin a sequence not finished yet. */
function unfinishedEnd(last: Uint8Array): Uint8Array {
  for (let i = last.length - 1; i >= 0; i--) {
    const byte = last[i]!;
    if ((byte & 0xc0) === 0x80) continue;
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return last.length - i < needed ? last.subarray(i) : new Uint8Array(0);
  }
  return new Uint8Array(0);
}

/** Reads a whole file, or standard input for `-`, as UTF-8 (for documents that must be parsed whole). */
export async function readInputText(file: string, options: ReadOptions = {}): Promise<string> {
  if (file !== STDIN) return readTextFile(file, options);
  const decoder = new StringDecoder('utf8');
  const check = options.onInvalidUtf8 === undefined ? undefined : new Utf8Check();
  const parts: string[] = [];
  let bytes = 0;
  let newlines = 0;
  try {
    for await (const chunk of process.stdin as AsyncIterable<Buffer | string>) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (bytes === 0) refuseCompressedStdin(buffer);
      bytes += buffer.length;
      if (bytes > MAX_WHOLE_FILE_BYTES) {
        throw new InputError(`cannot read (stdin): more than ${MAX_WHOLE_FILE_BYTES} bytes, the most a document read whole may have`);
      }
      const bad = check?.push(buffer);
      if (bad !== undefined) options.onInvalidUtf8!({ offset: bytes - buffer.length + bad, line: newlines + newlinesIn(buffer, Math.max(0, bad)) + 1 });
      if (check !== undefined) newlines += newlinesIn(buffer, buffer.length);
      parts.push(decoder.write(buffer));
    }
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(describeFsError(error, 'cannot read', '(stdin)'));
  }
  const unfinished = check?.end();
  if (unfinished !== undefined) options.onInvalidUtf8!({ offset: bytes + unfinished, line: newlines + 1 });
  parts.push(decoder.end());
  return withoutBom(parts.join(''));
}

/** Reads a whole file as UTF-8 (for documents that must be parsed whole). */
function readTextFile(file: string, options: ReadOptions): string {
  const size = checkInputFile(file);
  if (size > MAX_WHOLE_FILE_BYTES) {
    throw new InputError(`cannot read ${file}: ${size} bytes is more than a document read whole may have (${MAX_WHOLE_FILE_BYTES})`);
  }
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new InputError(describeFsError(error, 'cannot read', file));
  }
  if (options.onInvalidUtf8 !== undefined) {
    const bad = invalidUtf8In(bytes);
    if (bad !== undefined) options.onInvalidUtf8(bad);
  }
  return withoutBom(bytes.toString('utf8'));
}

/** Creates `dir` (and parents) and checks it is a writable folder. */
export function ensureOutputDir(dir: string): string {
  const resolved = path.resolve(dir);
  try {
    makeDirectory(resolved);
    if (!statSync(resolved).isDirectory()) throw new InputError(`cannot write to ${dir}: not a directory`);
    accessSync(resolved, constants.W_OK);
  } catch (error) {
    if (error instanceof InputError) throw error;
    // ENOTDIR comes for the folder itself being a file too, where "a parent is not a directory" would mislead.
    if ((error as { code?: unknown }).code === 'ENOTDIR' && existsAsNonFolder(resolved)) throw new InputError(`cannot write to ${dir}: it is a file, not a folder`);
    throw new InputError(describeFsError(error, 'cannot write to', dir));
  }
  return resolved;
}

function existsAsNonFolder(target: string): boolean {
  try {
    return !statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Creates the folders `names` inside the output folder `outDir` (as
 * `ensureOutputDir`) once each is checked by the rule of every output
 * (`assertRealFolderInside`, src/shared/safe-path.ts): the plugin writing
 * into `<out>/atif/` takes that folder as its own, links above it included,
 * so a name planted as a link out of `outDir` is refused here, in one line,
 * before anything is written through it. All are checked before any is
 * made, so a refusal leaves no new folder. `out` is `outDir` as the user
 * named it, for the message. Returns the folders' paths, in order.
 */
export function ensureOutputSubfolders(outDir: string, out: string, names: readonly string[]): string[] {
  const folders = names.map((name) => path.join(outDir, name));
  names.forEach((name, index) => {
    try {
      assertRealFolderInside(outDir, folders[index]!);
    } catch (error) {
      if (!(error instanceof UnsafePathError)) throw error;
      throw new InputError(linkedOutMessage(path.join(out, name), out, error));
    }
  });
  return folders.map(ensureOutputDir);
}

/**
 * The CLI's one line for an output refused by the rule of every output:
 * `target` (a folder that is the link itself, or a file with one on its
 * folder part) leads out of `out` through a link.
 */
export function linkedOutMessage(target: string, out: string, error: UnsafePathError, kind: 'folder' | 'file' = 'folder'): string {
  const where = error.leadsTo === undefined ? '' : `, to ${error.leadsTo}`;
  const what = kind === 'folder' ? 'it is' : 'a folder on its path is';
  return `cannot write to ${target}: ${what} a symbolic link out of ${out}${where} (nothing is written through a link out of the output folder)`;
}

/**
 * Throws `InputError` when one of `names` in `dir` is a symbolic link. The
 * writers never open an output through a link (src/shared/safe-path.ts);
 * this says so up front, in one line, before anything is written.
 */
export function refuseLinkedOutputs(dir: string, names: readonly string[]): void {
  for (const name of names) {
    const file = path.join(dir, name);
    let isLink = false;
    try {
      isLink = lstatSync(file).isSymbolicLink();
    } catch {
      continue; // missing: it will be created
    }
    if (isLink) throw new InputError(`cannot write to ${file}: it is a symbolic link (output files are never written through links)`);
  }
}

export interface Line {
  /** 1-based. */
  number: number;
  text: string;
  /** Bytes read from the file so far (for progress). */
  bytesRead: number;
  /** The file ends inside this line: no newline follows it. */
  unterminated?: true;
}

/**
 * The longest line the CLI reads (in UTF-16 code units, about bytes for
 * JSON). Longer lines stop the command with one clear line; without this
 * bound a line of a gigabyte ends in an uncaught `RangeError` (a JS string
 * cannot hold it). `NEMO_RELAY_HOOKS_MAX_LINE_BYTES` lowers it (tests).
 */
const MAX_LINE_CHARS = 128 * 1024 * 1024;

function maxLineChars(): number {
  const raw = Number(process.env.NEMO_RELAY_HOOKS_MAX_LINE_BYTES);
  return Number.isInteger(raw) && raw > 0 && raw < MAX_LINE_CHARS ? raw : MAX_LINE_CHARS;
}

/**
 * The lines of `file` (standard input for `-`), streamed: only one chunk
 * and the current line are in memory at a time. A `\r` before the newline
 * is dropped. A line longer than `MAX_LINE_CHARS` is an `InputError`.
 */
export async function* readLines(file: string, options: ReadOptions = {}): AsyncGenerator<Line> {
  checkInputFile(file);
  const check = options.onInvalidUtf8 === undefined ? undefined : new Utf8Check();
  const name = inputName(file);
  const limit = maxLineChars();
  const stream = file === STDIN ? process.stdin : createReadStream(file, { highWaterMark: 256 * 1024 });
  const decoder = new StringDecoder('utf8');
  let bytesRead = 0;
  let number = 0;
  // The current line's pieces, joined once its newline arrives.
  let pending: string[] = [];
  let pendingLength = 0;
  const emit = (text: string): Line => {
    number += 1;
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return { number, text: number === 1 ? withoutBom(text) : text, bytesRead };
  };
  const tooLong = (): InputError =>
    new InputError(`cannot read ${name}: line ${number + 1} is longer than ${limit} bytes, more than a JSON line may hold (is this really JSONL?)`);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer | string>) {
      const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      if (bytesRead === 0 && file === STDIN) refuseCompressedStdin(buffer);
      bytesRead += buffer.length;
      const bad = check?.push(buffer);
      // `number` lines are done; the chunk continues line number + 1.
      if (bad !== undefined) options.onInvalidUtf8!({ offset: bytesRead - buffer.length + bad, line: number + 1 + newlinesIn(buffer, Math.max(0, bad)) });
      const text = decoder.write(buffer);
      let start = 0;
      for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
        const piece = text.slice(start, newline);
        start = newline + 1;
        if (pendingLength + piece.length > limit) throw tooLong();
        let line = piece;
        if (pending.length > 0) {
          pending.push(piece);
          line = pending.join('');
          pending = [];
          pendingLength = 0;
        }
        yield emit(line);
      }
      if (start < text.length) {
        const rest = text.slice(start);
        pendingLength += rest.length;
        if (pendingLength > limit) throw tooLong();
        pending.push(rest);
      }
    }
    const unfinished = check?.end();
    if (unfinished !== undefined) options.onInvalidUtf8!({ offset: bytesRead + unfinished, line: number + 1 });
    const tail = decoder.end();
    if (tail !== '') {
      pendingLength += tail.length;
      if (pendingLength > limit) throw tooLong();
      pending.push(tail);
    }
    if (pending.length > 0) yield { ...emit(pending.join('')), unterminated: true };
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(describeFsError(error, 'cannot read', name));
  } finally {
    if (file !== STDIN) (stream as ReturnType<typeof createReadStream>).destroy();
  }
}

/** A written file's size in bytes for a command's report; 0 when it cannot be read (the report still lists it). */
export function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/**
 * Where a `--html <target>` page goes, settled before any work is done or printed (a folder target used to fail
 * only after the whole tree was printed). A folder, one that exists or a path ending in `/`, gets `<stem>.html`
 * inside it, as `cp file folder/` names its copy; a target whose folder is missing or not writable is refused now.
 * Returns the path as it will be named in messages (relative when `target` was).
 */
export function htmlTargetPath(target: string, stem: string): string {
  const named = isFolder(target) || /[\\/]$/.test(target) ? path.join(target, `${stem}.html`) : target;
  if (isFolder(named)) throw new InputError(`cannot write ${named}: is a directory`);
  const folder = path.dirname(path.resolve(named));
  try {
    if (!statSync(folder).isDirectory()) throw new InputError(`cannot write ${named}: ${path.dirname(named)} is not a directory`);
    accessSync(folder, constants.W_OK);
  } catch (error) {
    if (error instanceof InputError) throw error;
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'ENOENT') throw new InputError(`cannot write ${named}: no folder ${path.dirname(named)} (create it first)`);
    throw new InputError(describeFsError(error, 'cannot write', named));
  }
  return named;
}

/** The name an input gives the page written for it: `runs/a.atif.json` → `a.atif`, `run.jsonl` → `run`, "-" → `stdin`. */
export function pageStem(input: string): string {
  if (input === STDIN) return 'stdin';
  return path.basename(input).replace(/\.jsonl?$/i, '') || 'page';
}

function isFolder(file: string): boolean {
  try {
    return statSync(file).isDirectory();
  } catch {
    return false;
  }
}
