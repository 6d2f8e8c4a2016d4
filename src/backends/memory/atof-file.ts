/**
 * One ATOF file as the memory relay's writer sees it: opened for append
 * without following links, checked to still be the file at its path
 * (deleted or replaced files are reopened and counted), ended cleanly after
 * a torn last line (an earlier or another writer cut off mid-line), and
 * written in whole-line chunks that never truncate a shared file.
 *
 * @module
 */

import * as nodeFs from 'node:fs';
import path from 'node:path';
import type { AtofMode } from '../../relay/contract.ts';
import type { Logger } from '../../shared/logger.ts';
import { safeLog } from '../../shared/logger.ts';
import { makeDirectory } from '../../shared/directory.ts';
import { openNoFollow } from '../../shared/safe-path.ts';

/** The file operations the writer uses; injectable so tests can simulate a failing disk. */
export interface WriterFs {
  /**
   * Creates the file's folder and its missing parents. Not `mkdirSync`'s
   * recursive mode: that loops forever on a path under /proc (see
   * src/shared/directory.ts), so a fake file system gets the same call.
   */
  makeDirectory(folder: string): void;
  /** `flags` is `'a+'`: append, read, create; never through a link. */
  openSync(path: string, flags: string): number;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
  ftruncateSync(fd: number, length: number): void;
  fstatSync(fd: number): { size: number; mode?: number; ino?: number | bigint; dev?: number | bigint; nlink?: number | bigint };
  closeSync(fd: number): void;
  /** Identity of the file now at `path`; defaults to Node's. */
  statSync?(path: string): { ino?: number | bigint; dev?: number | bigint };
  /** Positioned read; defaults to Node's. */
  readSync?(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  /** Sets the open file's mode; defaults to Node's. Used with the mode it has, to wait for another process's write. */
  fchmodSync?(fd: number, mode: number): void;
}

/** Node's file operations, with folder creation that cannot hang on /proc-like paths. */
export const NODE_WRITER_FS: WriterFs = {
  makeDirectory,
  openSync: (file, flags) => (flags === 'a+' ? openNoFollow(file, 'append', { read: true }) : nodeFs.openSync(file, flags)),
  writeSync: (fd, buffer, offset, length) => nodeFs.writeSync(fd, buffer, offset, length),
  ftruncateSync: (fd, length) => nodeFs.ftruncateSync(fd, length),
  fstatSync: (fd) => nodeFs.fstatSync(fd),
  closeSync: (fd) => nodeFs.closeSync(fd),
  statSync: (file) => nodeFs.statSync(file),
  readSync: (fd, buffer, offset, length, position) => nodeFs.readSync(fd, buffer, offset, length, position),
  fchmodSync: (fd, mode) => nodeFs.fchmodSync(fd, mode),
};

/** How many times a last byte other than a newline is looked at again after waiting for another process's write. */
const WRITER_WAITS = 3;

const NEWLINE = new Uint8Array([0x0a]);

/** The open file, its write position and what is known about its end. */
export class AtofFile {
  readonly path: string;
  private readonly mode: AtofMode;
  private readonly logger: Logger;
  private readonly fs: WriterFs;
  private readonly onError: (error: unknown) => void;
  private fd: number | null = null;
  private opened = false;
  /** File size up to the end of the last complete line this writer wrote. */
  private offset = 0;
  /** The file ends with a fragment of a line: the next write starts with a newline. */
  private fragment = false;
  /** Identity of the open file, to notice it being deleted or replaced. */
  private identity: { dev: number | bigint; ino: number | bigint } | null = null;
  /** Torn lines found (ended before the next line) and reopens after the file went away. */
  tornLines = 0;
  reopens = 0;
  /** Bytes written, and when last. */
  bytes = 0;
  lastWrite: string | null = null;

  constructor(file: string, mode: AtofMode, fs: WriterFs, logger: Logger, onError: (error: unknown) => void) {
    this.path = file;
    this.mode = mode;
    this.fs = fs;
    this.logger = logger;
    this.onError = onError;
  }

  /** Open and still the file at the path: reopened when it was closed, deleted or replaced. False when it cannot be. */
  ready(): boolean {
    if (this.fd === null && !this.open()) return false;
    return this.stillOurFile() || this.open();
  }

  /** Closes the descriptor (errors reported). */
  close(): void {
    if (this.fd === null) return;
    try {
      this.fs.closeSync(this.fd);
    } catch (error) {
      this.onError(error);
    }
    this.fd = null;
  }

  /** Opens (again) the file at `path`: appending, never through a link; ends a torn last line. False on failure (reported). */
  open(): boolean {
    const previous = this.fd;
    this.fd = null;
    this.identity = null;
    if (previous !== null) {
      try {
        this.fs.closeSync(previous);
      } catch {
        // The old descriptor is being replaced; its close error says nothing about the new file.
      }
    }
    try {
      this.fs.makeDirectory(path.dirname(this.path));
      const fd = this.fs.openSync(this.path, 'a+');
      let stat = this.fs.fstatSync(fd);
      let size = stat.size;
      // Overwrite truncates once, on the first successful open; later
      // re-opens after a failure must not erase what was written since. An
      // empty file is left alone: on ext4 a truncate to zero makes the
      // final close start writing back everything written since (its
      // auto_da_alloc safeguard; bench/RESULTS.md, "Figures behind the code").
      if (this.mode === 'overwrite' && !this.opened && size > 0) {
        this.fs.ftruncateSync(fd, 0);
        size = 0;
      }
      this.offset = size;
      this.fd = fd;
      this.opened = true;
      if (stat.ino !== undefined && stat.dev !== undefined) this.identity = { dev: stat.dev, ino: stat.ino };
      const last = size > 0 && !this.fragment ? this.settledLastByte(fd, size) : 0x0a;
      if (last !== 0x0a && last !== -1) {
        // An earlier writer was cut mid-line (kill -9, full disk): start on a fresh line.
        this.fragment = true;
        this.tornLines++;
        safeLog(this.logger, 'warn', `ATOF file ${this.path} ends with a torn line (an earlier writer was cut off); it is ended before the next line`);
      }
      return true;
    } catch (error) {
      this.onError(error);
      return false;
    }
  }

  /**
   * In a shared append-mode file another writer may have been cut off
   * mid-line since the last write: look at the last byte before appending.
   */
  checkEnd(): void {
    let size: number;
    try {
      size = this.fs.fstatSync(this.fd!).size;
    } catch {
      return;
    }
    if (size === 0) return;
    const last = this.settledLastByte(this.fd!, size);
    if (last === -1) return;
    const torn = last !== 0x0a;
    if (torn && !this.fragment) {
      this.tornLines++;
      safeLog(this.logger, 'warn', `ATOF file ${this.path} ends with a torn line (another writer was cut off); it is ended before the next line`);
    }
    this.fragment = torn;
  }

  /**
   * The last byte of the open file (of `size` bytes when asked), once no other process is inside a write to it; -1
   * when it cannot be read. Another process appending to the file may be in the middle of its `write()`: a write of
   * several pages shows its first pages before its last, so its line looks torn for that long. The kernel holds the
   * file's lock through each write, and setting the file's mode (to the one it has) waits for that lock: so a last
   * byte other than a newline is read again after each such wait, up to `WRITER_WAITS` times, as another write may
   * have begun in between (bench/RESULTS.md, "A torn line beside another process's write"). A line whose writer was
   * cut off stays torn through them. Where the mode cannot be set (a file of another user's), the first look stands.
   */
  private settledLastByte(fd: number, size: number): number {
    let last = this.lastByte(fd, size);
    for (let wait = 0; wait < WRITER_WAITS && last !== 0x0a && last !== -1; wait++) {
      try {
        const { mode } = this.fs.fstatSync(fd);
        if (mode === undefined) break;
        (this.fs.fchmodSync ?? nodeFs.fchmodSync)(fd, mode & 0o7777);
        last = this.lastByte(fd, this.fs.fstatSync(fd).size);
      } catch {
        break;
      }
    }
    return last;
  }

  /** The last byte of the open file, or -1 when it cannot be read. */
  private lastByte(fd: number, size: number): number {
    const one = new Uint8Array(1);
    try {
      const read = this.fs.readSync ?? nodeFs.readSync;
      return read(fd, one, 0, 1, size - 1) === 1 ? one[0]! : -1;
    } catch {
      return -1;
    }
  }

  /**
   * False when the file at the path is no longer the open one (deleted,
   * or replaced by a rename), which is then counted and reported; the
   * caller reopens. True when it is, or when identity is unknown.
   */
  private stillOurFile(): boolean {
    const identity = this.identity;
    if (identity === null) return true;
    let reason: string | null = null;
    try {
      const open = this.fs.fstatSync(this.fd!);
      if (open.nlink !== undefined && Number(open.nlink) === 0) reason = 'was deleted while open';
      else {
        const now = (this.fs.statSync ?? nodeFs.statSync)(this.path);
        if (now.ino !== identity.ino || now.dev !== identity.dev) reason = 'was replaced while open';
      }
    } catch (error) {
      reason = (error as { code?: unknown }).code === 'ENOENT' ? 'was deleted while open' : null;
    }
    if (reason === null) return true;
    this.reopens++;
    this.onError(new Error(`${reason}; reopened (lines written to it before this check are not in the file)`));
    return false;
  }

  /**
   * Writes one chunk of whole lines. `'ok'`: all written. `'retry'`: nothing
   * of it is in the file (never written, or rolled back). A byte array: part is
   * in the file and the returned rest must be written next (a carry).
   */
  write(chunk: Uint8Array): 'ok' | 'retry' | Uint8Array {
    const fd = this.fd!;
    // After a torn line, the newline that ends it goes out in the same write as the lines.
    const ending = this.fragment;
    const bytes = ending ? concat(NEWLINE, chunk) : chunk;
    const lead = ending ? 1 : 0;
    let written = 0;
    try {
      while (written < bytes.length) {
        const n = this.fs.writeSync(fd, bytes, written, bytes.length - written);
        if (n <= 0) throw new Error(`write returned ${n}`);
        written += n;
        if (written < bytes.length) this.fragment = true;
      }
    } catch (error) {
      this.onError(error);
      if (written === 0) return 'retry';
      if (this.mode === 'append') return this.tornInShared(chunk, written - lead);
      try {
        this.fs.ftruncateSync(fd, this.offset);
        if (!ending) this.fragment = false;
        return 'retry';
      } catch (truncateError) {
        this.onError(truncateError);
        this.offset += written;
        this.bytes += written;
        // The carried rest completes the torn line: no newline goes before it.
        this.fragment = false;
        return bytes.subarray(written);
      }
    }
    this.fragment = false;
    this.offset += written;
    this.bytes += written;
    this.lastWrite = new Date().toISOString();
    return 'ok';
  }

  /**
   * A write to a shared append-mode file stopped after `written` bytes of
   * `chunk` (negative: not even the leading newline). Never truncates: the
   * whole lines stay, the torn line's fragment is ended by the next write,
   * and the torn line is written again whole (the returned rest).
   */
  private tornInShared(chunk: Uint8Array, written: number): 'retry' | Uint8Array {
    if (written <= 0) {
      // Only (part of) the ending newline made it; nothing of the chunk did.
      this.fragment = written < 0;
      return 'retry';
    }
    const whole = chunk.lastIndexOf(0x0a, written - 1) + 1;
    this.bytes += written;
    this.offset += written;
    if (whole < written) {
      this.fragment = true;
      this.tornLines++;
      safeLog(this.logger, 'warn', `ATOF file ${this.path}: a write stopped mid-line; the fragment is ended and the line written again`);
    } else {
      this.fragment = false;
    }
    return chunk.subarray(whole);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
